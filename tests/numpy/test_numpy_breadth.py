"""The breadth functions of xforms.numpy (issue 15) against jax.numpy (the semantics we
mirror; NumPy where JAX agrees with it): values and dtypes eagerly, under one shared `jit`
per dtype, in float32 and float64 (ints and complex where defined)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp

from jax_reference import jnp, reference   # live JAX, or its recorded values without jax

R = np.random.default_rng(0)
A = R.standard_normal((3, 4))
V = R.standard_normal(5)
S = R.standard_normal((4, 4))
X3 = R.standard_normal((2, 3, 4))
NANS = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan, np.nan, np.nan, np.nan], [4.0, 0.5, np.nan, -1.0]])
INTS = R.integers(0, 6, 7)

# name -> (function of (xnp-or-jnp module, A, V, S, X3, NANS), whether float32 applies)
CASES = {
    "hypot": lambda m, A, V, S, X, N: m.hypot(A, 2 * A),
    "angle": lambda m, A, V, S, X, N: m.angle(A + 1j * A[::-1]),
    "angle_real": lambda m, A, V, S, X, N: m.angle(A),
    "sinc": lambda m, A, V, S, X, N: m.sinc(A),
    "i0": lambda m, A, V, S, X, N: m.i0(3 * A),
    "fmax": lambda m, A, V, S, X, N: m.fmax(N, A),
    "fmin": lambda m, A, V, S, X, N: m.fmin(A, N),
    "fabs": lambda m, A, V, S, X, N: m.fabs(A),
    "nan_to_num": lambda m, A, V, S, X, N: m.nan_to_num(N / 0.0 * A, nan=1.5),
    "logaddexp2": lambda m, A, V, S, X, N: m.logaddexp2(A, A + 1),
    "deg2rad": lambda m, A, V, S, X, N: (m.deg2rad(A), m.radians(A), m.rad2deg(A), m.degrees(A)),
    "copysign": lambda m, A, V, S, X, N: m.copysign(A, -A[::-1]),
    "signbit": lambda m, A, V, S, X, N: m.signbit(A * 0.0 - A),
    "heaviside": lambda m, A, V, S, X, N: m.heaviside(m.round(A), 0.5),
    "fmod": lambda m, A, V, S, X, N: m.fmod(5 * A, 1.5),
    "modf": lambda m, A, V, S, X, N: m.modf(3 * A),
    "trunc": lambda m, A, V, S, X, N: m.trunc(3 * A),
    "isposinf": lambda m, A, V, S, X, N: (m.isposinf(A / 0.0), m.isneginf(A / 0.0)),
    "isclose": lambda m, A, V, S, X, N: (m.isclose(A, A + 1e-9), m.isclose(N, N, equal_nan=True),
                                         m.allclose(A, A * (1 + 1e-7)), m.allclose(A, A + 1)),
    "array_equal": lambda m, A, V, S, X, N: (m.array_equal(A, A), m.array_equal(N, N),
                                             m.array_equal(N, N, equal_nan=True),
                                             m.array_equiv(A, A[:1])),
    "trace": lambda m, A, V, S, X, N: (m.trace(S), m.trace(X, 1, 1, 2), m.trace(A, -1)),
    "diagonal": lambda m, A, V, S, X, N: (m.diagonal(S, 1), m.diagonal(X, -1, 2, 0)),
    "diag": lambda m, A, V, S, X, N: (m.diag(V), m.diag(V, -2), m.diag(S, 1), m.diagflat(A[:2, :2], 1)),
    "tril": lambda m, A, V, S, X, N: (m.tril(S), m.triu(S, 1), m.tril(X, -1), m.triu(A, -1)),
    "kron": lambda m, A, V, S, X, N: (m.kron(S[:2, :3], A), m.kron(V[:2], A)),
    "cross": lambda m, A, V, S, X, N: (m.cross(A[:, :3], A[:, 1:]), m.cross(A[:, :2], A[:, 1:3]),
                                       m.cross(A[:, :3], A[:, 1:3]), m.cross(A[:3, :3], S[:3, :3], axis=0)),
    "vander": lambda m, A, V, S, X, N: (m.vander(V), m.vander(V, 3, increasing=True)),
    "rot90": lambda m, A, V, S, X, N: (m.rot90(A), m.rot90(A, 2), m.rot90(X, 3, (2, 0))),
    "roll": lambda m, A, V, S, X, N: (m.roll(A, 2), m.roll(A, -1, 1), m.roll(X, (1, 2), (0, 2))),
    "append": lambda m, A, V, S, X, N: (m.append(A, V), m.append(A, A[:1], 0)),
    "insert": lambda m, A, V, S, X, N: (m.insert(V, 2, 9.0), m.insert(A, np.array([1, 3]), 7.0, 1),
                                        m.insert(A, 1, V[:4], 0)),
    "delete": lambda m, A, V, S, X, N: (m.delete(A, np.array([0, 2]), 1), m.delete(V, 1),
                                        m.delete(A, slice(0, 2), 0)),
    "splits": lambda m, A, V, S, X, N: (m.array_split(V, 3) + m.vsplit(S, 2) + m.hsplit(S, [1, 3])
                                        + m.dsplit(X, 2)),
    "stacks": lambda m, A, V, S, X, N: (m.column_stack((V, V)), m.vstack((V, V)), m.dstack((A, A)),
                                        m.atleast_3d(V), m.atleast_3d(A), m.rollaxis(X, 2),
                                        m.rollaxis(X, 0, 3)),
    "cumsum": lambda m, A, V, S, X, N: (m.cumsum(A), m.cumsum(A, 1), m.cumprod(X, 0),
                                        m.cumulative_sum(A, axis=1, include_initial=True),
                                        m.cumulative_prod(V), m.nancumsum(N, 1), m.nancumprod(N, 0)),
    "diff": lambda m, A, V, S, X, N: (m.diff(A), m.diff(A, 2, 0), m.diff(V, prepend=0.0, append=V[:2]),
                                      m.ediff1d(A, to_begin=V[:1], to_end=2.0), m.trapezoid(A),
                                      m.trapezoid(A, V[:4]), m.trapezoid(A, dx=0.5, axis=0)),
    "sort": lambda m, A, V, S, X, N: (m.sort(A), m.sort(X, 0), m.sort(N, 1), m.sort(A, None),
                                      m.sort(N, descending=True), m.argsort(N), m.argsort(X, 1),
                                      m.argsort(m.round(A), descending=True), m.sort(m.round(A) + 1j * A)),
    "lexsort": lambda m, A, V, S, X, N: m.lexsort((m.round(A), m.round(A[::-1]))),
    "searchsorted": lambda m, A, V, S, X, N: (m.searchsorted(m.sort(V), A),
                                              m.searchsorted(m.round(m.sort(V)), m.round(A), side="right"),
                                              m.searchsorted(V, A, sorter=m.argsort(V)),
                                              m.searchsorted(m.sort(N[0]), N, method="sort"),
                                              m.searchsorted(m.sort(N[0]), N, "right", method="sort"),
                                              m.searchsorted(m.sort(N[2]), N, method="compare_all"),
                                              m.searchsorted(m.sort(N[2]), N, "right")),
    "along_axis": lambda m, A, V, S, X, N: (m.take_along_axis(A, m.argsort(A, 1), 1),
                                            m.take_along_axis(X, m.argsort(X, 0)[:1], 0)),
    "nan": lambda m, A, V, S, X, N: (m.nansum(N), m.nansum(N, 1), m.nanmax(N, 1), m.nanmin(N, 0),
                                     m.nanmean(N, 1), m.nanvar(N, 1), m.nanstd(N, 1, ddof=1),
                                     m.nanprod(N, 1), m.nanargmax(N, 1), m.nanargmin(N, 1)),
    "quantile": lambda m, A, V, S, X, N: (
        m.median(A), m.median(X, 1), m.median(X, (0, 2), keepdims=True), m.quantile(A, 0.3),
        m.quantile(A, np.array([0.1, 0.9]), 1), m.percentile(X, 40.0, 2),
        m.quantile(A, 0.3, method="lower"), m.quantile(A, 0.3, axis=1, method="higher"),
        m.quantile(A, 0.5, method="midpoint"), m.quantile(A, 0.45, method="nearest"),
        m.quantile(N, 0.5, axis=1), m.nanmedian(N, 1), m.nanquantile(N, 0.25, 1),
        m.nanpercentile(N, 75.0, 1)),
    "moments": lambda m, A, V, S, X, N: (
        m.average(A), m.average(A, 1, V[:4]), m.average(A, 0, A, returned=True), m.cov(A),
        m.cov(A, rowvar=False), m.cov(A, A[::-1], ddof=0), m.cov(V, aweights=np.abs(V)),
        m.cov(A, fweights=np.array([1, 2, 1, 3])), m.corrcoef(A), m.corrcoef(A[0], A[1]),
        m.ptp(A, 1), m.count_nonzero(m.round(A)), m.count_nonzero(m.round(A), axis=0)),
    "bins": lambda m, A, V, S, X, N: (
        m.histogram(V), m.histogram(A, 3, range=(-1.0, 1.0)), m.histogram(V, np.array([-2.0, 0.0, 1.0])),
        m.histogram(A, 4, weights=A * A, density=True), m.digitize(V, np.array([-1.0, 0.0, 1.0])),
        m.digitize(V, np.array([1.0, 0.0, -1.0]), right=True),
        m.interp(A, np.array([-1.0, 0.0, 2.0]), np.array([0.0, 1.0, 5.0])),
        m.interp(A, np.array([-1.0, 0.0, 2.0]), np.array([0.0, 1.0, 5.0]), left=-9.0, right=9.0)),
    "pad": lambda m, A, V, S, X, N: (
        m.pad(A, 2, "reflect"), m.pad(A, ((1, 2), (3, 0)), "symmetric"), m.pad(V, 7, "wrap"),
        m.pad(A, 1, "edge"), m.pad(A, 2, "mean"), m.pad(A, (1, 3), "maximum", stat_length=2),
        m.pad(A, 1, "minimum"), m.pad(A, 2, "median", stat_length=(1, 3)),
        m.pad(A, (2, 1), "linear_ramp", end_values=(1.0, -2.0)), m.pad(V, 9, "reflect", reflect_type="odd"),
        m.pad(A, 3, "symmetric", reflect_type="odd"), m.pad(A, ((1, 1), (2, 0)), constant_values=((1, 2), (3, 4))),
        m.pad(A, 1, constant_values=-1.0)),
    "grids": lambda m, A, V, S, X, N: (m.meshgrid(V, V[:3]) + m.meshgrid(V, V[:3], indexing="ij")
                                       + m.meshgrid(V, V[:2], V[:3], sparse=True) + list(m.ix_(V, V[:2]))),
    "r_c_": lambda m, A, V, S, X, N: (m.r_[V, 1.0, V[:2]], m.r_[A, A], m.r_["1", A, A], m.r_[0:4],
                                      m.c_[V, V], m.c_[A, A], m.r_["0,2", V, V], m.r_["0,2,0", V, V]),
    "select": lambda m, A, V, S, X, N: (m.select([A > 0, A < -1], [A, -A], 0.5),
                                        m.piecewise(A, [A < 0, A > 1], [lambda x: x * 2, 7.0, lambda x: -x]),
                                        m.piecewise(A, [A < 0], [lambda x: x ** 2])),
    "searching": lambda m, A, V, S, X, N: (
        m.nonzero(m.round(A), size=8), m.nonzero(m.round(A), size=20, fill_value=-1),
        m.flatnonzero(m.round(X), size=5), m.argwhere(m.round(A), size=6),
        m.extract(A > 0, A, size=7), m.compress(V[:3] > 0, A, 1, size=2),
        m.unravel_index(m.argmax(A), A.shape), m.ravel_multi_index((m.argmax(A, 0), m.argmin(A, 0)), (4, 3), mode="clip")),
    "polynomial": lambda m, A, V, S, X, N: (
        m.polyval(V, A), m.polyadd(V, V[:2]), m.polysub(V[:3], V), m.polymul(V, V[:3]),
        m.polyder(V, 2), m.polyint(V, 2, k=np.array([1.0, -1.0]))),
    "array_api": lambda m, A, V, S, X, N: (
        m.vecdot(A, A[0]), m.matvec(A, A[0]), m.vecmat(A[:, 0], A), m.unstack(A, axis=1),
        m.matrix_transpose(X), m.permute_dims(X, (2, 0, 1)), m.concat([A, A], axis=1),
        m.acos(A / 3), m.atan2(A, A[::-1]), m.pow(m.abs(A), 1.5), m.rint(A * 3)),
    "functional": lambda m, A, V, S, X, N: (
        m.vectorize(lambda a, b: a * b + 1)(A, A[0]), m.apply_along_axis(lambda v: (v ** 2).sum(), 1, A),
        m.apply_along_axis(lambda v: m.stack([v.sum(), v.max()]), 0, X),
        m.apply_over_axes(m.sum, X, [0, 2]), m.fromfunction(lambda i, j: i * 10 + j, (2, 3))),
    "filling": lambda m, A, V, S, X, N: (
        m.fill_diagonal(A, 5.0, inplace=False), m.fill_diagonal(A.T, V[:2], inplace=False),
        m.place(A, A > 0, V[:2], inplace=False), m.put(A, np.array([0, 5, -1]), V[:3], inplace=False),
        m.block([[A, A[:, :1]], [A[:1], A[:1, :1]]]), m.resize(A, (5, 3)),
        m.choose(np.array([0, 1, 0, 1]), [A[0], A[1]]), m.choose(np.array([0, 3, 1, 1]), [A[0], A[1]], mode="clip")),
    "gradient": lambda m, A, V, S, X, N: (
        m.gradient(A), m.gradient(A[0], np.array([0.0, 1.0, 3.0, 4.0])), m.gradient(X, 2.0, axis=1),
        m.unwrap(m.cumsum(A[0] * 3)), m.unwrap(X * 4, axis=1), m.histogram_bin_edges(A, 4)),
    "ranges": lambda m, A, V, S, X, N: (m.logspace(0.0, 2.0, 5), m.geomspace(1.0, 100.0, 4),
                                        m.logspace(1.0, 3.0, 4, base=2.0, endpoint=False),
                                        m.poly(V[:3]), m.mask_indices(3, m.triu, 1)),
    "windows": lambda m, A, V, S, X, N: (m.hanning(5), m.hamming(4), m.bartlett(6), m.blackman(5),
                                         m.kaiser(6, 2.0)),
    "setops": lambda m, A, V, S, X, N: (m.isin(m.round(A), np.array([0.0, 1.0])),
                                        m.isin(m.round(A), np.array([0.0]), invert=True)),
}
FLOAT32_SKIP = {"isclose", "array_equal", "moments", "bins"}   # tolerance-sensitive or f64 only


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flat(v)]
    return [x]


def _compare(ours, ref, name, rtol, dtypes=True):
    ours, ref = _flat(ours), _flat(ref)
    assert len(ours) == len(ref), (name, len(ours), len(ref))
    for k, (o, r) in enumerate(zip(ours, ref)):
        o, r = np.asarray(o), np.asarray(r)
        assert o.shape == r.shape, (name, k, o.shape, r.shape)
        if dtypes:
            assert o.dtype == r.dtype, (name, k, o.dtype, r.dtype)
        np.testing.assert_allclose(o, r, rtol=rtol, atol=rtol, equal_nan=True,
                                   err_msg=f"{name}[{k}]")


def _args(dtype):
    return tuple(np.asarray(x, dtype) for x in (A, V, S, X3, NANS))


_JITTED = {}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_eager(name, dtype):
    if dtype == "float32" and name in FLOAT32_SKIP:
        pytest.skip("float64 only")
    args = _args(dtype)
    ref = reference(f"breadth/{name}/{dtype}",
                    lambda: CASES[name](jnp, *[jnp.asarray(a) for a in args]))
    ours = CASES[name](xnp, *args)
    _compare(ours, ref, name, 1e-10 if dtype == "float64" else 2e-5)


JIT_SKIP = {"r_c_", "grids", "windows", "ranges"}     # r_/c_ and grids are the same code staged or not


# Under jit, a representative set by default (each case is a Numba compile: seconds); the
# rest are marked slow
JIT_FAST = {"sort", "cumsum", "quantile", "pad", "searching", "nan", "diag", "roll", "setops"}


@pytest.mark.parametrize("name", [n if n in JIT_FAST else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(set(CASES) - JIT_SKIP)])
def test_values_jit(name):
    args = _args("float64")
    ref = reference(f"breadth/{name}/float64",
                    lambda: CASES[name](jnp, *[jnp.asarray(a) for a in args]))
    ours = xf.jit(lambda *a: CASES[name](xnp, *a))(*args)
    _compare(ours, ref, name, 1e-10)


def test_integer_inputs():
    i = INTS
    pairs = [
        (lambda m: m.cumsum(i), None), (lambda m: m.cumprod(i.astype(np.int32)), None),
        (lambda m: m.cumsum(i > 2), None), (lambda m: m.diff(i), None),
        (lambda m: m.sort(i), None), (lambda m: m.argsort(i), None),
        (lambda m: m.median(i), None), (lambda m: m.quantile(i.astype(np.int32), 0.3), None),
        (lambda m: m.bincount(i), None), (lambda m: m.bincount(i, length=4), None),
        (lambda m: m.bincount(i, weights=np.linspace(0, 1, 7), minlength=9), None),
        (lambda m: m.unique(i), None),
        (lambda m: m.unique(i, return_index=True, return_inverse=True, return_counts=True), None),
        (lambda m: m.gcd(i, 12), None), (lambda m: m.lcm(i, np.int64(4)), None),
        (lambda m: m.trace(i.reshape(1, 7)), None), (lambda m: m.roll(i, 3), None),
        (lambda m: m.pad(i, 2, "mean"), None), (lambda m: m.pad(i, (1, 2), "median"), None),
        (lambda m: m.count_nonzero(i), None), (lambda m: m.ptp(i), None),
        (lambda m: m.nanmax(i), None), (lambda m: m.nansum(i.astype(np.int32)), None),
        (lambda m: m.searchsorted(np.arange(5), i), None), (lambda m: m.tril(np.ones((3, 3), int)), None),
        (lambda m: m.isin(i, np.array([1, 2])), None), (lambda m: m.signbit(i - 3), None),
        (lambda m: m.ldexp(np.ones(7), i), None), (lambda m: m.digitize(i, np.array([1, 3])), None),
    ]
    for k, (f, _) in enumerate(pairs):
        _compare(f(xnp), reference(f"breadth/int/{k}", lambda: f(jnp)), f"integer case {k}",
                 1e-12)


def test_complex_inputs():
    z = A + 1j * A[::-1]
    for k, f in enumerate((lambda m: m.cumsum(z, 1), lambda m: m.cumprod(z, 0), lambda m: m.trace(z[:3, :3]),
              lambda m: m.diff(z), lambda m: m.sort(np.round(z)), lambda m: m.argsort(np.round(z), 0),
              lambda m: m.nan_to_num(z), lambda m: m.iscomplex(z), lambda m: m.isreal(z.real + 0j),
              lambda m: m.cov(z), lambda m: m.corrcoef(z), lambda m: m.kron(z[:1, :2], z),
              lambda m: m.pad(z, 2, "reflect"), lambda m: m.roll(z, 1, 0), lambda m: m.tril(z))):
        _compare(f(xnp), reference(f"breadth/complex/{k}", lambda: f(jnp)), "complex", 1e-10)
    assert xnp.iscomplexobj(z) and not xnp.iscomplexobj(A) and xnp.isrealobj(A)


def test_unique_sized_under_jit():
    x = np.array([3.0, 1.0, 3.0, 2.0, np.nan, np.nan])
    for kw, size in (({}, 6), ({"return_index": True, "return_inverse": True,
                                "return_counts": True}, 2), ({"fill_value": -1.0}, 4)):
        for _ in (0,):
            ref = reference(f"breadth/unique/{size}/{sorted(kw)}",
                            lambda: jnp.unique(jnp.asarray(x), size=size, **kw))
            _compare(xf.jit(lambda x: xnp.unique(x, size=size, **kw))(x), ref, f"unique {kw}", 0)
            _compare(xnp.unique(x, size=size, **kw), ref, f"unique eager {kw}", 0)
    with pytest.raises(Exception, match="size="):
        xf.jit(lambda x: xnp.unique(x))(x)
    a, b = np.array([1, 5, 3, 5, 7]), np.array([5, 1, 2])
    for name in ("setdiff1d", "intersect1d"):
        ref = reference(f"breadth/{name}/sized",
                        lambda: getattr(jnp, name)(a, b, size=4, fill_value=-1))
        _compare(xf.jit(lambda a, b: getattr(xnp, name)(a, b, size=4, fill_value=-1))(a, b),
                 ref, name, 0)
        _compare(getattr(xnp, name)(a, b),
                 reference(f"breadth/{name}", lambda: getattr(jnp, name)(a, b)), name, 0)
    _compare(xnp.setxor1d(a, b), reference("breadth/setxor1d", lambda: jnp.setxor1d(a, b)),
             "setxor1d", 0)


def test_roll_traced_shift():
    f = xf.jit(lambda a, s: xnp.roll(a, s, 1))
    for s in (-5, -1, 0, 3, 9):
        np.testing.assert_array_equal(f(A, s), np.roll(A, s, 1))


@pytest.mark.parametrize("tiered", [None, True, False], ids=["eager", "fast", "compiled"])
def test_select_of_non_bool_conditions_and_take_along_axis_default_axis(tiered):
    # jax 0.10.2: jnp.select takes conditions of any dtype (true where nonzero, NaN too;
    # NumPy and xforms refused them), and take_along_axis's axis defaults to -1
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    c = [np.array([1.0, 0.0, np.nan, 0.0]), np.array([0, 3, 0, 0], np.int32)]
    ch = [np.array([5.0, 6.0, 7.0, 8.0]), np.array([1, 2, 3, 4], np.int32)]
    np.testing.assert_array_equal(run(xnp.select)(c, ch, 9), [5.0, 2.0, 7.0, 9.0])
    a, i = np.array([[3, 1], [2, 4]]), np.array([[1, 0], [0, 0]])
    np.testing.assert_array_equal(run(xnp.take_along_axis)(a, i), [[1, 3], [2, 2]])


@pytest.mark.parametrize("tiered", [None, True, False], ids=["eager", "fast", "compiled"])
def test_roll_float_and_array_shifts_as_jax(tiered):
    # jax 0.10.2 (x64): a float shift truncates to an integer; a 1-d shift (traced or not)
    # broadcasts against the axes and each is applied in turn; the shift's derivative is 0.
    # xforms refused a 1-d shift ("only 0-dimensional arrays ...", or under grad/jit
    # "dynamic_slice: need 1 scalar integer start indices")
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    x = np.array([1.0, 2.0, 3.0, 4.0])
    eq = np.testing.assert_array_equal
    eq(run(xnp.roll)(x, 1.7), [4.0, 1.0, 2.0, 3.0])
    eq(run(xnp.roll)(x, -0.6), x)
    eq(run(xnp.roll)(x, np.array([1.7])), [4.0, 1.0, 2.0, 3.0])
    a = np.array([0.1, -1.387, 2.126, 0.889, 2.652, -1.085, 0.678])
    s = np.array([1.2, 2.213, -0.274, 0.239, 3.252, -0.985, 0.528])   # sum of int(s): 6
    eq(run(xnp.roll)(a, s), [-1.387, 2.126, 0.889, 2.652, -1.085, 0.678, 0.1])
    eq(run(lambda a, s: xnp.roll(a, s, axis=(0, 1)))(A, np.array([1, -2])),
       np.roll(A, (1, -2), (0, 1)))
    g = run(xf.grad(lambda a, s: (xnp.roll(a, s) * xnp.arange(7.0)).sum(), (0, 1)))(a, s)
    eq(g[0], [6.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    eq(g[1], np.zeros(7))
    if tiered is None:
        rows = np.stack([a, a[::-1]])
        got = xf.vmap(xnp.roll)(rows, np.stack([s, -s]))
        eq(got, np.stack([np.roll(r, int(np.sum(np.trunc(v)))) for r, v in zip(rows, [s, -s])]))
        with pytest.raises(ValueError, match="1-d"):
            xnp.roll(A, np.ones((2, 2)), 0)
        # traced non-finite shifts convert as JAX's int32 (NaN 0, inf 2**31 - 1, -inf -2**31)
        rows, shifts = np.stack([np.arange(7.0)] * 3), np.array([np.nan, np.inf, -np.inf])
        got = xf.vmap(xnp.roll)(rows, shifts)
        eq(got, [[0, 1, 2, 3, 4, 5, 6], [6, 0, 1, 2, 3, 4, 5], [2, 3, 4, 5, 6, 0, 1]])


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="diagonal"):
        xnp.diagonal(V)
    with pytest.raises(ValueError, match="mode"):
        xnp.pad(A, 1, mode="bogus")
    with pytest.raises(NotImplementedError, match="method"):
        xnp.quantile(A, 0.5, method="hazen")
    with pytest.raises(ValueError, match="side"):
        xnp.searchsorted(V, 0.0, side="middle")
    with pytest.raises(Exception, match="length="):
        xf.jit(lambda i: xnp.bincount(i))(INTS)
    with pytest.raises(Exception, match="concrete"):
        xf.jit(lambda i: xnp.delete(A, i))(np.array([1]))
