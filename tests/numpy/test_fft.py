"""xforms.numpy.fft against numpy.fft (float32/float64, every norm, n/s/axes variants, eager
and jit), the fft primitive's transposes by the dot-product test, check_grads to second order
(real and complex inputs), vmap against a loop, and bad input; xforms.scipy.fft's DCTs
(dct, idct, dctn, idctn) against scipy.fft and JAX, on all three tiers, with their gradients."""
import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore:`axes` should not be `None`:DeprecationWarning")

import xforms as xf
import xforms.numpy as xnp
from xforms.primitives import fft as fp
from xforms.test_util import check_grads

NORMS = (None, "ortho", "forward")
RNG = np.random.default_rng(0)
ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D = ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn")
REAL_IN = ("rfft", "ihfft", "rfft2", "rfftn")
_jitted = {}


def _input(name, shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    if name in REAL_IN:
        return x
    cdt = np.result_type(dtype, np.complex64)
    return (x + 1j * RNG.standard_normal(shape)).astype(cdt)


def _one_d_cases():
    return [dict(n=n, axis=ax, norm=nm) for n in (None, 5, 8) for ax in (-1, 0) for nm in NORMS]


def _n_d_cases(name):
    two = name.endswith("2")
    cases = [dict(norm=nm) for nm in NORMS]
    cases += [dict(s=(3, 7)), dict(s=(6, 4), axes=(1, 0)), dict(axes=(0, 2), norm="ortho")]
    if not two:
        cases += [dict(s=(5,)), dict(axes=(1,), norm="forward"), dict(s=(2, 3, 6))]
    return cases


def _run_all(xmod, name, x, cases):
    f = getattr(xmod, name)
    return tuple(f(x, **kw) for kw in cases)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ONE_D + N_D)
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_against_numpy(name, dtype, jit):
    cases = _one_d_cases() if name in ONE_D else _n_d_cases(name)
    if jit:
        cases = cases[::2]        # compile time: the eager runs cover every case
    x = _input(name, (6, 5, 4) if name in N_D else (6, 7), dtype)
    run = lambda x: _run_all(xnp.fft, name, x, cases)
    got = xf.jit(run)(x) if jit else run(x)
    want = _run_all(np.fft, name, x, cases)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for kw, g, w in zip(cases, got, want):
        real_out = name in ("irfft", "hfft", "irfft2", "irfftn")
        assert g.dtype == (np.dtype(dtype) if real_out else np.result_type(dtype, np.complex64))
        scale = max(1.0, float(np.max(np.abs(w))))
        np.testing.assert_allclose(np.asarray(g), w, atol=tol * scale, rtol=tol,
                                   err_msg=f"{name}{kw}")


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_freqs_and_shifts(jit):
    x = RNG.standard_normal((5, 6))

    def run(x):
        return (xnp.fft.fftshift(x), xnp.fft.ifftshift(x), xnp.fft.fftshift(x, axes=1),
                xnp.fft.ifftshift(x, axes=(0,)), xnp.fft.fftfreq(7, 0.5), xnp.fft.fftfreq(8),
                xnp.fft.rfftfreq(7, 2.0), xnp.fft.rfftfreq(8))
    got = xf.jit(run)(x) if jit else run(x)
    want = (np.fft.fftshift(x), np.fft.ifftshift(x), np.fft.fftshift(x, axes=1),
            np.fft.ifftshift(x, axes=(0,)), np.fft.fftfreq(7, 0.5), np.fft.fftfreq(8),
            np.fft.rfftfreq(7, 2.0), np.fft.rfftfreq(8))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-15)
    assert xnp.fft.fftfreq(4, dtype=np.float32).dtype == np.float32


# ---- the primitive's transposes: Re(sum(ct * f(y))) == Re(sum(T(ct) * y)) ------------------
@pytest.mark.parametrize("fft_type,lengths", [
    ("FFT", (7,)), ("IFFT", (6,)), ("RFFT", (7,)), ("RFFT", (8,)), ("IRFFT", (7,)),
    ("IRFFT", (8,)), ("RFFT", (3, 6)), ("IRFFT", (4, 5)), ("FFT", (3, 4)), ("IFFT", (2, 3, 5))])
