"""`xforms.lax`: structured control flow and the lax-level operations (JAX's names).

Branch and body functions are traced once, with abstract values, into sub-programs of the
`cond`, `while`, `for_loop` and `scan` primitives (xforms/primitives/control/control_flow.py), so
each becomes one real branch or loop in compiled code.  Every construct supports jvp, vmap
and reverse mode -- `while_loop` too, with a data-dependent trip count:

    >>> def pow_loop(x, n):
    ...     return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * x), (0, 1.0))[1]
    >>> xf.grad(pow_loop)(2.0, 5)         # 5 * 2.0 ** 4
    Array(80.)
"""
import builtins

import numpy as np

from ..core import trace as core, source_info
from ..core.avals import ShapedArray, promote_types
from ..core.trace import Tracer
from ..primitives.control import control_flow as cf
from ..primitives.control.cond import bind_cond
from ..primitives.elementwise import (abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
                                      cbrt, ceil, complex, convert_element_type, cos, cosh,
                                      div, eq, exp, exp2, expm1, floor, ge, gt, imag,
                                      integer_pow, is_finite, le, log, log1p, logistic, lt, max,
                                      min, mul, ne, neg, pow, real, rem, rsqrt, select_n,
                                      sign, sin, sinh, sqrt, sub, tan, tanh)
from ..primitives.elementwise import stop_gradient  # noqa: F401  (lax.stop_gradient)
from ..primitives.elementwise import conj as _conj
from ..primitives.elementwise import and_ as bitwise_and, not_ as bitwise_not, \
    or_ as bitwise_or, xor as bitwise_xor
from ..primitives.bits.shifts import shift_left, shift_right_arithmetic, shift_right_logical
from ..primitives.indexing import dynamic_slice, dynamic_update_slice
from ..primitives.control.loops import for_loop_p, while_p
from ..primitives.reductions import (argmax, argmin, reduce_and, reduce_max, reduce_min,
                                     reduce_or, reduce_prod, reduce_sum)
from ..primitives.control.scan import scan_p
from ..primitives.cumulative import cumlogsumexp, cummax, cummin, cumprod, cumsum  # noqa: F401
from ..primitives.structural import (broadcast_in_dim, concatenate, expand_dims, pad, reshape,
                                     rev, slice, squeeze, transpose)
from ..primitives.structural import full as _full, iota as _iota
from ..core.source_info import describe_function
from ..transforms.vmap import vmap_jaxpr
from ..tree_util import tree_flatten, tree_map, tree_unflatten
from .sorting import sort, sort_key_val, top_k  # noqa: F401
from .bits import (bitcast_convert_type, clz, mulhi, population_count, reduce_precision,
                   reduce_xor)  # noqa: F401
from .helpers import (approx_max_k, approx_min_k, batch_matmul, broadcast, broadcast_like,
                      broadcast_shapes, broadcast_to_rank, collapse, dot_general,
                      DotDimensionNumbers, dtype, dynamic_index_in_dim,
                      dynamic_update_index_in_dim, empty, fft, FftType, full_like, index_in_dim,
                      optimization_barrier, Precision, PrecisionLike, round, RoundingMethod,
                      slice_in_dim, split, stack, tile, unstack)  # noqa: F401
from .scans import associative_scan, reduce  # noqa: F401
from .gather_scatter import (gather, GatherDimensionNumbers, GatherScatterMode, scatter,
                             scatter_add, scatter_max, scatter_min, scatter_mul, scatter_sub,
                             ScatterDimensionNumbers)  # noqa: F401
from . import gather_scatter as _gs
from .special import (bessel_i0e, bessel_i1e, betainc, digamma, erf, erf_inv, erfc, igamma,
                      igamma_grad_a, igammac, lgamma, nextafter, polygamma, random_gamma_grad,
                      zeta)  # noqa: F401

_i64 = ShapedArray((), np.int64)


# ---- helpers: pytrees of operands, tracing user functions, carry type checks ---------------
def _flatten(tree):
    leaves, treedef = tree_flatten(tree)
    return [x if isinstance(x, Tracer) else core.canonical_value(x) for x in leaves], treedef


def _where():
    info = source_info.current()
    return f" (called at {info})" if info else ""


