"""CPU rules for the factorisation primitives (xforms/primitives/linalg/): each equation is
one call of a Numba function of xforms/kernels/runtime/linalg.py, spectral.py or schur.py
(LAPACK/BLAS inside) on views of its operands and outputs as batches of matrices (B, m, n).

    # c:f64[3,3] = cholesky b                           gp.py:12 (nll)
    la_cholesky(B.reshape((1, 3, 3)), C.reshape((1, 3, 3)), 1)

CUDA: cholesky, triangular_solve, lu and lu_pivots_to_permutation have rules below (cholesky
and lu through solver.py, which hands large matrices to cuSOLVER); qr, eigh, svd and eig
run through cuSOLVER (solver.py; without it qr, eigh and svd in jacobi.py's kernels,
eig in eig.py's); hessenberg, schur and sqrtm in schur.py's; the others raise a
LoweringError naming the primitive.

CUDA rules for the LU-family factorisations (xforms/primitives/linalg/factor.py): cholesky,
triangular_solve, lu and lu_pivots_to_permutation, so solve, inv, det, slogdet, cho_solve,
lu_solve and the Gaussian-process likelihood run under jit(backend="cuda"); and
cholesky_cotangent (reverse mode through a Cholesky, primitives/linalg/cholesky_ad.py).

Factorisations run one thread block per matrix (a grid-stride loop over the batch), the
block's threads sharing each elimination step's updates, with a barrier between steps:

    cholesky  right-looking: step k takes sqrt of the pivot, scales column k, updates the
              trailing lower triangle; a pivot that is not > 0 (or NaN) makes the whole
              matrix NaN, as on the CPU.  Reads the lower triangle only; zeros above.
    lu        partial pivoting as LAPACK's getrf: the pivot is the first row of largest
              |re| + |im| in the column; a zero pivot leaves its column unscaled.

triangular_solve runs one thread per right-hand side (a column of b on the left side, a row
on the right), forward or backward substitution in place in the output.  All of them are
O(n) steps of barriers or O(n^2) per thread: right for the small and medium matrices of
batched models; on a GPU with cuSOLVER, matrices from vendor.SOLVER_MIN_N up go to the
library (solver.py, which calls cholesky_cuda and lu_cuda below that).

    # c:f64[3,3] = cholesky b, abridged:
    for _b in range(cuda.blockIdx.x, 1, cuda.gridDim.x):
        for _k in range(3):
            _d = C[_base + _k * 4].real
            ...
            cuda.syncthreads()
"""
import numpy as np

from ...codegen import BLAS_CODES as CODES  # LAPACK type of each dtype
from ...cpu.numba.emit import OP_RULES as CPU_RULES
from ...cuda.printer.emit import OP_RULES as CUDA_RULES, KernelBuilder
from ...cuda.printer.kernel_builder import cdiv
from xforms.primitives.linalg.cholesky_ad import cholesky_cotangent_p, cholesky_p
from xforms.primitives.linalg.factor import lu_p, lu_pivots_to_permutation_p, triangular_solve_p
from xforms.primitives.linalg.spectral import eig_p, eigh_p, qr_p, svd_p
from xforms.primitives.linalg.sqrtm import sqrtm_p
from xforms.primitives.linalg.schur import hessenberg_p, schur_p


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
    _call(em, "la_eigh", [_as3(em, a), _as3(em, v), _as2(em, w), str(bool(eqn.params["lower"])),
                          _code(eqn)])


def _svd(em, eqn):
    _alloc_all(em, eqn)
    a = eqn.invars[0]
    s = eqn.outvars[0]
    if eqn.params["compute_uv"]:
        u, vt = eqn.outvars[1:]
        _call(em, "la_svd", [_as3(em, a), _as2(em, s), _as3(em, u), _as3(em, vt),
                             str(bool(eqn.params["full_matrices"])), "True", _code(eqn)])
        return
    m, n = a.aval.shape[-2:]
    k = min(m, n)
    b = _prod(a.aval.shape[:-2])
    dt = f"np.{np.dtype(a.aval.dtype).name}"
    u, vt = em.fresh("U"), em.fresh("VT")     # the values alone: factors are scratch
    em.line(f"{u} = np.empty(({b}, {m}, {k}), {dt})")
    em.line(f"{vt} = np.empty(({b}, {k}, {n}), {dt})")
    _call(em, "la_svd", [_as3(em, a), _as2(em, s), u, vt, "False", "False", _code(eqn)])


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


