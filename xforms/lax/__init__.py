"""`xforms.lax`: structured control flow and the lax-level operations (JAX's names).

Branch and body functions are traced once, with abstract values, into sub-programs of the
`cond`, `while`, `for_loop` and `scan` primitives (xforms/primitives/control/control_flow.py;
the wrappers are in lax/control_flow/), so each becomes one real branch or loop in compiled
code.  Every construct supports jvp, vmap and reverse mode -- `while_loop` too, with a
data-dependent trip count:

    >>> def pow_loop(x, n):
    ...     return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * x), (0, 1.0))[1]
    >>> xf.grad(pow_loop)(2.0, 5)         # 5 * 2.0 ** 4
    Array(80.)
"""
import inspect

import numpy as np

from ..core import source_info, trace as core
from ..core.trace import Tracer
from ..core.avals import dtype_like, static_index
from ..primitives.elementwise import (abs, acos, acosh, add, asin, asinh, atan, atanh,
                                      cbrt, ceil, complex, convert_element_type, cos, cosh,
                                      div, eq, exp, exp2, expm1, floor, ge, gt, imag,
                                      integer_pow, is_finite, le, log, log1p, logistic, lt, max,
                                      min, mul, ne, neg, pow, real, rem, rsqrt, select_n,
                                      sign, sin, sinh, sqrt, sub, tan, tanh)
from ..primitives.elementwise import stop_gradient  # noqa: F401  (lax.stop_gradient)
from ..numpy.elementwise.ufuncs import atan2     # (the primitive, or complex operands' composite)
from ..primitives.elementwise import conj as _conj
from ..primitives.elementwise import and_ as bitwise_and, not_ as bitwise_not, \
    or_ as bitwise_or, xor as bitwise_xor
from ..primitives.bits.shifts import shift_left, shift_right_arithmetic, shift_right_logical
from ..primitives.indexing import dynamic_slice, dynamic_update_slice
from ..primitives.reductions import (argmax, argmin, reduce_and, reduce_max, reduce_min,
                                     reduce_or, reduce_prod, reduce_sum)
from ..primitives.cumulative import cummax, cummin, cumprod, cumsum  # noqa: F401
from ..primitives.structural import (broadcast_in_dim, concatenate, expand_dims, pad, reshape,
                                     rev, slice, squeeze, transpose)
from ..primitives.structural import full as _full, iota as _iota
from .control_flow import (cond, fori_loop, map, platform_dependent, scan, switch,  # noqa: F401
                           while_loop)
from .operators.sorting import sort, sort_key_val, top_k  # noqa: F401
from .operators.bits import (bitcast_convert_type, clz, mulhi, population_count,
                             reduce_precision, reduce_xor)  # noqa: F401
from .operators.sorting import approx_max_k, approx_min_k  # noqa: F401
from .operators.broadcasting import (broadcast, broadcast_like, broadcast_shapes,  # noqa: F401
                                     broadcast_to_rank, tile)
from .operators.constructors import empty, full_like  # noqa: F401
from .operators.products import batch_matmul, dot_general  # noqa: F401
from ..primitives.precision import (DotDimensionNumbers, Precision,  # noqa: F401
                                    PrecisionLike)
from .operators.static_types import dtype  # noqa: F401
from .operators.fourier import fft, FftType  # noqa: F401
from .operators.hints import optimization_barrier  # noqa: F401
from .operators.rounding import round, RoundingMethod  # noqa: F401
from .slicing.indices import (dynamic_index_in_dim, dynamic_update_index_in_dim,  # noqa: F401
                              index_in_dim)
from .slicing.stacking import split, stack, unstack  # noqa: F401
from .slicing.slices import collapse, slice_in_dim  # noqa: F401
from .reductions.folds import associative_scan, cumlogsumexp, reduce  # noqa: F401
from .slicing.gather_scatter import (gather, GatherDimensionNumbers, GatherScatterMode,
                                     scatter, scatter_add, scatter_max, scatter_min,
                                     scatter_mul, scatter_sub,
                                     ScatterDimensionNumbers)  # noqa: F401
from .slicing import gather_scatter as _gs
from .operators.special import (bessel_i0e, bessel_i1e, betainc, digamma, erf, erf_inv, erfc,
                                igamma, igamma_grad_a, igammac, lgamma, nextafter, polygamma,
                                random_gamma_grad, zeta)  # noqa: F401

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


