"""Our CUDA kernels for hessenberg, schur and sqrtm (xforms/primitives/linalg/schur.py,
sqrtm.py): cuSOLVER has no Hessenberg reduction and no Schur form, so these run on every GPU
and on the simulator alike, one thread per matrix (a grid-stride loop over the batch), in
float64 / complex128 scratch whatever the dtype (a 32-bit result is rounded once, at the
end), O(n^3): right for the small matrices of batched models.

    hessenberg  LAPACK's ?gehd2, reflector by reflector (?larfg's beta = -sign(Re alpha)
                |(alpha, x)|, tau = (beta - alpha) / beta, v = x / (alpha - beta)), each
                applied from the right, then its adjoint from the left: the same packed
                output and taus as the CPU's ?gehrd, up to rounding.
    schur       the complex Schur form (output "complex", or a complex matrix): the
                Hessenberg reduction of the matrix taken as complex, Z formed from its
                reflectors, then single-shift QR sweeps (Wilkinson's shift of the trailing
                2 x 2 block; an exceptional shift every 10 iterations without a deflation)
                by Givens rotations applied to all of T and Z, deflating where a subdiagonal
                entry falls below eps of its neighbours.  A Schur form is not unique: T's
                diagonal (the eigenvalues) may come in another order than LAPACK's ?gees,
                with Z's columns to match; Z T Z^H = A holds to rounding.  The real form
                (output "real" of a real matrix: 2 x 2 blocks) is not computed here.
    sqrtm       that complex Schur form, then the upper triangular root R of T in place,
                column by column, and S = Z R Z^H: the same steps as the CPU's (a real
                matrix's eigenvalue that is negative up to rounding takes i sqrt(|lambda|)).
                The principal root is unique, so S agrees with the CPU's to rounding.

A matrix with a non-finite entry, or one whose QR sweeps do not converge in 30 n iterations
(LAPACK's budget), gives NaN outputs, as a LAPACK failure does on the CPU.

    # t:c128[3,3] z:c128[3,3] = schur[output=complex] a, abridged:
    for _b in range(cuda.grid(1), 1, cuda.gridsize(1)):
        ...
        for _it in range(90):            # QR sweeps, while a block of order > 1 is left
"""
import numpy as np

from ..cuda.emit_cuda import OP_RULES as CUDA_RULES, KernelBuilder
from ..cuda.kernel_builder import cdiv, unsupported
from xforms.primitives.linalg.schur import hessenberg_p, schur_p
from xforms.primitives.linalg.sqrtm import sqrtm_p

_F64, _C128 = np.dtype(np.float64), np.dtype(np.complex128)
_EPS = float(np.finfo(np.float64).eps)
_TINY = 1e-300                     # below this a subdiagonal entry is zero whatever its neighbours


def _batch(shape):
    return int(np.prod(shape[:-2], dtype=np.int64))


def _per_matrix(em, eqn, what, batch, body, temps):
    """A kernel of one thread per matrix `_b`: `body(kb, names, bufs)` writes its code;
    `temps`: (name, elements per matrix, dtype) scratch buffers (`bufs[name]`)."""
    kb = KernelBuilder(em, what)
    kb.comment(eqn)
    names = [kb.arr(v) for v in list(eqn.invars) + list(eqn.outvars)]
    bufs = {t: kb.buf(f"_T{t}", em.temp(max(batch * size, 1), dt), dt)
            for t, size, dt in temps}
    with kb.block(f"for _b in range(cuda.grid(1), {batch}, cuda.gridsize(1)):"):
        body(kb, names, bufs)
    threads = max(1, min(batch, 64))
    kb.launch(max(1, min(cdiv(batch, threads), em.spec.max_blocks)), threads)


class _Math:
    """How the generated code spells conj, |x|^2 and zero for real or complex scratch."""

    def __init__(self, cplx):
        self.cplx = cplx

    def conj(self, e):
        return f"({e}).conjugate()" if self.cplx else e

    def abs2(self, e):
        return f"(({e}).real ** 2 + ({e}).imag ** 2)" if self.cplx else f"({e}) ** 2"

    def zero(self):
        return "0j" if self.cplx else "0.0"


