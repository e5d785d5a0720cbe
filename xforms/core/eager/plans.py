"""Running an eager plan (`eval_eager`'s, xforms/core/trace.py, which makes and caches the
plans): step by step with float checks (`interpret`), from a compact form (`run_steps`),
or as one generated Python function once a plan has run `GENERATE_AFTER` times.

    vals = run_steps(plan, consts, args)      # == generate(plan)(*consts, *args)
"""
import keyword
from operator import itemgetter

import numpy as np

from . import abandon
from .float_checks import check_floats


class Plan:
    """How `eval_eager` runs a jaxpr: `steps` (fn, ins, params, out_slots) over `n_slots`
    value slots, the first `n_in` the inputs; `outs` (is literal, value or slot, aval)."""
    __slots__ = ("n_slots", "n_in", "steps", "outs", "calls", "run", "compact")

    def __init__(self, n_slots, n_in, steps, outs):
        self.n_slots, self.n_in, self.steps, self.outs = n_slots, n_in, steps, outs
        self.calls, self.run, self.compact = 0, None, None


def interpret(plan, consts, args, checked_eqns=None):
    """Run the plan's steps, each step's results checked as debug_nans / debug_infs ask
    (`checked_eqns`: the plan has no buffer reuse, a step per equation).  Unchecked runs
    take `run_steps`, ~0.5-0.8 us faster per equation."""
    env = [None] * plan.n_slots
    env[:len(consts)] = consts
    env[len(consts):plan.n_in] = args
    for k, (fn, ins, params, out_slots) in enumerate(plan.steps):
        res = fn(*[v if lit else env[v] for lit, v in ins], **params)
        for (s, dt), o in zip(out_slots, res):
            env[s] = _cast(o, dt)
        if checked_eqns is not None:
            e = checked_eqns[k]
            check_floats([env[s] for s, _ in out_slots], e.prim.name, e.source_info)
    return [v if lit else env[v] for lit, v, _ in plan.outs]


def _cast(x, dtype):
    return x if getattr(x, "dtype", None) == dtype else np.asarray(x).astype(dtype)


def run_steps(plan, consts, args):
    """Run the plan's steps from its compact form (`_compact`): every operand a slot (literals
    fill slots of their own) fetched by one C-level itemgetter, one result taken without a
    list comprehension, a zip or a `_cast` call -- what a program's first `GENERATE_AFTER`
    calls run on (an un-jitted grad loop's first calls too: within ~0.5 us per equation of
    the generated function, against ~1.5 us for a step-by-step interpreter).

    >>> run_steps(plan, consts, args) == plan.run(*consts, *args)   # once generated"""
    if plan.compact is None:
        plan.compact = _compact(plan)
    tail, steps = plan.compact
    env = [*consts, *args, *tail]
    stop = abandon.STOP                      # (a safe point a step: abandon.py)
    for kind, fn, get, params, s, dt in steps:
        if stop[0]:
            abandon.check()
        if kind == 0:                        # (kinds: _compact)
            x = fn(*get(env), **params)
        elif kind == 1:
            x = fn(get(env), **params)
        elif kind == 2:
            x = fn(*get(env), **params)[0]
        elif kind == 3:
            x = fn(get(env), **params)[0]
        else:
            for (si, di), o in zip(s, fn(*get(env), **params)):
                env[si] = _cast(o, di)
            continue
        if x.__class__ is not np.ndarray or x.dtype is not dt:
            x = _cast(x, dt)
        env[s] = x
    return [v if lit else env[v] for lit, v, _ in plan.outs]


def _compact(plan):
    """-> (the env after the inputs: the plan's slots, then the literals' values; per step
    (kind, fn, operand getter, params, out slot, dtype)).  Kinds of one-result steps: 0
    several operands, 1 one; 2 and 3 alike for an impl that returns a list; 4 any other
    step (s, dt: the out slots)."""
    tail = [None] * (plan.n_slots - plan.n_in)
    steps = []
    for fn, ins, params, out_slots in plan.steps:
        slots = []
        for lit, v in ins:
            if lit:
                tail.append(v)
                v = plan.n_in + len(tail) - 1
            slots.append(v)
        single = getattr(fn, "single_result", None)
        if len(out_slots) == 1 and slots:
            (s, dt), = out_slots
            kind = (0 if single is not None else 2) + (len(slots) == 1)
            get = itemgetter(*slots)
            steps.append((kind, single if single is not None else fn, get, params, s, dt))
        else:
            get = (itemgetter(*slots) if len(slots) > 1 else
                   (lambda i: lambda env: (env[i],))(slots[0]) if slots else lambda env: ())
            steps.append((4, fn, get, params, out_slots, None))
    return tail, steps


GENERATE_AFTER = 8     # calls of a plan interpreted before its function is generated


def generate(plan):
    """The plan's steps as one generated Python function of the inputs, a line per step
    (`s7, = f3(s2, s5, axes=p3)`): no operand fetching or step dispatch, ~0.5 us less per
    equation than `run_steps`.  Generating costs ~30 us per equation, so a plan
    is interpreted on its first `GENERATE_AFTER` calls (a program run a few times, as the
    fast tier's first calls, never pays it; an un-jitted training loop's does at once)."""
    glob = {"_cast": _cast, "_nd": np.ndarray}
    lines = [f"def run({', '.join(f's{k}' for k in range(plan.n_in))}):"]

    def const(stem, value):
        name = f"{stem}{len(glob)}"
        glob[name] = value
        return name

    for fn, ins, params, out_slots in plan.steps:
        args = [const("c", v) if lit else f"s{v}" for lit, v in ins]
        if all(k.isidentifier() and not keyword.iskeyword(k) for k in params):
            args += [f"{k}={const('p', v)}" for k, v in params.items()]
        elif params:
            args.append(f"**{const('p', params)}")
        single = getattr(fn, "single_result", None)    # (an impl `[single(*xs)]`)
        if single is not None and len(out_slots) == 1:
            lines.append(f"    s{out_slots[0][0]} = {const('f', single)}({', '.join(args)})")
        else:
            call = f"{const('f', fn)}({', '.join(args)})"
            lines.append(f"    {''.join(f's{s}, ' for s, _ in out_slots)}= {call}"
                         if out_slots else f"    {call}")
        for s, dt in out_slots:
            d = const("d", dt)
            lines.append(f"    if s{s}.__class__ is not _nd or s{s}.dtype is not {d}: "
                         f"s{s} = _cast(s{s}, {d})")
    outs = ", ".join(const("c", v) if lit else f"s{v}" for lit, v, _ in plan.outs)
    lines.append(f"    return [{outs}]")
    exec(compile("\n".join(lines) + "\n", "<xforms eager plan>", "exec"), glob)
    return glob["run"]