# ---- elementwise extras with JAX's signatures --------------------------------------------
def select(pred, on_true, on_false):
    """Elementwise `on_true if pred else on_false` (pred: bool, same shape or scalar)."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    """Elementwise `min(max(x, min), max)` (JAX's argument order).  Complex operands clamp
    as XLA's clamp does, by real part alone: `min` where min.real >= x.real, then `max`
    unless the result's real part is <= max.real (so a NaN bound wins; jax's
    clamp(0j, 1j, 1j) is 0j).

        >>> clamp(0.0, xnp.array([-1.0, 0.5, 2.0]), 1.0)    # [0., 0.5, 1.]
    """
    from ..primitives import elementwise as ew
    if not _is_complex(x):
        return ew.min(ew.max(x, min), max)
    shape = core.get_aval(x).shape
    lo, hi = (v if core.get_aval(v).shape == shape else broadcast_in_dim(v, shape, ())
              for v in (ew.convert_element_type(v, core.get_aval(x).dtype) for v in (min, max)))
    m = ew.select_n(ew.ge(ew.real(lo), ew.real(x)), x, lo)
    return ew.select_n(ew.le(ew.real(m), ew.real(hi)), hi, m)


def _is_complex(x):
    return np.dtype(core.get_aval(x).dtype).kind == "c"


def square(x):
    return integer_pow(x, 2)


def reciprocal(x):
    return integer_pow(x, -1)


def _checked_integer_pow(fn):
    """lax.integer_pow with JAX's refusals: the exponent a static int (an array of them is
    an error in JAX, not a broadcast), no bool base, no negative power of an integer.

        >>> integer_pow(np.array([2]), -1)   # TypeError: Integers cannot be raised to ...
    """
    def integer_pow(x, y):
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, np.integer)):
            raise _type_error(f"lax.integer_pow: the exponent y must be a Python int (a "
                              f"static value), got {type(y).__name__}: use lax.pow for an "
                              "array exponent")
        if isinstance(x, (list, tuple)):
            return fn(x, y)                 # (the primitive's own error)
        a = core.get_aval(x)
        if a.dtype.kind == "b":
            raise _type_error("integer_pow does not accept dtype bool. Accepted dtypes are "
                              "subtypes of integer, floating, complexfloating.")
        if a.dtype.kind in "iu" and y < 0:
            raise _type_error("Integers cannot be raised to negative powers, got "
                              f"integer_pow({a.dtype.name}{list(a.shape)}, {int(y)})")
        return fn(x, y)
    return _named(integer_pow, fn, "integer_pow")


def iota(dtype, size):
    """[0, 1, ..., size - 1] of `dtype`."""
    return _iota(dtype, (static_index(size, "iota's size"),), 0)


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
    if dt == np.float16:        # (JAX has no complex32 to make of it)
        raise _type_error("conj does not accept dtype float16. Accepted dtypes are subtypes "
                          "of float32, float64, complexfloating.")
    if dt.kind == "f":
        x = convert_element_type(x, np.result_type(dt, np.complex64))
    elif dt.kind != "c":
        raise TypeError(f"lax.conj: needs a float or complex operand, got {dt}")
    return _conj(x)


# ---- lax's strict dtypes: no promotion, as JAX's check_same_dtypes ------------------------
# lax's n-ary ops take operands of one dtype and never promote (xnp's functions do): a Python
# scalar counts at its own dtype (int: int64, float: float64, complex: complex128, bool),
# weakly typed or not, so lax.add(float32 array, 2.) raises as in JAX (jax_enable_x64).
# Accepted dtype kinds per op (NumPy's kind letters) and the names JAX's messages give.
_ACCEPT = {"num": ("iufc", "integer, floating, complexfloating"),
           "real": ("iuf", "integer, floating"), "inexact": ("fc", "floating, complexfloating"),
           "float": ("f", "floating"), "bits": ("iub", "integer, bool"),
           "int": ("iu", "integer"), "parts": (("float32", "float64"), "float32, float64"),
           "ordered": ("iufb", "integer, floating, bool"), "any": (None, None)}


def _type_error(msg):
    """A TypeError naming the user's line, as the primitives' own dtype errors do."""
    info = source_info.current(2)
    err = TypeError(f"{msg} (at {info})" if info else msg)
    err._xf_located = True
    return err


def _operand_dtype(x):
    """The dtype lax sees for an operand: a Python scalar's own (int64 for an int)."""
    return x.dtype if isinstance(x, (np.ndarray, np.generic)) else core.get_aval(x).dtype