def _load(kb, dst, src, n, cast):
    """Copy matrix `_b` of `src` into scratch `dst` (offset `_o`), `cast` around each entry;
    `_fin` is then whether every entry is finite."""
    kb.line("_fin = True")
    with kb.block(f"for _t in range({n * n}):"):
        kb.line(f"_v = {cast}({src}[_o + _t])")
        kb.line(f"{dst}[_o + _t] = _v")
        with kb.block("if not (abs(_v) < math.inf):                 # (NaN or infinite)"):
            kb.line("_fin = False")


def _hessenberg(kb, H, TAU, tau_at, n, m):
    """Lines reducing the n x n scratch matrix H (offset `_o`) to Hessenberg form in place,
    LAPACK's packed form (?gehd2): reflector _j's vector below the subdiagonal of column _j,
    its tau in TAU[tau_at]; m: a _Math.

        _hessenberg(kb, "H", "TAU", "_b * 3 + _j", 4, _Math(False))
    """
    at = (lambda i, j: f"{H}[_o + ({i}) * {n} + {j}]")
    with kb.block(f"for _j in range({n - 1}):            # reflector _j: rows _j + 1 .."):
        kb.line(f"_al = {at('_j + 1', '_j')}")
        kb.line("_x = 0.0")
        with kb.block(f"for _i in range(_j + 2, {n}):"):
            kb.line(f"_x += {m.abs2(at('_i', '_j'))}")
        with kb.block("if _x == 0.0" + (" and _al.imag == 0.0:" if m.cplx else ":")):
            kb.line(f"{TAU}[{tau_at}] = {m.zero()}       # H = I")
            kb.line("continue")
        re_al = "_al.real" if m.cplx else "_al"
        kb.line(f"_be = -math.copysign(math.sqrt({m.abs2('_al')} + _x), {re_al})")
        kb.line("_tau = complex((_be - _al.real) / _be, -_al.imag / _be)" if m.cplx
                else "_tau = (_be - _al) / _be")
        kb.line(f"{TAU}[{tau_at}] = _tau")
        kb.line("_sc = 1.0 / (_al - _be)")
        with kb.block(f"for _i in range(_j + 2, {n}):"):
            kb.line(f"{at('_i', '_j')} *= _sc")
        kb.line(f"{at('_j + 1', '_j')} = _be")
        v = (lambda k: at(k, "_j"))
        with kb.block(f"for _r in range({n}):        # from the right: A (I - tau v v^H)"):
            kb.line(f"_d = {at('_r', '_j + 1')}")
            with kb.block(f"for _k in range(_j + 2, {n}):"):
                kb.line(f"_d += {at('_r', '_k')} * {v('_k')}")
            kb.line("_d *= _tau")
            kb.line(f"{at('_r', '_j + 1')} -= _d")
            with kb.block(f"for _k in range(_j + 2, {n}):"):
                kb.line(f"{at('_r', '_k')} -= _d * {m.conj(v('_k'))}")
        with kb.block(f"for _c in range(_j + 1, {n}):    # from the left: (I - tau v v^H)^H A"):
            kb.line(f"_d = {at('_j + 1', '_c')}")
            with kb.block(f"for _k in range(_j + 2, {n}):"):
                kb.line(f"_d += {m.conj(v('_k'))} * {at('_k', '_c')}")
            kb.line(f"_d *= {m.conj('_tau')}")
            kb.line(f"{at('_j + 1', '_c')} -= _d")
            with kb.block(f"for _k in range(_j + 2, {n}):"):
                kb.line(f"{at('_k', '_c')} -= _d * {v('_k')}")


