"""Small arrays become scalar locals: a Jaxpr -> Jaxpr pass before fusion (backend-neutral).

ODE states, 3-vectors, quaternions and small matrices written NumPy-style (`xnp.stack`,
`s[0]`, `s + dt * k`) would otherwise be arrays: every intermediate a heap allocation and a
tiny loop, in every iteration of a `fori_loop`.  Here each value of static shape with at
most `MAX_ELEMENTS` elements is represented by its elements, one rank-0 value each, and
the equations on it are rewritten elementwise:

    z:f64[3] = concatenate w x y;  aa:f64[3] = mul 0.005 z        (before)
    aa0 = mul 0.005 w;  aa1 = mul 0.005 x;  aa2 = mul 0.005 y     (after: three scalars)

Rewritten: elementwise primitives, broadcast_in_dim, reshape, squeeze, transpose, rev,
static slice, concatenate, pad, iota, reductions (sum, max, min, prod, and, or), and small
dot_generals.  Any other consumer gets the array back, built once where it is needed
(`select_n` over an iota: one fused loop, no temporaries); an array input is read element by
element (`x[2]`, a view read).  Loops are where this pays: the carries of `scan`, `for_loop`
and `while` that are small become scalar carries, and the per-iteration slices of a scan's
`xs`/`ys` become one column each (the reverse sweep of `grad` through a `fori_loop` reads
its residuals that way), so the loop body allocates nothing.

Only loop bodies are rewritten: straight-line code runs once per call, where an allocation
costs little and a 2x3 array spelled as six statements would cost Numba compile time (and
readability) for nothing.

The pass is an interpreter run under a Builder, like the transforms: `scalarize(closed)`
returns a new ClosedJaxpr computing the same values.  `XFORMS_SCALARIZE=0` turns it off.
"""
import contextvars
import itertools

import numpy as np

from xforms import config
from xforms.core import trace as core, source_info
from xforms.core import staging
from xforms.core.ir import ClosedJaxpr, Literal
from xforms.core.registry import RuleTable
from xforms.primitives import elementwise as E
from xforms.primitives import structural as S
from xforms.transforms.simplify import dce

from .fusion_classes import REDUCTIONS, is_elementwise
from .shape_symbols import NamedLiteral, is_symbolic

MAX_ELEMENTS = 32          # arrays up to this many elements become scalars
MAX_DOT_MACS = 512         # dot_generals up to this many multiply-adds are unrolled
ENABLED = config.SCALARIZE


def small(aval):
    # a symbolic size (xforms/kernels/prepare/shape_symbols.py) varies between calls: never unrolled
    return (0 < len(aval.shape) and 0 < aval.size <= MAX_ELEMENTS
            and not is_symbolic(aval.shape))


class Val:
    """One value: as an array (`arr`), as its elements in row-major order (`elems`, for small
    arrays), or as columns (`cols`: one array of shape `lead` per trailing element, for the
    stacked xs/ys of a scan).  Each form is built from another on first use."""
    __slots__ = ("aval", "arr", "elems", "cols")

    def __init__(self, aval, arr=None, elems=None, cols=None):
        self.aval, self.arr, self.elems, self.cols = aval, arr, elems, cols

    def array(self):
        if self.arr is None:
            self.arr = (_stack(self.elems, self.aval) if self.elems is not None
                        else _join_cols(self.cols, self.aval))
        return self.arr

    def elements(self):
        if self.elems is None:
            self.elems = _explode(self.array(), self.aval)
        return self.elems

    def columns(self, lead):
        """One array of shape `lead` per element of the trailing (small) shape."""
        if self.cols is None:
            self.cols = _split_cols(self.array(), self.aval, len(lead))
        return self.cols


def _explode(x, aval):
    if not aval.shape:
        return [x]
    out = []
    for idx in np.ndindex(*aval.shape):
        piece = S.slice(x, idx, tuple(i + 1 for i in idx))
        out.append(S.reshape(piece, ()))
    return out