def _trace(fun, in_avals, call):
    """Trace `call(args) -> pytree` (args: flat tracers); -> (jaxpr, consts, out treedef)."""
    store = {}

    def flat(*args):
        leaves, treedef = tree_flatten(call(list(args)))
        store["tree"] = treedef
        return leaves
    j, consts = cf.trace(flat, in_avals, fun_for_errors=fun)
    return j, consts, store["tree"]


def _leaf_names(treedef, base=""):
    if treedef.node is None:
        return [base]
    if treedef.node is dict:
        keys = [f"[{k!r}]" for k in treedef.aux]
    elif treedef.node == "namedtuple":
        keys = [f".{f}" for f in treedef.aux[0]._fields]
    else:
        keys = [f"[{i}]" for i in range(len(treedef.children))]
    return [n for c, k in zip(treedef.children, keys) for n in _leaf_names(c, base + k)]


def _join_carry(what, fun, in_tree, out_tree, in_avals, out_avals, where):
    """Check a body's output carry against its input.  Weakly typed (Python scalar) inputs are
    promoted to the body's dtype and weakly typed outputs cast to the carry's, as in JAX.
    -> (promoted input avals or None, per-output dtype casts)."""
    if in_tree != out_tree:
        raise TypeError(f"{what}: {describe_function(fun)} must return a carry with the same "
                        f"structure as its input, but the input is {in_tree} and the output is "
                        f"{out_tree}{where}")
    new_in, casts, bad = list(in_avals), [None] * len(in_avals), []
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.shape != b.shape:
            bad.append(k)
        elif a.dtype != b.dtype:
            if a.weak_type:   # a Python scalar init takes the join of both types, as in JAX
                dt, weak = promote_types((a.dtype, True), (b.dtype, b.weak_type))
                if dt != a.dtype:
                    new_in[k] = ShapedArray(a.shape, dt, weak)
                    continue
            if b.weak_type:
                casts[k] = a.dtype
            else:
                bad.append(k)
    if bad:
        names = _leaf_names(in_tree, "carry")
        detail = "; ".join(f"{names[k]} is {in_avals[k].str_short()} on input but "
                           f"{out_avals[k].str_short()} on output" for k in bad)
        raise TypeError(f"{what}: {describe_function(fun)} changes the type of its carry: "
                        f"{detail}{where}. A loop carry must keep its shape and dtype; convert "
                        "the initial value or the body's result (e.g. with .astype).")
    return (new_in if new_in != list(in_avals) else None), casts


def _cast_outs(j, consts, casts, offset=0):
    """Append dtype conversions to outputs offset+k where casts[k] is set."""
    if not any(c is not None for c in casts):
        return j, consts

    def f(*args):
        outs = cf.call(j, *args)
        return [o if k < offset or k - offset >= len(casts) or casts[k - offset] is None
                else convert_element_type(o, casts[k - offset]) for k, o in enumerate(outs)]
    j2, c2 = cf.trace(f, j.in_avals)
    assert not c2
    return j2, consts


def _promote_leaves(leaves, avals):
    return [x if core.get_aval(x).dtype == a.dtype else convert_element_type(x, a.dtype)
            for x, a in zip(leaves, avals)]


def _trace_carry(what, fun, tree, avals, call, make_in=lambda a: a, offset=0,
                 subtree=lambda t: t):
    """Trace a loop body `call(flat args) -> pytree` whose flat output holds the carry at
    [offset, offset + n) with structure `subtree(out treedef)`; the inputs are make_in(carry
    avals).  Repeats while weakly typed inputs get promoted.
    -> (jaxpr, consts, carry avals, out treedef)."""
    where = _where()
    n = len(avals)
    for _ in range(n + 1):
        j, consts, out_tree = _trace(fun, make_in(list(avals)), call)
        new_in, casts = _join_carry(what, fun, tree, subtree(out_tree),
                                    avals, j.out_avals[offset:offset + n], where)
        if new_in is None:
            j, consts = _cast_outs(j, consts, casts, offset)
            return j, consts, avals, out_tree
        avals = new_in
    raise AssertionError("carry promotion did not converge")


