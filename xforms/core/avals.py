"""Abstract values (shape, dtype, weak type) and JAX's dtype promotion lattice (64-bit mode).

Python scalars are *weakly typed*: `float32_array * 2.0` stays float32.  Promotion is
the least upper bound in the lattice below, as in JAX's type promotion design:

    bool -> i* -> int8 -> int16 -> int32 -> int64 -> f* -> float16 -> float32 -> float64
          i* -> uint8 -> uint16 -> uint32 -> uint64 -> f*
          uint8 -> int16,  uint16 -> int32,  uint32 -> int64
          f* -> c* -> complex64 -> complex128;  float32 -> complex64;  float64 -> complex128
where i*, f*, c* are the weak (Python scalar) types: `uint8_array + 1` stays uint8,
`int8 + uint8` is int16, `float16 + int32` is float16, `uint64 + int8` is float64.
"""
import functools
import math
import operator

import numpy as np

from ..errors import ArrayAsIntegerError, ConcretizationError, XformsError

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
float16 = np.dtype(np.float16)   # stored at its width; computed in float32 and rounded, as XLA does
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)
uint32 = np.dtype(np.uint32)      # PRNG keys and random bits (xforms.random), bitwise work
uint64 = np.dtype(np.uint64)
SUPPORTED_DTYPES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16,
                    float32, float64, complex64, complex128)