def _check_dtypes(name, accept, tip, args):
    """JAX's TypeErrors of an n-ary lax op: a dtype it does not accept (by position), then
    operands of different dtypes.

        >>> _check_dtypes("add", "num", "add", (np.float32(1), 2.0))   # TypeError: float32, float64
    """
    if any(isinstance(a, (list, tuple)) for a in args):
        return                      # the primitive's own error (convert with xnp.asarray)
    dts = [_operand_dtype(a) for a in args]
    kinds, names = _ACCEPT[accept]
    for i, dt in enumerate(dts):
        if kinds is not None and (dt.name if isinstance(kinds, tuple) else dt.kind) not in kinds:
            raise _type_error(f"{name} does not accept dtype {dt.name} at position {i}. "
                              f"Accepted dtypes at position {i} are subtypes of {names}.")
    if any(dt != dts[0] for dt in dts[1:]):
        hint = (f" (Tip: jnp.{tip} is a similar function that does automatic type promotion "
                "on inputs)." if tip else "")
        raise _type_error(f"lax.{name} requires arguments to have the same dtypes, got "
                          f"{', '.join(dt.name for dt in dts)}.{hint}")


def _strict(fn, name, accept="any", tip=None, first=0):
    """`fn` with lax's dtype check of its operands args[first:] (select_n: the cases)."""
    def op(*args):
        a = args[first:]
        if len(a) != 2 or type(a[0]) is not type(a[1]) or _operand_dtype(a[0]) != \
                _operand_dtype(a[1]) or accept != "any":      # (the common case: one check)
            _check_dtypes(name, accept, tip, a)
        return fn(*args)
    return _named(op, fn, fn.__name__)


def _named(wrapper, fn, name):
    """`wrapper` of `fn` documented as `xforms.lax.<name>` with fn's doc and signature: the
    unchecked binder is kept as `_unchecked`, not `__wrapped__` (the API reference follows
    `__wrapped__` to the primitive's module and loses names spelled otherwise there)."""
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__, wrapper._unchecked = fn.__doc__, getattr(fn, "_unchecked", fn)
    try:
        wrapper.__signature__ = inspect.signature(fn)
    except (TypeError, ValueError):     # (a builtin without one)
        pass
    return wrapper


def _dtype_checked(fn):
    """lax.convert_element_type refusing an array as its dtype (as JAX: under jit a traced
    one would otherwise pass as its own dtype)."""
    def convert_element_type(operand, new_dtype, weak_type=False):
        return fn(operand, dtype_like(new_dtype), weak_type)
    return _named(convert_element_type, fn, "convert_element_type")


convert_element_type = _dtype_checked(convert_element_type)


def _pow_check(x, y):
    """JAX's pow: an inexact base, an integer or inexact exponent, inexact dtypes equal."""
    if isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
        return
    dx, dy = _operand_dtype(x), _operand_dtype(y)
    if dx.kind not in "fc":
        raise _type_error(f"pow does not accept dtype {dx.name} at position 0. Accepted "
                          "dtypes at position 0 are subtypes of floating, complexfloating.")
    if dy.kind in "fc" and dx != dy:
        raise _type_error("the first argument to pow must have an inexact dtype (float or "
                          "complex), and the second argument must have an inexact or integer "
                          "dtype, and two inexact dtypes must match, but got "
                          f"{dx.name} and {dy.name} respectively.")


def _strict_pow(fn):
    def pow(x, y):
        _pow_check(x, y)
        return fn(x, y)
    return _named(pow, fn, "pow")


def _cumulative(fn):
    """lax's cumulative `fn` (cumsum, cumprod, cummax, cummin), refusing a bool operand as
    JAX's does (jnp.cumsum of bools counts them: xnp converts first).

        >>> cummax(xnp.array([True, False]))   # TypeError: cummax does not accept dtype bool
    """
    def op(operand, axis=0, reverse=False):
        if _operand_dtype(operand).kind == "b":
            raise _type_error(f"{fn.__name__} does not accept dtype bool. Accepted dtypes are "
                              "subtypes of number (convert first: x.astype(xnp.int32)).")
        return fn(operand, axis, reverse)
    return _named(op, fn, fn.__name__)