def _stack(elems, aval):
    if not aval.shape:
        return elems[0]
    elems = [e if isinstance(e, core.Tracer) else np.asarray(e, aval.dtype)[()] for e in elems]
    n = len(elems)
    if n == 1:
        return S.broadcast_in_dim(elems[0], aval.shape, ())
    which = S.iota(np.int32, (n,), 0)
    # one fused loop choosing among the scalars; a full-shape first case fixes the shape
    first = S.broadcast_in_dim(elems[0], (n,), ())
    return S.reshape(E.select_n(which, first, *elems[1:]), aval.shape)


def _split_cols(x, aval, nlead):
    lead, trail = aval.shape[:nlead], aval.shape[nlead:]
    cols = []
    for idx in np.ndindex(*trail):
        start = (0,) * nlead + idx
        limit = lead + tuple(i + 1 for i in idx)
        cols.append(S.reshape(S.slice(x, start, limit), lead))
    return cols


def _join_cols(cols, aval):
    lead = core.get_aval(cols[0]).shape
    trail = aval.shape[len(lead):]
    parts = [S.reshape(c, lead + (1,)) for c in cols]
    joined = S.concatenate(parts, len(lead)) if len(parts) > 1 else parts[0]
    return S.reshape(joined, lead + trail)


# ---- the interpreter ---------------------------------------------------------------------
# the backend's `keep(eqn)`: True leaves that loop's small arrays as arrays
_KEEP = contextvars.ContextVar("scalarize_keep", default=None)


def scalarize(closed, keep=None):
    """-> an equivalent ClosedJaxpr in which small arrays are scalars (see module doc).
    `keep(eqn)`, when given, names loops a backend runs well as they are: the CUDA backend
    keeps the loops it runs lane-local (one thread per element), which scalar carries would
    serialise into one thread.

        scalarize(closed, keep=lambda e: e.prim.name == "while")   # rewrite scans only
    """
    if not ENABLED or not scalarize_pays(closed.jaxpr):
        return closed
    token = _KEEP.set(keep)
    try:
        return _scalarize(closed)
    finally:
        _KEEP.reset(token)


def _scalarize(closed):
    jaxpr = closed.jaxpr

    def fun(*args):
        env = {v: Val(v.aval, arr=a) for v, a in zip(jaxpr.invars, args)}
        for v, c in zip(jaxpr.constvars, closed.consts):
            env[v] = Val(v.aval, arr=c)
        run(jaxpr, env, in_loop=False)
        return [_read(env, a).array() for a in jaxpr.outvars]

    new, _ = staging.trace_to_jaxpr(fun, [v.aval for v in jaxpr.invars])
    return ClosedJaxpr(dce(new.jaxpr), new.consts)


def scalarize_pays(jaxpr, in_loop=False):
    """Only programs with a loop that computes on small arrays."""
    for e in jaxpr.eqns:
        if in_loop and any(small(v.aval) for v in e.outvars):
            return True
        for p in e.params.values():
            if isinstance(p, ClosedJaxpr) and scalarize_pays(
                    p.jaxpr, in_loop or e.prim in CONTROL):
                return True
    return False


def _read(env, a):
    if isinstance(a, Literal):
        return literal_val(a)
    return env[a]


def literal_val(a):
    """The Val of Literal `a`.  A value printed as a size symbol (xforms/kernels/prepare/shape_symbols.py)
    is a Python int or float, which would re-trace as int64/float64 whatever the literal's
    dtype (a float32 1/n): the literal atom itself is bound, which the tracer keeps."""
    v = a if isinstance(a.val, NamedLiteral) else a.val
    return Val(a.aval, arr=v, elems=[v] if not a.aval.shape else None)


