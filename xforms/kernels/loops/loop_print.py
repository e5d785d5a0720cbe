"""The one printer core of the loop IR (xforms/kernels/loops/ir.py) that both backends share: a
fused loop's body (`Eval`, `Reduce`, `Store`: xforms/kernels/loops/lower_loops.py), the statements of a
lowered equation (`Let`, `Store`, `Nest`: xforms/kernels/loops/lower_indexing.py) and the accumulator
statements (`Init`, `Fold`) of every reduction, spelled once for every monoid.  A backend
subclasses `Printer` and fills in its hooks: where lines go, fresh names, typed literals,
how an equation's scalar value is spelled, how a sum is accumulated, and which accumulator
a `Reduce` folds into.

    Fold(Accum("max", f64, Name("m")), Name("x"))     # prints: t = m
                                                      #         m = t if t >= x or t != t else x
    Fold(Accum("argmax", f64, Name("v"), Name("k")), Name("x"), Name("i"), ordered=False)
      # if (v != v and x != x and i < k) or (v == v and (x != x or x > v or (x == v and
      #         i < k))):
      #     v = x
      #     k = i
"""
import numpy as np

from .. import user_prims
from ..plan.index_maps import acts_as_view
from .ir import Eval, Fold, Init, Let, Nest, Reduce, Spelling, Store, When
from .scalar_rules import has_target_rule, reduction_init

# the reduction monoids an accumulator folds (kernels/scalar_rules.reduction_monoid)
MONOIDS = ("sum", "prod", "and", "or", "max", "min", "argmax", "argmin")


class Printer:
    """Prints loop IR bodies and accumulators through a backend's hooks:

    - `line(text)`, `block(header)` (a context manager), `fresh(hint)`;
    - `lit(value, dtype)`: a literal typed exactly as `dtype`; `name(var)`: a scalar's name;
    - `comment(eqn)`, `check(eqn)` (raise the backend's LoweringError for a refused dtype);
    - `target` ("cpu", "cuda") and `em` (the emitter: user primitives' calls);
    - `value(eqn, args, idx)`: the expression of elementwise equation `eqn` by the target's
      scalar rules on argument texts (`idx`: the loop's index texts), and `evaluated(name)`
      after it is assigned (views and user primitives are spelled here);
    - `vector_call(eqn, args, idx)`: the vector polynomial's call the target makes instead
      of a user primitive's scalar function (erfc_inv's vm_erfcinv in a large CPU loop), or
      None (the default);
    - `reduce(sp, st)`: print `Reduce` `st` (usually a `Fold` into its accumulator);
    - `accumulate(acc, op, x, dt)`: the statement `acc = acc op x` of a sum or product;
    - `loops(sp, names, dims)`: a context of nested loops over range(dims);
    - `combine_into(sp, store, value)`: a combining `Store` (`+=`, an atomic add, ...);
    - `scalar_stores`: whether a rank-0 `Store` is printed (the CPU keeps rank-0 loop
      values in scalars, which are their results)."""

    scalar_stores = True

    def evaluated(self, name):
        pass

    def vector_call(self, eqn, args, idx):
        return None

    def accumulate(self, acc, op, x, dt):
        return f"{acc} {op}= {x}"

    # ---- a fused loop's body ---------------------------------------------------------------
    def print_body(self, sp, body, keep=None, stores=True):
        """Print the statements of a fused loop's body at its innermost loop (`sp`: the
        spelling naming its indices): the `Eval`s of the equations in `keep` (ids; every one
        when None), the stores when `stores`, every `Reduce` through `reduce`."""
        idx = None
        for st in body:
            kind = type(st)
            if kind is Eval:
                eqn = st.eqn
                if keep is not None and id(eqn) not in keep:
                    continue
                self.check(eqn)
                self.comment(eqn)
                args = [sp.expr(a) for a in st.args]
                idx = idx or [sp.expr(i) for i in st.index]     # (one loop: one index)
                if acts_as_view(eqn):
                    expr, ruled = args[0], False
                elif user_prims.is_elementwise(eqn) and not has_target_rule(eqn.prim,
                                                                            self.target):
                    # its function, compiled for the target (a rule of the target's own,
                    # e.g. a vectorisable special function, wins; so does the vector
                    # polynomial a large CPU loop calls)
                    expr = (self.vector_call(eqn, args, idx)
                            or user_prims.scalar_call(self.em, eqn, args, self.target))
                    ruled = False
                else:
                    expr, ruled = self.value(eqn, args, idx), True
                out = self.name(eqn.outvars[0])
                self.line(f"{out} = {expr}")
                if ruled:
                    self.evaluated(out)
            elif kind is Reduce:
                self.check(st.eqn)
                self.comment(st.eqn)
                self.reduce(sp, st)
            elif kind is Store:
                if stores and (self.scalar_stores or st.var.aval.shape):
                    self.store(sp, st)
            else:
                raise TypeError(f"not a fused loop statement: {st!r}")

    # ---- the statements of a lowered equation (xforms/kernels/loops/lower_indexing.py) ------------------
    def print_stmt(self, sp, st):
        """Print a `Let`, a `Store`, a `When` or a `Nest` (its loops opened by `loops`)."""
        kind = type(st)
        if kind is Let:
            self.line(f"{sp.bind(st.sym)} = {sp.expr(st.expr)}")
        elif kind is Store:
            self.store(sp, st)
        elif kind is When:
            with self.block(f"if {sp.bounds(st.bounds)}:"):
                for s in st.body:
                    self.print_stmt(sp, s)
        elif kind is Nest:
            names = [sp.bind(s) for s in st.syms]
            with self.loops(sp, names, st.dims):
                for s in st.body:
                    self.print_stmt(sp, s)
        else:
            raise TypeError(f"not a loop IR statement here: {st!r}")

    def store(self, sp, st):
        """`target = value`, or a combining store through `combine_into`."""
        val = sp.expr(st.value)
        if st.combine:
            self.combine_into(sp, st, val)
        else:
            self.line(f"{sp.target(st.var, st.index)} = {val}")

    # ---- accumulators ----------------------------------------------------------------------
    def init(self, sp, st: Init):
        """`acc = identity` (and `index = start`)."""
        a = st.acc
        self.line(f"{sp.expr(a.value)} = {self.lit(reduction_init(a.op, a.dt), a.dt)}")
        if a.index is not None:
            self.line(f"{sp.expr(a.index)} = {self.lit(st.start, a.index_dt)}")

    def fold(self, sp, st: Fold):
        """`acc <- acc (+) x` for the accumulator's monoid; NaN propagates through max and
        min (and the first NaN wins an argmax/argmin), as in NumPy."""
        a, op = st.acc, st.acc.op
        acc, x = sp.expr(a.value), sp.expr(st.x)
        floating = a.dt.kind == "f"
        if a.index is not None:
            with self.block(f"if {_arg_wins(op, acc, x, sp, st, floating)}:"):
                self.line(f"{acc} = {x}")
                self.line(f"{sp.expr(a.index)} = {sp.expr(st.x_index)}")
        else:
            self.combine_lines(op, acc, x, a.dt)

    def combine_lines(self, op, acc, x, dt):
        """`acc <- acc (op) x` for monoid `op` (sum prod and or max min; a bool sum or max
        is `or`, a bool product or min `and`): an accumulator's fold, a scatter's combining
        store."""
        dt = np.dtype(dt)
        if dt.kind == "b":      # (numba-cuda's max of bools is a device function: no PTX)
            op = _BOOL_MONOIDS.get(op, op)
        if op in ("sum", "prod"):
            self.line(self.accumulate(acc, "+" if op == "sum" else "*", x, dt))
        elif op in ("and", "or"):
            self.line(f"{acc} = {acc} {op} {x}")
        elif op in ("max", "min"):
            t = self.fresh("t")         # (acc may be an array element: read it once)
            self.line(f"{t} = {acc}")
            if dt.kind == "f":
                self.line(f"{acc} = {float_maxmin(op, t, x)}")
            elif dt.kind == "c":
                self.line(f"{acc} = {complex_maxmin(op, t, x)}")
            else:
                self.line(f"{acc} = {op}({t}, {x})")
        else:
            raise ValueError(f"no accumulator for the reduction monoid {op!r}")

    def print_acc(self, *stmts, sp=None):
        """Print accumulator statements (`Init`, `Fold`); `sp`: the spelling of their
        expressions (none needed when they hold only `Name`s and constants)."""
        sp = sp or _NAMES
        for st in stmts:
            (self.init if type(st) is Init else self.fold)(sp, st)


