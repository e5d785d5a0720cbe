"""A NumPy rendering of the dtype fuzzer's arithmetic, shifts, bitwise ops, comparisons,
selects, conversions and reductions (tests/fuzz/dtype_programs.py) with jax.numpy's
semantics (jax 0.10.2, x64): the values and dtypes jit's tiers and the eager operators must
give.  A statement's source runs unchanged with `xnp` bound to `XNP` and `lax` to `LAX`, its
operands wrapped as `Rendered` (a NumPy array and JAX's weak-type flag).

JAX's rules, as rendered here (each checked against jax 0.10.2):

- promotion: JAX's lattice (`result_type`), Python ints/floats weakly typed, NumPy scalars and
  Python bools strong; a Python int out of the result dtype's range wraps into it;
- integer arithmetic wraps at the dtype's width; `//` and `%` are jnp's formulas over XLA's
  division (x / 0 is -1, all ones unsigned; MIN / -1 is MIN; x rem 0 is x) and `%` by 0 is 0;
  float `//`, `%` are jnp's `_float_divmod` over C's fmod; bool operands of `//`, `%`,
  shifts and `square` are int32;
- shifts by an amount outside [0, width) give 0 (`>>` of a negative signed value: -1);
- max/min order -0.0 below 0.0 and propagate NaN; sum/prod of integers accumulate in int64
  (uint64 for unsigned), of float16 in float32; cumsum keeps the dtype (bool: int64);
- a float converted to an integer truncates and saturates, NaN -> 0 (renderings.to_dtype).

    >>> x = Rendered(np.array([-128, 5], np.int8))
    >>> (x // 0).value, (x + 256).value, (x << 9).value
    (array([-2, -2], dtype=int8), array([-128,    5], dtype=int8), array([0, 0], dtype=int8))
    >>> r = Rendered(np.array([True, False])) + 1
    >>> r.value, r.weak
    (array([2, 1]), True)
"""
import numpy as np

from . import renderings as RN

# JAX's promotion lattice (jax._src.dtypes._type_promotion_lattice, x64, bfloat16 left out):
# each type and the types right above it; "i*", "f*", "c*" are Python's weakly typed scalars
_LATTICE = {"bool": ["i*"], "i*": ["uint8", "int8"], "uint8": ["int16", "uint16"],
            "uint16": ["int32", "uint32"], "uint32": ["int64", "uint64"], "uint64": ["f*"],
            "int8": ["int16"], "int16": ["int32"], "int32": ["int64"], "int64": ["f*"],
            "f*": ["float16", "c*"], "float16": ["float32"], "float32": ["float64", "complex64"],
            "float64": ["complex128"], "c*": ["complex64"], "complex64": ["complex128"],
            "complex128": []}
_WEAK = {"i*": "int64", "f*": "float64", "c*": "complex128"}


def _above(t):
    out, todo = {t}, [t]
    while todo:
        for u in _LATTICE[todo.pop()]:
            if u not in out:
                out.add(u)
                todo.append(u)
    return out


_UB = {t: _above(t) for t in _LATTICE}


def _jax_type(dtype, weak):
    kind = np.dtype(dtype).kind
    return {"i": "i*", "u": "i*", "f": "f*", "c": "c*"}.get(kind, "bool") if weak else \
        np.dtype(dtype).name


def result_type(*typed):
    """(dtype, weak) of operands given as (dtype, weak) pairs, as jnp.result_type.

    >>> result_type(("uint64", False), ("int64", False))
    (dtype('float64'), True)
    """
    types = {_jax_type(d, w) for d, w in typed}
    common = set.intersection(*(_UB[t] for t in types))
    lub = next(t for t in common if _UB[t] == common)
    weak = lub in _WEAK or (all(w for _, w in typed) and lub != "bool")
    return np.dtype(_WEAK.get(lub, lub)), weak


