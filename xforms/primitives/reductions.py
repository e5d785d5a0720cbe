"""Reductions over static axes: reduce_sum, reduce_max, reduce_min, reduce_prod, reduce_and,
reduce_or, argmax, argmin.  Output drops the reduced axes (keepdims is an xnp reshape)."""
import numpy as np

from .. import config
from ..core import trace as core
from ..errors import AxisError
from ..core.avals import ShapedArray, accumulation_dtype, static_index
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import deflinear, defjvp, defjvp_zero, jvp_rules, Zero
from ..transforms.transpose import transpose_rules
from ..transforms.vmap import vmap_rules, moveaxis
from ..core.facts import REDUCTION, declare
from ..core import engine_prims
from ..core.engine_prims import interned, reduce_sum
from ..core.registry import exempt, primitive
from .elementwise import convert_element_type, div, eq, fix_zero_ties, mul, select_n
from .structural import broadcast_in_dim, full
from .complex_arith import patching as complex_patch


def _reduced_aval(name, x, axes, dtype=None):
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise AxisError(f"{name}: axes {axes} are out of bounds (or repeated) for "
                        f"{x.str_short()}")
    return ShapedArray.of(tuple([s for i, s in enumerate(x.shape) if i not in axes]),
                          x.dtype if dtype is None else np.dtype(dtype),
                          x.weak_type if dtype is None else False)


def _def_reducer(name, np_fn, init, bool_out=False):
    """A reduction over `axes` whose monoid is named by `name` minus "reduce_" and starts
    from `init(dtype)` (the lowering facts); `name` may be the engines' primitive."""
    p = name if isinstance(name, core.Primitive) else primitive(name)
    name = p.name
    declare(p, REDUCTION, reduce_op=name[len("reduce_"):], reduce_init=init)
    abstract_eval_rules[p] = lambda x, *, axes: [
        _reduced_aval(name, x, axes, np.dtype(np.bool_) if bool_out else None)]
    impl_rules[p] = lambda x, *, axes: [np_fn(x, axis=axes)]

    def rule(args, dims, *, axes):
        x = moveaxis(args[0], dims[0], 0)
        return [p.bind(x, axes=tuple(a + 1 for a in axes))], [0]
    vmap_rules[p] = rule
    return p


def _axes(axes):
    return interned(tuple(sorted(static_index(a, "a reduction's axes") for a in axes)))


def _expand_back(y, x_aval, axes):
    """Broadcast a reduced value back to the operand's shape."""
    kept = tuple(i for i in range(x_aval.ndim) if i not in axes)
    return broadcast_in_dim(y, x_aval.shape, kept)


# --- sum ---------------------------------------------------------------------------------
def _accumulating(ufunc):
    """np.sum / np.prod (their ufunc's reduce: np.sum's Python wrapper costs more than
    summing a small array) accumulating in `accumulation_dtype` (float16 in float32)."""
    adds = ufunc is np.add

    def f(x, axis):
        if type(x) is not np.ndarray:
            x = np.asarray(x)
        dt = x.dtype
        if not adds and dt.kind == "c":     # jax's fold: XLA's products
            return complex_patch.product(x, tuple(axis))
        acc = accumulation_dtype(dt)
        if adds:
            shape = x.shape
            for a in axis:
                if shape[a] != 1:
                    break
            else:
                if x.size:
                    # one element per sum: itself, as XLA's reshape (np.add.reduce starts
                    # from +0.0 and makes -0.0 +0.0; jax 0.10.2's sum of [-0.0] is -0.0)
                    return x.reshape([d for a, d in enumerate(shape) if a not in axis]).copy()
            if _slow_column_sum(x, axis, acc):
                return np.einsum("ij->j", x)
        if acc is dt and dt.kind in "fc":    # (floats: dtype= changes nothing, costs 1 us;
            return ufunc.reduce(x, axis=axis)  # integers' default accumulator is wider)
        r = ufunc.reduce(x, axis=axis, dtype=acc)
        return r if acc == dt else r.astype(dt, copy=False)
    return f


def _slow_column_sum(x, axes, acc):
    """Is summing `x` over `axes` a column sum that NumPy's reduce runs a row at a time (~12
    ns per row): over the rows of a C-contiguous float matrix with few columns -- the
    transpose of a bias or a scale broadcast over a batch?  `np.einsum("ij->j")` adds the
    rows in the same order, bit for bit, 3-10x faster there (2000 x 2: ~6 us, not ~21).
    (One column is a contiguous vector, which NumPy sums pairwise, and fast.)"""
    return (axes == (0,) and x.ndim == 2 and x.shape[0] >= 64 and 2 <= x.shape[1] <= 32
            and x.dtype == acc and x.dtype.kind == "f" and x.flags.c_contiguous)


reduce_sum_p = _def_reducer(engine_prims.reduce_sum_p, _accumulating(np.add), lambda dt: 0)
declare(reduce_sum_p, loop_spelling="reduce")      # (eager loop bodies: np.add.reduce)
_sum_aval = abstract_eval_rules[reduce_sum_p]


