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

C = A[:, ::-1].copy()
AC, TC = A[:, :3] + 1j * A[:, 1:], np.array([1.2, 0.5 + 0.1j, 0.3j])
CASES = {   # name or name/variant: (args, kwargs)
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
    "schur": ((A,), {}),
    "schur/complex": ((A + 1j * A.T,), {}),
    "schur/no_vectors": ((A,), {"compute_schur_vectors": False}),
    "hessenberg": ((A,), {}),
    "hessenberg/float32": ((A.astype(np.float32),), {}),
    "hessenberg/complex": ((A - 2j * A.T,), {}),
    "ormqr": ((A[:, :3], np.array([1.2, 0.5, 0.3]), C), {}),
    "ormqr/transpose": ((A[:, :3], np.array([1.2, 0.5, 0.3]), C), {"transpose": True}),
    "ormqr/right": ((A[:, :3], np.array([1.2, 0.5, 0.3]), A[:3]), {"left": False}),
    "ormqr/right_transpose": ((A[:, :3], np.array([1.2, 0.5, 0.3]), A[:3]),
                              {"left": False, "transpose": True}),
    "ormqr/complex_transpose": ((AC, TC, C - 1j * A), {"transpose": True}),
    "ormqr/complex_right": ((AC, TC, A[:2] + 1j), {"left": False, "transpose": True}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_output_order_match_jax(name):
    args, kwargs = CASES[name]
    name = name.split("/")[0]
    got = getattr(L, name)(*args, **kwargs)
    want = call(f"lax.linalg.{name}", *args, **kwargs)
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
    if name == "schur" and np.iscomplexobj(args[0]):
        # a complex Schur form is unique up to the order of T's diagonal and a phase per
        # column of Z, which LAPACK's rounding (OpenBLAS's kernels differ by CPU) may choose
        # otherwise than where JAX's values were recorded: its invariants, JAX's eigenvalues
        t, z = (np.asarray(v) for v in got)
        np.testing.assert_allclose(z @ t @ z.conj().T, args[0], atol=1e-12)
        np.testing.assert_allclose(z.conj().T @ z, np.eye(len(z)), atol=1e-12)
        assert np.all(np.tril(t, -1) == 0)
        key = lambda d: np.lexsort((d.imag.round(9), d.real.round(9)))
        d, dw = np.diag(t), np.diag(np.asarray(want[0]))
        np.testing.assert_allclose(d[key(d)], dw[key(dw)], rtol=1e-10, atol=1e-12)
        return
    for g, w in zip(got, want):      # float32: LAPACK's rounding by CPU (as above)
        tol = (1e-5, 1e-6) if np.asarray(g).dtype in (np.float32, np.complex64) else (1e-10, 1e-12)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol[0], atol=tol[1])


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


def test_schur_and_hessenberg_under_jit_and_vmap():
    """Both tiers and vmap give the eager factors; scipy's hessenberg is formed from lax's
    packed one (Q by householder_product), which reproduces A."""
    f = lambda x: (*L.schur(x), *L.hessenberg(x))             # noqa: E731
    ref = f(A)
    for g in (xf.jit(f), xf.jit(f, tiered=False)):
        for _ in range(2):                                    # fast tier, then compiled
            for x, y in zip(g(A), ref):
                np.testing.assert_allclose(np.asarray(x), np.asarray(y), atol=1e-13)
    batch = np.stack([A, 2 * A + 1])
    got = xf.vmap(f)(batch)
    for i in range(2):
        for x, y in zip(got, f(batch[i])):
            np.testing.assert_allclose(np.asarray(x)[i], np.asarray(y), atol=1e-13)
    h, q = xf.scipy.linalg.hessenberg(A, calc_q=True)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(h) @ np.asarray(q).T, A, atol=1e-13)
    packed, taus = L.hessenberg(xf.numpy.ones((1, 1)))
    assert packed.shape == (1, 1) and taus.shape == (0,)


def test_ormqr_applies_householder_product_and_checks_its_input():
    a, taus = A[:, :3], np.array([1.2, 0.5, 0.3])
    q = np.asarray(L.householder_product(np.c_[a, np.zeros(4)], np.r_[taus, 0.0]))
    np.testing.assert_allclose(L.ormqr(a, taus, C), q @ C, atol=1e-13)
    np.testing.assert_allclose(xf.jit(lambda c: L.ormqr(a, taus, c, left=False), tiered=False)
                               (A[:3]), A[:3] @ q, atol=1e-13)
    cs = np.stack([C, -C])
    np.testing.assert_allclose(xf.vmap(lambda c: L.ormqr(a, taus, c, transpose=True))(cs),
                               np.stack([q.T @ C, -q.T @ C]), atol=1e-13)
    check_grads(lambda a, c: L.ormqr(a, taus, c, transpose=True), (a, C), order=2)
    with pytest.raises(ValueError, match="ormqr.*rows"):
        L.ormqr(a, taus, C[:3])
    with pytest.raises(TypeError, match="ormqr.*one dtype"):
        L.ormqr(a, taus, C + 0j)


def test_schur_and_hessenberg_are_not_differentiable_and_do_not_sort():
    for name in ("schur", "hessenberg"):
        with pytest.raises(NotImplementedError, match="not differentiable"):
            xf.grad(lambda x: L.__dict__[name](x)[0].sum())(A)
    with pytest.raises(NotImplementedError, match="sort_eig_vals"):
        L.schur(A, sort_eig_vals=True)
    # as in JAX, select_callable matters only with sort_eig_vals
    t, z = L.schur(A, select_callable=lambda w: w > 0)
    np.testing.assert_array_equal(t, L.schur(A)[0])


def test_what_xforms_lacks_names_itself():
    for name in ("tridiagonal", "qdwh"):
        with pytest.raises(NotImplementedError, match=name):
            getattr(L, name)(A)
    with pytest.raises(NotImplementedError, match="pivoting"):
        L.qr(A, pivoting=True)
