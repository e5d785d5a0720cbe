"""The statements of control flow -- `cond`, `while`, `for_loop`, `scan` -- as both backends
print them around the inlined code of their sub-programs: the CPU inside its kernel
(xforms/kernels/cpu/numba/control.py), CUDA in its host code (xforms/kernels/cuda/printer/control.py).
The skeleton is written once; a backend subclasses `ControlPrinter` with hooks for how its
values are read and bound.  Semantics: xforms/primitives/control/control_flow.py.

    k = min(max(np.int64(a), 0), 2)         # cond with three branches
    if k == 0:
        ...                                 # branch 0 inlined, outputs bound
    elif k == 1:
        ...
    else:
        ...

Hooks: `sub(plan, args, kind)` (inline a sub-program on argument values; -> its output
values), `arg(atom)`, `assign(outs, values)`, `init_carry(outs, inits)`, `index(atom)` (a
branch index as a host int), `truth(value)` (a loop predicate), `bounds(n)` (-> (counter
name, trip count) of a `for_loop`), `counter(i)` (the counter as a value), `scan_counter()`,
`row(x, i)` / `store_row(y, i, value)` (row i of a scanned array), `stack_rows(body,
params, c_outs, ys)` (allocate a scan's stacked outputs; -> the rows each step fills),
`row_view(y, i)` (the expression of row i of stacked output y, which `rows_in_place` makes
a body output's buffer), `copy_into()` (the name of the function copying an array into
another, for `restore_carries`), `ROW_SCALARS` / `KEEP` (whether device scalars are stacked
rows too; the name prefix of a carry kept before a scan), `spare_carries(body, first, n)` (around one iteration:
carries computed in a buffer that alternates with the carry's, the CPU's ping-pong),
`host_loop()` (said before a `while`).
"""
import contextlib

from xforms.core.ir import split

from ..plan.plan import subplans
from ..plan.scan_rows import carries_in_rows, row_outputs