def test_transpose_dot_product(fft_type, lengths):
    lead = (2,)
    if fft_type == "IRFFT":
        in_shape = lead + lengths[:-1] + (lengths[-1] // 2 + 1,)
    else:
        in_shape = lead + lengths
    y = RNG.standard_normal(in_shape)
    if fft_type != "RFFT":
        y = y + 1j * RNG.standard_normal(in_shape)
    f = lambda y: fp.fft(y, fft_type, lengths)
    out, pullback = xf.vjp(f, y)
    ct = RNG.standard_normal(out.shape)
    if np.iscomplexobj(out):
        ct = ct + 1j * RNG.standard_normal(out.shape)
    (t,) = pullback(ct)
    assert t.shape == y.shape and t.dtype == y.dtype
    lhs = np.real(np.sum(ct * np.asarray(out)))
    rhs = np.real(np.sum(np.asarray(t) * y))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12, atol=1e-12)


# ---- derivatives, second order, forward and reverse ------------------------------------------
GRAD_CASES = {
    "rfft_power": (lambda x: xnp.sum(xnp.abs(xnp.fft.rfft(x, n=9, norm="ortho")) ** 2), "r"),
    "irfft": (lambda z: xnp.fft.irfft(z, n=6, axis=0) ** 2, "c"),
    "fft_complex": (lambda z: xnp.fft.fft(z * z, axis=0, norm="forward"), "c"),
    "ifftn_s": (lambda z: xnp.fft.ifftn(z, s=(3, 5)) * z[:3, :4].sum(), "c"),
    "rfft2_irfft2": (lambda x: xnp.fft.irfft2(xnp.fft.rfft2(x) ** 2, s=x.shape), "r"),
    "hfft": (lambda z: xnp.sin(xnp.fft.hfft(z, n=7)), "c"),
    "ihfft": (lambda x: xnp.fft.ihfft(x ** 3), "r"),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_check_grads(case):
    f, kind = GRAD_CASES[case]
    x = RNG.standard_normal((4, 4)) * 0.5
    if kind == "c":
        x = x + 0.5j * RNG.standard_normal((4, 4))
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_jit_grad_matches_eager():
    f = lambda x: xnp.sum(xnp.abs(xnp.fft.fft(x, axis=0)) ** 2 * xnp.arange(5.0)[:, None])
    x = RNG.standard_normal((5, 3))
    np.testing.assert_allclose(xf.jit(xf.grad(f))(x), xf.grad(f)(x), rtol=1e-12)
    # |fft(x)|^2 weighted by w along axis 0: the gradient is 2 Re(F^H diag(w) F x)
    F = np.fft.fft(np.eye(5), axis=0)
    want = 2 * np.real(F.conj().T @ (np.arange(5.0)[:, None] * (F @ x)))
    np.testing.assert_allclose(xf.grad(f)(x), want, rtol=1e-12)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_vmap_matches_loop(jit):
    x = RNG.standard_normal((4, 3, 6))
    f = lambda a: (xnp.fft.rfft(a, n=10, norm="ortho"), xnp.fft.fft2(a), xnp.fft.irfft(a, axis=0))
    g = xf.vmap(f, in_axes=1)
    got = xf.jit(g)(x) if jit else g(x)
    for k in range(3):
        want = np.stack([np.asarray(f(x[:, j])[k]) for j in range(3)])
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-12, atol=1e-12)


def test_bad_input():
    x = np.ones(8)
    with pytest.raises(TypeError, match="rfft.*real"):
        xnp.fft.rfft(x + 1j)
    with pytest.raises(TypeError, match="fft: .*integer"):
        xnp.fft.fft(x, n=4.5)
    with pytest.raises(ValueError, match="positive"):
        xnp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="norm"):
        xnp.fft.fft(x, norm="bogus")
    with pytest.raises(ValueError, match="repeated"):
        xnp.fft.fftn(np.ones((2, 2)), axes=(0, 0))
    with pytest.raises(ValueError, match="different lengths"):
        xnp.fft.fftn(np.ones((2, 2)), s=(2,), axes=(0, 1))