def _cast(v, dtype):
    """v (an array or a Python/NumPy scalar) in dtype: integers wrap, floats -> integers as XLA."""
    v, dt = np.asarray(v), np.dtype(dtype)
    if v.dtype.kind == "f" and dt.kind in "iub":
        return RN.to_dtype(v, dt)
    with np.errstate(all="ignore"):
        return v.astype(dt)


class Rendered:
    """A value of the rendered program: `value` (a NumPy array) and JAX's weak-type flag."""
    __array_ufunc__ = None          # (a NumPy scalar on the left defers to our operators)

    def __init__(self, value, weak=False):
        self.value, self.weak = np.asarray(value), bool(weak)

    dtype = property(lambda self: self.value.dtype)
    shape = property(lambda self: self.value.shape)
    ndim = property(lambda self: self.value.ndim)

    def astype(self, dtype):
        return Rendered(_cast(self.value, dtype))

    def __neg__(self):
        return unary(self, "neg", lambda x: np.negative(x), no_bool=True)

    def __invert__(self):
        return unary(self, "invert", np.invert, no_float=True)

    def __repr__(self):
        return f"Rendered({self.value!r}, weak={self.weak})"


def _typed(x):
    """(value, dtype, weak) of an operand: Rendered, Python scalar (weak) or NumPy scalar."""
    if isinstance(x, Rendered):
        return x.value, x.dtype, x.weak
    if isinstance(x, (bool, np.bool_)):
        return np.asarray(x), np.dtype(bool), False
    if isinstance(x, (int, float, complex)):
        dt = {int: "int64", float: "float64", complex: "complex128"}[type(x)]
        return x, np.dtype(dt), True
    return np.asarray(x), np.asarray(x).dtype, False


def promote(*xs, numeric=False, inexact=False):
    """The operands' values in their common dtype, and (dtype, weak): jnp's promote_args
    (`numeric`: bool -> int32; `inexact`: integers -> float32 or float64)."""
    typed = [_typed(x) for x in xs]
    dt, weak = result_type(*[(d, w) for _, d, w in typed])
    if numeric and dt == np.bool_:
        dt = np.dtype("int32")
    if inexact and dt.kind in "biu":
        dt = np.dtype("float64" if dt.itemsize == 8 else "float32")
    vals = []
    for v, _, _ in typed:
        if isinstance(v, int) and dt.kind in "iu":      # (a Python int wraps into dt)
            v = np.array(v, np.uint64 if v >= 2**63 else np.int64)
        vals.append(_cast(v, dt))
    return vals, dt, weak


def unary(x, name, fn, no_bool=False, no_float=False, numeric=False, out=None):
    """fn(x) in x's dtype (or `out`), the weak type kept; TypeError where JAX raises one."""
    if (no_bool and x.dtype == np.bool_) or (no_float and x.dtype.kind == "f"):
        raise TypeError(f"{name} does not accept dtype {x.dtype}")
    to_int = numeric and x.dtype == np.bool_     # (bool -> int32, strongly typed)
    v = x.value.astype(np.int32) if to_int else x.value
    with np.errstate(all="ignore"):
        got = np.asarray(fn(v))
    return Rendered(got.astype(out or v.dtype), x.weak and not to_int)


# ---- XLA's integer division and remainder, shifts; jnp's floor division and remainder --------
def _wrap(ints, dtype):
    """Python ints into dtype, wrapping at its width."""
    dt = np.dtype(dtype)
    bits = 8 * dt.itemsize
    wrapped = [v % 2**bits for v in ints]
    if dt.kind == "i":
        wrapped = [v - 2**bits if v >= 2**(bits - 1) else v for v in wrapped]
    return np.array(wrapped, dt)


def _trunc_divs(x, y):
    """[(a, b, a / b truncated, unwrapped)] over the broadcast elements, y == 0 kept as 0."""
    x, y = np.broadcast_arrays(x, y)
    out = []
    for a, b in zip(x.ravel().tolist(), y.ravel().tolist()):
        q = 0 if b == 0 else abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        out.append((a, b, q))
    return out, x.shape