# ---- cond / switch -----------------------------------------------------------------------
def cond(pred, true_fun, false_fun, *operands):
    """`true_fun(*operands)` if pred else `false_fun(*operands)`, as one branch in the IR.

    Both branches are traced; they must return the same structure, shapes and dtypes.

    >>> lax.cond(x > 0, lambda x: x * 2.0, lambda x: -x, x)
    """
    a = core.get_aval(pred)
    if a.shape != ():
        raise TypeError(f"cond: pred must be a scalar, got {a.str_short()}{_where()}; use "
                        "lax.select or xnp.where for elementwise choice")
    if a.dtype != np.bool_:
        pred = ne(pred, a.dtype.type(0))
    index = convert_element_type(pred, np.int32)
    return _switch(index, (false_fun, true_fun), operands, "cond")


def switch(index, branches, *operands):
    """`branches[index](*operands)`, the index clamped into range as in JAX.

    >>> lax.switch(i, [lambda x: x, lambda x: x ** 2, lambda x: -x], x)
    """
    branches = tuple(branches)
    if not branches:
        raise ValueError("switch: branches must be a non-empty sequence of functions")
    a = core.get_aval(index)
    if a.shape != () or a.dtype.kind not in "iub":
        raise TypeError(f"switch: index must be an integer scalar, got {a.str_short()}{_where()}")
    index = convert_element_type(index, np.int32)
    index = min(max(index, np.int32(0)), np.int32(len(branches) - 1))
    if len(branches) == 1:
        return branches[0](*operands)
    return _switch(index, branches, operands, "switch")


def _switch(index, branches, operands, what):
    where = _where()
    leaves, tree = _flatten(tuple(operands))
    avals = [core.get_aval(x) for x in leaves]
    traced = [_trace(b, avals, lambda args, b=b: b(*tree_unflatten(tree, args)))
              for b in branches]
    tree0 = traced[0][2]
    for b, (_, _, t) in zip(branches, traced):
        if t != tree0:
            raise TypeError(f"{what}: the branches must return the same structure, but "
                            f"{describe_function(branches[0])} returns {tree0} and "
                            f"{describe_function(b)} returns {t}{where}")
    outs_avals = [j.out_avals for j, _, _ in traced]
    casts = [[None] * len(outs_avals[0]) for _ in branches]
    for k in range(len(outs_avals[0])):
        col = [o[k] for o in outs_avals]
        shapes_ok = all(c.shape == col[0].shape for c in col)
        dt, _ = promote_types(*((c.dtype, c.weak_type) for c in col)) if shapes_ok else (None, 0)
        if shapes_ok and all(c.dtype == dt or c.weak_type for c in col):
            for b, c in enumerate(col):
                if c.dtype != dt:
                    casts[b][k] = dt
            continue
        name = _leaf_names(tree0, "output")[k]
        detail = ", ".join(f"{describe_function(b)} gives {c.str_short()}"
                           for b, c in zip(branches, col))
        raise TypeError(f"{what}: the branches must return the same shapes and dtypes, but for "
                        f"{name} {detail}{where}")
    pairs = [_cast_outs(j, c, cs) for (j, c, _), cs in zip(traced, casts)]
    return tree_unflatten(tree0, bind_cond(index, leaves, pairs))


# ---- while_loop / fori_loop ----------------------------------------------------------------
def while_loop(cond_fun, body_fun, init_val):
    """`while cond_fun(val): val = body_fun(val)` as one loop in the IR.

    Differentiable in both modes (reverse mode records the trip count and recomputes what
    the backward sweep needs; see xforms/primitives/control/control_flow.py).

    >>> lax.while_loop(lambda x: x < 10.0, lambda x: x * 2.0, 1.0)
    Array(16.)
    """
    leaves, tree = _flatten(init_val)
    avals = [core.get_aval(x) for x in leaves]
    bj, bc, avals, _ = _trace_carry("while_loop", body_fun, tree, avals,
                                    lambda a: body_fun(tree_unflatten(tree, a)))
    leaves = _promote_leaves(leaves, avals)
    cj, cc, ctree = _trace(cond_fun, avals, lambda a: cond_fun(tree_unflatten(tree, a)))
    out = cj.out_avals
    if ctree.num_leaves != 1 or out[0].shape != () or out[0].dtype != np.bool_:
        raise TypeError(f"while_loop: {describe_function(cond_fun)} must return a boolean "
                        f"scalar, but it returns {[a.str_short() for a in out]}{_where()}")
    outs = while_p.bind(*cc, *bc, *leaves, cond_jaxpr=cj, body_jaxpr=bj,
                        cond_nconsts=len(cc), body_nconsts=len(bc))
    return tree_unflatten(tree, outs)