def _form_q(kb, H, TAU, Z, n):
    """Lines forming Z = H_0 ... H_{n-2} (complex) from the reflectors `_hessenberg` left in
    H and TAU (offset `_b * n`), then zeroing H below its subdiagonal."""
    at = (lambda M, i, j: f"{M}[_o + ({i}) * {n} + {j}]")
    with kb.block(f"for _t in range({n * n}):"):
        kb.line(f"{Z}[_o + _t] = 1.0 if _t // {n} == _t % {n} else 0.0")
    with kb.block(f"for _j in range({n - 2}, -1, -1):       # backwards, as ?unghr"):
        kb.line(f"_tau = {TAU}[_b * {n} + _j]")
        with kb.block(f"for _c in range(_j + 1, {n}):"):
            kb.line(f"_d = {at(Z, '_j + 1', '_c')}")
            with kb.block(f"for _k in range(_j + 2, {n}):"):
                kb.line(f"_d += {at(H, '_k', '_j')}.conjugate() * {at(Z, '_k', '_c')}")
            kb.line("_d *= _tau")
            kb.line(f"{at(Z, '_j + 1', '_c')} -= _d")
            with kb.block(f"for _k in range(_j + 2, {n}):"):
                kb.line(f"{at(Z, '_k', '_c')} -= _d * {at(H, '_k', '_j')}")
    with kb.block(f"for _i in range(2, {n}):"):
        with kb.block("for _j in range(_i - 1):"):
            kb.line(f"{at(H, '_i', '_j')} = 0j")


def _rotate(kb, at, lo, hi, rows):
    """Lines applying the rotation (_c, _s) to the pair _k, _k + 1 of rows (rows=True: G M
    on columns lo..hi-1) or of columns (M G^H on rows lo..hi-1) of `at(i, j)`."""
    with kb.block(f"for _e in range({lo}, {hi}):"):
        p, q = (at("_k", "_e"), at("_k + 1", "_e")) if rows else \
            (at("_e", "_k"), at("_e", "_k + 1"))
        kb.line(f"_x = {p}")
        kb.line(f"_y = {q}")
        if rows:
            kb.line(f"{p} = _c * _x + _s * _y")
            kb.line(f"{q} = _c * _y - _s.conjugate() * _x")
        else:
            kb.line(f"{p} = _c * _x + _s.conjugate() * _y")
            kb.line(f"{q} = _c * _y - _s * _x")


def _givens(kb, x, y):
    """Lines setting real `_c` and complex `_s` with [[c, s], [-conj(s), c]] (x, y) = (r, 0)."""
    kb.line(f"_nx = abs({x})")
    kb.line(f"_ny = abs({y})")
    with kb.block("if _ny == 0.0:"):
        kb.line("_c = 1.0")
        kb.line("_s = 0j")
    with kb.block("elif _nx == 0.0:"):
        kb.line("_c = 0.0")
        kb.line(f"_s = ({y}).conjugate() / _ny")
    with kb.block("else:"):
        kb.line("_nr = math.hypot(_nx, _ny)")
        kb.line("_c = _nx / _nr")
        kb.line(f"_s = ({x}) / _nx * ({y}).conjugate() / _nr")


def _qr_sweeps(kb, H, Z, n):
    """Lines taking the complex Hessenberg H (offset `_o`) to upper triangular T by shifted QR
    sweeps, Z accumulating the rotations; `_fin` false after if they did not converge."""
    at = (lambda i, j: f"{H}[_o + ({i}) * {n} + {j}]")
    zat = (lambda i, j: f"{Z}[_o + ({i}) * {n} + {j}]")
    a1 = (lambda e: f"(abs(({e}).real) + abs(({e}).imag))")
    kb.line(f"_hi = {n - 1}")
    kb.line("_its = 0")
    with kb.block(f"for _it in range({30 * max(n, 1)}):"):
        with kb.block("if _hi <= 0:"):
            kb.line("break")
        kb.line("_l = _hi                       # the active block: rows _l .. _hi")
        with kb.block("while _l > 0:"):
            kb.line(f"_sm = {a1(at('_l - 1', '_l - 1'))} + {a1(at('_l', '_l'))}")
            with kb.block(f"if {a1(at('_l', '_l - 1'))} <= max({_TINY}, {_EPS} * _sm):"):
                kb.line(f"{at('_l', '_l - 1')} = 0j")
                kb.line("break")
            kb.line("_l -= 1")
        with kb.block("if _l == _hi:                  # T[_hi, _hi] has converged"):
            kb.line("_hi -= 1")
            kb.line("_its = 0")
            kb.line("continue")
        kb.line("_its += 1")
        kb.line(f"_p = {at('_hi - 1', '_hi - 1')}")
        kb.line(f"_q = {at('_hi', '_hi')}")
        kb.line(f"_h = 0.5 * (_p + _q)")
        kb.line(f"_r = cmath.sqrt(_h * _h - (_p * _q - {at('_hi - 1', '_hi')} * "
                f"{at('_hi', '_hi - 1')}))")
        kb.line("_mu = _h + _r if abs(_h + _r - _q) < abs(_h - _r - _q) else _h - _r")
        with kb.block("if _its % 10 == 0:              # exceptional shift"):
            kb.line(f"_mu = _q + 0.75 * abs({at('_hi', '_hi - 1')})")
        kb.line(f"_u = {at('_l', '_l')} - _mu")
        kb.line(f"_w = {at('_l + 1', '_l')}")
        with kb.block("for _k in range(_l, _hi):"):
            with kb.block("if _k > _l:                 # chase the bulge"):
                kb.line(f"_u = {at('_k', '_k - 1')}")
                kb.line(f"_w = {at('_k + 1', '_k - 1')}")
            _givens(kb, "_u", "_w")
            _rotate(kb, at, "max(_l, _k - 1)", n, rows=True)
            _rotate(kb, at, 0, "min(_k + 3, _hi + 1)", rows=False)
            _rotate(kb, zat, 0, n, rows=False)
            with kb.block("if _k > _l:"):
                kb.line(f"{at('_k + 1', '_k - 1')} = 0j")
    with kb.block("if _hi > 0:                       # no convergence: NaN, as LAPACK's failure"):
        kb.line("_fin = False")


