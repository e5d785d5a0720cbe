"""xforms.scipy.signal: fftconvolve, convolve2d, correlate2d, detrend, stft, istft, welch, csd
(and convolve/correlate's method='fft'): values against JAX (recorded below) and SciPy, dtypes,
JAX's errors, jit on both tiers, vmap against a loop, derivatives by check_grads."""

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.signal as xsig
from xforms.test_util import check_grads

signal = pytest.importorskip("scipy.signal")


def sig(n, k=0.7, p=0.0):
    """A deterministic test signal (the same formula made the JAX values below)."""
    return np.sin(np.arange(n) * k + p) + 0.1 * np.arange(n) % 1.3


A = sig(20, 0.7).reshape(4, 5)
B = sig(6, 1.9, 0.3).reshape(2, 3)
C = (sig(6, 0.5) + 1j * sig(6, 1.1)).reshape(2, 3)
D = (sig(12, 0.9) - 1j * sig(12, 0.2)).reshape(3, 4)
X = sig(14, 0.45)
S = sig(24, 0.8)

CASES = {
    "fftconvolve_full": lambda: xsig.fftconvolve(A, B, "full"),
    "fftconvolve_same": lambda: xsig.fftconvolve(A, B, "same"),
    "fftconvolve_valid": lambda: xsig.fftconvolve(A, B, "valid"),
    "fftconvolve_axes": lambda: xsig.fftconvolve(A, sig(12, 0.4).reshape(4, 3), "same", axes=1),
    "correlate2d_valid_swapped": lambda: xsig.correlate2d(C, D, "valid"),
    "correlate2d_same": lambda: xsig.correlate2d(D, C, "same"),
    "convolve2d_full": lambda: xsig.convolve2d(C, D, "full"),
    "detrend_bp": lambda: xsig.detrend(X, bp=[3, 9]),
    "detrend_const": lambda: xsig.detrend(X, type="constant"),
    "stft": lambda: xsig.stft(S, nperseg=8)[2],
    "stft_t": lambda: xsig.stft(S, nperseg=8)[1],
    "istft": lambda: xsig.istft(xsig.stft(S, nperseg=8)[2], nperseg=8)[1],
    "welch_default": lambda: xsig.welch(S)[1],          # JAX: one segment over all of S
    "welch_hamming": lambda: xsig.welch(S, fs=2.0, window="hamming", nperseg=8, noverlap=2,
                                        nfft=10, detrend="linear")[1],
    "csd_median": lambda: xsig.csd(S, sig(24, 0.3, 1.0), nperseg=6, average="median")[1],
}

