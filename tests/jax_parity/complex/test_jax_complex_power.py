"""Complex x ** y as JAX gives it (issue #31, session 29): XLA's power (r^c e^(-d t) cis(c t
+ d log r), with its selects for a zero, one and +inf base: xforms/primitives/complex_arith/
power.py) on the eager, fast and compiled tiers, both CPU paths, and the Python scalar
function the CUDA simulator runs.  CUDA: tests/cuda/test_complex_cuda.py.

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import complex_close, tiers  # noqa: F401 (tiers: a fixture)
from xforms.primitives.complex_arith import multiply, power

INF, NAN = np.inf, np.nan
C = complex

# jax 0.10.2: jax.jit(jax.lax.pow)(x, y), complex128, for these (x, y, x ** y)
PAIRS = [
    (C(INF, 1), C(2, 0), C(NAN, NAN)),          # (NumPy: inf+infj; XLA's Im inf * sin 0)
    (C(INF, 0), C(2, 0), C(INF, 0)),            # (XLA's select for +inf ** real)
    (C(INF, 0), C(-2, 0), 0j),
    (0j, C(1, 1), C(NAN, NAN)),                 # (NumPy: 0)
    (0j, 0j, C(1, 0)),
    (C(1, 0), C(NAN, NAN), C(1, 0)),            # (NumPy: nan+nanj)
    (C(-7.5, -0.0), C(0.5, 0), C(1.6769166921737594e-16, -2.7386127875258306)),
    (C(2, 3), C(-7.5, 1), C(2.4412134642473436e-05, 4.81420618475292e-06)),
    (C(1e300, 1e300), C(2, 0), C(INF, INF)),    # (NumPy: nan+infj)
    (C(2, -7.5), C(3e38, 0), C(-INF, INF)),     # (cis of c t = -3.9e38 with libm's atan2)
    (C(-7.5, 2), C(1, -7.5), C(18734545658.710205, 1463817253.31001)),
    (0j, C(-1, 0), C(NAN, NAN)),                # (NumPy: inf+nanj... jax: nan+nanj)
    (C(NAN, 0), 0j, C(1, 0)),
    (C(1, NAN), C(2, 0), C(NAN, NAN)),
    (C(-0.0, 1e-30), C(0.5, 0.5), C(-3.1629804993942923e-16, -3.283825816867824e-16)),
]
X = np.array([p[0] for p in PAIRS])
Y = np.array([p[1] for p in PAIRS])
WANT = np.array([p[2] for p in PAIRS])
# the same in complex64 (jax 0.10.2, float32 arithmetic)
WANT64 = np.array([C(NAN, NAN), C(INF, 0), 0j, C(NAN, NAN), C(1, 0), C(1, 0),
                   C(-1.1970857372034516e-07, -2.7386128902435303),
                   C(2.4412136554019526e-05, 4.8141982915694825e-06), C(NAN, NAN), C(NAN, NAN),
                   C(18734557184, 1463811584), C(NAN, NAN), C(1, 0), C(NAN, NAN),
                   C(-3.162985931774476e-16, -3.2838207403540183e-16)], np.complex64)


def _same(results, want, rtol):
    """Each result has want's dtype, NaN where it has NaN (any sign), zeros and infinities of
    its sign, finite parts to rtol."""
    complex_close(results, want, rtol)


@pytest.mark.parametrize("llvm", ["0", "1"])
def test_complex_power_as_xla(tiers, llvm, monkeypatch):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", llvm)
    _same(tiers(lax.pow, X, Y), WANT, 1e-14)
    _same(tiers(xnp.power, X, Y), WANT, 1e-14)


def test_complex64_power_as_xla(tiers):
    x, y = X.astype(np.complex64), Y.astype(np.complex64)
    _same(tiers(lax.pow, x, y), WANT64, 3e-6)


def test_the_scalar_function_python_runs(tiers):
    # the CUDA simulator runs power_scalar in Python (math's functions, the emulated fma)
    got = np.array([power.power_scalar(a, b) for a, b in zip(X, Y)])
    _same([got], WANT, 1e-14)


def test_integer_exponent_of_lax_pow_is_complex_power(tiers):
    # jax 0.10.2: lax.pow(x, n) of x = [inf+1j, 2+3j] and int32 n = [2, 3] converts n to
    # complex128 (nan+nanj: XLA's power), where x ** 2 is integer_pow (inf+infj: products)
    x = np.array([C(INF, 1), C(2, 3)])
    _same(tiers(lax.pow, x, np.array([2, 3], np.int32)), np.array([C(NAN, NAN), C(-46.00000000000001, 9.000000000000009)]), 1e-14)
    _same(tiers(lambda a: a ** 2, x), np.array([C(INF, INF), C(-5, 12)]), 1e-15)
    # jnp.float_power(x, 2.5): complex power
    _same(tiers(lambda a: xnp.float_power(a, 2.5), x),
          np.array([C(NAN, NAN), C(-19.12247585373576, 15.609903355777293)]), 1e-14)


def test_python_fma_rounds_once():
    # the simulator's and the eager redo's fma: exact (1e300 * 1e300 - 1e300 is finite
    # nowhere, but 0.1 * 10 - 1 is 2^-54, where the product rounded first gives 0)
    assert multiply.fma(0.1, 10.0, -1.0) == 5.551115123125783e-17
    assert multiply.fma(1e300, 1e300, -INF) == -INF
    assert multiply.fma(1e300, 1e300, -1e300) == INF
    assert np.signbit(multiply.fma(1e300, -0.0, -0.0))


# jax 0.10.2: jnp.prod / jnp.cumprod / lax.cumprod(reverse=True) of _ROWS (complex128): the
# fold from 1+0j in index order, each product XLA's elementwise one (inf-infj where the
# plain product gives inf+nanj)
_ROWS = np.array([[C(1e300, 1e300), C(1e300, -1e300), 1 + 1j],
                  [C(INF, 2), 1 + 1j, 2 + 0j]])


@pytest.mark.parametrize("llvm", ["0", "1"])
def test_complex_products_fold_with_xlas_product(tiers, llvm, monkeypatch):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", llvm)
    _same(tiers(lambda a: xnp.prod(a, axis=1), _ROWS), np.array([C(INF, NAN), C(NAN, NAN)]),
          1e-15)
    _same(tiers(lambda a: xnp.prod(a, axis=0), _ROWS),
          np.array([C(INF, INF), C(2e300, 0), 2 + 2j]), 1e-15)
    _same(tiers(lambda a: xnp.cumprod(a, axis=1), _ROWS),
          np.array([[C(1e300, 1e300), C(INF, -INF), C(INF, NAN)],
                    [C(INF, NAN), C(NAN, NAN), C(NAN, NAN)]]), 1e-15)
    _same(tiers(lambda a: lax.cumprod(a, axis=1, reverse=True), _ROWS),
          np.array([[C(INF, NAN), C(2e300, 0), 1 + 1j], [C(NAN, NAN), 2 + 2j, 2 + 0j]]), 1e-15)


@pytest.mark.parametrize("llvm", ["0", "1"])
def test_compiled_complex_products_fuse_as_xla(llvm, monkeypatch):
    # jax 0.10.2: jnp.prod / jnp.cumprod of [3e38+3e38j, 3e38+3e38j, 1]: XLA's FMA keeps the
    # rounding error of 9e76 - 9e76 as real part (the plain product: 0).  The compiled tiers
    # (the eager tier folds with NumPy's products where they are finite: 0 there)
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", llvm)
    x = np.array([C(3e38, 3e38), C(3e38, 3e38), 1 + 0j])
    sq = C(-1.677509520414629e+59, 1.8000000000000001e+77)
    _same([xf.jit(xnp.prod, tiered=False)(x)], np.array(sq), 1e-15)
    _same([xf.jit(xnp.cumprod, tiered=False)(x)], np.array([x[0], sq, sq]), 1e-15)


@pytest.mark.parametrize("llvm", ["0", "1"])
def test_complex_logistic_and_sign_as_xla(tiers, llvm, monkeypatch):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", llvm)
    # jax 0.10.2: lax.logistic(z): 1 / (1 + exp(-z)) with XLA's exp (exp(-inf-infj) is
    # nan+nanj: NumPy's 0 gave 1+0j) and XLA's division (1 / (inf-infj) is 0: the compiled
    # tier's plain division gave nan+nanj)
    z = np.array([C(INF, INF), C(-INF, 1), C(-INF, 2), C(INF, NAN), C(0.5, -1.25)])
    _same(tiers(lax.logistic, z), np.array([C(NAN, NAN), 0j, C(-0.0, 0.0), C(NAN, NAN),
                                            C(0.6805661698086823, -0.32883527469514817)]), 1e-15)
    # jax 0.10.2: jnp.sign(s): the parts over XLA's |s| (the compiled tier divided by
    # Numba's hypot: ...347 in the last digit, and 0.7071067811865476 at 1e-40+1e-40j)
    s = np.array([C(1, -7.5), C(1e-40, 1e-40), C(-7.5, 1), C(-0.0, -0.0), C(INF, 2)])
    want = np.array([C(0.13216372009101796, -0.9912279006826348),
                     C(0.7071067811865475, 0.7071067811865475),
                     C(-0.9912279006826348, 0.13216372009101796), C(-0.0, -0.0), C(NAN, 0.0)])
    for r in tiers(xnp.sign, s):
        np.testing.assert_array_equal(np.asarray(r).view(np.float64)[:-2],
                                      want.view(np.float64)[:-2])       # (bits)
    _same(tiers(xnp.sign, s), want, 0)