CPU_RULES[sqrtm_p] = _sqrtm


def _schur_family(fn):
    """schur and hessenberg: (a) -> (n, n) factor and a second (n, n) factor or vector, by
    `fn` of runtime/schur.py."""
    def rule(em, eqn):
        _alloc_all(em, eqn)
        (a,), (x, y) = eqn.invars, eqn.outvars
        code = str(CODES[np.dtype(x.aval.dtype)])
        second = _as3(em, y) if len(y.aval.shape) == len(x.aval.shape) else _as2(em, y)
        _call(em, fn, [_as3(em, a), _as3(em, x), second, code])
    return rule


CPU_RULES[schur_p] = _schur_family("la_schur")
CPU_RULES[hessenberg_p] = _schur_family("la_hessenberg")
CPU_RULES[eig_p] = _eig
CPU_RULES[lu_pivots_to_permutation_p] = _pivots_to_permutation
CPU_RULES[cholesky_p] = _cholesky
CPU_RULES[triangular_solve_p] = _triangular_solve
CPU_RULES[lu_p] = _lu
CPU_RULES[qr_p] = _qr
CPU_RULES[eigh_p] = _eigh
CPU_RULES[svd_p] = _svd


def _cholesky_cotangent(em, eqn):
    _alloc_all(em, eqn)
    (L, g), (out,) = eqn.invars, eqn.outvars
    _call(em, "la_cholesky_rev", [_as3(em, L), _as3(em, g), _as3(em, out), _code(eqn)])


CPU_RULES[cholesky_cotangent_p] = _cholesky_cotangent


# ---- CUDA ------------------------------------------------------------------------------------

_THREADS = 128


def _batch(shape, k=2):
    return int(np.prod(shape[:-k], dtype=np.int64))


def _conj(dt, x):
    return f"{x}.conjugate()" if np.dtype(dt).kind == "c" else x


def _block_kernel(em, eqn, what, body, batch):
    """A kernel of one block per matrix: `body(kb, names)` writes the per-matrix code inside
    the batch loop (`_b` the matrix, `_tid`/`_nt` the thread and block size)."""
    kb = KernelBuilder(em, what)
    kb.comment(eqn)
    names = [kb.arr(v) for v in list(eqn.invars) + list(eqn.outvars)]
    kb.line("_tid = cuda.threadIdx.x")
    kb.line("_nt = cuda.blockDim.x")
    with kb.block(f"for _b in range(cuda.blockIdx.x, {batch}, cuda.gridDim.x):"):
        body(kb, names)
        kb.line("cuda.syncthreads()")
    kb.launch(max(1, min(batch, em.spec.max_blocks)), _THREADS)


def nan_literal(dtype):
    """The NaN a failed factorisation leaves in an array of `dtype` (nan+nanj if complex)."""
    return "complex(math.nan, math.nan)" if np.dtype(dtype).kind == "c" else "math.nan"