cummax, cummin, cumprod, cumsum = (_cumulative(f) for f in (cummax, cummin, cumprod, cumsum))


def _unary(fn, name, accept):
    """`fn` refusing an operand dtype JAX's lax refuses (xnp's functions convert first):
    `accept` a key of `_UNARY` (kind letters, the names JAX's message gives).

        >>> abs(np.uint8(3))     # TypeError: abs does not accept dtype uint8. Accepted ...
    """
    kinds, names = _UNARY[accept]

    def op(x, *args, **kw):
        if not isinstance(x, (list, tuple)) and _operand_dtype(x).kind not in kinds:
            raise _type_error(f"{name} does not accept dtype {_operand_dtype(x).name}. "
                              f"Accepted dtypes are subtypes of {names}.")
        return fn(x, *args, **kw)
    return _named(op, fn, fn.__name__)


_UNARY = {"signed": ("ifc", "floating, complexfloating, signedinteger"),
          "float": ("f", "floating"), "complex": ("c", "complexfloating"),
          "num": ("iufc", "integer, floating, complexfloating")}
abs = _unary(abs, "abs", "signed")
is_finite = _unary(is_finite, "is_finite", "float")
real, imag = _unary(real, "real", "complex"), _unary(imag, "imag", "complex")
square = _unary(square, "square", "num")
integer_pow = _checked_integer_pow(integer_pow)
add, sub, mul, div = (_strict(add, "add", "num", "add"), _strict(sub, "sub", "num", "subtract"),
                      _strict(mul, "mul", "num", "multiply"),
                      _strict(div, "div", "num", "divide"))
rem = _strict(rem, "rem", "real")
max, min = _strict(max, "max", tip="maximum"), _strict(min, "min", tip="minimum")
atan2 = _strict(atan2, "atan2", "inexact", "arctan2")
nextafter = _strict(nextafter, "nextafter", "float", "nextafter")
eq, ne = _strict(eq, "eq", tip="equal"), _strict(ne, "ne", tip="not_equal")
lt, le, gt, ge = (_strict(f, n, "ordered") for f, n in ((lt, "lt"), (le, "le"), (gt, "gt"),
                                                        (ge, "ge")))
bitwise_and, bitwise_or, bitwise_xor = (_strict(f, n, "bits") for f, n in (
    (bitwise_and, "and"), (bitwise_or, "or"), (bitwise_xor, "xor")))
shift_left = _strict(shift_left, "shift_left", "int", "left_shift")
shift_right_logical = _strict(shift_right_logical, "shift_right_logical", "int", "right_shift")
shift_right_arithmetic = _strict(shift_right_arithmetic, "shift_right_arithmetic", "int",
                                 "right_shift")
complex = _strict(complex, "complex", "parts")
igamma, igammac, igamma_grad_a, zeta, polygamma = (_strict(f, f.__name__, "float") for f in (
    igamma, igammac, igamma_grad_a, zeta, polygamma))
betainc = _strict(betainc, "regularized_incomplete_beta", "float")
def _select_which(fn):
    """select_n with JAX's checks of `which` (after the cases' dtypes): bool or integer, bool
    only with two cases; an unsigned `which` is read as a signed index (a case number), an
    int8/int16 one widened to int32 (the primitive takes bool, int32, int64; JAX takes any
    integer: lax.select(np.int8(1), x, y) is x)."""
    def select_n(which, *cases):
        if isinstance(which, (list, tuple)):
            return fn(which, *cases)          # (the primitive's own TypeError)
        dt = _operand_dtype(which)
        if dt.kind not in "biu":
            raise _type_error(f"select `which` must be boolean or integer type, got {dt.name}.")
        if dt.kind == "b" and len(cases) > 2:
            raise _type_error("select with boolean `which` cannot have > 2 cases.")
        if dt.kind == "u":
            which = convert_element_type(which, np.int64)
        elif dt.kind == "i" and dt.itemsize < 4:
            which = convert_element_type(which, np.int32)
        return fn(which, *cases)
    return _named(select_n, fn, "select_n")


select_n = _strict(_select_which(select_n), "select", tip="where", first=1)