class ControlPrinter:
    ROW_SCALARS = False     # (CUDA: True, a device scalar is a one-element buffer of its own)
    KEEP = "K"

    def __init__(self, em):
        self.em = em

    def host_loop(self):
        pass

    def loop_scope(self):
        """Around a loop's emission (the CPU allocates the body's buffers before it)."""
        return contextlib.nullcontext()

    def stack_rows(self, body, params, c_outs, ys):
        """Before a scan: allocate its stacked outputs `ys`; -> the rows a step fills, as
        (index of the body output, stacked Var) pairs (the CPU adds carries that step
        through the rows of a buffer of their own, `stepped`)."""
        self.num_carry, self.stepped = params["num_carry"], set()
        for y in ys:
            self.em.alloc(y)
        return [(params["num_carry"] + m, y) for m, y in enumerate(ys)]

    @contextlib.contextmanager
    def rows_in_place(self, body, nconsts, rows, i):
        """Around a scan body's emission: a body output that leaves only as row `i` of a
        stacked output (no other output, not a body input: a scan's residual, an LSTM's h)
        is computed in that row (the emitter's `row_views`): what makes it writes the row,
        so the iteration neither allocates it nor stores it.  It may also be a carry whose
        input the body never writes (xforms/kernels/plan/fusion.py `owned_inputs`): the
        next step reads it in that row (`keep_carries`).  The rows of a stacked input carry
        hold it already (`stack_rows`).  -> the set of stacked Vars of `rows` whose row `i`
        needs no store, filled once the body is emitted."""
        em, written = self.em, set(self.stepped)
        views = {key: (self.row_view(y, i), y, written)
                 for key, y in row_outputs(body, nconsts, self.num_carry, rows,
                                           self.ROW_SCALARS)}
        prev, em.row_views = em.row_views, {**em.row_views, **views}
        try:
            yield written
        finally:
            em.row_views = prev

    def keep_carries(self, body, c_outs, rows):
        """Before a scan: note the buffers of carries that may step from row to row of a
        stacked output (-> what `restore_carries` needs after the loop)."""
        kept = [(v, stacked, self.em.fresh(self.KEEP))
                for v, stacked in carries_in_rows(body, c_outs, rows, self.ROW_SCALARS)]
        for v, _, keep in kept:
            self.em.line(f"{keep} = {self.em.A(v)}")
        return kept

    def restore_carries(self, kept, written):
        """After a scan: carries left in a row of a stacked output get their own buffer --
        one copy after the loop, not one a step: the carry must not stay a view of the
        stacked output (a later in-place update of either would change the other)."""
        for v, stacked, keep in kept:
            if stacked & written:
                self.em.line(f"{self.copy_into()}({keep}, {self.em.A(v)})")
                self.em.line(f"{self.em.A(v)} = {keep}")

    def spare_carries(self, body, first, n):
        """Around the code of one iteration (body, new carries bound, rows stored): `body`
        the body's plan, its `n` carries its inputs from `first` on (the CPU computes a new
        carry in a spare buffer allocated before the loop, which takes the old carry's
        buffer at the iteration's end)."""
        return contextlib.nullcontext()

    def cond(self, step):
        em = self.em
        index, *ops = step.eqn.invars
        subs = subplans(step)
        branches = [subs[k] for k in sorted(subs, key=lambda k: k[1])]
        outs = step.eqn.outvars
        if len(branches) == 1:
            self.assign(outs, self.sub(branches[0], [self.arg(o) for o in ops], "c"))
            return
        k = em.fresh("k")
        em.line(f"{k} = min(max({self.index(index)}, 0), {len(branches) - 1})")
        for b, plan in enumerate(branches):
            head = "else:" if b == len(branches) - 1 else \
                f"{'if' if b == 0 else 'elif'} {k} == {b}:"
            with em.block(head):
                self.assign(outs, self.sub(plan, [self.arg(o) for o in ops], "c"))

    def while_loop(self, step):
        em, p = self.em, step.eqn.params
        cc, bc, carry = split(step.eqn.invars, p["cond_nconsts"], p["body_nconsts"])
        subs = subplans(step)
        outs = step.eqn.outvars
        self.init_carry(outs, carry)
        self.host_loop()
        with self.loop_scope(), em.block("while True:"):
            (c,) = self.sub(subs["cond_jaxpr"], [self.arg(a) for a in cc + outs], "w")
            with em.block(f"if not {self.truth(c)}:"):
                em.line("break")
            body = subs["body_jaxpr"]
            with self.spare_carries(body, len(bc), len(outs)):
                self.assign(outs, self.sub(body, [self.arg(a) for a in bc + outs], "w"))

    def for_loop(self, step):
        em, p = self.em, step.eqn.params
        n, consts, carry = split(step.eqn.invars, 1, p["num_consts"])
        outs = step.eqn.outvars
        self.init_carry(outs, carry)
        i, stop = self.bounds(n[0])
        rng = f"range({stop} - 1, -1, -1)" if p["reverse"] else f"range({stop})"
        body = subplans(step)["body_jaxpr"]
        with (self.loop_scope(), em.block(f"for {i} in {rng}:"),
              self.spare_carries(body, 1 + len(consts), len(outs))):
            exprs = self.sub(body, [self.counter(i)] + [self.arg(a) for a in consts + outs],
                             "f")
            self.assign(outs, exprs)

    def scan(self, step):
        em, p = self.em, step.eqn.params
        consts, carry, xs = split(step.eqn.invars, p["num_consts"], p["num_carry"])
        outs = step.eqn.outvars
        c_outs, ys = outs[:p["num_carry"]], outs[p["num_carry"]:]
        self.init_carry(c_outs, carry)
        body = subplans(step)["jaxpr"]
        rows = self.stack_rows(body, p, c_outs, ys)
        i = self.scan_counter()
        n = p["length"]
        rng = f"range({n - 1}, -1, -1)" if p["reverse"] else f"range({n})"
        kept = self.keep_carries(body, c_outs, rows)
        with (self.loop_scope(), em.block(f"for {i} in {rng}:"),
              self.spare_carries(body, len(consts), len(c_outs))):
            args = [self.arg(a) for a in consts + c_outs] + [self.row(x, i) for x in xs]
            with self.rows_in_place(body, p["num_consts"], rows, i) as written:
                exprs = self.sub(body, args, "s")
            self.assign(c_outs, exprs[:len(c_outs)])
            for k, y in rows:
                if y not in written:
                    self.store_row(y, i, exprs[k])
        self.restore_carries(kept, written)


def register(rules, printer, wrap=lambda rule: rule):
    """Register the four control rules of `printer` (a ControlPrinter subclass) in `rules`;
    `wrap(rule)` may route a step elsewhere first (CUDA's lane-local kernels)."""
    for name, method in _METHODS.items():
        rules[name] = wrap(lambda em, step, m=method: getattr(printer(em), m)(step))


# control primitive -> the ControlPrinter method that prints it
_METHODS = {"cond": "cond", "while": "while_loop", "for_loop": "for_loop", "scan": "scan"}