class ShapedArray:
    """The abstract value of an array: shape, dtype and whether it is weakly typed."""
    __slots__ = ("shape", "dtype", "weak_type", "key", "_hash")

    def __init__(self, shape, dtype, weak_type=False):
        # an int subclass stays: the CPU backend's symbolic sizes (xforms/kernels/prepare/shape_symbols.py)
        if type(shape) is not tuple or not all([type(d) is int for d in shape]):
            shape = tuple(d if type(d) is int or (isinstance(d, int) and type(d) is not bool)
                          else int(d) for d in shape)
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.key = (self.shape, self.dtype, self.weak_type)    # (for keys compared in C)
        self._hash = hash(self.key)

    @classmethod
    def of(cls, shape, dtype, weak_type=False):
        """The constructor without its checks, for callers that hold a tuple of ints, a
        supported `np.dtype` and a bool (tracing builds one per equation).

        >>> ShapedArray.of((2, 3), float64)"""
        self = object.__new__(cls)
        self.shape, self.dtype, self.weak_type = shape, dtype, weak_type
        self.key = (shape, dtype, weak_type)
        self._hash = hash(self.key)
        return self

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __eq__(self, other):
        return other is self or (
            type(other) is ShapedArray and self._hash == other._hash and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return self._hash

    def strip_weak(self):
        return ShapedArray(self.shape, self.dtype) if self.weak_type else self

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def str_short(self):
        return f"{short_dtype(self.dtype)}[{','.join(map(str, self.shape))}]"

    __repr__ = lambda self: f"ShapedArray({self.str_short()}{', weak' if self.weak_type else ''})"


# JAX's narrow floating and integer types, which xforms has no storage for (Numba has none)
NARROW_DTYPES = frozenset({
    "bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
    "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "int1", "int2", "int4", "uint1", "uint2", "uint4"})


def missing_attribute(module, name):
    """The AttributeError for `module.name`, saying why when `name` is a dtype of JAX's that
    xforms lacks (so `hasattr` still tells a library it is absent).

        >>> raise missing_attribute("xforms.numpy", "bfloat16")
        AttributeError: xforms.numpy.bfloat16: xforms has no bfloat16 ...
    """
    if name in NARROW_DTYPES:
        return AttributeError(
            f"{module}.{name}: xforms has no {name} dtype (its arrays are NumPy's and its "
            "kernels Numba's, which have no such type): use float16, float32 or int8")
    return AttributeError(f"module {module!r} has no attribute {name!r}")


def short_dtype(dtype):
    dt = np.dtype(dtype)
    return dt.name if dt.kind == "b" else f"{dt.kind}{dt.itemsize * 8}"


def is_float(dtype):
    return np.dtype(dtype).kind == "f"


def is_complex(dtype):
    return np.dtype(dtype).kind == "c"


def is_inexact(dtype):
    return np.dtype(dtype).kind in "fc"


def is_integer(dtype):
    return np.dtype(dtype).kind in "iu"


def accumulation_dtype(dtype):
    """The dtype the sum, product, cumulative and dot primitives accumulate `dtype` in:
    float16 in float32, rounded once at the end, on both tiers (NumPy alone rounds every
    partial sum: 3000 * 0.1 gives 256); every other dtype in itself.  jnp.sum and jnp.mean
    upcast float16 the same way; XLA's own float16 reductions sum partials in an order of
    their own, so a raw lax reduction of float16 can differ from JAX's in the last bits.

        >>> accumulation_dtype(float16)     # float32"""
    d = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    return float32 if d.char == "e" else d      # (no dtype comparison: ~0.5 us each)


# JAX's dtype of the tangents and cotangents of integer and boolean values: no data
float0 = np.dtype([("float0", np.void, 0)])


class extended(np.generic):  # noqa: N801  (JAX's name: xforms.dtypes.extended)
    """The scalar type of the dtypes NumPy does not have (JAX's extended dtypes)."""


class prng_key(extended):  # noqa: N801  (JAX's name: xforms.dtypes.prng_key)
    """The scalar type of typed PRNG keys' dtype (random.keys.KeyDType.type)."""


def _extended_type(d):
    """The extended scalar type `d` names (a key dtype, or extended / prng_key), else None."""
    if isinstance(d, type) and issubclass(d, extended):
        return d
    t = getattr(d, "type", None)
    return t if isinstance(t, type) and issubclass(t, extended) else None


def issubdtype(a, b):
    """np.issubdtype, where a key dtype is a sub-dtype of prng_key, extended and np.generic
    only (as in JAX), and nothing NumPy knows is a sub-dtype of an extended type."""
    a_ext = _extended_type(a)
    if a_ext is None:
        return False if _extended_type(b) is not None else bool(np.issubdtype(a, b))
    b_type = b if isinstance(b, type) else getattr(b, "type", None)
    return isinstance(b_type, type) and issubclass(a_ext, b_type)


def dtype_like(dtype):
    """`dtype`, refusing an xforms Array or a traced value as JAX refuses a jax.Array given as
    a dtype (np.dtype would read its `.dtype`: under jit a traced dtype argument went
    unnoticed); a NumPy array is left to np.dtype's TypeError, as in JAX.

        >>> dtype_like(xnp.ones(2))     # ValueError: Passing an array as a dtype argument ...
    """
    if not isinstance(dtype, (np.dtype, type, str, np.generic, np.ndarray)) and \
            hasattr(dtype, "ndim") or isinstance(dtype, np.ndarray) and \
            type(dtype) is not np.ndarray:
        raise ValueError("Passing an array as a dtype argument is no longer supported; "
                         "instead of dtype=arr use dtype=arr.dtype (as in JAX).")
    return dtype


def canonicalize_dtype(dtype):
    """The supported dtype `dtype` names; TypeError otherwise (an array: `dtype_like`)."""
    dtype_like(dtype)
    dt = np.dtype(dtype)
    if dt in SUPPORTED_DTYPES:
        return dt
    raise TypeError(f"dtype {dt} is not supported: xforms accepts "
                    f"{', '.join(d.name for d in SUPPORTED_DTYPES)}")


_WEAK_FLOAT = ShapedArray((), float64, weak_type=True)     # (avals are immutable: shared)
_WEAK_INT = ShapedArray((), int64, weak_type=True)
_WEAK_COMPLEX = ShapedArray((), complex128, weak_type=True)
_BOOL_SCALAR = ShapedArray((), bool_)
_SUPPORTED = frozenset(SUPPORTED_DTYPES)
_SCALAR_AVALS = {dt: ShapedArray((), dt) for dt in SUPPORTED_DTYPES}   # NumPy scalars' avals


_ARRAY_AVALS = {}        # (shape, dtype, weak_type) -> its ShapedArray, shared


def _array_aval(shape, dtype, weak_type):
    """One ShapedArray per array type seen (tracing asks for a constant's aval several
    times per operation; a shared one is also equal to itself at once)."""
    key = (shape, dtype, weak_type)
    a = _ARRAY_AVALS.get(key)
    if a is None:
        if len(_ARRAY_AVALS) > 4096:     # (bounded: a program of many shapes)
            _ARRAY_AVALS.clear()
        a = _ARRAY_AVALS[key] = ShapedArray.of(shape, dtype, weak_type)
    return a


# A backend's own array type (the CUDA backend's DeviceArray; core/registry.operator_type
# registers it) keeps its data on its device: its abstract value comes from its shape and
# dtype, so tracing a jitted call with it as an argument copies nothing to the host.
DEVICE_ARRAY_TYPES = set()


def is_device_array(x):
    """Is `x` an array of a backend's device (whose data reading would copy)?"""
    return type(x) in DEVICE_ARRAY_TYPES


def static_index(value, what):
    """`value` as a Python int where a static integer belongs (a size, an axis, a dimension, a
    count): read with operator.index, as JAX reads them, so a float (inf and NaN too), a NumPy
    bool or a traced float is a TypeError naming `what` (JAX's class; `int()` raised
    OverflowError or ValueError for inf and NaN and accepted 2.5); an array of more than one
    element an ArrayAsIntegerError (a TypeError and a ValueError: JAX's class there is either).
    A traced integer with no known value keeps its ConcretizationError (a TypeError as well).

        >>> static_index(np.int32(2), "axis")
        2
        >>> static_index(2.0, "axis")
        Traceback (most recent call last):
        TypeError: axis: expected an integer, got 2.0 (a float)
    """
    if type(value) is int:
        return value
    shape = getattr(value, "shape", None)
    if shape:       # (traced too; JAX's class here is TypeError or ValueError, as it reads it)
        raise ArrayAsIntegerError(f"{what}: expected an integer, got an array of shape "
                                  f"{tuple(shape)} and dtype {value.dtype}")
    try:
        return operator.index(value)
    except ConcretizationError:
        raise
    except TypeError:
        got = f"{value!r} (a {getattr(value, 'dtype', type(value).__name__)})"
        raise TypeError(f"{what}: expected an integer, got {got}") from None


def check_python_int(x):
    """A Python int operand is a weak int64 whatever it meets (JAX): OverflowError outside
    int64's range (the one check, for avals and for conversions into narrower dtypes)."""
    if not -2 ** 63 <= x < 2 ** 63:
        raise OverflowError(f"Python int {x} too large to convert to int64 (the type of a "
                            "Python int operand); pass an array of the dtype you want")
    return x


def aval_of_value(x):
    """The abstract value of a concrete input (Python scalar, NumPy array or a backend's
    device array)."""
    t = type(x)
    if t is float:                      # (first: every Python float operand comes here)
        return _WEAK_FLOAT
    if isinstance(x, np.ndarray):
        dt = x.dtype
        if dt in _SUPPORTED:             # (the common case: no conversion, no check)
            return _array_aval(x.shape, dt, getattr(x, "weak_type", False) is True)
    elif isinstance(x, np.generic):
        hit = _SCALAR_AVALS.get(x.dtype)
        if hit is not None:
            return hit
    elif t in DEVICE_ARRAY_TYPES and x.dtype in _SUPPORTED:
        return _array_aval(x.shape, x.dtype, getattr(x, "weak_type", False) is True)
    if isinstance(x, (bool, np.bool_)) and not isinstance(x, np.ndarray):
        return _BOOL_SCALAR
    if isinstance(x, int) and not isinstance(x, np.integer):
        check_python_int(x)
        return _WEAK_INT
    if isinstance(x, float) and not isinstance(x, np.generic):    # np.float64 is a float
        return _WEAK_FLOAT
    if isinstance(x, complex) and not isinstance(x, np.generic):
        return _WEAK_COMPLEX
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype == object or x.dtype.kind in "USV":
            raise TypeError(f"unsupported input of dtype {x.dtype}: xforms accepts arrays of "
                            f"{', '.join(d.name for d in SUPPORTED_DTYPES)}")
        return ShapedArray(np.shape(x), canonicalize_dtype(x.dtype),
                           getattr(x, "weak_type", False) is True)
    raise TypeError(f"unsupported input {type(x).__name__}: xforms accepts NumPy arrays, Python "
                    "scalars and xforms arrays (nested in tuples, lists and dicts)")


# ---- promotion lattice -------------------------------------------------------------------
_UP = {"b": ["i*"], "i*": ["i1", "u1"], "i1": ["i2"], "i2": ["i4"], "i4": ["i8"],
       "u1": ["i2", "u2"], "u2": ["i4", "u4"], "u4": ["i8", "u8"], "u8": ["f*"], "i8": ["f*"],
       "f*": ["f2", "c*"], "f2": ["f4"], "f4": ["f8", "c8"], "f8": ["c16"], "c*": ["c8"],
       "c8": ["c16"], "c16": []}
_CODE = {dt: "b" if dt.kind == "b" else f"{dt.kind}{dt.itemsize}" for dt in SUPPORTED_DTYPES}
_DT = {v: k for k, v in _CODE.items()}
_WEAK_DEFAULT = {"i*": int64, "f*": float64, "c*": complex128}


def _ancestors(node, memo={}):
    if node not in memo:
        out = {node}
        for up in _UP[node]:
            out |= _ancestors(up)
        memo[node] = frozenset(out)
    return memo[node]


def _node(dtype, weak):
    code = _CODE[np.dtype(dtype)]
    if weak and code != "b":
        return "i*" if code[0] == "u" else code[0] + "*"
    return code


def promote_types(*pairs):
    """Least upper bound of (dtype, weak_type) pairs -> (dtype, weak_type)."""
    return _promote(pairs)


@functools.lru_cache(maxsize=4096)      # every binary xnp operation asks; few distinct pairs
def _promote(pairs):
    nodes = {_node(d, w) for d, w in pairs}
    common = frozenset.intersection(*(_ancestors(n) for n in nodes))
    lub = [n for n in common if all(m in _ancestors(n) for m in common)][0]
    if lub in _WEAK_DEFAULT:
        # a weak result keeps the widest concrete dtype among its weak inputs of that kind
        kinds = [np.dtype(d) for d, w in pairs if w and _node(d, w) == lub]
        return (max(kinds, key=lambda d: d.itemsize) if kinds else _WEAK_DEFAULT[lub]), True
    return _DT[lub], False


def result_type(*avals):
    return promote_types(*((a.dtype, a.weak_type) for a in avals))


def broadcast_shapes(*shapes, op="broadcast", where=""):
    ranked = [s for s in shapes if len(s)]
    if all(s == ranked[0] for s in ranked[1:]):         # the common case: equal or scalars
        return tuple(ranked[0]) if ranked else ()
    nd = max(map(len, shapes))
    out = [1] * nd
    for s in shapes:
        for i, d in enumerate(s, nd - len(s)):      # (aligned at the trailing dimension)
            o = out[i]
            if d != o and d != 1:
                if o != 1:
                    raise TypeError(f"{op}: incompatible shapes for broadcasting: "
                                    f"{', '.join(str(tuple(s)) for s in shapes)}{where}")
                out[i] = d
    return tuple(out)


class InvalidInputError(TypeError, XformsError):
    pass
