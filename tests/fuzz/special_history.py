"""Process histories: does a compiled program compute the function that was traced, whatever
the process compiled before?  (Session 33's CI failure: under `jit`, float32 gammaincc
returned gammainc's values, only in CI's test order -- a per-process cache keyed by the id
of a freed dict served gammainc's translation to gammaincc.)

A per-process cache is filled by the first compile of each function in a process, so a
history only tests anything in a fresh process: `histories()` draws a plan, and
special_worker.py runs it in a process of its own.  A plan is a sequence of steps:

- `("jit", path, width, names, seed)`: one program of the special functions `names`
  (special_table.py; siblings such as gammainc and gammaincc often together), each on its
  own inputs, jitted anew and compiled on `path` -- the direct LLVM kernels or Numba's
  (`XFORMS_LLVM_KERNELS=0`) -- in float32/complex64 (width 32) or float64/complex128;
  every result against scipy's or NumPy's ufunc;
- `("eager", width, name, seed)`: the function called without `jit` on 4096 elements,
  twice (the eager tier builds `jit`'s loop for some of them: xforms/core/eager/kernels.py);
- `("gc",)`: a garbage collection (frees what cycles held: other ids to be taken again).

Every real function of the table appears once in each width in a history, every complex
one in a drawn width (in drawn orders, grouped into programs, runs of several programs in
one dtype, siblings in one program and in consecutive ones), each program on the direct
LLVM path and one in six again on Numba's, so each function's first translation in the
process is in it.

    plan = [("jit", "llvm", 32, ["igamma", "igammac"], 3), ("jit", "numba", 32, ["erfc"], 4)]
    run_plan(plan)          # [] or the failures, each a line
"""
import gc
import os

import numpy as np
from hypothesis import strategies as st

from .special_table import FUNCTIONS, SIBLINGS, agrees, inputs, reference

N_ELEMENTS = 6          # per operand of a jitted program
N_EAGER = 4096          # xforms/core/eager/kernels.py's MIN_ELEMENTS: builds a kernel


def _dtype(name, width):
    kind = FUNCTIONS[name].kind
    return {("f", 32): "float32", ("f", 64): "float64", ("c", 32): "complex64",
            ("c", 64): "complex128"}[kind, width]


@st.composite
def histories(draw, names=None):
    """A plan (see the module docstring) over every function of `names` (all of them by
    default) in both widths, each order drawn."""
    names = list(names or FUNCTIONS)
    # the real functions in both widths (each width's translations are its own), the
    # complex ones (translated from text, not from a function: keyed by it) in one each
    complex_width = {n: draw(st.sampled_from([32, 64]), label=n) for n in names
                     if FUNCTIONS[n].kind == "c"}
    left = {w: [n for n in draw(st.permutations(names), label=f"order, width {w}")
                if complex_width.get(n, w) == w] for w in (32, 64)}
    programs = []                       # (width, names)
    while left[32] or left[64]:
        w = draw(st.sampled_from([w for w in (32, 64) if left[w]]), label="width")
        for _ in range(draw(st.integers(1, 6), label="programs in a row of this width")):
            size = draw(st.integers(1, 4), label="program size")
            programs.append((w, left[w][:size]))
            del left[w][:size]
            if not left[w]:
                break
    # siblings in one program, and in two programs one after the other
    for p in draw(st.lists(st.sampled_from(SIBLINGS), max_size=4), label="sibling programs"):
        at = draw(st.integers(0, len(programs)))
        programs.insert(at, (draw(st.sampled_from([32, 64])), list(p)))
    for a, b in draw(st.lists(st.sampled_from(SIBLINGS), max_size=3), label="in turn"):
        at, w = draw(st.integers(0, len(programs))), draw(st.sampled_from([32, 64]))
        programs[at:at] = [(w, [a]), (w, [b])]
    plan = []
    for seed, (w, names_) in enumerate(programs):
        # every program on the direct LLVM path (where the translations are made, each
        # function's first one in the process among them), one in six then on Numba's
        plan.append(("jit", "llvm", w, list(names_), seed))
        if draw(st.integers(0, 5), label="also on Numba's path") == 0:
            plan.append(("jit", "numba", w, list(names_), seed))
        # (a collection frees at once what cycles held; in the one history of 51 that
        # failed on 768a8262^, float64 ive was served iv's translation after one)
        step = draw(st.sampled_from(["none"] * 4 + ["gc", "gc", "eager"]), label="between")
        if step == "gc":
            plan.append(("gc",))
        elif step == "eager":
            plan.append(("eager", w, draw(st.sampled_from(names)), seed))
    return plan


class _Path:
    """XFORMS_LLVM_KERNELS=0 (Numba's kernels) or =1 for the compiles inside."""

    def __init__(self, path):
        self.value = "0" if path == "numba" else "1"

    def __enter__(self):
        self.saved = os.environ.get("XFORMS_LLVM_KERNELS")
        os.environ["XFORMS_LLVM_KERNELS"] = self.value

    def __exit__(self, *exc):
        if self.saved is None:
            os.environ.pop("XFORMS_LLVM_KERNELS", None)
        else:
            os.environ["XFORMS_LLVM_KERNELS"] = self.saved


def _program(names):
    """A new Python function (a new `jit` each time) applying each function to its own
    operands: f([args of names[0]], [args of names[1]], ...) -> a tuple."""
    fns = [FUNCTIONS[n].xf for n in names]

    def program(*operands):
        return tuple(f(*args) for f, args in zip(fns, operands))
    return program


def _jit_step(path, width, names, seed):
    import xforms as xf
    rng = np.random.default_rng(seed)
    args = [inputs(FUNCTIONS[n], _dtype(n, width), rng, N_ELEMENTS) for n in names]
    with _Path(path):
        got = xf.jit(_program(names))(*args)
    bad = []
    for n, a, g in zip(names, args, got):
        dt = _dtype(n, width)
        g = np.asarray(g)
        if g.dtype != np.dtype(dt) or not agrees(g, reference(FUNCTIONS[n], a, dt), dt):
            bad.append(f"jit {n} ({dt}, {path} path, program {names}): got {g!r} at "
                       f"{[x.tolist() for x in a]}, expected "
                       f"{reference(FUNCTIONS[n], a, dt)!r}")
    return bad


def _eager_step(width, name, seed):
    rng = np.random.default_rng(seed)
    dt = _dtype(name, width)
    args = inputs(FUNCTIONS[name], dt, rng, N_EAGER)
    want = reference(FUNCTIONS[name], args, dt)
    bad = []
    for call in (1, 2):
        got = np.asarray(FUNCTIONS[name].xf(*args))
        if not agrees(got, want, dt):
            k = int(np.argmax(np.abs(got - want)))
            bad.append(f"eager {name} ({dt}), call {call}: got {got[k]!r} at "
                       f"{[x[k].item() for x in args]}, expected {want[k]!r}")
    return bad


def run_plan(plan):
    """Run the steps of `plan` in this process -> the failures (lines), in order."""
    bad = []
    for step in plan:
        if step[0] == "gc":
            gc.collect()
        elif step[0] == "eager":
            bad += _eager_step(*step[1:])
        else:
            bad += _jit_step(*step[1:])
    return bad


def show(plan):
    """The plan as lines (a failure's report)."""
    return "\n".join(repr(s) for s in plan)