def _is_static_int(x):
    return not isinstance(x, Tracer) and (isinstance(x, (int, np.integer)) or (
        isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu"))


def fori_loop(lower, upper, body_fun, init_val):
    """`for i in range(lower, upper): val = body_fun(i, val)`.

    With static (Python/NumPy integer) bounds it is a `scan`; with traced bounds a loop over a
    dynamic trip count.  Both are reverse-differentiable.

    >>> lax.fori_loop(0, 5, lambda i, x: x + i, 0)
    Array(10)
    """
    leaves, tree = _flatten(init_val)
    avals = [core.get_aval(x) for x in leaves]
    if _is_static_int(lower) and _is_static_int(upper):
        dt = np.result_type(*[x if isinstance(x, (np.ndarray, np.integer)) else np.int64
                              for x in (lower, upper)])
        lo, length = dt.type(lower), builtins.max(int(upper) - int(lower), 0)
        ia = ShapedArray((), dt)

        def step(a):
            return [a[0] + dt.type(1), body_fun(a[0], tree_unflatten(tree, a[1:]))]
        j, consts, avals, _ = _trace_carry("fori_loop", body_fun, tree, avals, step,
                                           lambda a: [ia] + a, 1, lambda t: t.children[1])
        outs = scan_p.bind(*consts, lo, *_promote_leaves(leaves, avals), jaxpr=j,
                           length=length, reverse=False, num_consts=len(consts),
                           num_carry=1 + len(leaves))
        return tree_unflatten(tree, outs[1:])
    from ..numpy._util import promote
    lo, hi = promote(lower, upper, name="fori_loop")
    la = core.get_aval(lo)
    if la.shape != () or la.dtype.kind not in "iu":
        raise TypeError(f"fori_loop: bounds must be integer scalars, got {la.str_short()}"
                        f"{_where()}")
    la = la.strip_weak()
    n = max(convert_element_type(sub(hi, lo), np.int64), np.int64(0))

    def step(a):
        i = add(a[1], convert_element_type(a[0], la.dtype))
        return body_fun(i, tree_unflatten(tree, a[2:]))
    j, consts, avals, _ = _trace_carry("fori_loop", body_fun, tree, avals, step,
                                       lambda a: [_i64, la] + a)
    k = len(consts)
    j = cf.permute_invars(j, [k] + list(range(k)) + list(range(k + 1, len(j.jaxpr.invars))))
    outs = for_loop_p.bind(n, *consts, lo, *_promote_leaves(leaves, avals), body_jaxpr=j,
                           num_consts=k + 1, reverse=False)
    return tree_unflatten(tree, outs)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with the elementwise `func` applied at each index (as often as the index
    occurs, as in JAX); `update_shape` is the shape updates would have.

    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> lax.scatter_apply(xnp.ones(3), xnp.array([[1], [1]]), lambda v: 2 * v, dn,
    ...                   update_shape=(2,))                                   # [1, 4, 1]
    """
    x = _gs.asarray_operand(operand)
    shape = core.get_aval(x).shape
    count = _gs.scatter_add(_full(shape, 0, np.dtype(np.int64)), scatter_indices,
                            _full(tuple(update_shape), 1, np.dtype(np.int64)),
                            dimension_numbers, mode=mode)
    rounds = reduce_max(count, tuple(range(len(shape))))
    known = rounds if not isinstance(rounds, Tracer) else rounds._val
    if known is not None:
        rounds = int(np.asarray(known))
    return fori_loop(0, rounds, lambda r, y: select_n(gt(count, r), y, func(y)), x)


# ---- scan / map ----------------------------------------------------------------------------
def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop `carry, y = f(carry, x)` over the leading axis of xs; -> (carry, stacked ys).

    >>> lax.scan(lambda c, x: (c + x, c * x), 0.0, xnp.arange(4.0))
    """
    c_leaves, c_tree = _flatten(init)
    x_leaves, x_tree = _flatten(xs)
    x_avals = [core.get_aval(x) for x in x_leaves]
    lengths = {a.shape[0] if a.ndim else None for a in x_avals}
    if None in lengths:
        raise ValueError(f"scan: xs leaves must be arrays with a leading axis to scan over, got "
                         f"{[a.str_short() for a in x_avals]}{_where()}")
    if length is not None:
        length = int(length)
        if lengths - {length}:
            raise ValueError(f"scan: length={length} but xs have leading axes {sorted(lengths)}"
                             f"{_where()}")
    elif len(lengths) == 1:
        length = lengths.pop()
    else:
        raise ValueError("scan: xs must all have the same leading axis length, got "
                         f"{sorted(lengths)}{_where()}" if lengths else
                         f"scan: give length= when xs is None{_where()}")
    s_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in x_avals]
    nc = len(c_leaves)

    def step(a):
        out = f(tree_unflatten(c_tree, a[:nc]), tree_unflatten(x_tree, a[nc:]))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"scan: {describe_function(f)} must return a pair (carry, y), got "
                            f"{type(out).__name__}")
        return tuple(out)
    avals = [core.get_aval(x) for x in c_leaves]
    j, consts, avals, out_tree = _trace_carry("scan", f, c_tree, avals, step,
                                              lambda a: a + s_avals, 0, lambda t: t.children[0])
    outs = scan_p.bind(*consts, *_promote_leaves(c_leaves, avals), *x_leaves, jaxpr=j,
                       length=length, reverse=bool(reverse), num_consts=len(consts),
                       num_carry=nc)
    y_tree = out_tree.children[1]
    return tree_unflatten(c_tree, outs[:nc]), tree_unflatten(y_tree, outs[nc:])