def _f16_checked_sum_aval(x, *, axes):
    if x.dtype == np.float16 and not config.allow_f16_reductions.value:
        raise ValueError(f"reduce_sum on operand {x.str_short()} is not allowed when "
                         "jax_allow_f16_reductions=False.")
    return _sum_aval(x, axes=axes)


abstract_eval_rules[reduce_sum_p] = _f16_checked_sum_aval
deflinear(reduce_sum_p)
transpose_rules[reduce_sum_p] = lambda ct, x, *, axes: [
    None if isinstance(ct, Zero) else _expand_back(ct, x.aval, axes)]

# --- max / min: the tangent is shared evenly among the positions that attain the extremum --
def _lowest(dt):
    dt = np.dtype(dt)
    if dt.kind == "c":      # (a complex fold starts from a value that never wins: below)
        return complex(np.nan, np.nan)
    return -np.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min)


def _highest(dt):
    dt = np.dtype(dt)
    if dt.kind == "c":
        return complex(np.nan, np.nan)
    return np.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max)


def complex_wins(a, b, maximum):
    """Where `a` beats `b` in XLA's complex max (min): by real part, then imaginary part,
    strictly -- so a NaN never wins and a tie goes to `b`, where NumPy's maximum keeps a NaN.

        >>> complex_wins(np.array([1 + 2j, np.nan]), np.array([1 + 1j, 0j]), True)
        array([ True, False])
    """
    pick = np.greater if maximum else np.less
    return pick(a.real, b.real) | ((a.real == b.real) & pick(a.imag, b.imag))


def complex_fold(x, maximum, accumulate=False):
    """XLA's complex max (min) folded along the last axis from the first element,
    `acc = acc if acc wins else x` (as XLA's CPU loop folds a row of fewer than 32; longer
    rows it splits, so with NaNs there jax's answer depends on the split); `accumulate`:
    every prefix (lax.cummax).  Without NaN the pick is associative: one vectorised pass.

        >>> complex_fold(np.array([1 + 2j, np.nan, 3 + 0j]), True)
        (3+0j)
    """
    n = x.shape[-1]
    if not accumulate and not np.isnan(x).any():
        re = x.real.max(-1, keepdims=True) if maximum else x.real.min(-1, keepdims=True)
        at = x.real == re
        far = -np.inf if maximum else np.inf
        im = np.where(at, x.imag, far)
        at &= x.imag == (im.max(-1, keepdims=True) if maximum else im.min(-1, keepdims=True))
        last = n - 1 - np.argmax(at[..., ::-1], axis=-1)      # a tie goes to the later one
        return np.take_along_axis(x, last[..., None], -1)[..., 0]
    acc, out = x[..., 0], [x[..., 0]]
    for i in range(1, n):
        acc = np.where(complex_wins(acc, x[..., i], maximum), acc, x[..., i])
        out.append(acc)
    return np.stack(out, -1) if accumulate else acc


def _ordered_zero_reduce(ufunc):
    """np.max / np.min with -0.0 < +0.0 (lax.reduce_max of [-0.0, 0.0] is 0.0); complex
    operands fold as XLA picks (complex_fold)."""
    maximum = ufunc is np.maximum

    def f(x, axis):
        x = np.asarray(x)
        if x.dtype.kind == "c":
            keep = [i for i in range(x.ndim) if i not in axis]
            n = int(np.prod([x.shape[i] for i in axis]))
            rows = np.transpose(x, keep + list(axis)).reshape([x.shape[i] for i in keep] + [n])
            return np.asarray(complex_fold(rows, maximum), x.dtype)
        return fix_zero_ties(ufunc.reduce(x, axis=axis), maximum,
                             lambda winning: _any_along(winning(x), axis))
    return f


def _any_along(w, axis):
    """np.logical_or.reduce(w, axis), or False where `w` holds no True (one C pass: the
    usual case, a zero result with no zero of the other sign in the operand)."""
    return np.logical_or.reduce(w, axis=axis) if np.count_nonzero(w) else False


def _extremum(p, identity):
    """reduce_max / reduce_min: over no elements of a complex operand, jax's identity
    (-inf + 0j, inf + 0j; the emitters' complex fold starts from NaN, which never wins)."""
    def f(x, axes):
        aval = core.get_aval(x)
        axes = _axes(axes)
        if aval.dtype.kind == "c" and any(aval.shape[a] == 0 for a in axes):
            from .structural import full
            kept = tuple(s for i, s in enumerate(aval.shape) if i not in axes)
            return full(kept, complex(identity, 0), aval.dtype)
        return p.bind(x, axes=axes)
    f.__name__ = p.name
    return f


reduce_max_p = _def_reducer("reduce_max", _ordered_zero_reduce(np.maximum), _lowest)
reduce_max = _extremum(reduce_max_p, -np.inf)
reduce_min_p = _def_reducer("reduce_min", _ordered_zero_reduce(np.minimum), _highest)
reduce_min = _extremum(reduce_min_p, np.inf)


def _chooser_jvp(t, ans, x, *, axes):
    aval = core.get_aval(x)
    dt = aval.dtype
    mask = convert_element_type(eq(x, _expand_back(ans, aval, axes)), dt)
    count = reduce_sum(mask, axes)
    return div(reduce_sum(mul(t, mask), axes), count)


