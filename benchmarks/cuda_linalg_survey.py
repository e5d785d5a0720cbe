"""Which xforms.numpy.linalg, xforms.scipy.linalg and xforms.numpy.fft functions run under
jit(backend="cuda"), and do they agree with the CPU backend?  Run on Numba's simulator:

    NUMBA_ENABLE_CUDASIM=1 python -m benchmarks.cuda_linalg_survey [name ...]

Each function is called on small float32/float64/complex64/complex128 operands (a batch of
two where it takes one); a line per case: ok, DIFF (the largest gap against the CPU's result,
factors unique only up to phase -- eig, eigh, svd, schur -- compared by what does not depend
on it: their reconstruction of the operand, eig's values as a set), or RAISES.
"""
import os
import sys
import traceback

import numba  # noqa: F401  (imported before xforms starts its background preload: no import race)
import numpy as np

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl

# the CUDA tests' random operands (a real or complex normal matrix, a Hermitian positive
# definite one), not a copy of them
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "tests", "cuda"))
import operands  # noqa: E402

_rng = np.random.default_rng(5)


def _mat(shape, dt):
    return operands.rand(_rng, shape, dt)


def _cases(dt):
    a, b, v = _mat((2, 4, 4), dt), _mat((4, 2), dt), _mat((4,), dt)
    s, t = operands.hermitian(_rng, (4, 4), dt), _mat((5, 3), dt)
    la, sl, ft = xnp.linalg, xsl, xnp.fft
    yield from [
        ("linalg.cholesky", la.cholesky, (s,)), ("linalg.cond", la.cond, (a,)),
        ("linalg.det", la.det, (a,)), ("linalg.eig", la.eig, (a,)),
        ("linalg.eigh", la.eigh, (s,)), ("linalg.eigvals", la.eigvals, (a,)),
        ("linalg.eigvalsh", la.eigvalsh, (s,)), ("linalg.inv", la.inv, (a,)),
        ("linalg.lstsq", lambda x, y: la.lstsq(x, y)[0], (t, t[:, :2])),
        ("linalg.matrix_norm", la.matrix_norm, (a,)),
        ("linalg.norm2", lambda x: la.norm(x, 2), (t,)),
        ("linalg.norm_nuc", lambda x: la.norm(x, "nuc"), (t,)),
        ("linalg.matrix_power", lambda x: la.matrix_power(x, 3), (a,)),
        ("linalg.matrix_rank", la.matrix_rank, (t,)), ("linalg.pinv", la.pinv, (t,)),
        ("linalg.qr", la.qr, (t,)), ("linalg.qr_complete", lambda x: la.qr(x, "complete"), (t,)),
        ("linalg.slogdet", la.slogdet, (a,)), ("linalg.solve", la.solve, (a[0], b)),
        ("linalg.svd", la.svd, (t,)), ("linalg.svd_wide", lambda x: la.svd(x.T), (t,)),
        ("linalg.svdvals", la.svdvals, (t,)),
        ("linalg.tensorinv", lambda x: la.tensorinv(x.reshape(4, 2, 2), 1), (a[0],)),
        ("linalg.tensorsolve", la.tensorsolve, (a[0], v)),
        ("scipy.cho_solve", lambda x, y: sl.cho_solve(sl.cho_factor(x), y), (s, b)),
        ("scipy.det", sl.det, (a,)), ("scipy.eigh", sl.eigh, (s,)),
        ("scipy.expm", sl.expm, (a[0] * 0.3,)), ("scipy.funm", lambda x: sl.funm(x, xnp.exp),
                                                  (s * 0.1,)),
        ("scipy.hessenberg", sl.hessenberg, (a[0],)), ("scipy.inv", sl.inv, (a[0],)),
        ("scipy.lu", sl.lu, (a[0],)), ("scipy.lu_solve", lambda x, y: sl.lu_solve(
            sl.lu_factor(x), y), (a[0], b)),
        ("scipy.polar", sl.polar, (a[0],)), ("scipy.qr", sl.qr, (t,)),
        ("scipy.rsf2csf", lambda x: sl.rsf2csf(*sl.schur(x)), (a[0].real.copy(),)),
        ("scipy.schur", sl.schur, (a[0],)), ("scipy.solve", sl.solve, (a[0], b)),
        ("scipy.solve_sylvester", sl.solve_sylvester, (a[0], a[1] + 3 * np.eye(4), a[0])),
        ("scipy.solve_triangular", sl.solve_triangular, (np.triu(a[0]) + 3 * np.eye(4), b)),
        ("scipy.sqrtm", sl.sqrtm, (s,)), ("scipy.svd", sl.svd, (t,)),
        ("scipy.eigh_tridiagonal", lambda d, e: sl.eigh_tridiagonal(d.real, e.real),
         (v, v[:3])),
        ("scipy.expm_frechet", sl.expm_frechet, (a[0] * 0.3, a[1] * 0.3)),
    ]
    for name in ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "hfft"]:
        yield f"fft.{name}", getattr(ft, name), (a,)
    if np.dtype(dt).kind == "f":
        for name in ["rfft", "rfft2", "rfftn", "ihfft"]:
            yield f"fft.{name}", getattr(ft, name), (a,)
    for name in ["irfft", "irfft2", "irfftn"]:
        yield f"fft.{name}", getattr(ft, name), (a.astype(np.result_type(dt, np.complex64)),)
    yield from _more_cases(dt, a, b, v, t)


