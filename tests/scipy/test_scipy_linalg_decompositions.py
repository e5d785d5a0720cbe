"""`xforms.scipy.linalg`'s polar, expm_frechet, eigh_tridiagonal, qr_multiply, hessenberg,
schur, rsf2csf and funm: values against jax 0.10.2 (x64) -- literals computed here with the
installed jax, as jax is not installed in CI -- and SciPy; derivatives to second order where
JAX has them, none (an error) where it has none; jit on both tiers, and vmap."""
import numpy as np
import pytest
import scipy.linalg as sl

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl
from xforms.errors import LoweringError
from xforms.test_util import check_grads

R = np.random.default_rng(11)
A = np.array([[1., 2., 3.], [5., 4., 2.], [3., 2., 1.]])
B = np.array([[0.5, -1.0, 0.3], [2.0, 0.1, -0.7], [0.4, 0.9, 1.2]])    # a complex pair
W = np.array([[1., 2.], [3., 4.], [5., 7.]])
E = np.array([[0., 1., 0.], [0., 0., 2.], [1., 0., 0.]])
D, OFF = np.array([1., 2., 3., 4.]), np.array([1., 0.5, 1.])


def close(x, y, tol=1e-10):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def rand(shape, dt=np.float64):
    x = R.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * R.standard_normal(shape)
    return x.astype(dt)


# ---- values against JAX (jax.scipy.linalg, jax 0.10.2, jax_enable_x64) ----------------------
def test_polar_matches_jax():
    u, p = xsl.polar(A)                                  # JAX: method="qdwh"
    close(u, [[-0.19778868392475477, 0.23903231160728336, 0.9506540856268341],
              [0.4862236775490275, 0.8660214261243098, -0.11659084391287328],
              [0.8511557859181907, -0.4391701760152836, 0.2875124077265048]])
    close(p, [[4.786797061574955, 3.251628914182982, 1.2302370892419818],
              [3.251628914182982, 3.063809975681239, 2.0099696110551855],
              [1.2302370892419818, 2.0099696110551855, 2.9062929767812604]])
    u, p = xsl.polar(W.T, side="left", method="svd")
    close(u, [[-0.6393459160909475, 0.5625644328102605, 0.5241736911699179],
              [0.7209772729769334, 0.20165345541231508, 0.6629688196069385]])
    close(p, [[3.6692158381894227, 4.64078173724857], [4.640781737248571, 6.889350104851696]])
    _, p = xsl.polar(A + 1j * B)
    close(p[0], [5.358115487694826, 2.9470216443155755 - 0.6484789141287681j,
                 1.074446139531593 - 0.6638542307136515j])
    close(p[1, 2], 1.926039893411109 + 0.493460798474476j)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shape,side", [((2, 4, 3), "right"), ((3, 2), "left"),
                                        ((2, 3), "right")])
def test_polar_factors(dt, shape, side):
    a = rand(shape, dt)
    u, p = xsl.polar(a, side=side, method="svd")
    assert u.dtype == dt and p.dtype == dt
    tol = 1e-4 if dt == np.float32 else 1e-10
    close(np.matmul(u, p) if side == "right" else np.matmul(p, u), a, tol)
    close(p, np.conj(np.swapaxes(p, -1, -2)), tol)
    assert np.all(np.linalg.eigvalsh(np.asarray(p)) > -tol)
    if a.ndim == 2:
        ref_u, ref_p = sl.polar(a, side=side)
        close(u, ref_u, tol)
        close(p, ref_p, tol)


def test_expm_frechet_matches_jax_and_scipy():
    ea, l = xsl.expm_frechet(0.3 * B, E)
    close(ea, [[1.0741308949897148, -0.302100462545876, 0.1495585371062954],
               [0.6179915493663322, 0.90778164986525, -0.21566055192708178],
               [0.2453801303903275, 0.29697874429850524, 1.4091333877545087]])
    close(l, [[0.3680038564656767, 0.9888088965815467, -0.4516423744898538],
              [0.1509307654402786, 0.6022440060928185, 2.3104272237791874],
              [1.2881607820243604, -0.0442135409937653, 0.391259712511143]])
    close(xsl.expm_frechet(0.3 * B, E, compute_expm=False), l)
    a, e = rand((2, 3, 3), np.complex128), rand((2, 3, 3), np.complex128)
    got = xsl.expm_frechet(a, e)
    for i in range(2):
        for x, y in zip(got, sl.expm_frechet(a[i], e[i])):
            close(x[i], y, 1e-9)
    with pytest.raises(ValueError, match="expm_frechet"):
        xsl.expm_frechet(A, E[:2, :2])