defjvp(reduce_max_p, _chooser_jvp)
defjvp(reduce_min_p, _chooser_jvp)

# --- prod: the tangent sum_i t_i prod_{j != i} x_j, without dividing by x_i (zeros in x are
# fine, to every order, as in JAX).  The reduced axes are flattened into one, and pairs are
# multiplied as dual numbers, (a, a') (b, b') = (ab, ab' + a'b), halving it log2(n) times.
reduce_prod_p = _def_reducer("reduce_prod", _accumulating(np.multiply), lambda dt: 1)
reduce_prod = lambda x, axes: reduce_prod_p.bind(x, axes=_axes(axes))


def _prod_jvp(t, ans, x, *, axes):
    from .elementwise import add
    from .structural import full, pad, reshape, slice as slice_, transpose
    aval = core.get_aval(x)
    keep = [i for i in range(aval.ndim) if i not in axes]
    out_shape = [aval.shape[i] for i in keep]
    n = int(np.prod([aval.shape[i] for i in axes]))
    if n == 0:
        return full(tuple(out_shape), 0, core.get_aval(t).dtype)

    def flat(v):
        if keep + list(axes) != list(range(aval.ndim)):
            v = transpose(v, keep + list(axes))
        return reshape(v, out_shape + [n])
    xs, ts = flat(x), flat(t)
    while n > 1:
        if n % 2:
            cfg = [(0, 0, 0)] * len(out_shape) + [(0, 1, 0)]
            xs, ts = pad(xs, _one(xs, 1), cfg), pad(ts, _one(ts, 0), cfg)
            n += 1
        lo, hi = [0] * len(out_shape), list(out_shape)
        strides = [1] * len(out_shape) + [2]
        xa, xb = (slice_(xs, lo + [k], hi + [n], strides) for k in (0, 1))
        ta, tb = (slice_(ts, lo + [k], hi + [n], strides) for k in (0, 1))
        xs, ts = mul(xa, xb), add(mul(xa, tb), mul(ta, xb))
        n //= 2
    return reshape(ts, out_shape)


def _one(like, c):
    return core.get_aval(like).dtype.type(c)


defjvp(reduce_prod_p, _prod_jvp)

# --- boolean reductions (all / any) --------------------------------------------------------
reduce_and_p = _def_reducer("reduce_and", np.all, lambda dt: True, bool_out=True)
reduce_and = lambda x, axes: reduce_and_p.bind(x, axes=_axes(axes))
reduce_or_p = _def_reducer("reduce_or", np.any, lambda dt: False, bool_out=True)
reduce_or = lambda x, axes: reduce_or_p.bind(x, axes=_axes(axes))

# --- argmax / argmin over one axis ----------------------------------------------------------
argmax_p = primitive("argmax")
argmin_p = primitive("argmin")
declare(argmax_p, REDUCTION, reduce_op="argmax")   # the emitters track (value, index) pairs
declare(argmin_p, REDUCTION, reduce_op="argmin")


def ordered(name, x):
    """`x` (an aval or array), or JAX's TypeError for an argmax/argmin of complex values (its
    rule compares with gt/lt, which refuse them: complex numbers have no order; NumPy's
    lexicographic one is not JAX's).  Eager Arrays' argmax/argmin methods call it too.

        >>> argmax(xnp.array([1j, 2]), 0)     # TypeError: argmax: gt does not accept ...
    """
    if x.dtype.kind == "c":
        cmp = "gt" if name == "argmax" else "lt"
        raise TypeError(f"{name}: {cmp} does not accept dtype {x.dtype.name} at position 0. "
                        "Accepted dtypes at position 0 are subtypes of integer, floating, "
                        f"bool (as in JAX: complex numbers have no order; take the {name} of "
                        "x.real or of abs(x))")
    return x


for _p, _fn in ((argmax_p, np.argmax), (argmin_p, np.argmin)):
    abstract_eval_rules[_p] = (lambda name: lambda x, *, axis, index_dtype: [
        _reduced_aval(name, ordered(name, x), (axis,), index_dtype)])(_p.name)
    impl_rules[_p] = (lambda fn: lambda x, *, axis, index_dtype: [
        fn(x, axis=axis).astype(index_dtype)])(_fn)
    vmap_rules[_p] = (lambda p: lambda args, dims, *, axis, index_dtype: (
        [p.bind(moveaxis(args[0], dims[0], 0), axis=axis + 1, index_dtype=index_dtype)],
        [0]))(_p)
    defjvp_zero(_p)
for _p in (reduce_and_p, reduce_or_p, argmax_p, argmin_p):
    exempt(_p, "jvp", "boolean/integer output: tangent is a symbolic zero")
argmax = lambda x, axis, index_dtype=np.int64: argmax_p.bind(
    x, axis=static_index(axis, "argmax's axis"), index_dtype=np.dtype(index_dtype))
argmin = lambda x, axis, index_dtype=np.int64: argmin_p.bind(
    x, axis=static_index(axis, "argmin's axis"), index_dtype=np.dtype(index_dtype))

del jvp_rules, full, select_n
