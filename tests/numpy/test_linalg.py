"""`xforms.numpy.linalg` values against NumPy (float32, float64, complex, batched), singular
inputs (inf/NaN like JAX, never an exception) and bad input (errors naming the function, the
shapes and the user's line).  Derivatives, vmap and jit: test_linalg_ad.py."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp

L = xnp.linalg
R = np.random.default_rng(7)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def rand(shape, dt):
    x = R.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * R.standard_normal(shape)
    return x.astype(dt)


def hpd(shape, dt):
    """Hermitian positive definite matrices of shape (..., n, n)."""
    a = rand(shape, dt)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dt)


def tol(dt):
    return dict(rtol=2e-4, atol=2e-4) if np.dtype(dt) in (np.float32, np.complex64) else \
        dict(rtol=1e-10, atol=1e-10)


def close(x, y, dt):
    assert np.asarray(x).dtype == np.asarray(y).dtype or np.asarray(y).dtype == np.float64, \
        (np.asarray(x).dtype, np.asarray(y).dtype)
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), **tol(dt))


@pytest.mark.parametrize("dt", DTYPES)
def test_solve_inv_det_slogdet(dt):
    a, b, v = rand((2, 3, 4, 4), dt), rand((2, 3, 4, 2), dt), rand((4,), dt)
    close(L.solve(a, b), np.linalg.solve(a, b), dt)
    close(L.solve(a[0, 0], v), np.linalg.solve(a[0, 0], v), dt)
    close(L.solve(a, b[0, 0]), np.linalg.solve(a, b[0, 0]), dt)      # batch broadcasting
    close(L.inv(a), np.linalg.inv(a), dt)
    close(L.det(a), np.linalg.det(a), dt)
    s, ld = L.slogdet(a)
    s0, ld0 = np.linalg.slogdet(a)
    close(s, s0, dt)
    close(ld, ld0, dt)
    assert np.asarray(ld).dtype == np.finfo(dt).dtype


@pytest.mark.parametrize("dt", DTYPES)
def test_cholesky_eigh(dt):
    a = hpd((3, 4, 4), dt)
    close(L.cholesky(a), np.linalg.cholesky(a), dt)
    close(L.cholesky(a, upper=True), np.conj(np.swapaxes(np.linalg.cholesky(a), -1, -2)), dt)
    w, v = L.eigh(a)
    close(w, np.linalg.eigvalsh(a), dt)
    close((v * np.asarray(w)[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2)), a, dt)
    close(L.eigvalsh(a, UPLO="U"), np.linalg.eigvalsh(a, UPLO="U"), dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5), (4, 4)])
def test_svd_qr(dt, shape):
    a = rand(shape, dt)
    for full in (True, False):
        u, s, vh = L.svd(a, full_matrices=full)
        u0, s0, vh0 = np.linalg.svd(a, full_matrices=full)
        assert u.shape == u0.shape and vh.shape == vh0.shape
        close(s, s0, dt)
        k = s0.shape[-1]
        close((np.asarray(u)[..., :k] * np.asarray(s)[..., None, :]) @ np.asarray(vh)[..., :k, :],
              a, dt)
    close(L.svdvals(a), np.linalg.svd(a, compute_uv=False), dt)
    for mode in ("reduced", "complete"):
        q, r = L.qr(a, mode=mode)
        q0, r0 = np.linalg.qr(a, mode=mode)
        assert q.shape == q0.shape and r.shape == r0.shape
        close(np.asarray(q) @ np.asarray(r), a, dt)
        close(np.abs(r), np.abs(r0), dt)
    close(np.abs(L.qr(a, mode="r")), np.abs(np.linalg.qr(a, mode="r")), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_lstsq_pinv_rank_cond(dt):
    a, b = rand((6, 3), dt), rand((6, 2), dt)
    x, resid, rank, s = L.lstsq(a, b)
    x0, resid0, rank0, s0 = np.linalg.lstsq(a, b, rcond=None)
    close(x, x0, dt)
    close(resid, resid0, dt)
    assert int(rank) == rank0
    close(L.lstsq(a, b[:, 0])[0], np.linalg.lstsq(a, b[:, 0], rcond=None)[0], dt)
    close(L.pinv(a), np.linalg.pinv(a), dt)
    wide = rand((2, 3, 5), dt)
    close(L.pinv(wide), np.linalg.pinv(wide), dt)
    low = rand((5, 2), dt) @ rand((2, 4), dt)
    assert int(L.matrix_rank(low)) == 2 == np.linalg.matrix_rank(low)
    sq = rand((2, 4, 4), dt)
    close(L.cond(sq), np.linalg.cond(sq), dt)
    for p in (1, -1, np.inf, "fro", -2):
        close(L.cond(sq, p), np.linalg.cond(sq, p), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_norms(dt):
    a = rand((2, 3, 4), dt)
    for o in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        close(L.norm(a, o, axis=(1, 2)), np.linalg.norm(a, o, axis=(1, 2)), dt)
        close(L.norm(a, o, axis=(2, 0), keepdims=True),
              np.linalg.norm(a, o, axis=(2, 0), keepdims=True), dt)
    for o in (None, 1, 2, 3.5, np.inf, -np.inf, 0):
        close(L.norm(a, o, axis=1), np.linalg.norm(a, o, axis=1), dt)
    close(L.vector_norm(a, axis=(0, 2), ord=3), np.sum(np.abs(a) ** 3, axis=(0, 2)) ** (1 / 3), dt)
    close(L.vector_norm(a, keepdims=True), np.linalg.norm(a.ravel()).reshape(1, 1, 1), dt)
    close(L.matrix_norm(a, ord="nuc"), np.linalg.norm(a, "nuc", axis=(-2, -1)), dt)


def test_products_and_tensors():
    a, b = rand((2, 4, 4), np.float64), rand((2, 4, 3), np.float64)
    v, w = rand((4,), np.float64), rand((4,), np.float64)
    close(L.matrix_power(a, 5), np.linalg.matrix_power(a, 5), np.float64)
    close(L.matrix_power(a, -3), np.linalg.matrix_power(a, -3), np.float64)
    close(L.matrix_power(a, 0), np.linalg.matrix_power(a, 0), np.float64)
    mats = [v, a[0], rand((4, 7), np.float64), rand((7, 2), np.float64), rand((2,), np.float64)]
    close(L.multi_dot(mats), np.linalg.multi_dot(mats), np.float64)
    t, tb = rand((6, 2, 3), np.float64), rand((6,), np.float64)
    close(L.tensorsolve(t, tb), np.linalg.tensorsolve(t, tb), np.float64)
    t4 = rand((4, 6, 8, 3), np.float64)
    close(L.tensorinv(t4, 2), np.linalg.tensorinv(t4, 2), np.float64)
    close(L.outer(v, w), np.outer(v, w), np.float64)
    close(L.cross(a[..., :3], b[:, :1, :]), np.cross(a[..., :3], b[:, :1, :]), np.float64)
    close(L.vecdot(a, v), np.sum(a * v, -1), np.float64)
    close(L.trace(a, offset=1), np.trace(a, offset=1, axis1=-2, axis2=-1), np.float64)
    close(L.diagonal(b, offset=-1), np.diagonal(b, offset=-1, axis1=-2, axis2=-1), np.float64)
    close(L.matrix_transpose(b), np.swapaxes(b, -1, -2), np.float64)
    close(L.matmul(a, b), a @ b, np.float64)
    close(L.tensordot(a, b, axes=((0, 1), (0, 1))), np.tensordot(a, b, axes=((0, 1), (0, 1))),
          np.float64)


def test_singular_matrices_give_inf_or_nan_without_exceptions():
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    with np.errstate(all="ignore"):
        assert float(L.det(sing)) == 0.0
        sign, logdet = L.slogdet(sing)
        assert float(sign) == 0.0 and float(logdet) == -np.inf
        assert not np.all(np.isfinite(L.inv(sing)))
        assert not np.all(np.isfinite(L.solve(sing, np.ones(2))))
        c = np.asarray(L.cholesky(-np.eye(3)))   # JAX: NaN on and below the diagonal, 0 above
        assert np.all(np.isnan(c[np.tril_indices(3)])) and np.all(c[np.triu_indices(3, 1)] == 0)
        bad = np.full((2, 2), np.nan)
        assert np.all(np.isnan(L.svd(bad, compute_uv=False)))
        assert np.all(np.isnan(L.eigvalsh(bad)))
        # one bad matrix in a batch leaves the others alone
        batch = np.stack([np.eye(2), -np.eye(2)])
        chol = np.asarray(L.cholesky(batch))
        # (JAX: NaN on and below the diagonal of the failed factor, zeros above)
        assert np.allclose(chol[0], np.eye(2)) and np.all(np.isnan(chol[1][np.tril_indices(2)]))
        assert chol[1][0, 1] == 0


@pytest.mark.parametrize("fn, arg", [
    (L.inv, np.ones((3, 4))), (L.det, np.ones(3)), (L.cholesky, np.ones((2, 3))),
    (L.eigh, np.ones((2, 3))), (L.slogdet, np.ones((4,))), (L.svd, np.ones(3)),
])
def test_bad_shapes_name_the_function_shape_and_line(fn, arg):
    with pytest.raises(ValueError) as e:
        fn(arg)
    msg = str(e.value)
    assert fn.__name__ in msg and str(arg.shape) in msg and "test_linalg.py" in msg


def test_solve_shape_mismatch():
    with pytest.raises(ValueError, match=r"solve.*\(3, 3\).*\(4,\).*test_linalg.py"):
        L.solve(np.eye(3), np.ones(4))
    with pytest.raises(TypeError, match="matrix_power"):
        L.matrix_power(np.eye(2), 1.5)


@pytest.mark.parametrize("dt", DTYPES)
def test_eig_eigvals(dt):
    a = rand((2, 4, 4), dt)
    w, v = L.eig(a)
    cdt = np.result_type(dt, np.complex64)
    assert np.asarray(w).dtype == cdt and np.asarray(v).dtype == cdt
    close(a @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :], dt)
    close(np.linalg.norm(v, axis=-2), np.ones((2, 4)), dt)
    close(np.sort(np.abs(L.eigvals(a))), np.sort(np.abs(np.linalg.eigvals(a))), dt)
    close(np.sum(L.eigvals(a), -1), np.trace(a, axis1=-2, axis2=-1).astype(cdt), dt)
    close(L.eigvals(np.array([[0.0, 1.0], [-1.0, 0.0]])).imag, np.array([1.0, -1.0]),
          np.float64)


def test_not_provided_raise_not_implemented():
    with pytest.raises(NotImplementedError, match="raw"):
        L.qr(np.eye(2), mode="raw")


@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (2, 0, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_of_an_empty_matrix_has_identity_factors_on_both_tiers(shape, full):
    """NumPy's and JAX's factors of an empty matrix: identities of the full sizes (the
    compiled tier gave NaN: Numba's svd refuses empty matrices)."""
    a = np.ones(shape)
    want = np.linalg.svd(a, full_matrices=full)
    f = lambda a: xnp.linalg.svd(a, full_matrices=full)
    for got in (f(a), xf.jit(f, tiered=False)(a)):
        for g, w in zip(got, want):
            assert np.asarray(g).shape == w.shape
            np.testing.assert_array_equal(np.asarray(g), w)


def test_diagonal_and_trace_of_a_batch_with_inf_off_the_diagonal():
    import xforms as xf
    inf, nan = np.inf, np.nan
    b = np.array([[[-1.5, 2.0, nan], [inf, -inf, 0.5]], [[2.0, -0.5, 0.0], [3.0, -inf, 0.25]]])
    # jax 0.10.2 (found by tools/jax_ad_sweep.py): the batched diagonal was a sum of x times
    # the identity, NaN (0 * inf) where a row held an inf or NaN off the diagonal
    want = np.array([[-1.5, -inf], [2.0, -inf]])
    np.testing.assert_array_equal(L.diagonal(b), want)
    np.testing.assert_array_equal(xf.vmap(L.diagonal)(b), want)
    np.testing.assert_array_equal(L.trace(b), [-inf, -inf])
    # the same helpers' masks: tril/triu and the diagonal embedding keep an inf outside them out
    from xforms.primitives.linalg.batched import diag_embed, tril, triu
    m = np.array([[1.0, inf], [-inf, 2.0]])
    np.testing.assert_array_equal(tril(m), [[1.0, 0.0], [-inf, 2.0]])
    np.testing.assert_array_equal(triu(m), [[1.0, inf], [0.0, 2.0]])
    np.testing.assert_array_equal(diag_embed(np.array([inf, 1.0])), [[inf, 0.0], [0.0, 1.0]])


def test_lstsq_rank_is_the_default_int():
    # jax 0.10.2 (x64, as xforms): rank is int64 (it was int32), batched or not
    import xforms as xf
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    b = np.array([1.0, 2.0, 4.0])
    rank = L.lstsq(a, b)[2]
    assert np.asarray(rank).dtype == np.int64 and int(rank) == 2
    ranks = xf.vmap(lambda a, b: L.lstsq(a, b)[2])(np.stack([a, a]), np.stack([b, b]))
    assert np.asarray(ranks).dtype == np.int64


def test_pinv_of_an_input_with_inf_is_zeros_as_jax():
    # jax 0.10.2 (x64; found by tools/jax_ad_sweep.py): an inf (or NaN) makes every singular
    # value NaN, none is kept, and the pseudo-inverse is zeros for inf, NaN for NaN (its
    # singular vectors are NaN); its jvp is NaN.  xforms attached the derivative as
    # f - stop_gradient(f), which turned the zeros into NaN (inf - inf), batched or not.
    inf, nan = np.inf, np.nan
    b = np.array([[[-1.5, 2.0, nan], [inf, -inf, 0.5]], [[2.0, -0.5, 0.0], [3.0, -inf, 0.25]]])
    want = np.stack([np.full((3, 2), nan), np.zeros((3, 2))])
    loop = np.stack([np.asarray(L.pinv(m)) for m in b])
    np.testing.assert_array_equal(loop, want)
    np.testing.assert_array_equal(L.pinv(np.array([[1.0, 2.0], [3.0, inf]])), np.zeros((2, 2)))
    for got in (xf.vmap(L.pinv)(b), xf.jit(xf.vmap(L.pinv))(b),
                xf.jit(xf.vmap(L.pinv), tiered=False)(b), xf.jit(L.pinv, tiered=False)(b)):
        np.testing.assert_array_equal(np.asarray(got), want)
    # the compiled SVD (LAPACK's ?gesdd, as NumPy and JAX) of a matrix with an inf: NaN
    # values, finite factors (Numba's svd refused it: all NaN, and pinv NaN compiled)
    u, s, vt = xf.jit(lambda a: L.svd(a, full_matrices=False), tiered=False)(b[1])
    assert np.all(np.isnan(np.asarray(s)))
    np.testing.assert_array_equal(np.asarray(u), [[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(np.asarray(vt), [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    p, t = xf.jvp(L.pinv, (b[1],), (np.ones((2, 3)),))
    np.testing.assert_array_equal(np.asarray(p), np.zeros((3, 2)))
    assert np.all(np.isnan(np.asarray(t)))


_NAN, _INF = np.nan, np.inf
# jax 0.10.2 (x64, CPU: LAPACK through SciPy, the routines xforms calls) on the matrix below
# with a NaN or an inf at [1, 1]; JAX is absent in CI, so its values are written here
_JAX_NON_FINITE = {
    "qr_inf": ([[-0.8728715609439694, _NAN, _NAN], [-0.2182178902359924, _NAN, _NAN],
                [-0.4364357804719848, _NAN, _NAN]],
               [[-4.58257569495584, -_INF, -4.58257569495584], [0, _NAN, _NAN], [0, 0, _NAN]]),
    "qr32_nan": ([[-0.8728715, _NAN, _NAN], [-0.21821788, _NAN, _NAN],
                  [-0.43643576, _NAN, _NAN]],
                 [[-4.582576, _NAN, -4.582576], [0, _NAN, _NAN], [0, 0, _NAN]]),
    "eigh_inf": ([_NAN] * 3, np.eye(3)),
    "schur_inf": ([[_NAN, _NAN, _NAN], [_NAN, _NAN, _NAN], [0, _NAN, _NAN]], np.eye(3)),
    "hessenberg_inf": ([[4.0, -2.23606797749979, 2.220446049250313e-16],
                        [-2.23606797749979, _NAN, _NAN], [0.6180339887498948, _NAN, _INF]],
                       [1.4472135954999579, 0.0]),
    "eigvals_c_inf": [complex(_NAN, _NAN)] * 3,
    "svd_u_c_nan": np.full((3, 3), complex(_NAN, _NAN)),
    "cholesky_c_not_pd": np.tril(np.full((3, 3), complex(_NAN, _NAN))),
}


@pytest.mark.parametrize("tiered", [True, False], ids=["fast", "compiled"])
def test_non_finite_matrices_give_jax_values_on_both_tiers(tiered):
    # the compiled tier ran qr, eigh and complex eig through Numba's np.linalg, which raises
    # (caught: all NaN) on inf/NaN; JAX hands the matrix to LAPACK (Q keeps its finite first
    # column; eigh of an inf: NaN values, identity vectors).  A failed factorisation is
    # nan+nanj when complex (was nan+0j), a failed cholesky keeps zeros above the diagonal,
    # and schur/hessenberg of an inf are LAPACK's (were NaN) -- on both tiers
    base = np.array([[4.0, 1, 2], [1, 5, 1], [2, 1, 6]])
    an, ai = base.copy(), base.copy()
    an[1, 1], ai[1, 1] = np.nan, np.inf

    def f(an, ai):
        return {"qr_inf": L.qr(ai), "qr32_nan": L.qr(an.astype(np.float32)),
                "eigh_inf": L.eigh(ai), "schur_inf": xf.scipy.linalg.schur(ai),
                "hessenberg_inf": xf.lax.linalg.hessenberg(ai),
                "eigvals_c_inf": L.eigvals(ai.astype(np.complex128)),
                "svd_u_c_nan": L.svd(an.astype(np.complex128))[0],
                "cholesky_c_not_pd": L.cholesky(-base.astype(np.complex128))}
    with np.errstate(all="ignore"):
        got = xf.jit(f, tiered=tiered)(an, ai)
    for name, want in _JAX_NON_FINITE.items():
        for g, w in zip(*((got[name], want) if isinstance(want, tuple) else
                          ((got[name],), (want,)))):
            g, w = np.asarray(g), np.asarray(w)
            rtol = 1e-6 if g.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g.real, w.real, rtol=rtol, atol=1e-15, err_msg=name)
            np.testing.assert_array_equal(np.isnan(g.imag), np.isnan(w.imag), err_msg=name)


@pytest.mark.parametrize("tiered", [True, False], ids=["fast", "compiled"])
def test_det_and_slogdet_of_non_finite_matrices_as_jax(tiered):
    # jax 0.10.2 (x64): det of a 2x2 or 3x3 matrix is its cofactor sum (an inf gives
    # inf - inf = NaN where LU's product gave inf), and slogdet's real sign counts negative
    # pivots (a NaN pivot leaves it 1; sign(NaN) made it NaN).  Values recorded here.
    base = np.array([[4.0, 1, 2], [1, 5, 1], [2, 1, 6]])
    ai, an = base.copy(), base.copy()
    ai[1, 1], an[1, 1] = np.inf, np.nan
    sing = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])

    def f(ai, an, sing, m2):
        return (L.det(ai), L.det(ai[:2, :2]), L.det(m2),
                L.slogdet(an), L.slogdet(-an), xf.grad(L.det)(sing),
                xf.vmap(L.det)(xnp.stack([xnp.asarray(base), ai])))
    with np.errstate(all="ignore"):
        got = xf.jit(f, tiered=tiered)(ai, an, sing, np.array([[np.inf, np.inf], [1.0, 1.0]]))
    want = (np.nan, np.inf, np.nan, (1.0, np.nan), (1.0, np.nan),
            [[4.0, 4.0, -4.0], [-2.0, -2.0, 2.0], [0.0, 0.0, 0.0]], [94.0, np.nan])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g, dtype=float), np.asarray(w))


@pytest.mark.parametrize("tiered", [None, True, False], ids=["eager", "fast", "compiled"])
def test_vector_norm_of_integers_has_jax_dtypes(tiered):
    # jnp.linalg.vector_norm (jax 0.10.2, x64; found by tools/jax_ad_sweep.py): integers are
    # not made float first: the Euclidean norm sums x * x in the default int, then is float64;
    # ord 1 sums to the default int; ord +-inf keep the dtype.  xforms made int32 float32
    # first (norm, which promotes first, stays float32 as JAX's)
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    x = np.array([[3, 4], [-1, 0]], np.int32)
    for ord_, want, dt in ((None, 5.0990195135927845, np.float64), (1, 8, np.int64),
                           (np.inf, 4, np.int32), (-np.inf, 0, np.int32)):
        got = run(lambda x: L.vector_norm(x, ord=ord_))(x)
        assert np.asarray(got).dtype == dt and float(got) == want, (ord_, got)
    b = np.array([True, False, True])
    assert np.asarray(run(lambda x: L.vector_norm(x, ord=np.inf))(b)).dtype == np.bool_
    assert np.asarray(run(lambda x: L.vector_norm(x, ord=1))(x.astype(np.uint8))).dtype == \
        np.uint64
    got = run(xf.vmap(L.vector_norm))(x)
    np.testing.assert_array_equal(np.asarray(got), [5.0, 1.0])
    assert np.asarray(got).dtype == np.float64
    assert np.asarray(run(L.norm)(x)).dtype == np.float32


@pytest.mark.parametrize("tiered", [None, False], ids=["eager", "compiled"])
def test_det_of_4x4_and_larger_rounds_as_jax(tiered):
    # jnp.linalg.det (jax 0.10.2, x64) of n >= 4 is sign * exp(log|det|) from slogdet; the
    # product of U's diagonal rounds differently.  JAX's bits recorded here, for matrices
    # where the LU product missed them (where exp/log themselves round as XLA's do: NumPy's
    # and the compiled tier's exp/log differ from XLA's in the last bit on some other inputs)
    from xforms.test_util import check_grads
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    m = np.random.default_rng(31).standard_normal((12, 5, 5))
    want64 = ["-0x1.df0591c19bef5p+2", "-0x1.b9aa059a70c10p+1", "-0x1.a95f724ac8817p+0",
              "0x1.03b1c86bf0326p+2", "-0x1.62b5615832032p+1"]
    # JAX's bits where LAPACK's LU rounds as XLA's: OpenBLAS's kernels differ by CPU (the
    # AVX-512 ones move log|det| by a few ulp), so the rule itself is checked bit for bit
    # against xforms' own slogdet, and JAX's values to 8 ulp
    def same_rule(x):
        got = np.asarray(run(L.det)(x))
        sign, logdet = (np.asarray(v) for v in run(L.slogdet)(x))
        assert [float(v).hex() for v in got] == [float(v).hex() for v in
                                                 (sign * np.exp(logdet)).astype(got.dtype)]
        return got
    got = same_rule(m[[0, 2, 3, 5, 7]])
    np.testing.assert_array_max_ulp(got, np.array([float.fromhex(h) for h in want64]), 8)
    got = same_rule(m[[1, 2]].astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_array_max_ulp(got, np.array([float.fromhex("-0x1.4e53760000000p-2"),
                                    float.fromhex("-0x1.b9aa040000000p+1")], np.float32), 8)
    # the derivative is JAX's cofactor rule: right at a singular (rank n - 1) matrix too,
    # where log|det|'s would be inf * 0 (test_det_derivatives_at_singular_matrices_as_jax)
    sing = m[0, :4, :4].copy()
    sing[3] = sing[0] + 2 * sing[1]
    check_grads(run(L.det), (m[4, :4, :4],), order=2)
    check_grads(run(L.det), (sing,), order=1)
    g = np.asarray(run(xf.grad(L.det))(sing))
    adj = np.linalg.det(sing[:3, :3])    # the cofactor of the corner entry
    assert np.isfinite(g).all() and np.isclose(g[3, 3], adj, rtol=1e-9)


@pytest.mark.parametrize("tiered", [None, False], ids=["eager", "compiled"])
def test_det_derivatives_at_singular_matrices_as_jax(tiered):
    # jax 0.10.2 (x64) differentiates det by its cofactor rule (adj(a) by LU, a rank n - 1
    # corner replaced): its gradient is finite at singular matrices; its second derivative
    # is NaN at rank n - 1 and 0 below (jax's adjugate filter), its values recorded here
    # (a 3x3 is a polynomial of its entries: every derivative exact, the minors of a)
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    rank3 = np.array([[1., 2, 3, 4], [2, 4, 6, 8], [1, 0, 1, 0], [0, 1, 0, 2]])
    rank2 = np.array([[1., 2, 3, 4], [2, 4, 6, 8], [3, 6, 9, 12], [0, 1, 0, 2]])
    g = np.asarray(run(xf.grad(L.det))(rank3))      # (the LU product's rule: NaN here)
    np.testing.assert_allclose(g, [[0, 8, 0, -4], [0, -4, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0]],
                               atol=1e-12)
    assert np.isnan(np.asarray(run(xf.hessian(L.det))(rank3))).all()
    np.testing.assert_array_equal(run(xf.grad(L.det))(rank2), np.zeros((4, 4)))
    np.testing.assert_array_equal(run(xf.hessian(L.det))(rank2), np.zeros((4, 4, 4, 4)))
    a3 = np.array([[1., 2, 3], [4, 5, 6], [7, 8, 9]])
    h = np.asarray(run(xf.hessian(L.det))(a3))
    for i, j, k, m in np.ndindex(3, 3, 3, 3):      # d2 det / da_ij da_km: a signed 1x1 minor
        sign = (-1) ** (i + j + k + m) * (1 if (i < k) == (j < m) else -1)
        want = 0.0 if i == k or j == m else sign * a3[3 - i - k, 3 - j - m]
        assert abs(h[i, j, k, m] - want) < 1e-12, (i, j, k, m)