def _more_cases(dt, a, b, v, t):
    """The rest of xforms.numpy.linalg (products, norms, views) and of xforms.numpy.fft
    (shifts, frequencies, and lengths, axes and norms other than the defaults: padded,
    truncated, odd and not a power of two)."""
    la, ft = xnp.linalg, xnp.fft
    c = a.astype(np.result_type(dt, np.complex64))
    yield from [
        ("linalg.cross", la.cross, (t, t[::-1])), ("linalg.diagonal", la.diagonal, (a,)),
        ("linalg.matmul", la.matmul, (a, b)), ("linalg.matrix_transpose",
                                               la.matrix_transpose, (t,)),
        ("linalg.multi_dot", lambda x, y, z: la.multi_dot([x, y, z]), (t, t.T, t)),
        ("linalg.norm", la.norm, (a,)), ("linalg.norm_inf", lambda x: la.norm(x, np.inf), (a[0],)),
        ("linalg.norm_vec1", lambda x: la.norm(x, 1, axis=-1), (a,)),
        ("linalg.outer", la.outer, (v, v[:3])),
        ("linalg.tensordot", lambda x, y: la.tensordot(x, y, axes=2), (a, a[0])),
        ("linalg.trace", la.trace, (a,)), ("linalg.vecdot", la.vecdot, (a, a)),
        ("linalg.vector_norm", la.vector_norm, (a,)),
        ("linalg.vector_norm3", lambda x: la.vector_norm(x, ord=3, axis=(0, 2)), (a,)),
    ]
    yield from [
        ("fft.fftshift", ft.fftshift, (t,)), ("fft.ifftshift", ft.ifftshift, (t,)),
        ("fft.fftshift_axis", lambda x: ft.fftshift(x, axes=0), (t,)),
        ("fft.fftfreq", lambda x: x + ft.fftfreq(x.shape[-1], 0.25), (t,)),
        ("fft.rfftfreq", lambda x: x[..., :2] + ft.rfftfreq(x.shape[-1], 0.5), (t,)),
        ("fft.fft_axis0_odd", lambda x: ft.fft(x, axis=0), (t,)),
        ("fft.fft_pad6", lambda x: ft.fft(x, n=6), (a,)),
        ("fft.fft_cut3", lambda x: ft.fft(x, n=3), (a,)),
        ("fft.ifft_ortho", lambda x: ft.ifft(x, norm="ortho"), (t,)),
        ("fft.fft_forward", lambda x: ft.fft(x, norm="forward"), (a,)),
        ("fft.fft2_axes", lambda x: ft.fft2(x, axes=(0, 2)), (a,)),
        ("fft.fftn_s", lambda x: ft.fftn(x, s=(3, 5)), (a,)),
        ("fft.ifftn_axes1", lambda x: ft.ifftn(x, axes=(1,)), (a,)),
        ("fft.irfft_n7", lambda x: ft.irfft(x, n=7), (c,)),
        ("fft.irfft2_s", lambda x: ft.irfft2(x, s=(4, 5)), (c,)),
        ("fft.hfft_n5", lambda x: ft.hfft(x, n=5), (c,)),
        ("fft.ifft2_ortho", lambda x: ft.ifft2(x, norm="ortho"), (c,)),
        ("fft.fft_long", ft.fft, (_mat((3, 60), dt),)),
    ]
    if np.dtype(dt).kind == "f":
        yield from [
            ("fft.rfft_odd7", lambda x: ft.rfft(x, n=7), (a,)),
            ("fft.rfftn_s", lambda x: ft.rfftn(x, s=(3, 6)), (a,)),
            ("fft.ihfft_forward", lambda x: ft.ihfft(x, norm="forward"), (t,)),
            ("fft.rfft_axis0", lambda x: ft.rfft(x, axis=0), (t,)),
        ]