# Computed with jax 0.10.2 (jax_enable_x64) on the inputs above, rounded to 13 decimals:
# jax.scipy.signal.<name>(...) for each entry of CASES.
JAX = {
    "fftconvolve_full":
        [[0.0, 0.2199313647335, 1.0264434417072, 0.9605959273575, 0.5410389421481,
          -0.0514516355081, -0.454426350145],
         [0.0440965713905, 0.070626122969, 0.6430654001437, 1.7428533341135, 2.3995379886816,
          1.9121161923981, -0.4687087919768],
         [0.4927445750068, 2.3256175338368, 1.1139827692281, 0.2419067318977, -0.8419548153461,
          0.8657117493594, 0.2871717364994],
         [-0.166755587828, 1.5427990620891, 2.9235059413908, 3.5390855305598, 1.7100937077947,
          0.4932902678676, -0.8205264502395],
         [-0.0139911985953, -0.9648350336865, -1.0453736172615, -0.3848610617103, 0.7435149456043,
          1.8473034406027, 0.1695140601239]],
    "fftconvolve_same":
        [[0.2199313647335, 1.0264434417072, 0.9605959273575, 0.5410389421481, -0.0514516355081],
         [0.070626122969, 0.6430654001437, 1.7428533341135, 2.3995379886816, 1.9121161923981],
         [2.3256175338368, 1.1139827692281, 0.2419067318977, -0.8419548153461, 0.8657117493594],
         [1.5427990620891, 2.9235059413908, 3.5390855305598, 1.7100937077947, 0.4932902678676]],
    "fftconvolve_valid":
        [[0.6430654001437, 1.7428533341135, 2.3995379886816],
         [1.1139827692281, 0.2419067318977, -0.8419548153461],
         [2.9235059413908, 3.5390855305598, 1.7100937077947]],
    "fftconvolve_axes":
        [[0.0, 0.3642337868046, 1.2628934700838, 1.6567755302433, 1.4267938795525],
         [-0.1257521107586, -0.5177921277262, -0.5701581607418, 0.9676455793695, 1.5209440270856],
         [4.3783431917477, 6.0106587412657, 4.0821232904617, 1.5141223811433, -0.0391511447314],
         [-0.476010239231, -0.3658330395451, 0.0902826672471, 0.6782069104826, 0.3879447517311]],
    "correlate2d_valid_swapped":
        [[(3.5877654901191-9.5773047338113j), (3.9058953932006-7.5159884442835j)],
         [(0.9237585810219-8.617009154406j), (0.869610182376-8.0282186383242j)]],
    "correlate2d_same":
        [[(0.9305892811937-4.2600134779881j), (0.869610182376-8.0282186383242j),
          (0.9237585810219-8.617009154406j), (0.9905424441519-4.9965757231833j)],
         [(2.5360354489901-4.6719320330619j), (3.9058953932006-7.5159884442835j),
          (3.5877654901191-9.5773047338113j), (2.1992281534193-6.5096925029252j)],
         [(-0.8026713542034-6.4597093076277j), (-1.2287488118663-6.3517980013381j),
          (-2.329896182673-5.1415642956436j), (-1.5194555713337-1.7426467073725j)]],
    "convolve2d_full":
        [[0j, 0j, (0.8078654092832+0.7025034963026j), (2.4855593873275+1.4017789405431j),
          (3.0954569890339+0.7899473729462j), (1.6295338652051-0.1669400548469j)],
         [0j, (2.2714933854583-0.9514361341144j), (4.7342483001212-3.9332639834972j),
          (5.4614827420348-5.8848948199678j), (5.0948048754436-4.4579190941224j),
          (3.0675985115084-2.1317343183191j)],
         [(0.1037786531025-1.4558126423393j), (1.6063917068152-2.7110432708954j),
          (4.7676775322986-4.2233143188287j), (5.8462007280426-5.143281349273j),
          (5.1643280504977-5.2829210825282j), (3.0347917013224-3.3384746296364j)],
         [(2.3237731573951-2.1082316122333j), (3.7866722508834-5.4005556162899j),
          (4.8991609247958-8.0656273691085j), (3.5696670844832-8.1063441087805j),
          (0.9471812322421-5.2407312953981j), (0.3134559520835-2.2284824182791j)]],
    "detrend_bp":
        [-0.0144340264325, 0.028868052865, -0.0144340264325, -0.2170077254387, 0.0779358892413,
         0.1789807968796, 0.125106821854, -0.0138609641185, -0.1511548184177, -0.073970244392,
         -0.0972039179591, 0.074194319976, 0.4391040914936, -0.3421242491184],
    "detrend_const":
        [-0.5565644194296, -0.0215988853184, 0.4267624901979, 0.7191589383971, 0.8172832114486,
         0.7215087774583, 0.4708154608042, 0.1350283332033, -0.1990848627244, -0.4450896738558,
         -0.5340945370947, -0.4284674888314, -0.1293289069856, -0.9763284372695],
    "stft":
        [[(0.3600742849057+0j), (0.3716276035694+0j), (0.8566480302669+0j), (0.6277695310816+0j),
          (0.4125239386769+0j), (0.5600663486524+0j), (0.1113455715789+0j)],
         [(-0.0980763800599+0.2985293403125j), (-0.1709045956518-0.4047824136387j),
          (-0.4580915803209+0.5936419532576j), (-0.3506103620442-0.7902703153617j),
          (-0.2653913629631+0.5834383417043j), (-0.20650044832-0.3844099894228j),
          (-0.087584424797-0.0769449309415j)],
         [(-0.1499467003802-0.1387009468291j), (-0.0150196601326+0.2355428213469j),
          (0.0299880964892-0.2756525221703j), (0.1176457400102+0.4618597483979j),
          (0.0595674503506-0.270428251924j), (-0.0740774889952+0.2251120979586j),
          (0.0061055622398+0.1238630814006j)],
         [(0.0980763800599-0.0013640604478j), (9.16673656e-05-0.0058478606693j),
          (-0.0001830221043-0.0027387606072j), (-0.1622262473444-0.073136321418j),
          (-0.0003635495876-0.0027705347209j), (0.0004521066525-0.005784420806j),
          (0.087584424797-0.089156055421j)],
         [(-0.0601808841454+0j), (3.75732682e-05+0j), (-7.50183948e-05+0j), (0.1626122076749+0j),
          (-0.0001490142766+0j), (0.0001853126728+0j), (-0.1235566960584+0j)]],
    "stft_t": [0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0],
    "istft":
        [0.0, 0.8173560908995, 1.1995736030415, 0.9754631805512, 0.3416258565724, -0.2568024953079,
         -0.3961646088358, 0.0687333621277, 0.9165492048505, 1.6936678638492, 1.9893582466234,
         1.6849171928918, 1.025673218777, -0.8278264690857, -0.8791777291513, -0.3365729180004,
         0.5315098251015, 1.2591618148565, 1.4656577765493, 1.0863986888538, 0.4120966833349,
         -0.0875670335815, -0.0488444979181, 0.5654343779281],
    "welch_default":
        [0.0462738405191, 0.5672595126581, 6.0038951587303, 13.0656019402826, 4.1740098207683,
         0.289703351535, 0.1847594820517, 0.1531124885601, 0.1249549353699, 0.1107190503238,
         0.1006380303242, 0.0955424352841, 0.0469634639894],
    "welch_hamming":
        [0.3045493947225, 1.1016334781105, 0.7618232881225, 0.0337721971369, 0.0124870286644,
         0.0051003634761],
    "csd_median":
        [(0.0820538832268+0j), (0.1669918695481-0.2095276113461j),
         (-0.0134416937294-0.0270713485158j), (7.99053644e-05+0j)],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    got = np.asarray(CASES[name]())
    np.testing.assert_allclose(got, np.asarray(JAX[name]), rtol=1e-11, atol=1e-11)


# ---- against SciPy --------------------------------------------------------------------------
_R = np.random.default_rng(3)
_PAIRS = [(_R.normal(size=(5, 6)), _R.normal(size=(2, 3))),
          (_R.normal(size=(2, 3)), _R.normal(size=(4, 5))),
          (_R.normal(size=(3, 3)) + 1j, _R.normal(size=(3, 3)) - 2j),
          (_R.normal(size=(2, 3)) - 1j * _R.normal(size=(2, 3)), _R.normal(size=(4, 4)) + 1j)]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolutions_match_scipy(mode):
    for a, b in _PAIRS:
        for name in ("convolve2d", "correlate2d", "fftconvolve"):
            np.testing.assert_allclose(getattr(xsig, name)(a, b, mode),
                                       getattr(signal, name)(a, b, mode), rtol=1e-11, atol=1e-11)
        for name in ("convolve", "correlate"):     # method='fft' runs fftconvolve
            np.testing.assert_allclose(getattr(xsig, name)(a, b, mode, method="fft"),
                                       getattr(signal, name)(a, b, mode, method="fft"),
                                       rtol=1e-11, atol=1e-11)
    a = _R.normal(size=(3, 7, 4))
    b = _R.normal(size=(3, 2, 4))
    np.testing.assert_allclose(xsig.fftconvolve(a, b, mode, axes=[1]),
                               signal.fftconvolve(a, b, mode, axes=[1]), rtol=1e-11, atol=1e-11)


def test_detrend_matches_scipy():
    x = _R.normal(size=(3, 17)) + np.arange(17) * 0.3
    for kw in ({}, {"bp": [4, 11]}, {"bp": 5, "axis": -1}, {"type": "constant"},
               {"bp": [0, 16, 17]}):
        np.testing.assert_allclose(xsig.detrend(x, **kw), signal.detrend(x, **kw),
                                   rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(xsig.detrend(x.T, axis=0, bp=[2]),
                               signal.detrend(x.T, axis=0, bp=[2]), rtol=1e-11, atol=1e-11)


_SPECTRAL = [dict(nperseg=8), dict(nperseg=7, noverlap=2, nfft=9, window="hamming"),
             dict(nperseg=8, window=("tukey", 0.3), detrend="linear", scaling="spectrum"),
             dict(nperseg=6, return_onesided=False, fs=3.0, detrend=False),
             dict(nperseg=8, average="median"),
             dict(nperseg=8, window=np.linspace(0.5, 1.0, 8))]


@pytest.mark.parametrize("kw", _SPECTRAL)
def test_welch_and_csd_match_scipy(kw):
    x = _R.normal(size=(2, 40))
    y = _R.normal(size=(2, 40))
    for got, want in [(xsig.welch(x, **kw), signal.welch(x, **kw)),
                      (xsig.csd(x, y, **kw), signal.csd(x, y, **kw)),
                      (xsig.welch(x.T, axis=0, **kw), signal.welch(x.T, axis=0, **kw))]:
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(nperseg=8), dict(nperseg=8, boundary="even", padded=False),
                                dict(nperseg=7, noverlap=3, nfft=10, boundary="odd"),
                                dict(nperseg=8, noverlap=0, boundary=None, window="hamming"),
                                dict(nperseg=6, boundary="constant", detrend="constant")])
