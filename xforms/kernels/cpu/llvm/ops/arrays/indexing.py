"""Gathers and scatters on the direct LLVM path (issue #35): the plan's `gather`, `scatter`
and `scatter_add`/`scatter_mul` op steps, from the loop IR xforms/kernels/loops/
lower_indexing.py writes for both backends (JAX's semantics: a gather clamps each index, a
scatter in mode "drop" skips an update whose index is out of bounds, else clamps it), with
the views a `reshape` makes, so that a scatter updates a buffer in place where the Numba
path's would.

    z = x.reshape(-1)          # a view of x's buffer (x written by a loop of this plan)
    z2 = z.at[idx].set(0.0)    # in place: neither x nor z is read after it
    for b in range(len(idx)):  # the loops of lower_indexing.py, counted loops here
        g = idx[b]             # an int64/int32 index array (an argument, a const, computed)
        if 0 <= g < n:         # (mode "drop")
            z2[g] = u[b]

The values are the Numba kernel's bit for bit: the same statements, in the same order (the
indexing loops are serial on both paths; a combining scatter adds in that order).  Refused
(the program goes to Numba): index arrays computed by integer operations other than
xforms/kernels/cpu/llvm/ops/integers.py's, complex values.  (Combining scatters of
integers, bools, and by max/min are taken since session 28.)

    >>> takes(scatter_eqn)       # scatter[mode=drop] of f64[1024] by i64[32]
    True
"""
from types import SimpleNamespace

import numpy as np

from xforms.core.facts import GATHER_SCATTER, carried_outputs

from .....loops.ir import Alloc, Clamp, Let, Load, Nest, Region, Scalar, Store, When
from .....loops.lower_indexing import LOWERINGS
from .....plan.storage import step_reads
from . import copies
from .. import reductions
from ... import numpy_abi
from ...scalar import Refused

_BOOL_MONOIDS = {"sum": "or", "max": "or", "prod": "and", "min": "and"}   # (loop_print's)
_INDEX = {"i64", "i32", "i16", "i8"}     # (either sign)


def takes(eqn):
    """Whether op `eqn` is one of this module's: an indexing op lowered to the loop IR
    (float or bool values; indices, a combining monoid, checked as they are emitted; a
    dynamic slice's start is refused there)."""
    return eqn.prim.facts.kind == GATHER_SCATTER and eqn.prim in LOWERINGS


def all_views(plan):
    """`views` of `plan` (the kernel's) and of every sub-plan of its control steps."""
    out = views(plan, True)
    todo = [sub for st in plan.steps if st.kind == "control" for sub in st.subplans]
    while todo:
        sub = todo.pop()
        out.update(views(sub, False))
        todo += [s for st in sub.steps if st.kind == "control" for s in st.subplans]
    return out


def views(plan, top):
    """{var: the var whose buffer it lives in} for `plan`'s steps that need no buffer of
    their own: a reshape of an array a step of `plan` wrote (a view), and a scatter into
    such an array that nothing reads after it (an update in place).  `top`: `plan` is the
    kernel's, whose outputs are arrays of their own (a sub-plan's are placed by
    xforms/kernels/cpu/llvm/control.py at their root's buffer: never two of one chain)."""
    written = _written(plan)
    last = {}
    for k, st in enumerate(plan.steps):
        for a in step_reads(st):
            last[a] = k
    outs = set(plan.jaxpr.outvars)
    for v in outs:
        last[v] = len(plan.steps)
    root, members = {}, {}
    for k, st in enumerate(plan.steps):
        if st.kind != "op" or not st.eqn.outvars[0].aval.shape:
            continue
        x, out, name = st.eqn.invars[0], st.eqn.outvars[0], st.eqn.prim.name
        r = root.get(x, x)
        if r not in written or top and out in outs or not x.aval.shape:
            continue
        chain = members.get(r, [r])
        if any(c in outs for c in chain):        # (one output a chain: placed once)
            continue
        scatter = takes(st.eqn) and st.eqn.prim.facts.inplace == 0   # (updates its operand)
        if name == "reshape" or scatter and all(last.get(c, -1) <= k for c in chain) \
                and not any(a in chain for a in st.eqn.invars[1:]):
            root[out] = r
            members.setdefault(r, [r]).append(out)
    return root


def _written(plan):
    """The arrays the loop and op steps of `plan` write into buffers of their own, and the
    carries its loops leave in theirs (a reverse-mode while loop's checkpoint stacks, set a
    row after their loop: no copy of the stack)."""
    return {v for st in plan.steps if st.kind in ("loop", "op", "control")
            for v in _arrays(st) if v.aval.shape}


def _arrays(step):
    if step.kind == "control":      # (a scan's stacked outputs left out: they may share a
        return carried_outputs(step.eqn)    # workspace region, llvm/buffers.py `stepped`)
    if step.kind == "op":
        return step.eqn.outvars if step.eqn.prim.name != "reshape" else []
    return [*step.writes, *(e.outvars[0] for e, _ in step.body)]


def emit(m, eqn):
    """Emit gather/scatter op `eqn` (`takes`) into kernel module `m` (a `loops.Loops`)."""
    for st in LOWERINGS[eqn.prim](eqn):
        _stmt(m, st)


def alias(m, eqn):
    """A reshape that is a view (`views`): its buffer its operand's.  -> done?"""
    out = eqn.outvars[0]
    if out not in m.views:
        return False
    m.arrays[out] = (m.arrays[eqn.invars[0]][0], tuple(int(d) for d in out.aval.shape))
    return True


