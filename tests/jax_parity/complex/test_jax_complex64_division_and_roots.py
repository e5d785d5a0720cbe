"""complex64 |z|, log, sqrt, 1/sqrt and division computed in float32 as XLA does (issue #31),
on the compiled tier (both CPU paths) and the eager tier.  XLA's CPU also fuses some
products and sums into FMAs (its object code, not its HLO): Smith's division
fma(ratio, b.re, b.im)..., |z|'s fma(r, r, 1).  The values are jax 0.10.2's
(`jax.jit(f)(np.complex64(...))`, x64 enabled, CPU), ordinary points where the float64
computation rounded (or NumPy's complex64 ufunc gave) other float32 bits."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

Z0 = 3.7719066 + 11.186859j
Z2 = 0.00064042263 - 0.6701104j
Z3 = 0.052450057 - 1.9805366j
Z5 = 0.18079753 + 30.708658j
Z9 = -0.63271075 + 1.5133253j
Z10 = -18.698235 + 42.829975j
Z33 = 16.225367 + 34.722816j
Z40 = -0.62953275 + 0.5541825j

UNARY = {   # name: (function, [(z, jax's f(np.complex64(z)))])
    "abs": (xnp.abs, [(Z0, 11.805637), (Z5, 30.709188)]),
    "log": (xnp.log, [(Z0, 2.4685774 + 1.245594j), (Z10, 3.8444636 + 1.982425j)]),
    "sqrt": (xnp.sqrt, [(Z5, 3.9300117 + 3.9069424j), (Z9, 0.7097733 + 1.0660625j)]),
    "rsqrt": (lax.rsqrt, [(Z2, 0.86420965 + 0.8633842j), (Z3, 0.508969 + 0.49566856j)]),
    "reciprocal": (xnp.reciprocal, [(Z33, 0.011045656 - 0.023638066j),
                                    (Z40, -0.8949476 - 0.7878293j)]),
}
# jax.jit(lambda a, b: a / b)(np.complex64(a), np.complex64(b))
DIVIDE = [(Z0, -1.3755783 - 14.434575j, -0.79270756 + 0.18576753j),
          (0.00094708096 + 1.6769375j, 89.501686 - 0.10568398j, -1.1542271e-05 + 0.018736364j)]


def _check(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.view(np.float32), np.asarray(want, dtype).view(np.float32))


@pytest.mark.parametrize("path", ["1", "0"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_compiled_complex64_unary_is_xlas_float32(name, path, monkeypatch):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", path)
    f, pairs = UNARY[name]
    z = np.array([p for p, _ in pairs], np.complex64)
    want_dtype = np.float32 if name == "abs" else np.complex64
    _check(xf.jit(f, tiered=False)(z), [w for _, w in pairs], want_dtype)


@pytest.mark.parametrize("name", ["sqrt", "reciprocal"])
def test_eager_complex64_unary_is_xlas_float32(name):
    """NumPy's complex64 sqrt and division round otherwise (sqrt(0.18079753+30.708658j) was
    3.930012+3.9069421j); the eager tier computes complex64 as the compiled tier."""
    f, pairs = UNARY[name]
    z = np.array([p for p, _ in pairs], np.complex64)
    _check(f(z), [w for _, w in pairs], np.complex64)


def test_eager_complex64_log_ordinary_elements_in_float32():
    """log(3.7719066+11.186859j): NumPy's complex64 log gave Re 2.4685771, jax 2.4685774."""
    f, pairs = UNARY["log"]
    _check(f(np.array([Z0], np.complex64)), [pairs[0][1]], np.complex64)


@pytest.mark.parametrize("tier", ["eager", "1", "0"])
def test_complex64_division_is_smiths_with_xlas_fmas(tier, monkeypatch):
    a = np.array([p[0] for p in DIVIDE], np.complex64)
    b = np.array([p[1] for p in DIVIDE], np.complex64)
    want = [p[2] for p in DIVIDE]
    if tier == "eager":
        _check(xnp.divide(a, b), want, np.complex64)
    else:
        monkeypatch.setenv("XFORMS_LLVM_KERNELS", tier)
        _check(xf.jit(lambda x, y: x / y, tiered=False)(a, b), want, np.complex64)


def test_float32_fma_rounds_once():
    """The Python fma of float32 parts (eager special elements, the CUDA simulator) rounds
    once.  (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24, which the rounded product loses (0).  And
    (1 + 2^-23)(1 - 2^-23) + (2^24 + 2) = 2^24 + 3 - 2^-46: just below a float32 midpoint,
    so 2^24 + 2; the float64 sum rounds to the midpoint itself, which ties to 2^24 + 4."""
    from xforms.primitives.complex_arith import division, multiply
    a, b, c = np.float32(1 + 2 ** -12), np.float32(1 + 2 ** -12), np.float32(-1 - 2 ** -11)
    assert a * b + c == 0
    assert multiply.fma(a, b, c) == np.float32(2.0 ** -24)
    x, y, t = np.float32(1 + 2 ** -23), np.float32(1 - 2 ** -23), np.float32(2 ** 24 + 2)
    assert np.float32(float(x) * float(y) + float(t)) == 2 ** 24 + 4      # (double rounding)
    assert multiply.float32_fma(x, y, t) == 2 ** 24 + 2
    v = division.fma32(np.array([a, x]), np.array([b, y]), np.array([c, t]))
    assert v.dtype == np.float32 and v.tolist() == [2.0 ** -24, 2 ** 24 + 2]


Z1 = -0.3963146 + 0.0005815974j
Z7 = 0.00094708096 + 1.6769375j
EAGER_TRIG = {   # jax's jnp.NAME(np.complex64(z)); NumPy's complex64 ufuncs rounded otherwise
    "sin": [(Z1, -0.3860213 + 0.00053651776j), (Z7, 0.0026215645 + 2.5811005j)],
    "cos": [(Z1, 0.92249 + 0.00022450896j), (Z7, 2.768046 - 0.002444512j)],
    "expm1": [(Z0, 7.2631774 - 42.670124j), (Z3, -1.4198234 - 0.9666168j)],
}


@pytest.mark.parametrize("name", sorted(EAGER_TRIG))
def test_eager_complex64_sin_cos_expm1_in_float32(name):
    z = np.array([p for p, _ in EAGER_TRIG[name]], np.complex64)
    _check(getattr(xnp, name)(z), [w for _, w in EAGER_TRIG[name]], np.complex64)


def test_compiled_expm1_real_part_is_fused():
    """Re expm1(3.7719066+11.186859j) = fma(expm1 x, cosm1 y + 1, cosm1 y): jax 7.2631774,
    the rounded product gave 7.263178."""
    got = xf.jit(xnp.expm1, tiered=False)(np.array([Z0], np.complex64))
    _check(got, [EAGER_TRIG["expm1"][0][1]], np.complex64)


def test_float64_fma_in_python_is_exact():
    """The simulator's and the eager tier's fma of float64 parts: (1 + 2^-30)(1 - 2^-30) - 1
    is -2^-60 (the rounded product, 1.0, gave 0); overflow and infinities as IEEE's fma."""
    import math
    from xforms.primitives.complex_arith import multiply
    assert multiply.fma(1 + 2 ** -30, 1 - 2 ** -30, -1.0) == -2.0 ** -60
    assert multiply.fma(1e300, 1e300, -math.inf) == -math.inf
    assert multiply.fma(1e300, 1e300, 1.0) == math.inf
    assert math.isnan(multiply.fma(math.inf, 0.0, 1.0))
    assert math.copysign(1, multiply.fma(-0.0, 1.0, -0.0)) == -1