def _leaves(x):
    return [np.asarray(y) for y in xf.tree_util.tree_leaves(x)]


def _near(got, want):
    """The largest distance from a value of one set to the nearest of the other (eig's order
    is the Schur form's, which may differ)."""
    d = np.abs(got[..., :, None] - want[..., None, :])
    return max(d.min(-1).max(), d.min(-2).max()) if d.size else 0.0


def _reconstructs(name, args, got):
    """How far a factorisation whose factors are unique only up to phase (eig, eigh, svd)
    is from rebuilding its operand: a v - v w, v diag(w) v^H - a, u diag(s) vh - a."""
    a = args[0].astype(np.complex128)
    if name in ("linalg.eig", "linalg.eigh", "scipy.eigh"):
        w, v = got[:2]
        if "eigh" in name:
            gap = v * w[..., None, :] @ np.conj(np.swapaxes(v, -1, -2)) - a
        else:
            gap = a @ v - v * w[..., None, :]
        return np.abs(gap).max() / max(1.0, np.abs(a).max())
    u, s, vh = got[:3]
    k = s.shape[-1]
    back = (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]
    if name == "linalg.svd_wide":
        a = np.swapaxes(a, -1, -2)
    return np.abs(back - a).max() / max(1.0, np.abs(a).max())


_PHASE = ("linalg.eig", "linalg.eigh", "scipy.eigh", "linalg.svd", "linalg.svd_wide",
          "scipy.svd")


def _gap(name, args, got, want):
    """The largest gap against the CPU's values, scaled by their size; factors unique up to
    phase by their reconstruction, eigenvalues of eig as sets."""
    for g, w in zip(got, want):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"shape/dtype {g.shape}{g.dtype} vs {w.shape}{w.dtype}"
    if name in ("linalg.eig", "linalg.eigvals"):
        gap = _near(got[0], want[0])
        return max(gap, _reconstructs(name, args, got)) if name == "linalg.eig" else gap
    if name in ("scipy.schur", "scipy.rsf2csf"):      # not unique: Z T Z^H = A, T's values
        a = args[0].astype(np.complex128)
        t, z = got[:2]
        back = z @ t @ np.conj(np.swapaxes(z, -1, -2))
        return max(np.abs(back - a).max() / max(1.0, np.abs(a).max()),
                   _near(np.linalg.eigvals(t.astype(np.complex128)), np.linalg.eigvals(a)))
    if name == "scipy.eigh_tridiagonal":               # vectors up to sign
        return max(np.abs(got[0] - want[0]).max(), np.abs(np.abs(got[1]) - np.abs(want[1])).max())
    if name in _PHASE:
        values = [1] if "svd" in name else [0]
        gaps = [np.abs(got[i] - want[i]).max() / max(1.0, np.abs(want[i]).max())
                for i in values]
        return max(gaps + [_reconstructs(name, args, got)])
    return max([np.abs(g - w).max() / max(1.0, np.abs(w).max()) if g.size else 0.0
                for g, w in zip(got, want)] or [0.0])


def main(only=()):
    bad = 0
    for dt in ["float32", "float64", "complex64", "complex128"]:
        tol = 1e-3 if dt in ("float32", "complex64") else 1e-9
        for name, f, args in _cases(dt):
            if only and not any(o in name for o in only):
                continue
            try:
                want = _leaves(xf.jit(f, backend="cpu")(*args))
                got = _leaves(xf.jit(f, backend="cuda")(*args))
                gap = _gap(name, args, got, want)
                ok = not isinstance(gap, str) and gap <= tol
                print(f"{'ok  ' if ok else 'DIFF'} {dt:10s} {name:26s} {gap}", flush=True)
            except Exception as e:                       # noqa: BLE001 (a survey)
                ok = False
                msg = str(e).strip().splitlines()[0][:150] if str(e).strip() else ""
                print(f"RAISES {dt:8s} {name:26s} {type(e).__name__}: {msg}", flush=True)
                if "-v" in sys.argv:
                    traceback.print_exc()
            bad += not ok
    print(f"{bad} case(s) raise or differ")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main([a for a in sys.argv[1:] if a != "-v"]) else 0)