def test_namespace_coverage():
    jfft = pytest.importorskip("jax.numpy.fft")
    names = {n for n in dir(jfft) if not n.startswith("_") and callable(getattr(jfft, n))}
    assert {n for n in names if not hasattr(xnp.fft, n)} == set()
    assert set(ONE_D + N_D) | {"fftfreq", "rfftfreq", "fftshift", "ifftshift"} >= names


# ---- xforms.scipy.fft: the discrete cosine transforms -------------------------------------------
@pytest.mark.parametrize("n_len", [1, 2, 5, 8])
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("kind", [2, 3])
def test_dct_idct_against_scipy(kind, norm, n_len):
    import scipy.fft as sf
    import xforms.scipy.fft as xfft
    x = RNG.standard_normal((3, n_len))
    for name in ("dct", "idct"):
        for n in (None, 4):
            got = getattr(xfft, name)(x, type=kind, n=n, norm=norm)
            want = getattr(sf, name)(x, type=kind, n=n, norm=norm)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)
        got = getattr(xfft, name)(x.T, type=kind, norm=norm, axis=0)
        np.testing.assert_allclose(got, getattr(sf, name)(x.T, type=kind, norm=norm, axis=0),
                                   rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("tiered", [False, True], ids=["compiled", "fast"])
def test_dctn_idctn_jit_against_scipy(tiered):
    import scipy.fft as sf
    import xforms.scipy.fft as xfft
    x = RNG.standard_normal((2, 3, 4))

    def run(x):
        return (xfft.dctn(x), xfft.dctn(x, s=(3, 5), axes=(0, 2)),
                xfft.idctn(x, type=3, norm="ortho"), xfft.dctn(x, s=(2, 2)),
                xfft.dct(x + 2j * x, axis=1))
    want = (sf.dctn(x), sf.dctn(x, s=(3, 5), axes=(0, 2)), sf.idctn(x, type=3, norm="ortho"),
            sf.dctn(x, s=(2, 2)), sf.dct(x + 2j * x, axis=1))
    for got, w in zip(xf.jit(run, tiered=tiered)(x), want):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-12)


def test_dct_against_jax_grads_vmap_and_errors():
    import scipy.fft as sf
    import xforms.scipy.fft as xfft
    # jax.scipy.fft.dct(jnp.arange(6.) ** 1.5, norm='ortho'), jax 0.10.2, float64
    np.testing.assert_allclose(
        xfft.dct(np.arange(6.0) ** 1.5, norm="ortho"),
        [11.514610141990048, -9.446569835892896, 1.5778801700230634, -0.7399968074489526,
         0.3478302800606083, -0.1333589287028199], rtol=1e-13)
    x = RNG.standard_normal((2, 3, 4))
    check_grads(lambda x: xfft.dct(x, norm="ortho") ** 2 + xfft.idct(x, type=3), (x,), order=2)
    check_grads(lambda x: xfft.dctn(x, s=(3, 5), axes=(0, 2)), (x,), order=1)
    np.testing.assert_allclose(xf.vmap(xfft.idct)(x[0]), sf.idct(x[0]), rtol=1e-12)
    assert xfft.dct(np.arange(4, dtype=np.float32)).dtype == np.float32
    assert xfft.dct(np.arange(4, dtype=np.int32)).dtype == np.float32   # as jnp.fft
    with pytest.raises(NotImplementedError, match="type 1"):
        xfft.dct(x, type=1)
    with pytest.raises(ValueError, match="forward"):
        xfft.idctn(x, norm="forward")
    with pytest.raises(ValueError, match="same length"):
        xfft.dctn(x, s=(2,), axes=(0, 1))
