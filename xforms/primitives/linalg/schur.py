"""schur and hessenberg: the Schur form A = Z T Z^H and the Hessenberg reduction A = Q H Q^H
of square matrices (..., n, n), as jax.lax.linalg's schur and hessenberg (CPU only in JAX too).

The fast tier runs LAPACK through SciPy: ?gees for schur (output "real": the real Schur form,
quasi-triangular with standardised 2x2 blocks, of a real matrix; output "complex", or any
complex input: the complex form of the matrix taken as complex, as JAX does, not SciPy's
rsf2csf of the real form), ?gehrd for hessenberg, whose output is LAPACK's packed form as
JAX's: (a, taus), H in and above the first subdiagonal of `a`, the Householder vectors that
make Q below it (scipy.linalg.hessenberg forms H and Q from them, as JAX's does).
The compiled CPU tier calls the same LAPACK routines from Numba (xforms/kernels/runtime/
schur.py), so both tiers give the same factors.  CUDA computes them with kernels of its own
(xforms/kernels/ops/linalg/schur.py: hessenberg as ?gehd2, schur by ?lahqr's QR steps: a valid
Schur form, its eigenvalues possibly in another order than ?gees's).
Neither is differentiable, as in JAX.

    >>> t, z = schur(a, output="real")        # a == z @ t @ z.T
    >>> packed, taus = hessenberg(a)          # taus: (..., n - 1)
"""
import numpy as np

from ...core.avals import ShapedArray
from ...core.trace import abstract_eval_rules, impl_rules
from ...core.facts import declare
from ...core.registry import primitive
from ...transforms.jvp import jvp_rules
from .factor import def_batched_vmap
from .batched import check_matrix, nan_like

schur_p = declare(primitive("schur", multiple_results=True), eager_work="matrix")
hessenberg_p = declare(primitive("hessenberg", multiple_results=True), eager_work="matrix")


def _complex_dtype(dt):
    return np.dtype(np.complex64) if np.dtype(dt) in (np.float32, np.complex64) else \
        np.dtype(np.complex128)


def _schur_dtype(dt, output):
    return np.dtype(dt) if output == "real" and np.dtype(dt).kind == "f" else _complex_dtype(dt)


def _schur_aval(a, *, output):
    check_matrix("schur", a)
    out = ShapedArray(a.shape, _schur_dtype(a.dtype, output))
    return [out, out]


def _hessenberg_aval(a):
    check_matrix("hessenberg", a)
    n = a.shape[-1]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (max(n - 1, 0),), a.dtype)]


def _per_matrix(a, outs, fn):
    """(fn(x)[0], fn(x)[1]) stacked over the leading dims of a into the two arrays `outs`;
    LAPACK sees non-finite matrices too, as in JAX; NaN where it fails (fn gives None)."""
    a = np.asarray(a)
    for idx in np.ndindex(a.shape[:-2]):
        x = a[idx]
        res = fn(x) if x.shape[-1] else None
        for out, r in zip(outs, res or [nan_like(out[idx]) for out in outs]):
            out[idx] = r
    return list(outs)


def _gees(x, output):
    """scipy.linalg.schur of one matrix, None where ?gees fails."""
    import scipy.linalg as sl
    try:
        return sl.schur(x, output=output, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None


def _schur_impl(a, *, output):
    dt = _schur_dtype(np.asarray(a).dtype, output)
    outs = [np.empty(np.shape(a), dt) for _ in range(2)]
    # the complex form of a real matrix by complex ?gees (JAX's), not SciPy's rsf2csf
    return _per_matrix(a, outs, lambda x: _gees(x.astype(dt), output))


def _gehrd(x):
    """LAPACK ?gehrd of one matrix on the whole range (ilo = 1, ihi = n): (packed, taus)."""
    from scipy.linalg import lapack
    n = x.shape[-1]
    gehrd, lwork = lapack.get_lapack_funcs(("gehrd", "gehrd_lwork"), (x,))
    packed, taus, info = gehrd(x, lo=0, hi=n - 1, lwork=int(lwork(n, lo=0, hi=n - 1)[0].real))
    return (packed, taus) if info == 0 else None


def _hessenberg_impl(a):
    outs = [np.empty(v.shape, v.dtype) for v in _hessenberg_aval(ShapedArray(np.shape(a),
                                                                             np.asarray(a).dtype))]
    return _per_matrix(a, outs, _gehrd)


def schur(a, output="real"):
    """(T, Z) with a = Z T Z^H; output "real" or "complex"."""
    return schur_p.bind(a, output=output)


def hessenberg(a):
    """(packed, taus): LAPACK's ?gehrd form of a = Q H Q^H (H on and above the first
    subdiagonal of `packed`, Q = H_0 ... H_{n-2} from the reflectors below it and taus)."""
    return hessenberg_p.bind(a)


def _no_derivative(name):
    def rule(primals, tangents, **params):
        raise NotImplementedError(f"{name}: the {name} decomposition is not differentiable "
                                  f"(as in JAX); differentiate a function of the matrix "
                                  f"that does not go through {name} (e.g. eigvals, expm)")
    return rule


abstract_eval_rules[schur_p] = _schur_aval
impl_rules[schur_p] = _schur_impl
jvp_rules[schur_p] = _no_derivative("schur")
def_batched_vmap(schur_p)
abstract_eval_rules[hessenberg_p] = _hessenberg_aval
impl_rules[hessenberg_p] = _hessenberg_impl
jvp_rules[hessenberg_p] = _no_derivative("hessenberg")
def_batched_vmap(hessenberg_p)