def cholesky_cuda(em, eqn):
    em.check_dtypes(eqn)
    a, out = eqn.invars[0], eqn.outvars[0]
    dt = a.aval.dtype
    n = a.aval.shape[-1]
    em.alloc(out)
    batch = _batch(a.aval.shape)
    if batch * n == 0:
        return

    def body(kb, names):
        A, C = names
        kb.line(f"_base = _b * {n * n}")
        with kb.block(f"for _t in range(_tid, {n * n}, _nt):"):
            kb.line(f"{C}[_base + _t] = {A}[_base + _t] if _t % {n} <= _t // {n} else 0")
        kb.line("cuda.syncthreads()")
        kb.line("_ok = True")
        with kb.block(f"for _k in range({n}):"):
            kb.line(f"_d = {C}[_base + _k * {n + 1}].real")
            kb.line("cuda.syncthreads()            # every thread has read the pivot")
            with kb.block("if not _d > 0:"):
                kb.line("_ok = False")
                kb.line("break")
            kb.line("_s = math.sqrt(_d)")
            with kb.block(f"for _i in range(_k + 1 + _tid, {n}, _nt):"):
                kb.line(f"{C}[_base + _i * {n} + _k] /= _s")
            with kb.block("if _tid == 0:"):
                kb.line(f"{C}[_base + _k * {n + 1}] = _s")
            kb.line("cuda.syncthreads()")
            kb.line(f"_m = {n - 1} - _k")
            with kb.block("for _t in range(_tid, _m * _m, _nt):"):
                kb.line("_i = _k + 1 + _t // _m")
                kb.line("_j = _k + 1 + _t % _m")
                with kb.block("if _j <= _i:"):
                    kb.line(f"{C}[_base + _i * {n} + _j] -= {C}[_base + _i * {n} + _k] * "
                            f"{_conj(dt, f'{C}[_base + _j * {n} + _k]')}")
            kb.line("cuda.syncthreads()")
        with kb.block("if not _ok:"):       # JAX's NaN in the lower triangle, zeros above
            with kb.block(f"for _t in range(_tid, {n * n}, _nt):"):
                with kb.block(f"if _t % {n} <= _t // {n}:"):
                    kb.line(f"{C}[_base + _t] = {nan_literal(dt)}")
    _block_kernel(em, eqn, f"cholesky of {a.aval.str_short()} (one block per matrix)", body,
                  batch)


def lu_cuda(em, eqn):
    em.check_dtypes(eqn)
    a = eqn.invars[0]
    n = a.aval.shape[-1]
    for v in eqn.outvars:
        em.alloc(v)
    batch = _batch(a.aval.shape)
    if batch * n == 0:
        return
    mag = (lambda x: f"(abs({x}.real) + abs({x}.imag))") if np.dtype(a.aval.dtype).kind == "c" \
        else (lambda x: f"abs({x})")

    def body(kb, names):
        A, LU, P, Q = names
        kb.line(f"_base = _b * {n * n}")
        kb.line(f"_pb = _b * {n}")
        with kb.block(f"for _t in range(_tid, {n * n}, _nt):"):
            kb.line(f"{LU}[_base + _t] = {A}[_base + _t]")
        kb.line("cuda.syncthreads()")
        with kb.block(f"for _k in range({n}):"):
            with kb.block("if _tid == 0:                 # the pivot: first largest"):
                kb.line("_p = _k")
                kb.line(f"_best = {mag(f'{LU}[_base + _k * {n + 1}]')}")
                with kb.block(f"for _i in range(_k + 1, {n}):"):
                    kb.line(f"_v = {mag(f'{LU}[_base + _i * {n} + _k]')}")
                    with kb.block("if _v > _best:"):
                        kb.line("_best = _v")
                        kb.line("_p = _i")
                kb.line(f"{P}[_pb + _k] = _p")
            kb.line("cuda.syncthreads()")
            kb.line(f"_p = {P}[_pb + _k]")
            with kb.block("if _p != _k:"):
                with kb.block(f"for _j in range(_tid, {n}, _nt):"):
                    kb.swap(f"{LU}[_base + _k * {n} + _j]", f"{LU}[_base + _p * {n} + _j]", "_v")
            kb.line("cuda.syncthreads()")
            kb.line(f"_d = {LU}[_base + _k * {n + 1}]")
            with kb.block("if _d != 0:"):
                with kb.block(f"for _i in range(_k + 1 + _tid, {n}, _nt):"):
                    kb.line(f"{LU}[_base + _i * {n} + _k] /= _d")
            kb.line("cuda.syncthreads()")
            kb.line(f"_m = {n - 1} - _k")
            with kb.block("for _t in range(_tid, _m * _m, _nt):"):
                kb.line("_i = _k + 1 + _t // _m")
                kb.line("_j = _k + 1 + _t % _m")
                kb.line(f"{LU}[_base + _i * {n} + _j] -= {LU}[_base + _i * {n} + _k] * "
                        f"{LU}[_base + _k * {n} + _j]")
            kb.line("cuda.syncthreads()")
        with kb.block("if _tid == 0:                     # the permutation of the swaps"):
            perm_lines(kb, P, Q, "_pb", n, n, n)
    _block_kernel(em, eqn, f"lu of {a.aval.str_short()} (one block per matrix)", body, batch)


