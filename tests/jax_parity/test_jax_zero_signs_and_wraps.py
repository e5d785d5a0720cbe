"""Differences from JAX at the edges (zero signs, integer overflow, NaN signs) fixed in
session 31 (issue #31, helper "edges").

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals or as the NumPy expression that gives the same bits.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as xlax
import xforms.numpy as xnp
from jax_tiers import tiers  # noqa: F401 (a fixture)


def bits(results, want):
    """Every result has `want`'s dtype and bits (zero signs and NaN payloads included)."""
    want = np.ascontiguousarray(want)
    for r in results:
        r = np.ascontiguousarray(np.asarray(r))
        assert r.dtype == want.dtype, r.dtype
        np.testing.assert_array_equal(r.view(np.uint8), want.view(np.uint8))


@pytest.fixture(params=["llvm", "numba"])
def cpu_path(request, monkeypatch):
    """Both CPU paths: the direct LLVM one (default) and the Numba one."""
    if request.param == "numba":
        monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    return request.param


def test_products_that_contract_nothing_keep_zero_signs(tiers, cpu_path):
    # XLA multiplies each pair once (a dot_general without contracted dims is a multiply of
    # broadcasts): jax 0.10.2's outer([-1, 0, -3, -0], [1, -2, -0, 0])[1] is
    # [0, -0, -0, 0]; the compiled tier summed from +0.0 (loops and BLAS) and gave +0.0
    b = np.array([-1.0, 0.0, -3.0, -0.0])
    a = np.array([1.0, -2.0, -0.0, 0.0])
    bits(tiers(xnp.outer, b, a), np.outer(b, a))
    big = np.where(np.arange(80) % 2 == 0, -0.0, 0.0)        # a product BLAS computed
    bits(tiers(xnp.outer, big, np.full(70, -2.0)), np.outer(big, np.full(70, -2.0)))
    x = np.array([[-0.0, 1.0, 2.0], [3.0, -0.0, 0.0]])
    y = np.array([[-1.0, 2.0], [0.0, -3.0], [-0.0, 4.0]])
    dn = (((), ()), ((1, 0), (0, 1)))                          # batch dims out of order
    bits(tiers(lambda x, y: xlax.dot_general(x, y, dn), x, y), x.T * y)


def test_integer_pow_wraps_on_both_cpu_paths(tiers, cpu_path):
    # XLA's integer x ** n wraps; Numba marked the products (and its own `**`) `nsw`, and
    # LLVM folded `x ** 2 < 0` to False where x * x wraps to a negative number (3037000500
    # ** 2 is -9223372036709301616 in int64; jax 0.10.2 op by op: True -- its jit folds the
    # compare as XLA's LLVM does, the fast tier and NumPy wrap).  Values: jax 0.10.2's
    x = np.array([3037000500, 3, -3037000500, 1 << 32], np.int64)
    bits(tiers(lambda x: x ** 2 < 0, x), np.array([True, False, True, False]))
    bits(tiers(lambda x: x ** 40 < 0, x), np.array([False, True, False, False]))
    bits(tiers(lambda x: x ** 41, x),
         np.array([0, -420491770248316829, 0, 0], np.int64))
    m = np.iinfo(np.int64)
    y = np.array([m.max, m.min, -1, 7], np.int64)
    bits(tiers(lambda y: y ** 3, y), np.array([m.max, 0, -1, 343], np.int64))
    bits(tiers(lambda y: y ** 9, np.array([2 ** 31 - 1, -2 ** 31, -1, 7], np.int32)),
         np.array([2147483647, 0, -1, 40353607], np.int32))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_complex_pieces_give_the_unpieced_bits(monkeypatch):
    # The eager complex forms run over pieces of 2**16 elements past 2**17
    # (complex_arith/pieces.py); a 2**17 + 5 array with NaNs of both signs, infinities and
    # signed zeros at and around the pieces' edges gives the bits of one unpieced call
    # (a guard: session 31 found no difference to fix)
    from xforms.primitives.complex_arith import pieces
    n = 2 ** 17 + 5
    rng = np.random.default_rng(3)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300])
    at = np.r_[0:8, 65530:65542, 131068:n, rng.integers(0, n, 40)]
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    y = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    for z in (x, y):
        z.real[at] = special[rng.integers(0, 7, at.size)]
        z.imag[at] = special[rng.integers(0, 7, at.size)]
    ops = [xnp.tanh, xnp.log, xnp.arcsin, lambda a: a / y, lambda a: a ** y]
    for dt in (np.complex64, np.complex128):
        a = x.astype(dt)
        pieced = [np.asarray(f(a)) for f in ops]
        monkeypatch.setattr(pieces, "CHUNK", 1 << 30)
        whole = [np.asarray(f(a)) for f in ops]
        monkeypatch.setattr(pieces, "CHUNK", 1 << 16)
        for p, w in zip(pieced, whole):
            bits([p], w)


def test_a_sum_of_one_element_keeps_its_zero_sign(tiers):
    # XLA's reduce over axes of size 1 is a reshape: jax 0.10.2's sum([-0.0]) is -0.0,
    # sum([[-0.], [2.], [-0.]], axis=1) is [-0., 2., -0.], sum([-0-0j]) is -0-0j; xforms
    # summed from +0.0 (NumPy's add.reduce, the compiled loops) and gave +0.0
    bits(tiers(lambda z: xnp.sum(z), np.array([-0.0])), np.array(-0.0))
    bits(tiers(lambda z: xnp.sum(z), np.array([-0.0], np.float32)), np.array(-0.0, np.float32))
    m = np.array([[-0.0], [2.0], [-0.0]])
    bits(tiers(lambda m: xnp.sum(m, axis=1), m), np.array([-0.0, 2.0, -0.0]))
    bits(tiers(lambda c: xnp.sum(c), np.array([complex(-0.0, -0.0)])),
         np.array(complex(-0.0, -0.0)))