def xla_div(x, y):
    """Truncating integer division: x / 0 is -1 (all ones unsigned), MIN / -1 is MIN."""
    divs, shape = _trunc_divs(x, y)
    return _wrap([q if b else -1 for a, b, q in divs], x.dtype).reshape(shape)


def xla_rem(x, y):
    """C's remainder, with x's sign: x rem 0 is x, MIN rem -1 is 0."""
    if x.dtype.kind == "f":
        return np.fmod(x, y)
    divs, shape = _trunc_divs(x, y)
    return _wrap([a - q * b if b else a for a, b, q in divs], x.dtype).reshape(shape)


def _sign(v):
    if v.dtype.kind == "u":
        return (v != 0).astype(v.dtype)
    return np.where(v > 0, 1, np.where(v < 0, -1, v)).astype(v.dtype)


def _float_divmod(x, y):
    mod = np.fmod(x, y)
    div = np.divide(np.where(y == 0, x, x - mod), y)
    ind = (mod != 0) & (_sign(y) != _sign(mod))
    mod = np.where(ind, mod + y, mod)
    div = np.where(ind, div - 1, div)
    return _round_away(div).astype(x.dtype), mod.astype(x.dtype)


def _round_away(v):
    """lax.round: halves away from zero."""
    a = np.abs(v)
    t = np.trunc(a)
    return np.copysign(np.where(a - t >= 0.5, t + 1, t), v).astype(v.dtype)


def floor_divide(x, y):
    if x.dtype.kind == "u":
        return xla_div(x, y)
    if x.dtype.kind == "i":
        q = xla_div(x, y)
        fix = (_sign(x) != _sign(y)) & (xla_rem(x, y) != 0)
        return np.where(fix, q - np.array(1, x.dtype), q).astype(x.dtype)
    return _float_divmod(x, y)[0]


def remainder(x, y):
    if x.dtype.kind in "iu":
        y = np.where(y == 0, 1, y).astype(y.dtype)
    t = xla_rem(x, y)
    plus = ((t < 0) != (y < 0)) & (t != 0)
    return np.where(plus, t + y, t).astype(x.dtype)


def _shift(x, n, how):
    bits = 8 * x.dtype.itemsize
    amount = n.view(np.dtype(f"u{x.dtype.itemsize}")) if n.dtype.kind == "i" else n
    inside = amount < bits
    k = np.where(inside, amount, 0).astype(x.dtype)
    if how == "left":
        got = np.left_shift(x, k)
    else:
        got = np.right_shift(x, k)
    edge = np.where(x < 0, -1, 0) if how == "right" and x.dtype.kind == "i" else 0
    return np.where(inside, got, np.array(edge).astype(x.dtype)).astype(x.dtype)


def _extremum(x, y, op):
    return RN._extremum(x, y, op) if x.dtype.kind == "f" else \
        (np.minimum if op == "min" else np.maximum)(x, y)


def _no_bool_minus(x, y):
    if x.dtype == np.bool_:
        raise TypeError("subtract does not accept two booleans")
    return np.subtract(x, y)


def _bool_or(f, g):
    return lambda x, y: (g if x.dtype == np.bool_ else f)(x, y)


def _not_float(name, f):
    def go(x, y):
        if x.dtype.kind == "f":
            raise TypeError(f"{name} does not accept dtype {x.dtype}")
        return f(x, y)
    return go