def perm_lines(kb, P, Q, base, k, n, stride_p):
    """Q[base + :n] = the permutation of the row interchanges P[...: k] (clamped)."""
    pb = base if stride_p == n else f"_b * {stride_p}"
    with kb.block(f"for _r in range({n}):"):
        kb.line(f"{Q}[{base} + _r] = _r")
    with kb.block(f"for _r in range({k}):"):
        kb.line(f"_p = min(max({P}[{pb} + _r], 0), {n - 1})")
        kb.swap(f"{Q}[{base} + _r]", f"{Q}[{base} + _p]", "_v")


def _pivots_to_permutation_cuda(em, eqn):
    em.check_dtypes(eqn)
    piv, out = eqn.invars[0], eqn.outvars[0]
    k, n = piv.aval.shape[-1], out.aval.shape[-1]
    em.alloc(out)
    batch = _batch(out.aval.shape, 1)
    if batch * n == 0:
        return
    kb = KernelBuilder(em, f"lu_pivots_to_permutation of {piv.aval.str_short()}")
    kb.comment(eqn)
    P, Q = kb.arr(piv), kb.arr(out)
    with kb.block(f"for _b in range(cuda.grid(1), {batch}, cuda.gridsize(1)):"):
        kb.line(f"_qb = _b * {n}")
        perm_lines(kb, P, Q, "_qb", k, n, k)
    T = min(em.spec.block, 64)
    kb.launch(max(1, min(cdiv(batch, T), em.spec.max_blocks)), T)


def _triangular_solve_cuda(em, eqn):
    """op(a) x = b (left) or x op(a) = b (right), one thread per right-hand side vector."""
    em.check_dtypes(eqn)
    a, b = eqn.invars
    out = eqn.outvars[0]
    p = eqn.params
    m = a.aval.shape[-1]
    rows, cols = b.aval.shape[-2:]
    em.alloc(out)
    batch = _batch(b.aval.shape)
    if batch * rows * cols == 0:
        return
    left, T, C = p["left_side"], p["transpose_a"], p["conjugate_a"]
    # S: the matrix of the substitution; S[i, j] reads a[j, i] when op and side transpose once
    swap = T != (not left)
    lower = p["lower"] != swap
    nvec = cols if left else rows
    elem = (lambda i: f"_ob + {i} * {cols} + _v") if left else (lambda i: f"_ob + _v * {cols} + {i}")
    dt = a.aval.dtype
    kb = KernelBuilder(em, f"triangular_solve of {a.aval.str_short()} and {b.aval.str_short()} "
                           "(one thread per right-hand side)")
    kb.comment(eqn)
    Ab, Bb, O = kb.arr(a), kb.arr(b), kb.arr(out)

    def S(i, j):
        r, c = (j, i) if swap else (i, j)
        x = f"{Ab}[_ab + {r} * {m} + {c}]"
        return _conj(dt, x) if C else x
    with kb.block(f"for _t in range(cuda.grid(1), {batch * nvec}, cuda.gridsize(1)):"):
        kb.line(f"_mb = _t // {nvec}")
        kb.line(f"_v = _t % {nvec}")
        kb.line(f"_ab = _mb * {m * m}")
        kb.line(f"_ob = _mb * {rows * cols}")
        order = f"range({m})" if lower else f"range({m - 1}, -1, -1)"
        with kb.block(f"for _i in {order}:"):
            kb.line(f"_acc = {Bb}[{elem('_i')}]")
            inner = "range(_i)" if lower else f"range(_i + 1, {m})"
            with kb.block(f"for _j in {inner}:"):
                kb.line(f"_acc -= {S('_i', '_j')} * {O}[{elem('_j')}]")
            kb.line(f"{O}[{elem('_i')}] = _acc" if p["unit_diagonal"]
                    else f"{O}[{elem('_i')}] = _acc / {S('_i', '_i')}")
    TB = em.spec.block
    kb.launch(max(1, min(cdiv(batch * nvec, TB), em.spec.max_blocks)), TB)


