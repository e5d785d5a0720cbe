"""xforms.scipy.linalg's special-matrix constructors (xforms/scipy/matrices.py) against
scipy.linalg and JAX (values and gradients recorded with jax 0.10.2: JAX is not installed in
CI), batched over leading dimensions as JAX's, differentiated by check_grads, under jit on
both tiers and vmap, and their bad input."""
import numpy as np
import pytest
import scipy.linalg as sl

import xforms as xf
import xforms.scipy.linalg as xsl
from xforms.test_util import check_grads

R = np.random.default_rng(11)
C, ROW = R.standard_normal(4), R.standard_normal(3)
FROM_ARRAYS = {
    "toeplitz": ((C,), (C, ROW), (C + 1j * R.standard_normal(4),)),
    "hankel": ((C,), (C, ROW)),
    "circulant": ((C,),),
    "companion": ((C,), (np.array([2.0, 3.0]),)),
    "fiedler": ((C,),),
    "fiedler_companion": ((np.array([2.0, 3.0]),),) + tuple(
        (R.standard_normal(k) + 3,) for k in range(3, 9)),
    "leslie": ((C, ROW),),
}


@pytest.mark.parametrize("name", sorted(FROM_ARRAYS))
def test_from_arrays_against_scipy(name):
    for args in FROM_ARRAYS[name]:
        got, want = getattr(xsl, name)(*args), getattr(sl, name)(*args)
        assert got.shape == want.shape, (name, args)
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0, err_msg=name)


def test_convolution_matrix_every_mode_and_size():
    for m in range(1, 6):
        for n in range(1, 5):
            for mode in ("full", "same", "valid"):
                a = R.standard_normal(m)
                got, want = xsl.convolution_matrix(a, n, mode), sl.convolution_matrix(a, n, mode)
                assert got.shape == want.shape, (m, n, mode)
                np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 14])