def test_eigh_tridiagonal_matches_jax():
    w_all = [0.35184751276914344, 2.1319770501668605, 2.868022949833139, 4.648152487230856]
    close(xsl.eigh_tridiagonal(D, OFF, eigvals_only=True), w_all)
    w, v = xsl.eigh_tridiagonal(D, OFF, select="i", select_range=(1, 2))
    close(w, w_all[1:3])
    ref_v = np.array([[-0.4080829303713076, 0.37164145580718627],
                      [-0.46194051174516126, 0.6942347685572224],
                      [0.6942347685572223, 0.4619405117451613],
                      [-0.3716414558071862, -0.40808293037130766]])
    close(np.abs(v), np.abs(ref_v))                     # eigenvectors: up to sign
    close(np.abs(np.sum(np.asarray(v) * ref_v, axis=0)), [1., 1.])
    w, v = xsl.eigh_tridiagonal(D, OFF)
    t = np.diag(D) + np.diag(OFF, 1) + np.diag(OFF, -1)
    close(t @ np.asarray(v), np.asarray(v) * np.asarray(w))
    # JAX: a complex e is the superdiagonal of a Hermitian matrix
    close(xsl.eigh_tridiagonal(D + 0j, OFF + 1j, eigvals_only=True),
          [-0.17151587823747994, 1.7170549749024344, 3.2829450250975656, 5.171515878237479])
    assert xsl.eigh_tridiagonal(D.astype(np.float32), OFF.astype(np.float32),
                                eigvals_only=True).dtype == np.float32
    with pytest.raises(NotImplementedError, match="select='v'"):
        xsl.eigh_tridiagonal(D, OFF, select="v", select_range=(0., 1.))
    with pytest.raises(ValueError, match="eigh_tridiagonal"):
        xsl.eigh_tridiagonal(D, OFF[:2])


def test_qr_multiply_matches_jax_and_scipy():
    r_ref = [[-5.916079783099616, -8.282511696339462], [0., 0.632455532033676]]
    qc, r = xsl.qr_multiply(W, np.array([1., 2., 3.]))
    close(qc, [-3.718678720805473, 0.3162277660168382])
    close(r, r_ref)
    qc, r = xsl.qr_multiply(W, np.array([[1., 2.], [0.5, -1.]]), mode="left")
    close(qc, [[0.30531079807955364, -1.28674499994192],
               [-0.6652064358455292, -0.6979573396573815],
               [-0.8451542547285165, -1.690308509457033]])
    qc, r = xsl.qr_multiply(W + 1j * W[::-1], np.array([[1., 2., 3.]]), conjugate=True)
    close(qc, [[-2.629502940535666 + 1.6733200530681511j,
                0.22360679774997855 - 1.5652475842498514j]])
    close(r, [[-8.366600265340756, -11.713240371477056], [0., 0.8944271909999154]])
    a, c = rand((4, 3)), rand((5, 4))
    for x, y in zip(xsl.qr_multiply(a, c), sl.qr_multiply(a, c)):
        close(x, y)
    with pytest.raises(ValueError, match="qr_multiply"):
        xsl.qr_multiply(a, rand((5, 3)))


def test_hessenberg_and_schur_match_jax():
    h, q = xsl.hessenberg(B, calc_q=True)
    close(h, [[0.5, 0.9217458351494652, 0.49029033784546006],
              [-2.039607805437114, 0.18076923076923085, 0.4961538461538463],
              [0., -1.1038461538461541, 1.1192307692307693]])
    close(q, [[1., 0., 0.], [0., -0.9805806756909203, -0.19611613513818404],
              [0., -0.19611613513818404, 0.9805806756909201]])
    close(xsl.hessenberg(B), h)
    t, z = xsl.schur(B)
    close(t, [[0.22821125977921228, 2.07399744768606, -0.41312714499440634],
              [-1.2606961522455384, 0.22821125977921228, 0.5283413258907681],
              [0., 0., 1.3435774804415757]])
    close(z, [[-0.13625799591502666, -0.7889676313063071, 0.5991359072031449],
              [-0.9667135698519306, 0.2380946996720333, 0.09367917512564472],
              [0.21656092078987277, 0.5664282750172338, 0.7951480219730432]])
    t, z = xsl.schur(B, output="complex")               # complex ?gees of B, as JAX
    close(t[0], [0.22821125977921253 + 1.6169974032338095j,
                 0.7307512038097073 + 0.35701775207388903j,
                 0.25456779099202886 + 0.3832454212910878j])
    close(z[0], [-0.4101598716385749 + 0.2804347827790846j,
                 -0.12877382972280293 + 0.614474310108618j,
                 0.107962352134789 + 0.5893284023544587j])
    assert [x.dtype for x in xsl.schur(B + 0j)] == [np.complex128] * 2
    assert [x.dtype for x in xsl.schur(B.astype(np.float32))] == [np.float32] * 2