def _select_shapes(fn):
    """select_n with JAX's shape rules, checked before the dtypes as JAX does: at least one
    case, cases of one shape (a scalar case is not broadcast), then `which` a scalar or of
    the cases' shape.

        >>> select_n(np.ones(2, bool), np.ones(3), np.ones(3, np.float32))  # TypeError: shape
    """
    def select_n(which, *cases):
        if not cases:
            raise ValueError("select_n() must have at least one case")
        if any(isinstance(v, (list, tuple)) for v in (which, *cases)):
            return fn(which, *cases)          # (the primitive's TypeError: not a JAX value)
        shapes = [_operand_shape(c) for c in cases]
        if any(sh != shapes[0] for sh in shapes[1:]):
            raise _type_error(f"select cases must have the same shapes, got {shapes}.")
        shape = _operand_shape(which)
        if shape and shape != shapes[0]:
            raise _type_error("select `which` must be scalar or have the same shape as cases, "
                              f"got `which` shape {shape} but case shape {shapes[0]}.")
        return fn(which, *cases)
    return _named(select_n, fn, "select_n")


def _operand_shape(x):
    return core.get_aval(x).shape


select_n = _select_shapes(select_n)
clamp = _strict(clamp, "clamp")
pow = _strict_pow(pow)


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
                          pbroadcast, pmean, pmin, ppermute, pshuffle, psum, psum_scatter,
                          pswapaxes)

from .convolution.dilated import (ConvDimensionNumbers, conv,  # noqa: E402
                                  conv_dimension_numbers, conv_general_dilated, conv_transpose,
                                  conv_with_general_padding, padtype_to_pads)
from .reductions.windowed import reduce_window  # noqa: E402
from .control_flow.solves import custom_linear_solve, custom_root  # noqa: E402
from .convolution.dilated import conv_general_permutations  # noqa: E402,F401
from .convolution.shapes import (ConvGeneralDilatedDimensionNumbers,  # noqa: E402,F401
                                 conv_general_dilated_patches, conv_general_shape_tuple,
                                 conv_shape_tuple, conv_transpose_shape_tuple,
                                 reduce_window_shape_tuple)

__all__ = [
    "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "pshuffle",
    "all_to_all", "axis_index", "axis_size", "pbroadcast", "pswapaxes", "shape_as_value",
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
from .operators.hints import composite, pcast  # noqa: E402
from ..primitives.precision import DotAlgorithm, DotAlgorithmPreset  # noqa: E402
from .operators.static_types import shape_as_value  # noqa: E402
from .slicing.indices import index_take  # noqa: E402
from .operators.ragged import (RaggedDotDimensionNumbers, ragged_dot,  # noqa: E402
                               ragged_dot_general)
from .rng import RandomAlgorithm, rng_bit_generator, rng_uniform  # noqa: E402
from .convolution.shapes import conv_general_dilated_local  # noqa: E402

__all__ += ["composite", "conv_general_dilated_local", "DotAlgorithm", "DotAlgorithmPreset",
            "index_take", "pcast", "ragged_dot",
            "ragged_dot_general", "RaggedDotDimensionNumbers", "RandomAlgorithm",
            "rng_bit_generator", "rng_uniform"]



# ---- jax.lax names xforms lacks: absent to hasattr, and the AttributeError says why ---------
_TOKENS = ("XLA tokens order side effects across devices; xforms runs a program's effects in "
           "program order and has no token type")
_ABSENT = {
    "after_all": _TOKENS, "create_token": _TOKENS, "psend": _TOKENS, "precv": _TOKENS,
    "ragged_all_to_all": "not implemented (ragged_dot covers grouped products; collectives "
                         "of ragged chunks are not)",
    "scaled_dot": "its operands are float8 and its default result bfloat16, dtypes xforms "
                  "lacks: use xforms.nn.scaled_matmul or dot_general on float operands",
    "with_sharding_constraint": "explicit sharding is not implemented: xforms places each "
                                "array on its one device; split work with xf.shard_map",
    "AccuracyMode": "the accuracy of the transcendental primitives is not configurable",
    "Tolerance": "the accuracy of the transcendental primitives is not configurable",
    "stage": "not implemented (a value is staged when a traced function uses it)",
    "dce_sink": "not implemented (xforms' dead-code elimination keeps effects, not values)",
}


def __getattr__(name):
    if name in _ABSENT:
        raise AttributeError(f"xforms.lax.{name}: {_ABSENT[name]}")
    if name.endswith("_p"):
        raise AttributeError(
            f"xforms.lax has no {name}: xforms has no primitive of that name (the function, "
            "where xforms has it, is built from other primitives); xforms.lax exports the "
            "primitive objects it has under JAX's names")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
