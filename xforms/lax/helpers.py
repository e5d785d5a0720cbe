"""The small `jax.lax` helpers: shape helpers (broadcast, collapse, index_in_dim,
slice_in_dim, split, stack, tile, ...), bits (population_count, clz, mulhi, reduce_xor,
bitcast_convert_type, nextafter), the special functions under their lax names,
reduce_precision, associative_scan, reduce with a user computation, approx_max_k/min_k,
dot_general's keywords (Precision, preferred_element_type) and fft's FftType.

Almost all are compositions of primitives that already have jvp, transpose and vmap rules,
so they differentiate and batch without rules of their own (nextafter and
bitcast_convert_type are primitives: xforms/primitives/bits/float_bits.py).

    >>> lax.collapse(xnp.zeros((2, 3, 4)), 1).shape        # (2, 12)
    >>> lax.population_count(xnp.array([7, -1], xnp.int32))  # [3, 32]
"""
import enum
import math
from typing import Sequence, Tuple, Union

import numpy as np

from ..core import trace as core
from ..core.avals import aval_of_value, canonicalize_dtype
from ..numpy.bitwise_ops import bitwise_count as _bitwise_count
from ..primitives.bits import shifts as bw
from ..primitives.control import control_flow as cf
from ..primitives import elementwise as ew
from ..primitives.bits import float_bits as fb
from ..primitives import reductions
from ..primitives.special import functions as ps
from ..primitives import structural as st
from ..primitives.contraction import dot_general as _dot_general
from ..primitives.fft import fft as _fft
from ..primitives.indexing import dynamic_slice, dynamic_update_slice
from ..transforms.vmap import vmap_jaxpr
from ..tree_util import tree_flatten, tree_unflatten
from .sorting import top_k

_UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
             8: np.dtype(np.uint64)}


def _aval(x):
    return core.get_aval(x)


def _axis(axis, ndim, name):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


# ---- shapes --------------------------------------------------------------------------------
def broadcast(operand, sizes):
    """Prepend the dimensions `sizes` to operand's shape.

    >>> lax.broadcast(xnp.ones(3), (2,)).shape              # (2, 3)
    """
    shape = _aval(operand).shape
    sizes = tuple(int(s) for s in sizes)
    dims = tuple(range(len(sizes), len(sizes) + len(shape)))
    return st.broadcast_in_dim(operand, sizes + shape, dims)