@pytest.mark.parametrize("tiered", [None, False], ids=["eager", "compiled"])
def test_hessenberg_of_a_complex_matrix_with_nan_as_jax(tiered):
    # jax 0.10.2 (x64; its values, computed with the installed jax and written here): H is
    # triu of the packed reduction (zeros below the subdiagonal, the subdiagonal's real NaN
    # nan+0j), and Q's columns before the first NaN reflector stay finite (LAPACK's orgqr
    # applies H_i to Q[i:, i:] only).  xforms gave nan+nanj there and an all-NaN Q block
    run = (lambda f: f) if tiered is None else (lambda f: xf.jit(f, tiered=tiered))
    nan = np.nan
    a = np.array([[1 + 1j, 2, 3], [4, nan, 6j], [7, 8, 9]])
    want_h = [[1 + 1j, -3.597007303087045, nan + nan * 1j],
              [-8.06225774829855, nan + nan * 1j, nan + nan * 1j],
              [0j, complex(nan, 0.0), nan + nan * 1j]]
    want_q = [[1, 0j, 0j], [0j, -0.49613893835683376, nan + nan * 1j],
              [0j, -0.8682431421244592, nan + nan * 1j]]
    with np.errstate(all="ignore"):
        h, q = run(lambda x: xsl.hessenberg(x, calc_q=True))(a)
        h2 = run(xsl.hessenberg)(a)
    for got, want in ((h, want_h), (q, want_q), (h2, want_h)):
        got, want = np.asarray(got), np.asarray(want, dtype=complex)
        for part in (np.real, np.imag):
            np.testing.assert_allclose(part(got), part(want), rtol=1e-13, atol=1e-15)


def test_rsf2csf_and_funm_match_jax():
    t, z = xsl.rsf2csf(*xsl.schur(B))
    close(t[0], [0.22821125977921214 + 1.616997403233809j, -0.8133012954405219,
                 -0.32485669932909494 + 0.32580659608447293j])
    close(t[1:, 1:], [[0.22821125977921225 - 1.6169974032338092j,
                       -0.25401594414343026 + 0.4166685511830966j], [0., 1.3435774804415757]])
    close(z[:, 0], [0.48510576028014557 - 0.10745784772619561j,
                    -0.1463952457870009 - 0.762384320174341j,
                    -0.3482748950567878 + 0.170787558509192j])
    close(xsl.funm(B, xnp.sin),
          [[0.7278716835181545, -1.4983828586039962, 0.09139239651854161],
           [2.912956680415652, 0.4050883614912834, -1.0234029475358946],
           [-0.1575069272830828, 1.1960765942713762, 1.0260041203510966]])
    f, err = xsl.funm(B, xnp.exp, disp=False)
    assert f.dtype == np.complex128
    close(f, sl.expm(B))
    close(err, 2.220446049250313e-16, 1e-20)


@pytest.mark.parametrize("dt", [np.float32, np.complex128])
def test_schur_family_batched(dt):
    a = rand((2, 4, 4), dt)
    tol = 1e-4 if dt == np.float32 else 1e-10
    t, z = (np.asarray(x) for x in xsl.schur(a))
    close(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a, tol)
    h, q = (np.asarray(x) for x in xsl.hessenberg(a, calc_q=True))
    close(q @ h @ np.conj(np.swapaxes(q, -1, -2)), a, tol)
    assert np.all(np.tril(h, -2) == 0)
    tc, zc = (np.asarray(x) for x in xsl.rsf2csf(*xsl.schur(a.real)))
    close(zc @ tc @ np.conj(np.swapaxes(zc, -1, -2)), a.real, tol)
    assert np.all(np.tril(tc, -1) == 0)
    for i in range(2):
        ref = sl.funm(a[i], np.cos)
        close(xsl.funm(a[i], xnp.cos), ref, 1e3 * tol)