def _nan_out(kb, outs):
    """Lines writing NaN into matrix `_b` of each (name, elements per matrix, complex)."""
    for name, size, cplx in outs:
        with kb.block(f"for _t in range({size}):"):
            kb.line(f"{name}[_b * {size} + _t] = "
                    + ("complex(math.nan, math.nan)" if cplx else "math.nan"))


def _complex_schur(kb, A, H, Z, TAU, n):
    """Lines: the complex Schur form of matrix `_b` of A into scratch H (T) and Z; `_fin`."""
    kb.line(f"_o = _b * {n * n}")
    _load(kb, H, A, n, "complex")
    with kb.block("if _fin:"):
        _hessenberg(kb, H, TAU, f"_b * {n} + _j", n, _Math(True))
        _form_q(kb, H, TAU, Z, n)
        _qr_sweeps(kb, H, Z, n)


def _temps(n):
    return [("H", n * n, _C128), ("Z", n * n, _C128), ("tau", n, _C128)]


def _empty(eqn):
    a = eqn.invars[0]
    return a.aval.size == 0


def _hessenberg_cuda(em, eqn):
    em.check_dtypes(eqn)
    for v in eqn.outvars:
        em.alloc(v)
    if _empty(eqn):
        return
    a = eqn.invars[0]
    n, batch = a.aval.shape[-1], _batch(a.aval.shape)
    m = _Math(np.dtype(a.aval.dtype).kind == "c")
    sdt = _C128 if m.cplx else _F64

    def body(kb, names, bufs):
        A, P, T = names
        H, W = bufs["H"], bufs["tau"]
        kb.line(f"_o = _b * {n * n}")
        _load(kb, H, A, n, "complex" if m.cplx else "float")
        _hessenberg(kb, H, W, f"_b * {n} + _j", n, m)
        with kb.block(f"for _t in range({n * n}):"):
            kb.line(f"{P}[_o + _t] = {H}[_o + _t]")
        with kb.block(f"for _j in range({n - 1}):"):
            kb.line(f"{T}[_b * {n - 1} + _j] = {W}[_b * {n} + _j]")

    _per_matrix(em, eqn, f"hessenberg of {a.aval.str_short()} (Householder, one thread per "
                "matrix)", batch, body, [("H", n * n, sdt), ("tau", n, sdt)])