def run(jaxpr, env, in_loop=True):
    """Interpret `jaxpr` on Vals in `env`; equations on small arrays are rewritten
    elementwise inside loop bodies (`in_loop`), loops are rebuilt everywhere."""
    for eqn in jaxpr.eqns:
        ins = [_read(env, a) for a in eqn.invars]
        with source_info.user_frame_override(eqn.source_info):
            outs = _rewrite(eqn, ins, in_loop)
        for v, o in zip(eqn.outvars, outs):
            env[v] = o


def _rewrite(eqn, ins, in_loop):
    rule = RULES.get(eqn.prim) if in_loop else None
    if in_loop and is_elementwise(eqn) and eqn.prim.name != "iota":
        rule = _elementwise
    if rule is not None and all(small(v.aval) or not v.aval.shape for v in eqn.outvars) \
            and all(small(v.aval) or not v.aval.shape for v in ins) \
            and any(v.aval.shape for v in list(eqn.outvars) + ins):
        outs = rule(eqn, ins)
        if outs is not None:
            return [Val(v.aval, elems=o) for v, o in zip(eqn.outvars, outs)]
    ctrl = CONTROL.get(eqn.prim)
    keep = _KEEP.get()
    if ctrl is not None and not (keep is not None and keep(eqn)):
        outs = ctrl(eqn, ins)
        if outs is not None:
            return outs
    res = eqn.prim.bind(*[v.array() for v in ins], **eqn.params)
    res = res if eqn.prim.multiple_results else [res]
    return [Val(v.aval, arr=r) for v, r in zip(eqn.outvars, res)]


# ---- rules for single equations: element lists in, element lists out -------------------------
def _elementwise(eqn, ins):
    n = max(v.aval.size if v.aval.shape else 1 for v in ins)
    cols = [v.elements() if v.aval.shape else v.elements() * n for v in ins]
    outs = [eqn.prim.bind(*args, **eqn.params) for args in zip(*cols)]
    if eqn.prim.multiple_results:
        return [list(o) for o in zip(*outs)]
    return [outs]


def _flat(idx, shape):
    return int(np.ravel_multi_index(idx, shape)) if shape else 0


def _gather(eqn, ins, source):
    """Output element at each index is input element `source(idx)` (a flat index)."""
    x = ins[0].elements()
    shape = eqn.outvars[0].aval.shape
    return [[x[source(idx)] for idx in np.ndindex(*shape)]]


def _broadcast(eqn, ins):
    xs = ins[0].aval.shape
    dims = eqn.params["broadcast_dimensions"]
    return _gather(eqn, ins, lambda idx: _flat(
        tuple(0 if xs[k] == 1 else idx[d] for k, d in enumerate(dims)), xs))


def _same_order(eqn, ins):
    return [ins[0].elements()]


def _transpose(eqn, ins):
    xs, perm = ins[0].aval.shape, eqn.params["permutation"]
    inv = np.argsort(perm)
    return _gather(eqn, ins, lambda idx: _flat(tuple(idx[inv[k]] for k in range(len(xs))), xs))


def _rev(eqn, ins):
    xs, dims = ins[0].aval.shape, eqn.params["dimensions"]
    return _gather(eqn, ins, lambda idx: _flat(
        tuple(xs[k] - 1 - i if k in dims else i for k, i in enumerate(idx)), xs))


def _slice(eqn, ins):
    xs = ins[0].aval.shape
    st, strides = eqn.params["start_indices"], eqn.params["strides"] or (1,) * len(xs)
    return _gather(eqn, ins, lambda idx: _flat(
        tuple(s + i * k for s, i, k in zip(st, idx, strides)), xs))


def _concatenate(eqn, ins):
    d = eqn.params["dimension"]
    bounds = list(itertools.accumulate(v.aval.shape[d] for v in ins))
    shape = eqn.outvars[0].aval.shape
    out = []
    for idx in np.ndindex(*shape):
        k = next(j for j, b in enumerate(bounds) if idx[d] < b)
        local = list(idx)
        local[d] -= bounds[k - 1] if k else 0
        out.append(ins[k].elements()[_flat(tuple(local), ins[k].aval.shape)])
    return [out]


