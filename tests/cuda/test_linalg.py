"""The LU-family factorisations on the CUDA simulator (xforms/kernels/ops/linalg.py):
cholesky, triangular_solve, lu and what is built on them, against the CPU's values; eigh and
the other spectral factorisations raise a LoweringError naming themselves here (the simulator:
they run through cuSOLVER on a GPU, tests/cuda/test_solver_model.py)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl
from xforms import lax
from xforms.errors import LoweringError

rng = np.random.default_rng(11)


def _spd(n, batch=(), dtype=np.float64):
    m = rng.standard_normal(batch + (n, n))
    if np.dtype(dtype).kind == "c":
        m = m + 1j * rng.standard_normal(m.shape)
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)).astype(dtype)


def _agree(f, *args, rtol=1e-10):
    got, want = xf.jit(f, backend="cuda")(*args), f(*args)
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
def test_cholesky_and_solves(dtype):
    a = _spd(5, (2,), dtype)
    b = rng.standard_normal((2, 5, 3)).astype(dtype)
    tol = 2e-4 if dtype == "float32" else 1e-10
    _agree(lambda a, b: (xnp.linalg.cholesky(a), xsl.cho_solve(xsl.cho_factor(a), b),
                         xnp.linalg.solve(a, b), xnp.linalg.inv(a), xnp.linalg.det(a),
                         xnp.linalg.slogdet(a)), a, b, rtol=tol)


def test_triangular_solve_every_side_and_op():
    a = np.tril(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    a = a + 1j * np.tril(rng.standard_normal((4, 4)), -1)
    bl, br = rng.standard_normal((4, 2)) + 0j, rng.standard_normal((3, 4)) + 0j
    cases = [(left, lower, tr, cj, unit) for left in (True, False) for lower in (True, False)
             for tr in (False, True) for cj in (False, True) for unit in (False, True)]

    def f(a, bl, br):
        return [lax.linalg.triangular_solve(a if lower else a.T, bl if left else br,
                                            left_side=left, lower=lower, transpose_a=tr,
                                            conjugate_a=cj, unit_diagonal=unit)
                for left, lower, tr, cj, unit in cases]
    _agree(f, a, bl, br)


def test_lu_pivots_singular_and_not_positive_definite():
    a = rng.standard_normal((3, 6, 6))
    a[1, :, 2] = 0.0                         # a zero column: a zero pivot, left unscaled
    bad = -np.eye(3)                         # cholesky fails: NaN, as on the CPU
    _agree(lambda a, bad: (lax.linalg.lu(a), xsl.lu_factor(a[0]), xnp.linalg.cholesky(bad),
                           lax.linalg.lu_pivots_to_permutation(np.array([[2, 2, 1]], np.int32),
                                                               5)), a, bad)


def test_gaussian_process_nll_and_its_gradient():
    x = np.linspace(0.0, 1.0, 7)

    def nll(log_ls, y):
        k = xnp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / xnp.exp(2 * log_ls)) + 0.1 * xnp.eye(7)
        c = xnp.linalg.cholesky(k)
        alpha = xsl.cho_solve((c, True), y)
        return 0.5 * y @ alpha + xnp.sum(xnp.log(xnp.diag(c)))
    y = np.sin(3 * x)
    _agree(xf.value_and_grad(nll), 0.1, y)


def test_spectral_factorisations_name_themselves():
    with pytest.raises(LoweringError, match="eigh"):
        xf.jit(xnp.linalg.eigh, backend="cuda")(np.eye(2))