# ---- derivatives ----------------------------------------------------------------------------
def test_derivatives_second_order():
    a = rand((3, 2))
    check_grads(lambda x: xsl.polar(x)[0], (a,), order=2)
    check_grads(lambda x: xsl.polar(x.T, side="left")[1], (a,), order=2)
    check_grads(lambda x, e: xsl.expm_frechet(x, e, compute_expm=False),
                (0.5 * rand((2, 2)), rand((2, 2))), order=2)
    check_grads(lambda d, e: xsl.eigh_tridiagonal(d, e, eigvals_only=True),
                (np.array([1., 3., 6.]), np.array([0.5, -0.4])), order=2)
    check_grads(lambda x, c: xsl.qr_multiply(x, c)[0], (a, rand((2, 3))), order=2)


def test_schur_and_hessenberg_have_no_derivative():
    for f in (lambda x: xsl.schur(x)[0].sum(), lambda x: xsl.hessenberg(x).sum(),
              lambda x: xnp.real(xsl.funm(x, xnp.exp)).sum()):
        with pytest.raises(NotImplementedError, match="not differentiable"):
            xf.grad(f)(B)


# ---- jit and vmap ---------------------------------------------------------------------------
def _composed(a, c, d, e):
    return (xsl.polar(a)[1], xsl.expm_frechet(a[:2], c, compute_expm=False),
            xsl.eigh_tridiagonal(d, e, eigvals_only=True), xsl.qr_multiply(a, c)[0])


def test_composed_jit_both_tiers_and_vmap():
    args = (rand((2, 2)), rand((2, 2)), np.array([1., 3.]), np.array([0.5]))
    ref = _composed(*args)
    for f in (xf.jit(_composed), xf.jit(_composed, tiered=False)):
        for x, y in zip(f(*args), ref):
            close(x, y)
    batch = [np.stack([x, 2 * x]) for x in args]
    got = xf.vmap(_composed)(*batch)
    for i in range(2):
        for x, y in zip(got, _composed(*[b[i] for b in batch])):
            close(x[i], y)


def _decompose(a):
    return xsl.schur(a)[0], xsl.hessenberg(a), xsl.funm(a, xnp.exp)


@pytest.mark.parametrize("dt", [np.float64, np.complex64])
def test_schur_family_jit_both_tiers_and_vmap(dt):
    a = rand((2, 3, 3), dt)
    tol = 2e-5 if dt == np.complex64 else 1e-10
    ref = [_decompose(a[i]) for i in range(2)]
    got = xf.vmap(_decompose)(a)
    for i in range(2):
        for x, y in zip(got, ref[i]):
            close(x[i], y, tol)
    # the compiled kernel calls the LAPACK routines SciPy calls: the same factors
    for f in (xf.jit(_decompose, tiered=True), xf.jit(_decompose, tiered=False)):
        for i in (0, 0, 1):
            for x, y in zip(f(a[i]), ref[i]):
                assert x.dtype == y.dtype
                close(x, y, tol)
    t, z = xf.jit(lambda x: xsl.schur(x, output="complex"), tiered=False)(a)
    for i in range(2):
        close(t[i], xsl.schur(a[i], output="complex")[0], tol)
        close(z[i], xsl.schur(a[i], output="complex")[1], tol)
    # a NaN goes to LAPACK as in JAX (jax 0.10.2: schur's T and hessenberg's H of this
    # triangular matrix are the matrix itself, NaN in place; funm's result is all NaN)
    bad = np.array([[1., np.nan, 0.], [0., 1., 0.], [0., 0., 1.]], dt)
    t, hess, fm = xf.jit(_decompose, tiered=False)(bad)
    for x in (t, hess):
        np.testing.assert_array_equal(np.asarray(x), bad)
    assert np.all(np.isnan(np.asarray(fm)))


def test_cuda_backend_says_to_use_cpu():
    try:
        xf.jit(xsl.schur, backend="cuda").lower(B).as_text()
    except LoweringError as e:
        assert "schur" in str(e) and "backend='cpu'" in str(e)
    except Exception as e:       # no CUDA backend here at all
        pytest.skip(f"CUDA backend unavailable: {e}")
    else:
        pytest.fail("CUDA lowering of schur should fail (no CUDA kernel)")