def _stmt(m, st):
    if isinstance(st, Alloc):
        _alloc(m, st)
    elif isinstance(st, Region):
        for s in st.body:
            _stmt(m, s)
    elif isinstance(st, Nest):
        _nest(m, list(st.syms), [int(d) for d in st.dims], st.body)
    elif isinstance(st, Let):
        m.syms[st.sym] = _index(m, st.expr)
    elif isinstance(st, When):
        _when(m, st)
    elif isinstance(st, Store) and st.combine is not None:
        _combine(m, st)
    elif isinstance(st, Store):
        m._stmt(st)
    else:
        raise Refused(st)


def _alloc(m, st):
    """The output's buffer (allocated by the module): the operand's own where the scatter
    updates it in place, else a copy of the operand's values (`copy_of`)."""
    v, x = st.var, st.copy_of
    if x is None:
        return
    if v in m.views:
        m.arrays[v] = (m.arrays[x][0], tuple(int(d) for d in v.aval.shape))
        return
    if m.arrays[v][0] == m.arrays[x][0]:    # (a loop carry updated in place: control.py
        return                              # `in_place` put it in the carry's buffer)
    nbytes = int(np.prod([int(d) for d in v.aval.shape], dtype=np.int64)) * v.aval.dtype.itemsize
    copies.memcpy(m, m.arrays[v][0], m.arrays[x][0], nbytes)


def _nest(m, syms, dims, body):
    if not syms:
        for s in body:
            _stmt(m, s)
        return
    m._counted(syms[0], 0, dims[0], False, lambda: _nest(m, syms[1:], dims[1:], body))


def _when(m, st):
    """The body only where 0 <= e < n for every bound (a dropped update: skipped)."""
    cond = "true"
    for e, n in st.bounds:
        x = m.index(e)
        for t in (f"icmp sge i64 {x}, 0", f"icmp slt i64 {x}, {int(n)}"):
            c, both = m.fresh(), m.fresh()
            m.emit(f"{c} = {t}")
            m.emit(f"{both} = and i1 {cond}, {c}")
            cond = both
    k = m.fresh()[2:]
    m.emit(f"br i1 {cond}, label %win{k}, label %wout{k}")
    m.label(f"win{k}")
    for s in st.body:
        _stmt(m, s)
    m.emit(f"br label %wout{k}")
    m.label(f"wout{k}")


def _combine(m, st):
    """`var[index] = var[index] (op) value`: a sum or product (floats: the Numba path's
    `A[i] += u`, the same operation in the same order; integers wrap at their width, as
    Numba's wider sum truncated back to it), a max or min (floats: NaN wins, -0.0 < +0.0, as
    the Numba path's `float_maxmin`), a bool's `or` (sum, max) or `and` (prod, min)."""
    ty, mem = m._element(st.var)
    dt = np.dtype(st.var.aval.dtype)
    op = _BOOL_MONOIDS.get(st.combine, st.combine) if dt.kind == "b" else st.combine
    if op not in ("sum", "prod", "max", "min", "or", "and") or dt.kind not in "fiub" \
            or st.round_to is not None:
        # (round_to: float16 held in float32, rounded per combine -- the direct path has no
        # float16 rounding, the Numba path's round_to_float16 spelling does it)
        raise Refused(f"a combining store ({st.combine}) of {st.var.aval}"
                      + (f" rounded to {st.round_to}" if st.round_to is not None else ""))
    data, shape = m.arrays[st.var]
    x = m.expr(st.value, ty)
    p, old = m._address(data, shape, st.index, mem), m.fresh()
    m.emit(f"{old} = load {mem}, ptr {p}")
    if mem != ty:                   # (a bool: NumPy's byte, any nonzero one True)
        b = m.fresh()
        m.emit(f"{b} = icmp ne i8 {old}, 0")
        old = b
    new = reductions.fold(m, SimpleNamespace(op=op, dt=dt), old, x, ty)
    if mem != ty:
        b = m.fresh()
        m.emit(f"{b} = zext i1 {new} to i8")
        new = b
    m.emit(f"store {mem} {new}, ptr {p}")


def _index(m, e):
    """The i64 value of an index expression that may read an index array (a Clamp of a
    Load: as the Numba path, the element as int64, then clamped)."""
    if isinstance(e, Clamp):
        x = _index(m, e.expr)
        if e.wrap is not None:          # (a dynamic slice's negative start: from the end)
            neg, up, w = m.fresh(), m.fresh(), m.fresh()
            m.emit(f"{neg} = icmp slt i64 {x}, 0")
            m.emit(f"{up} = add i64 {x}, {int(e.wrap)}")
            m.emit(f"{w} = select i1 {neg}, i64 {up}, i64 {x}")
            x = w
        return m._clamp(x, e.lo, e.hi)
    if isinstance(e, Scalar) and hasattr(e.atom, "val"):
        return str(int(e.atom.val))
    if isinstance(e, (Load, Scalar)):
        var = e.var if isinstance(e, Load) else e.atom
        ty = numpy_abi.llvm_type(m.arg_ty(var.aval))
        scalar = not var.aval.shape and var in m.names     # (x[i] of a loop's counter)
        if ty not in _INDEX or not scalar and var not in m.arrays:
            raise Refused(f"an index array of {var.aval}")
        if scalar:
            r = m.names[var]
        else:
            data, shape = m.arrays[var]
            r = m.fresh()
            m.emit(f"{r} = load {ty}, ptr {m._address(data, shape, e.index, ty)}")
        if ty == "i64":
            return r
        w = m.fresh()         # (as the Numba path's np.int64(i): by the index's sign)
        m.emit(f"{w} = {'zext' if var.aval.dtype.kind == 'u' else 'sext'} {ty} {r} to i64")
        return w
    return m.index(e)