# name -> (the function of the promoted values, promotion, result dtype: None = promoted)
_BINARY = {
    "add": (_bool_or(np.add, np.logical_or), {}, None),
    "sub": (_no_bool_minus, {}, None),
    "mul": (_bool_or(np.multiply, np.logical_and), {}, None),
    "truediv": (np.divide, {"inexact": True}, None),
    "floordiv": (floor_divide, {"numeric": True}, None),
    "mod": (remainder, {"numeric": True}, None),
    "and": (_not_float("and", np.bitwise_and), {}, None),
    "or": (_not_float("or", np.bitwise_or), {}, None),
    "xor": (_not_float("xor", np.bitwise_xor), {}, None),
    "lshift": (_not_float("shift", lambda x, y: _shift(x, y, "left")), {"numeric": True}, None),
    "rshift": (_not_float("shift", lambda x, y: _shift(x, y, "right")), {"numeric": True},
               None),
    "lt": (np.less, {}, "bool"), "le": (np.less_equal, {}, "bool"),
    "gt": (np.greater, {}, "bool"), "ge": (np.greater_equal, {}, "bool"),
    "eq": (np.equal, {}, "bool"), "ne": (np.not_equal, {}, "bool"),
    "maximum": (lambda x, y: _extremum(x, y, "max"), {}, None),
    "minimum": (lambda x, y: _extremum(x, y, "min"), {}, None),
}


def binary(name, a, b):
    fn, how, out = _BINARY[name]
    (x, y), dt, weak = promote(a, b, **how)
    with np.errstate(all="ignore"):
        got = np.asarray(fn(x, y))
    return Rendered(got.astype(out or dt), weak)


def _operator(name, reflected=False):
    if reflected:
        return lambda self, other: binary(name, other, self)
    return lambda self, other: binary(name, self, other)


for _op, _name in [("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "truediv"),
                   ("floordiv", "floordiv"), ("mod", "mod"), ("and", "and"), ("or", "or"),
                   ("xor", "xor"), ("lshift", "lshift"), ("rshift", "rshift")]:
    setattr(Rendered, f"__{_op}__", _operator(_name))
    setattr(Rendered, f"__r{_op}__", _operator(_name, reflected=True))
for _op in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Rendered, f"__{_op}__", _operator(_op))


# ---- reductions ----------------------------------------------------------------------------------
def _fold(v, axis, mask, start, op):
    """op folded along `axis` from `start` (None: the first element), element by element in
    order, masked-out elements skipped."""
    v = np.moveaxis(v, axis, 0)
    mask = np.moveaxis(np.broadcast_to(mask, np.moveaxis(v, 0, axis).shape), axis, 0) \
        if mask is not None else np.ones(v.shape, bool)
    acc = None if start is None else np.broadcast_to(start, v.shape[1:]).copy()
    with np.errstate(all="ignore"):
        for row, m in zip(v, mask):
            acc = row.copy() if acc is None else np.where(m, op(acc, row), acc)
    return acc.astype(v.dtype)


def _accumulated(x, kind):
    """sum/prod's computing dtype and result dtype."""
    dt = x.dtype
    if dt == np.bool_ or dt.kind == "i":
        return np.dtype("int64"), np.dtype("int64")
    if dt.kind == "u":
        return np.dtype("uint64"), np.dtype("uint64")
    return (np.dtype("float32") if dt == np.float16 else dt), dt


def _reduce(kind, x, axis=None, where=None, initial=None, dtype=None):
    """sum/prod/max/min; sum/prod's `dtype=`: the operand converted to it first, then
    accumulated in it (an int8 sum wraps at 8 bits; a bool sum is `or`)."""
    if dtype is not None:
        x = Rendered(_cast(x.value, dtype))
    v = x.value
    if where is not None and where.dtype != np.bool_:
        raise ValueError(f"{kind}: where must be None or a boolean array")
    if axis is None:
        v, axis, where = v.ravel(), 0, (None if where is None else
                                        np.broadcast_to(where.value, x.shape).ravel())
    elif where is not None:
        where = where.value
    if kind in ("sum", "prod"):
        calc, out = _accumulated(x, kind) if dtype is None else (x.dtype, x.dtype)
        if x.ndim == 0 and where is None:      # (no axis to reduce: -0.0 stays -0.0)
            return Rendered(_cast(x.value, out))
        op = np.add if kind == "sum" else np.multiply
        if calc == np.bool_:
            op = np.logical_or if kind == "sum" else np.logical_and
        start = np.array(0 if kind == "sum" else 1, calc)
        return Rendered(_fold(v.astype(calc), axis, where, start, op).astype(out))
    start = None if initial is None else _cast(_py_int(initial), v.dtype)
    return Rendered(_fold(v, axis, where, start, lambda a, b: _extremum(a, b, kind)))


