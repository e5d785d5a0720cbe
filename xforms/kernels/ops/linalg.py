"""CPU rules for the factorisation primitives (xforms/primitives/linalg*.py): each equation is
one call of a Numba function of xforms/kernels/runtime/linalg.py (LAPACK/BLAS inside) on views of
its operands and outputs as batches of matrices (B, m, n).

    # c:f64[3,3] = cholesky b                           gp.py:12 (nll)
    la_cholesky(B.reshape((1, 3, 3)), C.reshape((1, 3, 3)), 1)

CUDA: cholesky, triangular_solve, lu and lu_pivots_to_permutation have rules in
xforms/kernels/cuda/lower_linalg_cuda.py; the others raise a LoweringError naming the primitive.
"""
import numpy as np

from ..codegen import BLAS_CODES as CODES  # LAPACK type of each dtype
from ..cpu.emit import OP_RULES


def _prod(xs):
    return int(np.prod(xs, dtype=np.int64))


def _as3(em, a):
    """`A.reshape((B, m, n))`: the array of atom `a` as a batch of matrices."""
    sh = tuple(a.aval.shape)
    b, m, n = _prod(sh[:-2]), sh[-2], sh[-1]
    return f"{em.atom(a)}.reshape(({b}, {m}, {n}))"


def _as2(em, a):
    sh = tuple(a.aval.shape)
    return f"{em.atom(a)}.reshape(({_prod(sh[:-1])}, {sh[-1]}))"


def _call(em, fn, args):
    em.runtime_used.add(fn)
    em.line(f"{fn}({', '.join(args)})")


def _alloc_all(em, eqn):
    for v in eqn.outvars:
        em.alloc(v)


def _code(eqn):
    return str(CODES[np.dtype(eqn.invars[0].aval.dtype)])


def _cholesky(em, eqn):
    _alloc_all(em, eqn)
    (a,), (out,) = eqn.invars, eqn.outvars
    _call(em, "la_cholesky", [_as3(em, a), _as3(em, out), _code(eqn)])


def _triangular_solve(em, eqn):
    _alloc_all(em, eqn)
    (a, b), (out,) = eqn.invars, eqn.outvars
    p = eqn.params
    flags = [str(bool(p[k])) for k in ("left_side", "lower", "transpose_a", "conjugate_a",
                                       "unit_diagonal")]
    _call(em, "la_trsm", [_as3(em, a), _as3(em, b), _as3(em, out)] + flags + [_code(eqn)])


def _lu(em, eqn):
    _alloc_all(em, eqn)
    (a,), (lu, piv, perm) = eqn.invars, eqn.outvars
    _call(em, "la_lu", [_as3(em, a), _as3(em, lu), _as2(em, piv), _as2(em, perm), _code(eqn)])


def _qr(em, eqn):
    _alloc_all(em, eqn)
    (a,), (q, r) = eqn.invars, eqn.outvars
    em.runtime_used.add("la_qr")
    em.line(f"la_qr({_as3(em, a)}, {_as3(em, q)}, {_as3(em, r)}, "
            f"{bool(eqn.params['full_matrices'])}, {_code(eqn)})")


def _eigh(em, eqn):
    _alloc_all(em, eqn)
    (a,), (v, w) = eqn.invars, eqn.outvars
    _call(em, "la_eigh", [_as3(em, a), _as3(em, v), _as2(em, w), str(bool(eqn.params["lower"]))])


def _svd(em, eqn):
    _alloc_all(em, eqn)
    a = eqn.invars[0]
    s = eqn.outvars[0]
    if eqn.params["compute_uv"]:
        u, vt = eqn.outvars[1:]
        _call(em, "la_svd", [_as3(em, a), _as2(em, s), _as3(em, u), _as3(em, vt),
                             str(bool(eqn.params["full_matrices"])), "True"])
        return
    m, n = a.aval.shape[-2:]
    k = min(m, n)
    b = _prod(a.aval.shape[:-2])
    dt = f"np.{np.dtype(a.aval.dtype).name}"
    u, vt = em.fresh("U"), em.fresh("VT")     # the values alone: factors are scratch
    em.line(f"{u} = np.empty(({b}, {m}, {k}), {dt})")
    em.line(f"{vt} = np.empty(({b}, {k}, {n}), {dt})")
    _call(em, "la_svd", [_as3(em, a), _as2(em, s), u, vt, "False", "True"])


def _pivots_to_permutation(em, eqn):
    _alloc_all(em, eqn)
    (piv,), (perm,) = eqn.invars, eqn.outvars
    _call(em, "la_pivots_to_perm", [_as2(em, piv), _as2(em, perm)])


def _eig(em, eqn):
    _alloc_all(em, eqn)
    a = eqn.invars[0]
    w = eqn.outvars[0]
    if eqn.params["vectors"]:
        _call(em, "la_eig", [_as3(em, a), _as2(em, w), _as3(em, eqn.outvars[1]), "True",
                             _code(eqn)])
        return
    v = em.fresh("V")       # only the values: the vectors' array is scratch
    em.line(f"{v} = np.empty((1, 1, 1), np.{np.dtype(w.aval.dtype).name})")
    _call(em, "la_eig", [_as3(em, a), _as2(em, w), v, "False", _code(eqn)])


def _sqrtm(em, eqn):
    _alloc_all(em, eqn)
    (a,), (out,) = eqn.invars, eqn.outvars
    code = str(CODES[np.dtype(out.aval.dtype)])
    real = str(np.dtype(a.aval.dtype).kind == "f")
    _call(em, "la_sqrtm", [_as3(em, a), _as3(em, out), real, code])


OP_RULES["sqrtm"] = _sqrtm
OP_RULES["eig"] = _eig
OP_RULES["lu_pivots_to_permutation"] = _pivots_to_permutation
OP_RULES["cholesky"] = _cholesky
OP_RULES["triangular_solve"] = _triangular_solve
OP_RULES["lu"] = _lu
OP_RULES["qr"] = _qr
OP_RULES["eigh"] = _eigh
OP_RULES["svd"] = _svd


def _cholesky_cotangent(em, eqn):
    _alloc_all(em, eqn)
    (L, g), (out,) = eqn.invars, eqn.outvars
    _call(em, "la_cholesky_rev", [_as3(em, L), _as3(em, g), _as3(em, out), _code(eqn)])


OP_RULES["cholesky_cotangent"] = _cholesky_cotangent