def _pad(eqn, ins):
    x, fill = ins[0], ins[1].elements()[0]
    cfg = eqn.params["padding_config"]
    xs = x.aval.shape
    out = []
    for idx in np.ndindex(*eqn.outvars[0].aval.shape):
        src = []
        for i, (lo, _, interior), n in zip(idx, cfg, xs):
            j, r = divmod(i - lo, interior + 1)
            src.append(j if r == 0 and 0 <= j < n and i >= lo else None)
        out.append(fill if None in src else x.elements()[_flat(tuple(src), xs)])
    return [out]


def _iota(eqn, ins):
    p = eqn.params
    return [[np.asarray(idx[p["dimension"]], p["dtype"])[()]
             for idx in np.ndindex(*p["shape"])]]


# a reduction's monoid (its facts' `reduce_op`) -> the elementwise function that folds it
_FOLD = {"sum": E.add, "max": E.max, "min": E.min, "prod": E.mul, "and": E.and_, "or": E.or_}


def _reduce(eqn, ins):
    op = _FOLD[eqn.prim.facts.reduce_op]
    xs, axes = ins[0].aval.shape, eqn.params["axes"]
    x = ins[0].elements()
    kept = [d for d in range(len(xs)) if d not in axes]
    groups = {}
    for idx in np.ndindex(*xs):
        groups.setdefault(tuple(idx[d] for d in kept), []).append(x[_flat(idx, xs)])
    out = []
    for key in np.ndindex(*[xs[d] for d in kept]):
        terms = groups[tuple(key)]
        acc = terms[0]
        for t in terms[1:]:
            acc = op(acc, t)
        out.append(acc)
    return [out]


def _dot(eqn, ins):
    x, y = ins
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    xs, ys = x.aval.shape, y.aval.shape
    free_x = [d for d in range(len(xs)) if d not in lc and d not in lb]
    free_y = [d for d in range(len(ys)) if d not in rc and d not in rb]
    csize = int(np.prod([xs[d] for d in lc], dtype=np.int64))
    if eqn.outvars[0].aval.size * csize > MAX_DOT_MACS:
        return None
    xe, ye = x.elements(), y.elements()
    out = []
    for idx in np.ndindex(*eqn.outvars[0].aval.shape):
        nb = len(lb)
        b, fx, fy = idx[:nb], idx[nb:nb + len(free_x)], idx[nb + len(free_x):]
        acc = None
        for c in np.ndindex(*[xs[d] for d in lc]):
            xi, yi = [0] * len(xs), [0] * len(ys)
            for d, v in zip(lb, b):
                xi[d] = v
            for d, v in zip(rb, b):
                yi[d] = v
            for d, v in zip(free_x, fx):
                xi[d] = v
            for d, v in zip(free_y, fy):
                yi[d] = v
            for d, e, v in zip(lc, rc, c):
                xi[d], yi[e] = v, v
            term = E.mul(xe[_flat(tuple(xi), xs)], ye[_flat(tuple(yi), ys)])
            acc = term if acc is None else E.add(acc, term)
        if acc is None:
            acc = np.zeros((), eqn.outvars[0].aval.dtype)[()]
        out.append(acc)
    return [out]


RULES = RuleTable({
    "broadcast_in_dim": _broadcast, "reshape": _same_order, "squeeze": _same_order,
    "transpose": _transpose, "rev": _rev, "slice": _slice, "concatenate": _concatenate,
    "pad": _pad, "iota": _iota, "dot_general": _dot,
    **{p: _reduce for p in REDUCTIONS if p.facts.reduce_op in _FOLD},
})
CONTROL = RuleTable()     # loop rules, registered by xforms/kernels/prepare/scalarize_loops.py (they call `run`)