def test_constants_against_scipy(n):
    eq = np.testing.assert_array_equal
    np.testing.assert_allclose(xsl.hilbert(n), sl.hilbert(n), rtol=1e-16, atol=0)
    eq(xsl.invhilbert(n), sl.invhilbert(n, exact=True).astype(float) if n else np.zeros((0, 0)))
    for kind in ("symmetric", "lower", "upper"):
        eq(xsl.pascal(n, kind), sl.pascal(n, kind).astype(float))      # exact
        eq(xsl.invpascal(n, kind), sl.invpascal(n, kind).astype(float))
    if n:
        # (SciPy's dft takes powers of one root: 1.4e-14 off at n = 14; the phases here are
        # exact, j k mod n, as numpy.fft's)
        np.testing.assert_allclose(xsl.dft(n), np.fft.fft(np.eye(n)), rtol=1e-15, atol=1e-15)
        np.testing.assert_allclose(xsl.dft(n), sl.dft(n), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(xsl.dft(n, "sqrtn"), sl.dft(n, "sqrtn"), rtol=1e-13,
                                   atol=1e-13)
        np.testing.assert_allclose(xsl.dft(n, "n"), sl.dft(n, "n"), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(xsl.helmert(n), sl.helmert(n), rtol=1e-15, atol=0)
        np.testing.assert_allclose(xsl.helmert(n, True), sl.helmert(n, True), rtol=1e-15, atol=0)
    for k in (1, 2, 4, 8):
        eq(xsl.hadamard(k), sl.hadamard(k))


def test_against_jax_values_and_dtypes():
    # jax.scipy.linalg, jax 0.10.2 (float64): fiedler_companion and convolution_matrix 'same'
    np.testing.assert_array_equal(
        xsl.fiedler_companion(np.array([2.0, 2, 3, 4, 5, 6])),
        [[-1.0, -1.5, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0], [0.0, -2.0, 0.0, -2.5, 1.0],
         [0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, -3.0, 0.0]])
    np.testing.assert_array_equal(
        xsl.convolution_matrix(np.array([1.0, 2, 3]), 4, "same"),
        [[2.0, 1.0, 0.0, 0.0], [3.0, 2.0, 1.0, 0.0], [0.0, 3.0, 2.0, 1.0], [0.0, 0.0, 3.0, 2.0]])
    # JAX's invhilbert(3)[0, 0] is 9.000000000000036 and its pascal(3) float32 0.999999: exact here
    assert float(xsl.invhilbert(3)[0, 0]) == 9.0 and float(xsl.pascal(3)[0, 0]) == 1.0
    assert xsl.hadamard(2, np.float32).dtype == np.float32
    assert xsl.dft(3, dtype=np.complex64).dtype == np.complex64
    assert xsl.fiedler(np.array([1, 4, 12])).dtype.kind == "i"       # as JAX: no promotion
    b = R.standard_normal((2, 3))
    for name, args, more in [("toeplitz", (b,), ()), ("hankel", (b,), ()),
                             ("circulant", (b,), ()), ("companion", (b,), ()),
                             ("fiedler", (b,), ()), ("fiedler_companion", (b,), ()),
                             ("leslie", (b, b[:, :2]), ()), ("convolution_matrix", (b,), (4,))]:
        got = getattr(xsl, name)(*args, *more)       # batched over the leading dimension
        want = np.stack([getattr(sl, name)(*(a[i] for a in args), *more) for i in range(2)])
        np.testing.assert_allclose(got, want, rtol=1e-15, err_msg=name)


@pytest.mark.parametrize("tiered", [None, False, True], ids=["eager", "compiled", "fast"])
def test_scalar_operands_as_jax(tiered):
    # jax 0.10.2 (x64) takes a 0-d operand as a vector of one (atleast_1d) in circulant,
    # fiedler, fiedler_companion, toeplitz (c and r) and companion (then too short); xforms
    # refused them.  fiedler_companion of one coefficient is JAX's (0, 0) matrix (SciPy: an
    # empty vector), and the companions of int32 coefficients are float32 (JAX's promotion)
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    eq = np.testing.assert_array_equal
    eq(run(xsl.circulant)(2.5), [[2.5]])
    eq(run(xsl.fiedler)(2.5), [[0.0]])
    eq(run(xsl.toeplitz)(2.5), [[2.5]])
    eq(run(xsl.toeplitz)(2.5, np.array([3.5, 1.0])), [[2.5, 1.0]])
    eq(run(xsl.toeplitz)(np.array([2.5, 1.0]), 3.5), [[2.5], [1.0]])
    for a, shape in ((2.5, (0, 0)), (np.array([2.5]), (0, 0)), (np.ones((2, 1)), (2, 0, 0))):
        assert run(xsl.fiedler_companion)(a).shape == shape
    i32 = np.array([1, 2, 3], np.int32)
    for name in ("companion", "fiedler_companion"):
        got = run(getattr(xsl, name))(i32)
        assert got.dtype == np.float32
        eq(got, [[-2.0, -3.0], [1.0, 0.0]])
    assert run(xsl.fiedler_companion)(np.int32(3)).dtype == np.float32
    if tiered is None:
        with pytest.raises(ValueError, match="at least 2"):
            xsl.companion(2.5)
        # derivatives and vmap (jax.grad of sum(3 f(x)) at 2.5: 3, 0, 3; jax.vmap: a 1 x 1
        # matrix per element, 0 for fiedler)
        for name, g in (("circulant", 3.0), ("fiedler", 0.0), ("toeplitz", 3.0)):
            f = getattr(xsl, name)
            assert float(xf.grad(lambda x: (f(x) * 3.0).sum())(2.5)) == g
            v = np.array([1.0, -2.0])
            eq(xf.vmap(f)(v), np.stack([f(x) for x in v]))
            eq(xf.vmap(f)(v), [[[0.0]], [[0.0]]] if name == "fiedler" else [[[1.0]], [[-2.0]]])


def _combined(c, r):
    return ((xsl.toeplitz(c, r) @ xsl.hankel(c, r).T).sum() +
            (xsl.circulant(c) @ xsl.fiedler(c)).sum() + (xsl.companion(c) ** 2).sum() +
            xsl.leslie(c, r).sum())


def test_grads_against_jax_and_check_grads():
    # jax.grad(the same function, argnums=(0, 1)) at these points, jax 0.10.2, float64
    c, r = np.array([0.5, -1.2, 2.0]), np.array([3.0, 0.7])
    gc, gr = xf.grad(_combined, argnums=(0, 1))(c, r)
    np.testing.assert_allclose(gc, [-69.14, 3.1, 37.6], rtol=1e-13)
    np.testing.assert_allclose(gr, [1.0, 2.5], rtol=1e-13)
    check_grads(lambda c, r: xsl.toeplitz(c, r) @ xsl.hankel(c, r).T + xsl.circulant(c),
                (C, ROW), order=2)
    check_grads(lambda a: xsl.companion(a) + xsl.fiedler_companion(a), (C + 3,), order=2)
    check_grads(lambda a: xsl.convolution_matrix(a, 3, "same") ** 2, (C,), order=2)


@pytest.mark.parametrize("tiered", [False, True], ids=["compiled", "fast"])
def test_jit_and_vmap(tiered):
    f = xf.jit(lambda c, r: (xsl.toeplitz(c, r), xsl.companion(c), xsl.convolution_matrix(c, 5),
                             xsl.fiedler_companion(c), xsl.leslie(c, r)), tiered=tiered)
    want = (sl.toeplitz(C, ROW), sl.companion(C), sl.convolution_matrix(C, 5),
            sl.fiedler_companion(C), sl.leslie(C, ROW))
    for got, w in zip(f(C, ROW), want):
        np.testing.assert_allclose(got, w, rtol=1e-15)
    b = R.standard_normal((2, 3))
    np.testing.assert_allclose(xf.vmap(xsl.circulant)(b), np.stack([sl.circulant(v) for v in b]))


def test_bad_input():
    with pytest.raises(ValueError, match="power of 2"):
        xsl.hadamard(3)
    with pytest.raises(ValueError, match="at least 2"):
        xsl.companion(np.array([1.0]))
    with pytest.raises(ValueError, match="one less"):
        xsl.leslie(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="scale"):
        xsl.dft(3, "bad")
    with pytest.raises(ValueError, match="kind"):
        xsl.pascal(3, "bad")
    with pytest.raises(ValueError, match="mode"):
        xsl.convolution_matrix(np.ones(3), 2, "bad")
    with pytest.raises(ValueError, match="scalar"):     # (JAX's hankel refuses one too)
        xsl.hankel(1.0)
    with pytest.raises(ValueError, match="scalar"):
        xsl.convolution_matrix(1.0, 2)