def broadcast_to_rank(x, rank):
    """Prepend size-1 dimensions up to `rank` (x itself when its rank is at least that)."""
    nd = _aval(x).ndim
    return x if nd >= rank else broadcast(x, (1,) * (rank - nd))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of the shapes, as a tuple (ValueError if they do not broadcast)."""
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def collapse(operand, start_dimension, stop_dimension=None):
    """Merge dimensions [start_dimension, stop_dimension) into one (Python slice rules).

    >>> lax.collapse(xnp.zeros((2, 3, 4)), 0, 2).shape      # (6, 4)
    """
    shape = _aval(operand).shape
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    size = math.prod(shape[lo:hi])
    return st.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """operand[start:limit:stride] along `axis` (None and negative indices as in Python,
    but no clipping: JAX's rules).

    >>> lax.slice_in_dim(xnp.arange(6.0), 1, -1, 2)          # [1., 3.]
    """
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape), "slice_in_dim")
    n = shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = (start + n if start < 0 else start), (limit + n if limit < 0 else limit)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return st.slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """operand[index] along `axis` (a static index; negative counts from the end).

    >>> lax.index_in_dim(xnp.eye(3), -1, 1, keepdims=False)  # [0., 0., 1.]
    """
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape), "index_in_dim")
    n, i = shape[axis], int(index)
    if not -n <= i < n:
        raise IndexError(f"index_in_dim: index {i} is out of bounds for axis {axis} with "
                         f"size {n}")
    i = i + n if i < 0 else i
    out = slice_in_dim(operand, i, i + 1, 1, axis)
    return out if keepdims else st.squeeze(out, (axis,))


def _dynamic_start(index, n, allow_negative):
    """A traced index as int64.  dynamic_slice counts a negative start from the end itself
    (JAX's rule), so it is not shifted here (twice, -9 of 5 would become 1, not 0).
    With allow_negative=False the caller promises a start >= 0 (as in JAX)."""
    return ew.convert_element_type(index, np.int64)


def _starts(ndim, axis, index):
    starts = [np.int64(0)] * ndim
    starts[axis] = index
    return starts


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    """operand[index] along `axis` for a traced index (clamped into range as
    dynamic_slice does).

    >>> lax.dynamic_index_in_dim(xnp.arange(4.0), i, keepdims=False)
    """
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape), "dynamic_index_in_dim")
    i = _dynamic_start(index, shape[axis], allow_negative_indices)
    sizes = list(shape)
    sizes[axis] = 1
    out = dynamic_slice(operand, _starts(len(shape), axis, i), sizes)
    return out if keepdims else st.squeeze(out, (axis,))


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """operand with operand[index] (along `axis`) replaced by `update` (whose rank may
    lack that axis).

    >>> lax.dynamic_update_index_in_dim(xnp.zeros(3), 5.0, 1, 0)   # [0., 5., 0.]
    """
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape), "dynamic_update_index_in_dim")
    if _aval(update).ndim == len(shape) - 1:
        update = st.expand_dims(update, (axis,))
    i = _dynamic_start(index, shape[axis], allow_negative_indices)
    return dynamic_update_slice(operand, update, _starts(len(shape), axis, i))


def split(operand, sizes, axis=0):
    """Consecutive pieces of the given sizes along `axis` (they must sum to its size).

    >>> lax.split(xnp.arange(5.0), (2, 3))                   # [0, 1], [2, 3, 4]
    """
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape), "split")
    sizes = [int(s) for s in sizes]
    if sum(sizes) != shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(f"split: sizes {sizes} must be non-negative and sum to the size of "
                         f"axis {axis}, {shape[axis]}")
    ends = np.cumsum([0] + sizes)
    return [slice_in_dim(operand, int(a), int(b), 1, axis) for a, b in zip(ends, ends[1:])]


def stack(operands, axis=0):
    """The operands (same shape) stacked along a new axis."""
    operands = list(operands)
    if not operands:
        raise ValueError("stack: needs at least one operand")
    axis = _axis(axis, _aval(operands[0]).ndim + 1, "stack")
    return st.concatenate([st.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis=0):
    """The slices of x along `axis`, as a tuple."""
    shape = _aval(x).shape
    axis = _axis(axis, len(shape), "unstack")
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))


def tile(operand, reps):
    """operand repeated reps[k] times along each axis k (len(reps) == operand's rank).

    >>> lax.tile(xnp.eye(2), (1, 2)).shape                   # (2, 4)
    """
    shape = _aval(operand).shape
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise TypeError(f"tile: reps length must equal the rank of the operand, got "
                        f"len(reps)={len(reps)} and rank {len(shape)}")
    inter = tuple(d for r, n in zip(reps, shape) for d in (r, n))
    b = st.broadcast_in_dim(operand, inter, tuple(range(1, 2 * len(shape), 2)))
    return st.reshape(b, tuple(r * n for r, n in zip(reps, shape)))


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like x (its shape and dtype unless given) filled with fill_value."""
    a = _aval(x)
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    shape = a.shape if shape is None else tuple(int(s) for s in shape)
    return st.full(shape, fill_value, dt)


def empty(shape, dtype):
    """An array of the shape and dtype; its values are zeros (JAX's are too)."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    return st.full(shape, 0, np.dtype(dtype))


def broadcast_like(arr, like_arr):
    """arr broadcast (NumPy rules) to like_arr's shape."""
    a, shape = _aval(arr), _aval(like_arr).shape
    dims = tuple(range(len(shape) - a.ndim, len(shape)))
    return st.broadcast_in_dim(arr, shape, dims) if a.shape != shape else arr


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the leading (batch) dimensions: (..., m, k) @ (..., k, n)."""
    la, ra = _aval(lhs), _aval(rhs)
    if la.ndim < 2 or la.ndim != ra.ndim or la.shape[:-2] != ra.shape[:-2]:
        raise TypeError(f"batch_matmul: operands must have the same rank >= 2 and batch "
                        f"dimensions, got {la.str_short()} and {ra.str_short()}")
    nb = la.ndim - 2
    batch = tuple(range(nb))
    return _dot_general(lhs, rhs, (((nb + 1,), (nb,)), (batch, batch)))


def optimization_barrier(operand):
    """The operand (any pytree), unchanged: xforms's compilers do not move work across
    program points the way XLA does, so there is nothing to prevent."""
    return operand


# ---- bits ------------------------------------------------------------------------------------
def _int_operand(x, name):
    a = _aval(x)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected an integer array, got {a.str_short()}")
    return a.dtype


def population_count(x):
    """The number of 1 bits of each element (two's complement), in x's dtype.

    >>> lax.population_count(xnp.array([-1, 6], xnp.int32))    # [32, 2]
    """
    dt = _int_operand(x, "population_count")
    u = ew.convert_element_type(x, _UNSIGNED[dt.itemsize])
    return ew.convert_element_type(_bitwise_count(u), dt)


def clz(x):
    """The number of leading 0 bits of each element (its bit width for 0), in x's dtype.

    >>> lax.clz(xnp.array([1, 0, -1], xnp.int32))               # [31, 32, 0]
    """
    dt = _int_operand(x, "clz")
    ut = _UNSIGNED[dt.itemsize]
    v = ew.convert_element_type(x, ut)
    shift = 1
    while shift < 8 * dt.itemsize:      # copy the top 1 bit into every lower position
        v = ew.or_(v, bw.shift_right_logical(v, ut.type(shift)))
        shift *= 2
    ones = ew.convert_element_type(_bitwise_count(v), dt)
    return ew.sub(dt.type(8 * dt.itemsize), ones)


def bitcast_convert_type(operand, new_dtype):
    """The bits of each element reinterpreted as `new_dtype`, of the same width: integers
    of either signedness and floats (float64 <-> int64/uint64, float32 <-> int32/uint32).
    JAX's width-changing bitcasts (which add or drop a trailing axis) are not supported.
    Float bitcasts compile for the CPU only.

    >>> lax.bitcast_convert_type(xnp.array([1.0]), xnp.int64)     # [4607182418800017408]
    """
    a, new = _aval(operand), canonicalize_dtype(new_dtype)
    if a.dtype.itemsize != new.itemsize:
        raise NotImplementedError(
            f"bitcast_convert_type: {a.dtype} -> {new} changes the width; xforms bitcasts "
            "only between dtypes of the same width (e.g. float64 <-> int64, int32 <-> uint32)")
    if a.dtype.kind in "iu" and new.kind in "iu":      # two's complement: same bits
        return operand if new == a.dtype else ew.convert_element_type(operand, new)
    return fb.bitcast_convert_type(operand, new)      # (zero derivative even float -> same)


# ---- precision ------------------------------------------------------------------------------
_FORMATS = {np.dtype(np.float32): (8, 23), np.dtype(np.float64): (11, 52)}


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """operand rounded (to nearest even) to a float format with the given exponent and
    mantissa bits: overflow gives inf, results below the format's smallest normal number
    flush to zero (XLA's rule).  Supported: formats at least as wide as operand's (the
    identity) and float32's (8, 23) from float64; others raise NotImplementedError.
    The derivative rounds the tangent to float32 (JAX: reduce_precision of the tangent),
    except where the value overflows or flushes to zero: there it is 0.

    >>> lax.reduce_precision(xnp.array([1.1]), 8, 23)       # float32(1.1) as float64
    """
    a = _aval(operand)
    if a.dtype not in _FORMATS:
        raise TypeError(f"reduce_precision: expected a float32 or float64 operand, got "
                        f"{a.str_short()}")
    e, m = int(exponent_bits), int(mantissa_bits)
    own_e, own_m = _FORMATS[a.dtype]
    if e >= own_e and m >= own_m:
        return operand
    if (e, m) == (8, 23) and a.dtype == np.float64:
        return _to_float32_format(operand)
    raise NotImplementedError(
        f"reduce_precision: exponent_bits={e}, mantissa_bits={m} on {a.dtype} is not "
        "supported; xforms supports float32's format (8, 23) from float64 and formats at "
        "least as wide as the operand's")


def _full_like(x, v):
    a = _aval(x)
    return st.full(a.shape, v, a.dtype)


def _to_float32_format(x):
    """float64 x rounded to float32's format, kept as float64 (XLA's reduce_precision)."""
    f32 = np.finfo(np.float32)
    ax = ew.abs(x)
    # what rounds past float32's largest number (ties go to the even 2**128) is inf
    over = ew.ge(ax, np.float64(2.0 ** 128 - 2.0 ** 103))
    # XLA rounds the mantissa before flushing: what rounds up to float32's smallest normal
    # number stays, the rest of the subnormal range becomes a signed zero
    below = ew.lt(ax, np.float64(f32.tiny) - np.float64(2.0 ** -151))
    safe = ew.select_n(over, x, np.float64(0.0))
    rounded = ew.convert_element_type(ew.convert_element_type(safe, np.float32), np.float64)
    # signed zeros and infinities, each computed only from the entries that take them
    zero = ew.mul(ew.select_n(below, _full_like(x, 0.0), x), np.float64(0.0))
    inf = ew.mul(ew.sign(ew.select_n(over, _full_like(x, 1.0), x)), np.float64(np.inf))
    return ew.select_n(over, ew.select_n(below, rounded, zero), inf)


# ---- special functions under their lax names ------------------------------------------------
def _floats(name, *xs):
    """Python scalars take the array operand's dtype; operands must be float and of one
    dtype (lax does not promote)."""
    arrays = [x for x in xs if not isinstance(x, (int, float))]
    like = arrays[0] if arrays else np.float64(0.0)
    xs = [ew._like(float(x), like) if isinstance(x, (int, float)) else x for x in xs]
    dts = {_aval(x).dtype for x in xs}
    if len(dts) != 1 or next(iter(dts)).kind != "f":
        raise TypeError(f"{name}: expected float operands of one dtype, got "
                        f"{[_aval(x).str_short() for x in xs]}")
    return xs


def lgamma(x):
    """log|Gamma(x)|."""
    return ps.lgamma(*_floats("lgamma", x))


def digamma(x):
    """psi(x) = d/dx log Gamma(x)."""
    return ps.digamma(*_floats("digamma", x))


def erf(x):
    return ps.erf(*_floats("erf", x))


def erfc(x):
    return ps.erfc(*_floats("erfc", x))


def erf_inv(x):
    """The inverse of erf on (-1, 1)."""
    return ps.erf_inv(*_floats("erf_inv", x))


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return ps.igamma(*_floats("igamma", a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return ps.igammac(*_floats("igammac", a, x))


def igamma_grad_a(a, x):
    """d/da P(a, x)."""
    return ps.igamma_grad_a(*_floats("igamma_grad_a", a, x))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return ps.betainc(*_floats("betainc", a, b, x))


def bessel_i0e(x):
    """exp(-|x|) I_0(x)."""
    return ps.bessel_i0e(*_floats("bessel_i0e", x))


def bessel_i1e(x):
    """exp(-|x|) I_1(x)."""
    return ps.bessel_i1e(*_floats("bessel_i1e", x))


def zeta(x, q):
    """The Hurwitz zeta function sum_k (q + k)^-x."""
    return ps.zeta(*_floats("zeta", x, q))


def polygamma(m, x):
    """The m-th derivative of digamma: psi(x) for m = 0, else
    (-1)^(m+1) m! zeta(m + 1, x); NaN for an m that is negative or not an integer (JAX's).

        >>> lax.polygamma(np.array([1.0, -1.0, 0.5]), np.ones(3))    # [pi^2/6, nan, nan]
    """
    m, x = _floats("polygamma", m, x)
    one = ew._like(1.0, x)
    m1 = ew.add(m, one)
    odd = ew.convert_element_type(ew.ne(ew.rem(m, ew._like(2.0, x)), ew._like(0.0, x)),
                                  _aval(x).dtype)
    sign = ew.sub(ew.mul(ew._like(2.0, x), odd), one)        # (-1)^(m + 1)
    higher = ew.mul(ew.mul(sign, ew.exp(ps.lgamma(m1))), ps.zeta(m1, x))
    out = ew.select_n(ew.eq(m, ew._like(0.0, x)), higher, ps.digamma(x))
    bad = ew.or_(ew.lt(m, ew._like(0.0, x)), ew.ne(m, ew.floor(m)))
    return ew.select_n(bad, out, ew._like(float("nan"), x))


def nextafter(x1, x2):
    """The float next to x1 in the direction of x2, elementwise (operands of one float
    dtype; Python scalars take the other operand's).  Not differentiable, as in JAX.

    >>> lax.nextafter(xnp.array([1.0, 0.0]), xnp.array([2.0, -1.0]))   # [1 + 2^-52, -5e-324]
    """
    return fb.nextafter(*_floats("nextafter", x1, x2))


def random_gamma_grad(a, x):
    """d x / d a for a Gamma(a, 1) sample x held at a fixed CDF value (implicit
    reparameterisation): -(dP/da) / (dP/dx)."""
    a, x = _floats("random_gamma_grad", a, x)
    one = ew._like(1.0, x)
    log_dx = ew.sub(ew.sub(ew.mul(ew.sub(a, one), ew.log(x)), x), ps.lgamma(a))
    return ew.neg(ew.div(ps.igamma_grad_a(a, x), ew.exp(log_dx)))



# ---- associative_scan -----------------------------------------------------------------------
def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix combinations of `elems` (a pytree of arrays of one length along `axis`)
    under the associative `fn`: out[k] = fn(...fn(fn(e[0], e[1]), e[2])..., e[k]).  `fn`
    takes and returns pytrees like `elems` of slices along `axis` of any common length.

    Work-efficient parallel prefix (combine neighbouring pairs, recurse on the half, fill
    in the rest) made of slices, pads and concatenations, so it differentiates and vmaps.
    With reverse=True the prefixes run from the end: out[k] combines e[k:] (as JAX).

    >>> lax.associative_scan(lax.add, xnp.arange(5.0))       # [0, 1, 3, 6, 10]
    """
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    ndims = {_aval(x).ndim for x in leaves}
    axis = _axis(axis, min(ndims), "associative_scan")
    lengths = {_aval(x).shape[axis] for x in leaves}
    if len(lengths) != 1:
        raise ValueError(f"associative_scan: the elems must have one length along axis "
                         f"{axis}, got {sorted(lengths)}")

    def combine(a, b):
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return a pytree like elems "
                            f"({tree}), got {out_tree}")
        return out

    if reverse:
        leaves = [st.rev(x, (axis,)) for x in leaves]
    out = _prefix_scan(combine, leaves, axis)
    if reverse:
        out = [st.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


def _prefix_scan(combine, xs, axis):
    n = _aval(xs[0]).shape[axis]
    if n < 2:
        return xs
    cut = lambda vs, lo, hi, step: [slice_in_dim(v, lo, hi, step, axis) for v in vs]  # noqa
    odd = _prefix_scan(combine, combine(cut(xs, 0, n - 1, 2), cut(xs, 1, None, 2)), axis)
    even = cut(xs, 0, 1, 1)
    if n > 2:       # prefix k (k = 2, 4, ...) is prefix k - 1 combined with element k
        heads = odd if n % 2 else cut(odd, 0, -1, 1)
        rest = combine(heads, cut(xs, 2, None, 2))
        even = [st.concatenate([e, r], axis) for e, r in zip(even, rest)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd)]


def _interleave(a, b, axis):
    """[a0, b0, a1, b1, ...] along axis (len(a) == len(b) or len(b) + 1): each spread
    out with zeros between its entries by pad, then the two added."""
    a_av = _aval(a)
    extra = a_av.shape[axis] - _aval(b).shape[axis]
    cfg_a = [(0, 0, 0)] * a_av.ndim
    cfg_b = list(cfg_a)
    cfg_a[axis], cfg_b[axis] = (0, 1 - extra, 1), (1, extra, 1)
    zero = a_av.dtype.type(0)
    pa, pb = st.pad(a, zero, cfg_a), st.pad(b, zero, cfg_b)
    return ew.or_(pa, pb) if a_av.dtype == np.bool_ else ew.add(pa, pb)


# ---- more small helpers ---------------------------------------------------------------------
def dtype(x):
    """The (xforms-canonical) dtype of an array, scalar or dtype-like: float64 for a Python
    float, as in JAX's 64-bit mode; float16 -> float32, as xforms holds it."""
    if isinstance(x, (type, str, np.dtype)):
        return canonicalize_dtype(x)
    if isinstance(x, (bool, int, float, complex)):
        return aval_of_value(x).dtype
    return canonicalize_dtype(x.dtype)


def _top_k_along(operand, k, dim, largest):
    a = _aval(operand)
    dim = _axis(dim, a.ndim, "approx_max_k" if largest else "approx_min_k")
    last = a.ndim - 1
    perm = list(range(a.ndim))
    perm[dim], perm[last] = last, dim
    x = st.transpose(operand, perm) if dim != last else operand
    vals, idx = top_k(x if largest else ew.neg(x), k)
    vals = vals if largest else ew.neg(vals)
    return (vals, idx) if dim == last else (st.transpose(vals, perm), st.transpose(idx, perm))


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k largest entries along reduction_dimension and their int32 indices.  Exact
    (recall 1), as JAX's is on CPUs; ties go to the lower index.

    >>> lax.approx_max_k(xnp.array([3.0, 9.0, 4.0]), 2)       # ([9, 4], [1, 2])
    """
    return _top_k_along(operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k smallest entries along reduction_dimension and their int32 indices (exact)."""
    return _top_k_along(operand, k, reduction_dimension, False)


def reduce_xor(operand, axes):
    """Bitwise xor of the entries over `axes` (integers or booleans), folding halves
    together: log2(n) elementwise xors per axis.

    >>> lax.reduce_xor(xnp.array([1, 2, 4], xnp.int32), (0,))    # 7
    """
    a = _aval(operand)
    if a.dtype.kind not in "biu":
        raise TypeError(f"reduce_xor: expected an integer or boolean array, got "
                        f"{a.str_short()}")
    axes = sorted({_axis(ax, a.ndim, "reduce_xor") for ax in axes})
    x, zero = operand, a.dtype.type(0)
    for ax in axes:
        n = _aval(x).shape[ax]
        if n == 0:
            x = st.full(_aval(x).shape[:ax] + (1,) + _aval(x).shape[ax + 1:], zero, a.dtype)
        while _aval(x).shape[ax] > 1:
            n = _aval(x).shape[ax]
            if n % 2:                    # an odd length gets one 0, xor's identity
                cfg = [(0, 0, 0)] * a.ndim
                cfg[ax] = (0, 1, 0)
                x, n = st.pad(x, zero, cfg), n + 1
            x = ew.xor(slice_in_dim(x, 0, n // 2, 1, ax), slice_in_dim(x, n // 2, n, 1, ax))
    return st.squeeze(x, tuple(axes)) if axes else x


def mulhi(x, y):
    """The high half of the double-width product of two integers of one dtype (signed
    or unsigned, 32 or 64 bits), as XLA's.

    >>> lax.mulhi(xnp.array([2**31 - 1], xnp.int32), xnp.array([2**31 - 1], xnp.int32))
    """
    dt = _int_operand(x, "mulhi")
    if _aval(y).dtype != dt:
        raise TypeError(f"mulhi: operands must have one dtype, got {dt} and "
                        f"{_aval(y).dtype}")
    if dt.itemsize not in (4, 8):
        raise NotImplementedError(f"mulhi: {dt} operands are not supported; xforms supports "
                                  "32- and 64-bit integers")
    if dt.itemsize == 4:      # the full product fits 64 bits
        wide = np.dtype(np.int64 if dt.kind == "i" else np.uint64)
        p = ew.mul(ew.convert_element_type(x, wide), ew.convert_element_type(y, wide))
        shift = bw.shift_right_arithmetic if dt.kind == "i" else bw.shift_right_logical
        return ew.convert_element_type(shift(p, wide.type(32)), dt)
    u = np.dtype(np.uint64)
    ux, uy = ew.convert_element_type(x, u), ew.convert_element_type(y, u)
    hi = _mulhi_u64(ux, uy)
    if dt.kind == "i":        # two's complement: subtract y where x < 0 and x where y < 0
        zero = _full_like(ux, 0)
        hi = ew.sub(hi, ew.select_n(ew.lt(x, dt.type(0)), zero, uy))
        hi = ew.sub(hi, ew.select_n(ew.lt(y, dt.type(0)), zero, ux))
    return ew.convert_element_type(hi, dt)


def _mulhi_u64(x, y):
    """High 64 bits of the 128-bit product, from 32-bit halves (no partial sum overflows)."""
    u = np.uint64
    lo_mask, s32 = u(0xFFFFFFFF), u(32)
    xl, xh = ew.and_(x, lo_mask), bw.shift_right_logical(x, s32)
    yl, yh = ew.and_(y, lo_mask), bw.shift_right_logical(y, s32)
    ll, hl, lh, hh = ew.mul(xl, yl), ew.mul(xh, yl), ew.mul(xl, yh), ew.mul(xh, yh)
    mid = ew.add(ew.add(bw.shift_right_logical(ll, s32), ew.and_(hl, lo_mask)), lh)
    return ew.add(ew.add(hh, bw.shift_right_logical(hl, s32)),
                  bw.shift_right_logical(mid, s32))


# ---- precision, dot_general with JAX's keywords, fft ----------------------------------------
class Precision(enum.Enum):
    """JAX's matmul/convolution precision settings.  xforms computes every product at its
    operands' full precision (HIGHEST), which is also what each setting gives on a CPU."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": "DEFAULT", "bfloat16": "DEFAULT", "fastest": "DEFAULT",
                 "high": "HIGH", "bfloat16_3x": "HIGH", "tensorfloat32": "HIGH",
                 "highest": "HIGHEST", "float32": "HIGHEST"}
        name = names.get(str(value).lower()) if isinstance(value, str) else None
        return None if name is None else cls[name]

    def __str__(self):
        return self.name


# The type annotations JAX's lax exports for these arguments
DotDimensionNumbers = Tuple[Tuple[Sequence[int], Sequence[int]],
                            Tuple[Sequence[int], Sequence[int]]]
PrecisionLike = Union[None, str, Precision, Tuple[str, str], Tuple[Precision, Precision]]


def _check_precision(precision, name):
    for p in precision if isinstance(precision, (tuple, list)) else (precision,):
        if p is not None and not isinstance(p, Precision):
            try:
                Precision(p)
            except ValueError:
                raise ValueError(f"{name}: unknown precision {p!r}; use None, a "
                                 "lax.Precision or one of 'default', 'high', 'highest'") from None


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """The general tensor contraction ((lhs contracting, rhs contracting), (lhs batch,
    rhs batch)), with JAX's keywords: `precision` is accepted (see Precision) and
    `preferred_element_type` sets the result's dtype (the product is formed in the wider
    of it and the operands' dtype).

    >>> lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=xnp.float64)
    """
    _check_precision(precision, "dot_general")
    if preferred_element_type is None:
        return _dot_general(lhs, rhs, dimension_numbers)
    want = canonicalize_dtype(preferred_element_type)
    work = np.promote_types(np.promote_types(_aval(lhs).dtype, _aval(rhs).dtype), want)
    lhs, rhs = (ew.convert_element_type(v, work) for v in (lhs, rhs))
    return ew.convert_element_type(_dot_general(lhs, rhs, dimension_numbers), want)


class FftType(enum.IntEnum):
    """The kinds of lax.fft (JAX's numbering)."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x, fft_type, fft_lengths):
    """The transform `fft_type` (a FftType or its name, any case) over the last
    len(fft_lengths) axes, as jax.lax.fft.

    >>> lax.fft(xnp.ones(4), "rfft", (4,))                   # [4, 0, 0]
    """
    if isinstance(fft_type, str):
        if fft_type.upper() not in FftType.__members__:
            raise ValueError(f"fft: unknown fft_type {fft_type!r}; use one of "
                             f"{list(FftType.__members__)}")
        fft_type = FftType[fft_type.upper()]
    return _fft(x, FftType(fft_type).name, fft_lengths)


# ---- reduce with a user computation ---------------------------------------------------------
_MONOIDS = {"add": "reduce_sum", "mul": "reduce_prod", "max": "reduce_max",
            "min": "reduce_min", "and": "reduce_and", "or": "reduce_or"}


def reduce(operands, init_values, computation, dimensions):
    """Reduce the operands (a pytree of arrays of one shape) over `dimensions` with the
    associative, commutative `computation(x, y)` on pytrees of scalars like init_values;
    -> computation(init, reduction).  A computation that is one add, mul, max, min (or
    and/or on booleans) is that reduction primitive; any other is folded in halves.

    >>> lax.reduce(xnp.arange(6.0).reshape(2, 3), 0.0, lax.add, (1,))      # [3, 12]
    """
    leaves, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise TypeError(f"reduce: operands {tree} and init_values {init_tree} must have the "
                        "same structure")
    shapes = {_aval(x).shape for x in leaves}
    if len(shapes) != 1:
        raise TypeError(f"reduce: the operands must have one shape, got {sorted(shapes)}")
    shape = shapes.pop()
    dims = tuple(sorted({_axis(d, len(shape), "reduce") for d in dimensions}))
    avals = [_aval(x).update(shape=(), weak_type=False) for x in leaves]
    inits = [ew.convert_element_type(i, a.dtype) for i, a in zip(inits, avals)]
    j, consts = cf.trace(lambda *xs: tree_flatten(computation(
        tree_unflatten(tree, xs[:len(xs) // 2]), tree_unflatten(tree, xs[len(xs) // 2:])))[0],
        avals + avals)
    monoid = _monoid(j, avals) if not consts else None
    if monoid is not None:
        folded = [getattr(reductions, monoid)(leaves[0], dims)]
    else:
        folded = _fold(lambda a, b: _apply(j, consts, a + b), leaves, dims, inits)
    out_shape = tuple(n for k, n in enumerate(shape) if k not in dims)
    full_inits = [st.broadcast_in_dim(i, out_shape, ()) for i in inits]
    return tree_unflatten(tree, _apply(j, consts, full_inits + folded))


def _monoid(closed, avals):
    """The reduction primitive's name if the computation is one monoid operation."""
    jx = closed.jaxpr
    if len(jx.eqns) != 1 or len(avals) != 1:
        return None
    e = jx.eqns[0]
    name = _MONOIDS.get(e.prim.name)
    if name is None or set(e.invars) != set(jx.invars) or len(set(e.invars)) != 2 or \
            list(jx.outvars) != list(e.outvars):
        return None
    if e.prim.name in ("and", "or") and avals[0].dtype != np.bool_:
        return None                   # reduce_and/or are logical: only booleans
    return name


def _apply(closed, consts, args):
    """The scalar computation applied elementwise to arrays of one shape."""
    shape = _aval(args[0]).shape
    if not shape:
        return cf.call(closed, *consts, *args)
    n = math.prod(shape)
    flat = [st.reshape(a, (n,)) for a in args]
    jb = vmap_jaxpr(closed, [None] * len(consts) + [0] * len(args), n)
    return [st.reshape(o, shape) for o in cf.call(jb, *consts, *flat)]


def _fold(combine, xs, dims, inits):
    """Reduce each of `dims` of the arrays xs by combining halves (log2 n steps)."""
    for ax in reversed(dims):
        n = _aval(xs[0]).shape[ax]
        if n == 0:        # nothing to combine: the identity of an empty reduction is init
            shape = _aval(xs[0]).shape
            xs = [st.broadcast_in_dim(i, shape[:ax] + (1,) + shape[ax + 1:], ())
                  for i in inits]
        while n > 1:
            half = n // 2
            head = combine([slice_in_dim(x, 0, half, 1, ax) for x in xs],
                           [slice_in_dim(x, half, 2 * half, 1, ax) for x in xs])
            if n % 2:     # the odd one out joins the first entry
                first = combine([slice_in_dim(h, 0, 1, 1, ax) for h in head],
                                [slice_in_dim(x, n - 1, n, 1, ax) for x in xs])
                head = [st.concatenate([f, slice_in_dim(h, 1, None, 1, ax)], ax)
                        for f, h in zip(first, head)]
            xs, n = head, half
        xs = [st.squeeze(x, (ax,)) for x in xs]
    return xs


# ---- round with JAX's rounding methods ------------------------------------------------------
class RoundingMethod(enum.IntEnum):
    """How lax.round breaks ties: away from zero (JAX's default) or to the even neighbour."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """x rounded to an integral value; halves go away from zero (JAX's default) or, with
    RoundingMethod.TO_NEAREST_EVEN, to the even neighbour (as xnp.round).  Zero derivative.

    >>> lax.round(xnp.array([0.5, 2.5, -0.5]))               # [1., 3., -1.]
    """
    method = RoundingMethod(rounding_method)
    if _aval(x).dtype.kind != "f":
        raise TypeError(f"round: expected a float operand, got {_aval(x).str_short()}")
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return ew.round(x)
    finite = ew.is_finite(x)
    v = ew.select_n(finite, _full_like(x, 0.0), x)       # inf and NaN pass through below
    t = ew.select_n(ew.lt(v, ew._like(0.0, v)), ew.floor(v), ew.ceil(v))   # toward zero
    away = ew.ge(ew.abs(ew.sub(v, t)), ew._like(0.5, v))   # (v - t: exact)
    return ew.select_n(finite, x, ew.select_n(away, t, ew.add(t, ew.sign(v))))