def test_stft_and_istft_match_scipy(kw):
    x = _R.normal(size=(2, 37))
    f, t, Z = xsig.stft(x, **kw)
    f2, t2, Z2 = signal.stft(x, **kw)
    for got, want in [(f, f2), (t, t2), (Z, Z2)]:
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    ikw = {k: v for k, v in kw.items() if k in ("nperseg", "noverlap", "nfft", "window")}
    ikw["boundary"] = kw.get("boundary", "zeros") is not None
    for got, want in zip(xsig.istft(Z2, **ikw), signal.istft(Z2, **ikw)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    # time first, frequencies last: the axes are named
    Zt = np.moveaxis(Z2, -1, 0)
    np.testing.assert_allclose(xsig.istft(Zt, time_axis=0, freq_axis=-1, **ikw)[1],
                               signal.istft(Zt, time_axis=0, freq_axis=-1, **ikw)[1],
                               rtol=1e-10, atol=1e-12)


def test_dtypes_follow_jax():
    x32 = S.astype(np.float32)
    assert xsig.fftconvolve(x32, x32[:3]).dtype == np.float32
    assert xsig.fftconvolve(np.arange(5), np.arange(3)).dtype == np.float64
    assert xsig.correlate2d(A.astype(np.float32), B.astype(np.float32)).dtype == np.float32
    assert xsig.detrend(np.arange(6)).dtype == np.float64
    f, t, Z = xsig.stft(x32, nperseg=8)
    assert (f.dtype, t.dtype, Z.dtype) == (np.float32, np.float32, np.complex64)
    assert xsig.welch(x32, nperseg=8)[1].dtype == np.float32
    assert xsig.csd(S, S, nperseg=8)[1].dtype == np.complex128    # complex even for x with x
    assert xsig.istft(Z)[1].dtype == np.float32


def test_errors_are_jaxs():
    with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
        xsig.convolve2d(A, B, boundary="wrap")
    with pytest.raises(NotImplementedError, match="fillvalue=0"):
        xsig.correlate2d(A, B, fillvalue=1.0)
    with pytest.raises(ValueError, match="2-dimensional"):
        xsig.convolve2d(S, S[:3])
    with pytest.raises(ValueError, match="mode"):
        xsig.fftconvolve(S, S[:3], "circular")
    with pytest.raises(ValueError, match="at least as large"):
        xsig.fftconvolve(np.ones((3, 2)), np.ones((2, 3)), "valid")
    with pytest.raises(ValueError, match="mapped axes"):
        xsig.fftconvolve(np.ones((3, 4)), np.ones((2, 4)), axes=1)
    with pytest.raises(ValueError, match="Trend type"):
        xsig.detrend(S, type="quadratic")
    with pytest.raises(ValueError, match="Breakpoints"):
        xsig.detrend(S, bp=[30])
    with pytest.raises(ValueError, match="noverlap must be less"):
        xsig.welch(S, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="Unknown boundary"):
        xsig.stft(S, nperseg=8, boundary="periodic")
    with pytest.raises(ValueError, match="nperseg is different"):
        xsig.welch(S, window=np.ones(4), nperseg=8)
    with pytest.raises(ValueError, match="average"):
        xsig.welch(np.ones((2, 40)), nperseg=8, average="mode")
    with pytest.raises(ValueError, match="differing time and frequency"):
        xsig.istft(np.ones((5, 4), complex), time_axis=0, freq_axis=0)


# ---- transforms -----------------------------------------------------------------------------
PROGRAMS = {
    "fftconvolve": lambda x: xsig.fftconvolve(x, x[:5] * 0.5, "same"),
    "correlate2d": lambda x: xsig.correlate2d(x.reshape(4, 6), x[:6].reshape(2, 3), "valid"),
    "detrend": lambda x: xsig.detrend(x, bp=[5, 17]),
    "stft": lambda x: xnp.abs(xsig.stft(x, nperseg=8)[2]),
    "istft": lambda x: xsig.istft(xsig.stft(x, nperseg=8)[2] * 1.5, nperseg=8)[1],
    "welch": lambda x: xsig.welch(x, nperseg=8, detrend="linear")[1],
    "csd_median": lambda x: xnp.abs(xsig.csd(x, x[::-1] * 2, nperseg=8, average="median")[1]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jit_both_tiers_and_vmap(name):
    f = PROGRAMS[name]
    xs = np.stack([sig(24, 0.8), sig(24, 0.3, 1.0)])
    want = np.stack([np.asarray(f(x)) for x in xs])
    for tiered in (False, True):
        np.testing.assert_allclose(xf.jit(f, tiered=tiered)(xs[0]), want[0],
                                   rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(xf.vmap(f)(xs), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grads(name):
    order = 1 if name == "csd_median" else 2          # a median is piecewise linear
    check_grads(PROGRAMS[name], (sig(24, 0.8),), order=order)


def test_where_jax_departs_from_its_documentation_scipy_numbers():
    """JAX documents SciPy's behaviour but its code differs in three places (raising or a
    different number); xforms gives SciPy's numbers there (see inverse.py / spectral.py)."""
    x = _R.normal(size=37)
    Z = signal.stft(x, nperseg=7)[2]                  # odd nperseg, nfft=None: JAX raises
    np.testing.assert_allclose(xsig.istft(Z, nperseg=7)[1], signal.istft(Z, nperseg=7)[1],
                               rtol=1e-10, atol=1e-12)
    kw = dict(nperseg=8, noverlap=0, window="hamming")  # JAX reads noverlap=0 as nperseg // 2
    Z = signal.stft(x, **kw)[2]
    np.testing.assert_allclose(xsig.istft(Z, **kw)[1], signal.istft(Z, **kw)[1],
                               rtol=1e-10, atol=1e-12)
    centre = lambda d: d - d.mean(-1, keepdims=True)  # JAX applies it across the segments
    np.testing.assert_allclose(xsig.welch(x, nperseg=8, detrend=centre)[1],
                               signal.welch(x, nperseg=8, detrend=centre)[1], rtol=1e-10)