def _py_int(v):
    return np.array(v, np.int64) if isinstance(v, int) and not isinstance(v, bool) else v


def _arg(kind, x, axis=None):
    fn = np.argmax if kind == "argmax" else np.argmin
    return Rendered(np.asarray(fn(x.value, axis=axis)).astype(np.int64))


def _cumulative(kind, x, axis, weak=False):
    """xnp.cumsum (strong, as jnp.cumsum), lax.cummax/cummin (`weak`: the operand's weak
    type kept, as jax 0.10.2's lax.cummax of a weak float is weak)."""
    if kind != "cumsum" and x.dtype == np.bool_:
        raise TypeError(f"{kind} does not accept dtype bool")
    v = np.moveaxis(x.value.astype(np.int64) if x.dtype == np.bool_ else x.value, axis, 0)
    acc, rows = None, []
    with np.errstate(all="ignore"):
        for row in v:
            acc = (row + 0 if kind == "cumsum" else row.copy()) if acc is None else (  # (0 + -0.0)
                np.add(acc, row) if kind == "cumsum" else
                _extremum(acc, row, kind[3:]))
            rows.append(np.asarray(acc).astype(v.dtype))
    out = np.stack(rows) if rows else v.copy()          # (an empty axis: no rows)
    return Rendered(np.moveaxis(out, 0, axis), weak)


class _Namespace:
    def __init__(self, **fns):
        self.__dict__.update(fns)


def _where(c, a, b):
    (x, y), dt, weak = promote(a, b)
    return Rendered(np.where(c.value.astype(bool), x, y).astype(dt), weak)


_FLOAT_TYPES = {n: n for n in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                               "int64", "uint64", "float16", "float32", "float64")}
XNP = _Namespace(
    abs=lambda x: unary(x, "abs", np.abs),
    sign=lambda x: unary(x, "sign", _sign, no_bool=True),
    floor=lambda x: unary(x, "floor", lambda v: np.floor(v) if v.dtype.kind == "f" else v),
    isnan=lambda x: unary(x, "isnan", np.isnan, out=np.bool_),
    square=lambda x: unary(x, "square", lambda v: v * v, numeric=True),
    logical_not=lambda x: unary(x, "logical_not", np.logical_not, out=np.bool_),
    maximum=lambda a, b: binary("maximum", a, b), minimum=lambda a, b: binary("minimum", a, b),
    where=_where,
    sum=lambda x, axis=None, where=None, dtype=None: _reduce("sum", x, axis, where, dtype=dtype),
    prod=lambda x, axis=None, where=None, dtype=None: _reduce("prod", x, axis, where,
                                                              dtype=dtype),
    max=lambda x, axis=None, where=None, initial=None: _reduce("max", x, axis, where, initial),
    min=lambda x, axis=None, where=None, initial=None: _reduce("min", x, axis, where, initial),
    argmax=lambda x, axis=None: _arg("argmax", x, axis),
    argmin=lambda x, axis=None: _arg("argmin", x, axis),
    cumsum=lambda x, axis: _cumulative("cumsum", x, axis),
    broadcast_to=lambda x, shape: Rendered(np.broadcast_to(x.value, shape), x.weak),
    **{n: np.dtype(n) for n in _FLOAT_TYPES})
LAX = _Namespace(cummax=lambda x, axis: _cumulative("cummax", x, axis, x.weak),
                 cummin=lambda x, axis: _cumulative("cummin", x, axis, x.weak))


def render(src, operands):
    """The Rendered value of expression `src` (a dtype program's statement) from its operands
    {name: Rendered}; TypeError where JAX raises one."""
    return eval(src, {"xnp": XNP, "lax": LAX, "np": np}, dict(operands))


__all__ = ["Rendered", "XNP", "LAX", "render", "result_type", "promote", "xla_div", "xla_rem"]