def map(f, xs, *, batch_size=None):
    """`f` applied to each slice of xs along the leading axis (a scan): stacked results.
    With `batch_size`, the scan runs over batches of that many slices, each batch
    vectorised (vmap) as in JAX; a remainder batch runs after it.

    >>> lax.map(lambda x: x ** 2, xnp.arange(3.0))
    Array([0., 1., 4.])
    """
    leaves, tree = _flatten(xs)
    n = core.get_aval(leaves[0]).shape[0] if leaves else 0
    if batch_size is None or n == 0:      # (an empty xs: the scan gives empty results)
        if batch_size is not None and int(batch_size) < 1:
            raise ValueError(f"map: batch_size must be a positive integer, got {batch_size}")
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    b = int(batch_size)
    if b < 1:
        raise ValueError(f"map: batch_size must be a positive integer, got {batch_size}")
    full_n = n - n % b
    parts = []
    if full_n:
        batches = [reshape(slice_in_dim(x, 0, full_n), (full_n // b, b) +
                           core.get_aval(x).shape[1:]) for x in leaves]
        ys = scan(lambda c, x: (c, _vmapped(f, x)), (), tree_unflatten(tree, batches))[1]
        parts.append(tree_map(lambda y: collapse(y, 0, 2), ys))
    if n % b:
        rest = tree_unflatten(tree, [slice_in_dim(x, full_n, n) for x in leaves])
        parts.append(_vmapped(f, rest))
    if len(parts) == 1:
        return parts[0]
    return tree_map(lambda y, z: concatenate([y, z], 0), *parts)


def _vmapped(f, xs):
    """vmap(f)(xs) over the leading axis, built from vmap's IR transform (the `vmap` API
    sits above lax)."""
    leaves, tree = _flatten(xs)
    avals = [core.get_aval(x) for x in leaves]
    size = avals[0].shape[0]
    per = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in avals]
    j, consts, out_tree = _trace(f, per, lambda a: f(tree_unflatten(tree, a)))
    jb = vmap_jaxpr(j, [None] * len(consts) + [0] * len(leaves), size)
    return tree_unflatten(out_tree, cf.call(jb, *consts, *leaves))