def float_maxmin(op, a, b):
    """`a` max (`op` "max") or min `b` of floats as XLA orders them -- NaN wins, -0.0 < +0.0,
    a tie of zeros is `a + b` (max) or `-(-a - b)` (min) -- as the scalar rule prints it:

        >>> float_maxmin("max", "t", "x")
        't if t > x or t != t else (x if t < x or x != x or t != 0 else t + x)'
    """
    win, lose = (">", "<") if op == "max" else ("<", ">")
    tie = f"{a} + {b}" if op == "max" else f"-(-{a} - {b})"
    return (f"{a} if {a} {win} {b} or {a} != {a} else ({b} if {a} {lose} {b} or {b} != {b} "
            f"or {a} != 0 else {tie})")


def complex_product(a, b, dt):
    """`a * b` of complex accumulator values as XLA multiplies them (jax's prod and cumprod
    fold with its elementwise product: complex_arith/multiply.py, bound as `complex_mul` in
    every CPU and CUDA module), cast back to complex64.

        >>> complex_product("acc", "x", np.dtype("complex64"))
        'np.complex64(complex_mul(acc, x))'
    """
    call = f"complex_mul({a}, {b})"
    return call if np.dtype(dt).itemsize == 16 else f"np.complex64({call})"


def complex_maxmin(op, a, b):
    """`a` max (`op` "max") or min `b` of complex numbers as XLA picks: `a` where it wins by
    real part, then imaginary part, else `b` (a NaN never wins; reductions start from NaN,
    so they fold from the first element, as XLA's loop does):

        >>> complex_maxmin("max", "t", "x")
        't if t.real > x.real or (t.real == x.real and t.imag > x.imag) else x'
    """
    w = ">" if op == "max" else "<"
    return f"{a} if {a}.real {w} {b}.real or ({a}.real == {b}.real and {a}.imag {w} {b}.imag) else {b}"


_NAMES = Spelling()
_BOOL_MONOIDS = {"sum": "or", "max": "or", "prod": "and", "min": "and"}


def _arg_wins(op, acc, x, sp, st, floating):
    """The condition under which (x, x_index) replaces an argmax/argmin accumulator."""
    cmp = ">" if op == "argmax" else "<"
    if st.ordered:              # x's index is the later one: only a strict win or a new NaN
        cond = f"{x} {cmp} {acc}"
        return cond + (f" or ({x} != {x} and {acc} == {acc})" if floating else "")
    idx, xi = sp.expr(st.acc.index), sp.expr(st.x_index)
    cond = f"{x} {cmp} {acc} or ({x} == {acc} and {xi} < {idx})"
    if floating:
        cond = (f"({acc} != {acc} and {x} != {x} and {xi} < {idx}) or "
                f"({acc} == {acc} and ({x} != {x} or {cond}))")
    return cond
