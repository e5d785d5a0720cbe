"""Complex numbers at their edges on the CUDA backend (session 27, issue #31/#34): division is
XLA's, by the CPU tiers' own function compiled as a device function (cuda/printer/
complexes.py), so on a grid of infinities, NaNs, signed zeros, huge and tiny parts the CUDA
quotients are the CPU compiled tier's, bit for bit; tanh and tan (XLA's, complex_arith/
tangent.py, session 30) and arccosh by device functions too (complex_arith/inverse.py),
with jax's special values where the closed forms printed before gave NaN parts (and, on the
simulator, raised: Python's math.tan(inf)).

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on), written
here as literals.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

INF, NAN = np.inf, np.nan


def parts_equal(got, want, atol=0.0):
    """Same dtype and, part by part, the same value: NaN where `want` has NaN, zeros of the
    same sign, finite parts to a few ulps (and `atol`)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, got.dtype
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{got} {want}")
        np.testing.assert_array_equal(np.signbit(g[~np.isnan(g)]), np.signbit(w[~np.isnan(w)]),
                                      err_msg=f"{got} {want}")
        rtol = 1e-6 if got.dtype == np.complex64 else 1e-13
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{got} {want}")


def same_bits(got, want):
    """Bit for bit, NaN payloads aside."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        bad = ~((g == w) & (np.signbit(g) == np.signbit(w)) | np.isnan(g) & np.isnan(w))
        assert not bad.any(), f"{bad.sum()} differ, first at {np.flatnonzero(bad)[:5]}"


# (a, b): jax 0.10.2's `a / b` below (jax.jit(lambda a, b: a / b) on complex128 and complex64)
_PAIRS = [(complex(INF, INF), 1j), (complex(INF, INF), complex(-0.0, 0.0)),
          (complex(INF, NAN), 1 + 1j), (1 + 2j, 0j), (complex(INF, 2), 2 + 0j),
          (3 - 4j, complex(INF, 1)), (1 + 1j, complex(1e300, 1e300)),
          (complex(3e38, 3e38), complex(INF, INF)), (complex(-3e38, 3e38), complex(INF, -INF)),
          (complex(NAN, 1), complex(INF, 0)), (2 - 1j, complex(0, -0.0))]
_JAX = {np.complex128: [(INF, -INF), (-INF, -INF), (INF, -INF), (INF, INF), (INF, NAN),
                        (0.0, -0.0), (1e-300, 0.0), (0.0, 0.0), (-0.0, 0.0), (NAN, NAN),
                        (INF, -INF)],
        # (1e300 is inf in complex64; the sums 3e38 + 3e38 overflow float32: 0 * inf)
        np.complex64: [(INF, -INF), (-INF, -INF), (INF, -INF), (INF, INF), (INF, NAN),
                       (0.0, -0.0), (0.0, 0.0), (NAN, 0.0), (NAN, 0.0), (NAN, NAN),
                       (INF, -INF)]}


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cuda_complex_division_special_values_as_jax(dtype):
    with np.errstate(over="ignore"):
        a, b = (np.array(c, dtype) for c in zip(*_PAIRS))
    want = np.array([complex(r, i) for r, i in _JAX[dtype]], dtype)
    parts_equal(xf.jit(lambda a, b: a / b, backend="cuda")(a, b), want)
    # what divides inside: 1 / b, b ** -1, lax.integer_pow(b, -2) of [0j, inf+1j]: jax
    # [inf+nanj, 0j], [inf+nanj, 0j], [inf+nanj, 0-0j]
    b = np.array([0j, complex(INF, 1)], dtype)
    got = xf.jit(lambda b: (1 / b, b ** -1, lax.integer_pow(b, -2)), backend="cuda")(b)
    for g, last in zip(got, (0.0, 0.0, -0.0)):
        parts_equal(g, np.array([complex(INF, NAN), complex(0.0, last)], dtype))


def _grid(dtype):
    parts = [INF, -INF, NAN, 0.0, -0.0, 1.0, -7.5, 1e-30,
             3e38 if dtype == np.complex64 else 1e300]
    v = np.array([complex(r, i) for r in parts for i in parts], dtype)
    return np.repeat(v, v.size), np.tile(v, v.size)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cuda_complex_division_is_the_cpu_tiers_bit_for_bit(dtype):
    a, b = _grid(dtype)
    div = lambda a, b: a / b    # noqa: E731
    cpu = xf.jit(div, backend="cpu", tiered=False)(a, b)
    same_bits(xf.jit(div, backend="cuda")(a, b), cpu)


# jax 0.10.2: jnp.tanh / jnp.tan / jnp.arccosh of these (complex128; complex64 where noted)
_FNS = {
    "tanh": ([complex(INF, INF), complex(-INF, NAN), complex(NAN, 0), complex(1e300, INF),
              complex(INF, 2), complex(-INF, -7.5), complex(0.5, -1.25), complex(30, 1)],
             [(1.0, 0.0), (-1.0, 0.0), (NAN, 0.0), (NAN, NAN), (1.0, -0.0), (-1.0, -0.0),
              (1.5839635482844239, -0.8066346988510735), (1.0, 1.592454540898267e-26)]),
    "tan": ([complex(1, INF), complex(INF, 1), complex(-2, -INF), complex(0.5, -1.25)],
            [(0.0, 1.0), (NAN, NAN), (0.0, -1.0), (0.1261085664842344, -0.9067248043194311)]),
    "arccosh": ([complex(INF, 1), complex(-INF, 1), complex(INF, INF), complex(1, 1e-30),
                 complex(2, 3), 0j, complex(-7.5, 1e-3), complex(NAN, 1)],
                [(INF, 0.0), (INF, 3.141592653589793), (INF, 0.7853981633974483),
                 (1e-15, 1e-15), (1.9833870299165355, 1.0001435424737972),
                 (0.0, 1.5707963267948966), (2.7035758400627072, 3.1414581190318276),
                 (NAN, NAN)]),
}
_C64 = {("tanh", 3): (1.0, 0.0)}      # (1e300 is inf in complex64: tanh(inf+infj))


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", sorted(_FNS))
def test_cuda_complex_tanh_tan_arccosh_special_values_as_jax(name, dtype):
    zs, want = _FNS[name]
    if dtype == np.complex64:
        want = [_C64.get((name, k), w) for k, w in enumerate(want)]
    with np.errstate(over="ignore"):
        z = np.array(zs, dtype)
    got = xf.jit(getattr(xnp, name), backend="cuda")(z)
    parts_equal(got, np.array([complex(r, i) for r, i in want], dtype))


_ROWS = np.array([[complex(INF, 2), 1 + 1j, 2, 0.5 - 1j], [1 + 1j, 2, 3j, 0.5],
                  [0.5 - 1j, 2, 1 + 1j, complex(INF, 2)]])
# jax 0.10.2: jax.lax.cumprod(_ROWS, axis=1, reverse=True), complex128 and complex64 alike
_ROWS_REVERSED = [[(NAN, NAN), (3.0, -1.0), (1.0, -2.0), (0.5, -1.0)],
                  [(-3.0, 3.0), (0.0, 3.0), (0.0, 1.5), (0.5, 0.0)],
                  [(INF, -INF), (INF, INF), (INF, INF), (INF, NAN)]]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cuda_reverse_complex_cumprod_folds_windows_in_index_order(dtype):
    # the last axis goes through the parallel scan, axis 0 (inner 3) one thread per line
    want = np.array([[complex(*v) for v in row] for row in _ROWS_REVERSED], dtype)
    x = _ROWS.astype(dtype)
    got = xf.jit(lambda x: lax.cumprod(x, axis=1, reverse=True), backend="cuda")(x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    got = xf.jit(lambda x: lax.cumprod(x, axis=0, reverse=True), backend="cuda")(x.T)
    np.testing.assert_allclose(np.asarray(got).T, want, rtol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_cuda_complex_cumprod_with_infinities_is_the_cpu_tiers(reverse):
    # lines of 40 through the parallel scan (chunks of the simulator's 8 threads: tree order)
    # and along axis 0 one thread per line, with infinite parts here and there
    rng = np.random.default_rng(3)
    x = rng.choice(np.array([1 + 1j, 0.5 - 2j, -1.5 + 0.25j, 2 + 0j, complex(INF, 1),
                             complex(1, -INF), complex(INF, INF), 1j]), size=(6, 40),
                   p=[0.2, 0.2, 0.2, 0.2, 0.05, 0.05, 0.05, 0.05])
    for axis, a in ((1, x), (0, x.T)):
        f = lambda a: lax.cumprod(a, axis=axis, reverse=reverse)    # noqa: E731
        cpu = np.asarray(xf.jit(f, backend="cpu", tiered=False)(a))
        same_bits(xf.jit(f, backend="cuda")(a), cpu)


# session 28: the complex functions below are the CPU tiers' scalar functions, compiled as
# device functions (complex_arith: jax's algorithms); on the simulator they run in Python
_UNARY = ["exp", "log", "sqrt", "abs", "sin", "cos", "sinh", "cosh", "expm1", "log1p", "exp2",
          "log2", "square", "tanh", "tan", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
          "arctanh"]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", _UNARY)
def test_cuda_complex_functions_are_the_cpu_tiers_at_the_edges(name, dtype):
    z = _grid(dtype)[1][:81]
    f = getattr(xnp, name)
    got, cpu = xf.jit(f, backend="cuda")(z), xf.jit(f, backend="cpu", tiered=False)(z)
    if name == "abs":
        got, cpu = np.asarray(got).astype(dtype), np.asarray(cpu).astype(dtype)
    # complex64 computes in float32 (as XLA): expm1(1-7.5j)'s Re = expm1(1) cos(7.5) + cosm1(7.5)
    # cancels (terms ~0.6, result -0.0577), so one ulp of float32 expm1 (Numba's libm 1.7182817,
    # as XLA's; Python's rounded float64 1.7182819) is 8 ulps of the result: a few ulps of the
    # terms' size, as any two float32 libms (CPU and GPU) differ
    atol = 3e-7 if (name == "expm1" and dtype == np.complex64) else 0.0
    parts_equal(got, cpu, atol=atol)


def test_cuda_complex_multiply_and_exp_as_jax():
    # jax 0.10.2: a * b (XLA's product, its FMAs keep 1e300 * 1e300 unrounded) and jnp.exp,
    # jnp.sqrt of [inf+infj, -inf-0j, inf+nanj] (complex128)
    a = np.array([complex(INF, 1e300), complex(1e300, 1e300), complex(INF, 2.0)])
    b = np.array([complex(1e300, -7.5), complex(1e300, -1e300), complex(INF, INF)])
    parts_equal(xf.jit(xnp.multiply, backend="cuda")(a, b),
                np.array([complex(INF, -INF), complex(INF, -INF), complex(NAN, INF)]))
    z = np.array([complex(INF, INF), complex(-INF, -0.0), complex(INF, NAN)])
    parts_equal(xf.jit(xnp.exp, backend="cuda")(z),
                np.array([complex(NAN, NAN), complex(0.0, 0.0), complex(NAN, NAN)]))
    parts_equal(xf.jit(xnp.sqrt, backend="cuda")(z),
                np.array([complex(INF, INF), complex(0.0, INF), complex(NAN, NAN)]))


# session 29: complex x ** y is XLA's power (complex_arith/power.py), a device function
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cuda_complex_power_is_the_cpu_tiers_at_the_edges(dtype):
    a, b = _grid(dtype)
    a, b = a[::7], b[::7]               # (a 6561-pair grid is slow in the simulator's Python)
    cpu = xf.jit(lax.pow, backend="cpu", tiered=False)(a, b)
    # finite parts to float32's / float64's rounding of the libms (the simulator's Python
    # math rounds float64 to float32; the CPU tier calls libm's float32 functions)
    got = np.asarray(xf.jit(lax.pow, backend="cuda")(a, b))
    fin = np.isfinite(np.asarray(cpu))
    parts_equal(got[~fin], np.asarray(cpu)[~fin])
    np.testing.assert_allclose(got[fin], np.asarray(cpu)[fin],
                               rtol=2e-5 if dtype == np.complex64 else 1e-12, atol=1e-30)


def test_cuda_complex_power_as_jax():
    # jax 0.10.2: lax.pow(x, y) (complex128): XLA's selects and r^c e^(-d t) cis(c t + d log r)
    x = np.array([complex(INF, 1), complex(INF, 0), 0j, complex(1, 0), complex(2, 3)])
    y = np.array([complex(2, 0), complex(-2, 0), complex(1, 1), complex(NAN, NAN),
                  complex(-7.5, 1)])
    want = np.array([complex(NAN, NAN), 0j, complex(NAN, NAN), complex(1, 0),
                     complex(2.4412134642473436e-05, 4.81420618475292e-06)])
    parts_equal(xf.jit(lax.pow, backend="cuda")(x, y), want)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cuda_complex_logistic_and_sign_are_the_cpu_tiers(dtype):
    # session 29: logistic with XLA's exp and division, sign over XLA's |z|, on both backends
    z = _grid(dtype)[1][:81]
    for f in (lax.logistic, xnp.sign):
        parts_equal(xf.jit(f, backend="cuda")(z), xf.jit(f, backend="cpu", tiered=False)(z))
