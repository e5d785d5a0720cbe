"""`xforms.lax.linalg` against `jax.lax.linalg` (live, or JAX's recorded values without jax):
names, keyword arguments and output order; derivatives by check_grads; jit and vmap."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax
from xforms.test_util import check_grads

from jax_reference import call   # live JAX, or its recorded values

L = lax.linalg
rng = np.random.default_rng(7)
A = rng.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = rng.standard_normal((4, 2))
DL, D, DU = np.r_[0.0, 1.0, -2.0, 0.5], np.r_[5.0, 6.0, 7.0, 8.0], np.r_[1.0, 0.3, 1.0, 0.0]

CASES = {   # name: (args, kwargs)
    "cholesky": ((SPD,), {}),
    "lu": ((A,), {}),
    "qr": ((A[:, :3],), {"full_matrices": False}),
    "eigh": ((SPD,), {}),
    "svd": ((A[:3],), {"full_matrices": False}),
    "triangular_solve": ((np.tril(SPD), B), {"left_side": True, "lower": True,
                                             "transpose_a": True}),
    "lu_pivots_to_permutation": ((np.array([2, 2, 3], np.int32), 5), {}),
    "tridiagonal_solve": ((DL, D, DU, B), {}),
    "symmetric_product": ((A, SPD), {"alpha": 2.0, "beta": 0.5}),
    "cholesky_update": ((np.linalg.cholesky(SPD).T, np.arange(4.0)), {}),
    "householder_product": ((A, np.array([1.2, 0.5, 0.3])), {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_output_order_match_jax(name):
    args, kwargs = CASES[name]
    got = getattr(L, name)(*args, **kwargs)
    want = call(f"lax.linalg.{name}", *args, **kwargs)
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)


def test_eig_left_and_right_vectors():
    w, vl, vr = L.eig(A)
    w, vl, vr = (np.asarray(v) for v in (w, vl, vr))
    np.testing.assert_allclose(A @ vr, vr * w, atol=1e-12)
    np.testing.assert_allclose(vl.conj().T @ A, w[:, None] * vl.conj().T, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=0), 1.0, rtol=1e-13)
    top = vl[np.argmax(np.abs(vl), axis=0), np.arange(4)]
    np.testing.assert_allclose(top.imag, 0.0, atol=1e-14)     # largest component real
    assert len(L.eig(A, compute_left_eigenvectors=False)) == 2
    assert len(L.eig(A, compute_left_eigenvectors=False, compute_right_eigenvectors=False)) == 1


def test_derivatives():
    check_grads(lambda d, b: L.tridiagonal_solve(DL, d, DU, b), (D, B), order=2)
    check_grads(lambda w: L.cholesky_update(np.linalg.cholesky(SPD).T, w), (np.arange(4.0),),
                order=1)
    check_grads(lambda a: L.householder_product(a, np.array([1.2, 0.5])), (A,), order=1)
    check_grads(lambda a: L.cholesky(a @ a.T + 4 * np.eye(4)), (A,), order=1)


def test_jit_and_vmap():
    f = lambda d, b: L.tridiagonal_solve(DL, d, DU, b)          # noqa: E731
    np.testing.assert_allclose(xf.jit(f)(D, B), f(D, B), rtol=1e-13)
    ds, bs = D + rng.random((3, 4)), rng.standard_normal((3, 4, 2))
    np.testing.assert_allclose(xf.vmap(f)(ds, bs), np.stack([f(d, b) for d, b in zip(ds, bs)]),
                               rtol=1e-13)
    v, w = xf.jit(L.eigh)(SPD)
    np.testing.assert_allclose(np.asarray(v) * np.asarray(w) @ np.asarray(v).T, SPD, atol=1e-12)


def test_what_xforms_lacks_names_itself():
    for name in ("schur", "hessenberg", "tridiagonal", "qdwh"):
        with pytest.raises(NotImplementedError, match=name):
            getattr(L, name)(A)
    with pytest.raises(NotImplementedError, match="pivoting"):
        L.qr(A, pivoting=True)