# ---- elementwise extras with JAX's signatures --------------------------------------------
def select(pred, on_true, on_false):
    """Elementwise `on_true if pred else on_false` (pred: bool, same shape or scalar)."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    """Elementwise `min(max(x, min), max)` (JAX's argument order)."""
    from ..primitives import elementwise as ew
    return ew.min(ew.max(x, min), max)


def square(x):
    return integer_pow(x, 2)


def reciprocal(x):
    return integer_pow(x, -1)


def iota(dtype, size):
    """[0, 1, ..., size - 1] of `dtype`."""
    return _iota(dtype, (int(size),), 0)


def broadcasted_iota(dtype, shape, dimension):
    return _iota(dtype, shape, dimension)


def full(shape, fill_value, dtype=None):
    """`shape` filled with the scalar `fill_value`; a traced value keeps its derivative.
    >>> lax.full((2, 3), 1.5)"""
    dtype = np.dtype(dtype) if dtype is not None else core.get_aval(fill_value).dtype
    return _full(shape, fill_value, dtype)


def conj(x):
    """The complex conjugate; a real operand becomes complex first, as in JAX (lax.conj of
    float32 is complex64).  >>> lax.conj(np.array([1.0, 2.0]))"""
    dt = core.get_aval(x).dtype
    if dt.kind == "f":
        x = convert_element_type(x, np.result_type(dt, np.complex64))
    elif dt.kind != "c":
        raise TypeError(f"lax.conj: needs a float or complex operand, got {dt}")
    return _conj(x)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix product of rank-1 or rank-2 operands (dot_general's keywords)."""
    nl = core.get_aval(lhs).ndim
    return dot_general(lhs, rhs, (((nl - 1,), (0,)), ((), ())), precision=precision,
                       preferred_element_type=preferred_element_type)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    shape = core.get_aval(operand).shape
    starts = [np.int64(0)] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    starts = [np.int64(0)] * core.get_aval(operand).ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


from .collectives import (all_gather, all_to_all, axis_index, axis_size, pmax,  # noqa: E402
                          pmean, pmin, ppermute, pshuffle, psum, psum_scatter)

from .convolution import (ConvDimensionNumbers, conv, conv_dimension_numbers,  # noqa: E402
                          conv_general_dilated, conv_transpose, conv_with_general_padding,
                          padtype_to_pads)
from .windowed import reduce_window  # noqa: E402
from .solves import custom_linear_solve, custom_root  # noqa: E402
from .convolution import conv_general_permutations  # noqa: E402,F401
from .shapes import (ConvGeneralDilatedDimensionNumbers,  # noqa: E402,F401
                     conv_general_dilated_patches, conv_general_shape_tuple,
                     conv_shape_tuple, conv_transpose_shape_tuple, reduce_window_shape_tuple)

__all__ = [
    "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "pshuffle",
    "all_to_all", "axis_index", "axis_size",
    "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
    "conv_dimension_numbers", "ConvDimensionNumbers", "padtype_to_pads", "reduce_window",
    "cond", "switch", "while_loop", "fori_loop", "scan", "map", "select", "stop_gradient",
    "clamp", "square", "reciprocal", "iota", "broadcasted_iota", "full", "dot",
    "dynamic_slice_in_dim", "dynamic_update_slice_in_dim",
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil",
    "complex", "conj", "convert_element_type", "cos", "cosh", "div", "eq", "exp", "exp2",
    "expm1", "floor", "ge", "gt", "imag", "integer_pow", "is_finite", "le", "log", "log1p",
    "logistic", "lt", "max", "min", "mul", "ne", "neg", "pow", "real", "rem", "round", "rsqrt",
    "select_n", "sign", "sin", "sinh", "sqrt", "sub", "tan", "tanh", "bitwise_and",
    "bitwise_not", "bitwise_or", "bitwise_xor", "dynamic_slice", "dynamic_update_slice",
    "argmax", "argmin", "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_prod",
    "reduce_sum", "broadcast_in_dim", "concatenate", "expand_dims", "pad", "reshape", "rev",
    "slice", "squeeze", "transpose", "dot_general",
    "shift_left", "shift_right_logical", "shift_right_arithmetic",
    "sort", "sort_key_val", "top_k",
    "associative_scan", "batch_matmul", "bessel_i0e", "bessel_i1e", "betainc",
    "bitcast_convert_type", "broadcast", "broadcast_like", "broadcast_shapes",
    "broadcast_to_rank", "clz", "collapse", "digamma", "dynamic_index_in_dim",
    "dynamic_update_index_in_dim", "empty", "erf", "erf_inv", "erfc", "full_like", "igamma",
    "igamma_grad_a", "igammac", "index_in_dim", "lgamma", "optimization_barrier", "polygamma",
    "population_count", "random_gamma_grad", "reduce_precision", "slice_in_dim", "split",
    "stack", "tile", "unstack", "zeta", "approx_max_k", "approx_min_k", "dtype", "mulhi",
    "reduce_xor", "fft", "FftType", "Precision", "conv_general_permutations",
    "conv_shape_tuple", "conv_general_shape_tuple", "conv_transpose_shape_tuple",
    "reduce_window_shape_tuple", "reduce", "conv_general_dilated_patches", "nextafter",
    "RoundingMethod", "custom_linear_solve", "custom_root",
]
from .primitive_objects import *  # noqa: E402,F401,F403  (JAX's primitive objects, lax.add_p)
from .primitive_objects import __all__ as _primitive_names  # noqa: E402
__all__ += _primitive_names


# Docstrings of the jax.lax names bound straight from their primitives (lambdas and binders
# made by the families' factories), under their lax names: the API reference finds them here.
_DOCS = {
    "argmax": "argmax(x, axis, index_dtype): the index of the largest element along `axis` "
              "(the first of equal ones; NaN counts as the largest).",
    "argmin": "argmin(x, axis, index_dtype): the index of the smallest element along `axis` "
              "(the first of equal ones; NaN counts as the smallest).",
    "bitwise_and": "bitwise_and(x, y): elementwise AND of integers or booleans.",
    "bitwise_not": "bitwise_not(x): elementwise NOT of integers or booleans.",
    "bitwise_or": "bitwise_or(x, y): elementwise OR of integers or booleans.",
    "bitwise_xor": "bitwise_xor(x, y): elementwise XOR of integers or booleans.",
    "concatenate": "concatenate(xs, dimension): the operands joined along `dimension` (equal "
                   "shapes elsewhere, one dtype).",
    "dynamic_slice": "dynamic_slice(x, starts, slice_sizes): the window of static sizes at "
                     "traced starts, clamped into range; a negative start counts from the end.",
    "dynamic_update_slice": "dynamic_update_slice(x, u, starts): x with the window at starts "
                            "(clamped into range) replaced by u.",
    "integer_pow": "integer_pow(x, y): x ** y for a static Python integer y, by repeated "
                   "multiplication.",
    "reduce_and": "reduce_and(x, axes): logical AND over `axes`.",
    "reduce_max": "reduce_max(x, axes): the maximum over `axes` (NaN propagates).",
    "reduce_min": "reduce_min(x, axes): the minimum over `axes` (NaN propagates).",
    "reduce_or": "reduce_or(x, axes): logical OR over `axes`.",
    "reduce_prod": "reduce_prod(x, axes): the product over `axes`.",
    "reshape": "reshape(x, new_sizes): the same elements in row-major order with a new shape.",
    "rev": "rev(x, dimensions): x reversed along each of `dimensions`.",
    "select_n": "select_n(which, *cases): elementwise cases[which] (which: bool for two "
                "cases, else an integer index).",
    "shift_left": "shift_left(x, y): x << y elementwise (0 once y >= the bit width).",
    "shift_right_arithmetic": "shift_right_arithmetic(x, y): x >> y with the sign bit copied "
                              "in.",
    "shift_right_logical": "shift_right_logical(x, y): x >> y with zeros shifted in.",
    "squeeze": "squeeze(x, dimensions): x without the given axes of size 1.",
}
for _name, _doc in _DOCS.items():
    _f = globals()[_name]
    _f.__name__ = _f.__qualname__ = _name
    _f.__module__, _f.__doc__ = __name__, _doc
del _name, _doc, _f


# ---- more jax.lax names (#36): index_take, ragged_dot, the bit generators, the hints --------
from .helpers import (composite, DotAlgorithm, DotAlgorithmPreset, index_take,  # noqa: E402
                      pcast)
from .ragged import RaggedDotDimensionNumbers, ragged_dot, ragged_dot_general  # noqa: E402
from .rng import RandomAlgorithm, rng_bit_generator, rng_uniform  # noqa: E402
from .shapes import conv_general_dilated_local  # noqa: E402

__all__ += ["composite", "conv_general_dilated_local", "DotAlgorithm", "DotAlgorithmPreset",
            "index_take", "pcast", "ragged_dot",
            "ragged_dot_general", "RaggedDotDimensionNumbers", "RandomAlgorithm",
            "rng_bit_generator", "rng_uniform"]