def _schur_cuda(em, eqn):
    em.check_dtypes(eqn)
    for v in eqn.outvars:
        em.alloc(v)
    a = eqn.invars[0]
    if np.dtype(eqn.outvars[0].aval.dtype).kind != "c":
        raise unsupported(eqn, "the real Schur form (output='real' of a real matrix) has no "
                               "CUDA kernel: the complex one does (schur(a, output='complex'))")
    if _empty(eqn):
        return
    n, batch = a.aval.shape[-1], _batch(a.aval.shape)

    def body(kb, names, bufs):
        A, T, Zo = names
        H, Z = bufs["H"], bufs["Z"]
        _complex_schur(kb, A, H, Z, bufs["tau"], n)
        with kb.block("if not _fin:"):
            _nan_out(kb, [(T, n * n, True), (Zo, n * n, True)])
            kb.line("continue")
        with kb.block(f"for _t in range({n * n}):"):
            kb.line(f"{T}[_o + _t] = {H}[_o + _t] if _t // {n} <= _t % {n} else 0j")
            kb.line(f"{Zo}[_o + _t] = {Z}[_o + _t]")

    _per_matrix(em, eqn, f"schur of {a.aval.str_short()} (complex QR sweeps, one thread per "
                "matrix)", batch, body, _temps(n))


def _sqrtm_cuda(em, eqn):
    em.check_dtypes(eqn)
    for v in eqn.outvars:
        em.alloc(v)
    if _empty(eqn):
        return
    a, out = eqn.invars[0], eqn.outvars[0]
    n, batch = a.aval.shape[-1], _batch(a.aval.shape)
    real = np.dtype(a.aval.dtype).kind == "f"
    eps = float(np.finfo(np.dtype(out.aval.dtype)).eps)

    def body(kb, names, bufs):
        A, S = names
        H, Z, W = bufs["H"], bufs["Z"], bufs["W"]
        at = (lambda M, i, j: f"{M}[_o + ({i}) * {n} + {j}]")
        _complex_schur(kb, A, H, Z, bufs["tau"], n)
        with kb.block("if not _fin:"):
            _nan_out(kb, [(S, n * n, True)])
            kb.line("continue")
        kb.line("_tol = -1.0")
        if real:          # a real matrix's eigenvalue negative up to rounding: i sqrt(|re|)
            with kb.block(f"for _j in range({n}):"):
                kb.line(f"_tol = max(_tol, {100 * eps} * abs({at(H, '_j', '_j')}))")
        with kb.block(f"for _j in range({n}):        # R, the root of T, in place"):
            kb.line(f"_d = {at(H, '_j', '_j')}")
            with kb.block("if _d.real < 0.0 and abs(_d.imag) <= _tol:"):
                kb.line(f"{at(H, '_j', '_j')} = complex(0.0, math.sqrt(-_d.real))")
            with kb.block("else:"):
                kb.line(f"{at(H, '_j', '_j')} = cmath.sqrt(_d)")
            with kb.block("for _i in range(_j - 1, -1, -1):"):
                kb.line(f"_v = {at(H, '_i', '_j')}")
                with kb.block("for _k in range(_i + 1, _j):"):
                    kb.line(f"_v -= {at(H, '_i', '_k')} * {at(H, '_k', '_j')}")
                kb.line(f"{at(H, '_i', '_j')} = _v / ({at(H, '_i', '_i')} + "
                        f"{at(H, '_j', '_j')})")
        with kb.block(f"for _i in range({n}):            # W = R Z^H"):
            with kb.block(f"for _j in range({n}):"):
                kb.line("_v = 0j")
                with kb.block(f"for _k in range(_i, {n}):"):
                    kb.line(f"_v += {at(H, '_i', '_k')} * {at(Z, '_j', '_k')}.conjugate()")
                kb.line(f"{at(W, '_i', '_j')} = _v")
        with kb.block(f"for _i in range({n}):            # S = Z W"):
            with kb.block(f"for _j in range({n}):"):
                kb.line("_v = 0j")
                with kb.block(f"for _k in range({n}):"):
                    kb.line(f"_v += {at(Z, '_i', '_k')} * {at(W, '_k', '_j')}")
                kb.line(f"{S}[_o + _i * {n} + _j] = _v")

    _per_matrix(em, eqn, f"sqrtm of {a.aval.str_short()} (complex Schur, one thread per "
                "matrix)", batch, body, _temps(n) + [("W", n * n, _C128)])


CUDA_RULES[hessenberg_p] = _hessenberg_cuda
CUDA_RULES[schur_p] = _schur_cuda
CUDA_RULES[sqrtm_p] = _sqrtm_cuda