def _cholesky_cotangent_cuda(em, eqn):
    """Reverse of the Cholesky, column by column from the last (Murray's level-2 algorithm,
    xforms/primitives/linalg/cholesky_ad.py): per column a pivot adjoint (thread 0), then
    the column, its row and the block left of it below, one barrier apart."""
    em.check_dtypes(eqn)
    (l, g), out = eqn.invars, eqn.outvars[0]
    dt = g.aval.dtype
    n = g.aval.shape[-1]
    em.alloc(out)
    batch = _batch(g.aval.shape)
    if batch * n == 0:
        return
    cx = np.dtype(dt).kind == "c"

    def body(kb, names):
        L, CT, G = names
        at = (lambda A, i, j: f"{A}[_base + ({i}) * {n} + {j}]")
        kb.line(f"_base = _b * {n * n}")
        with kb.block(f"for _t in range(_tid, {n * n}, _nt):"):
            src = _conj(dt, f"{CT}[_base + _t]")      # the conjugate: see the end
            kb.line(f"{G}[_base + _t] = {src} if _t % {n} <= _t // {n} else 0")
        kb.line("cuda.syncthreads()")
        with kb.block(f"for _k in range({n - 1}, -1, -1):"):
            kb.line(f"_d = {at(L, '_k', '_k')}.real")
            with kb.block("if _tid == 0:"):
                kb.line("_s = 0.0")
                with kb.block(f"for _i in range(_k + 1, {n}):"):
                    kb.line(f"_s += ({_conj(dt, at(L, '_i', '_k'))} * {at(G, '_i', '_k')}).real")
                kb.line(f"{at(G, '_k', '_k')} = ({at(G, '_k', '_k')}.real - _s / _d) / _d")
            kb.line("cuda.syncthreads()")
            kb.line(f"_db = {at(G, '_k', '_k')}.real")
            with kb.block(f"for _i in range(_k + 1 + _tid, {n}, _nt):"):
                kb.line(f"{at(G, '_i', '_k')} /= _d")
            kb.line("cuda.syncthreads()")
            with kb.block("for _c in range(_tid, _k, _nt):       # the row left of the pivot"):
                kb.line(f"_acc = {at(G, '_k', '_c')} - _db * {at(L, '_k', '_c')}")
                with kb.block(f"for _i in range(_k + 1, {n}):"):
                    kb.line(f"_acc -= {_conj(dt, at(G, '_i', '_k'))} * {at(L, '_i', '_c')}")
                kb.line(f"{at(G, '_k', '_c')} = _acc")
            with kb.block(f"for _t in range(_tid, ({n - 1} - _k) * _k, _nt):  # the block below"):
                kb.line("_i = _k + 1 + _t // _k")
                kb.line("_c = _t % _k")
                kb.line(f"{at(G, '_i', '_c')} -= {at(G, '_i', '_k')} * {at(L, '_k', '_c')}")
            kb.line("cuda.syncthreads()")
            with kb.block("if _tid == 0:"):
                kb.line(f"{at(G, '_k', '_k')} = 0.5 * _db")
            kb.line("cuda.syncthreads()")
        if cx:                               # JAX's transpose: the conjugate of the gradient
            with kb.block(f"for _t in range(_tid, {n * n}, _nt):"):
                kb.line(f"{G}[_base + _t] = {G}[_base + _t].conjugate()")
    _block_kernel(em, eqn, f"cholesky_cotangent of {g.aval.str_short()} (one block per "
                           "matrix)", body, batch)


CUDA_RULES[cholesky_cotangent_p] = _cholesky_cotangent_cuda
CUDA_RULES[lu_pivots_to_permutation_p] = _pivots_to_permutation_cuda
CUDA_RULES[triangular_solve_p] = _triangular_solve_cuda
