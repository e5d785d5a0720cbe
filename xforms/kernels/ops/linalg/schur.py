"""Our CUDA kernels for hessenberg, schur and sqrtm (xforms/primitives/linalg/schur.py,
sqrtm.py): cuSOLVER has no Hessenberg reduction and no Schur form, so these run on every GPU
and on the simulator alike, one thread per matrix (a grid-stride loop over the batch), in
float64 / complex128 scratch whatever the dtype (a 32-bit result is rounded once, at the
end), O(n^3): right for the small matrices of batched models.

    hessenberg  LAPACK's ?gehd2, reflector by reflector (?larfg's beta = -sign(Re alpha)
                |(alpha, x)|, tau = (beta - alpha) / beta, v = x / (alpha - beta)), each
                applied from the right, then its adjoint from the left: the same packed
                output and taus as the CPU's ?gehrd, up to rounding.
    schur       the real Schur form (output "real" of a real matrix) as LAPACK's ?lahqr:
                the Hessenberg reduction, Z formed from its reflectors, then double-shift
                (Francis) QR steps by 3-element reflectors on the active block, applied to all
                of T and Z (exceptional shifts at 10 and 20 iterations without a deflation),
                each converged 2 x 2 block put in ?lanv2's standard form (equal diagonal,
                b c < 0; split where its eigenvalues are real).  The complex form (output
                "complex", or a complex matrix): the reduction of the matrix taken as complex,
                then single-shift QR sweeps (Wilkinson's shift) by Givens rotations.  Both
                deflate where a subdiagonal entry falls below eps of its neighbours (LAPACK's
                simpler test).  A Schur form is not unique: T's eigenvalues may come in another
                order than ?gees's, Z's columns signed otherwise (?gees balances the matrix by
                permutations first); Z T Z^H = A holds to rounding.
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

from ...cuda.printer.emit import OP_RULES as CUDA_RULES
from .per_matrix import Math, element, load_matrix, nan_out, per_matrix, reflect, reflector
from xforms.primitives.linalg.schur import hessenberg_p, schur_p
from xforms.primitives.linalg.sqrtm import sqrtm_p

_F64, _C128 = np.dtype(np.float64), np.dtype(np.complex128)
_EPS = float(np.finfo(np.float64).eps)
_TINY = 1e-300                     # below this a subdiagonal entry is zero whatever its neighbours


def _batch(shape):
    return int(np.prod(shape[:-2], dtype=np.int64))


def reduce_hessenberg(kb, H, TAU, tau_at, n, m):
    """Lines reducing the n x n scratch matrix H (offset `_o`) to Hessenberg form in place,
    LAPACK's packed form (?gehd2): reflector _j's vector below the subdiagonal of column _j,
    its tau in TAU[tau_at]; m: a Math.

        reduce_hessenberg(kb, "H", "TAU", "_b * 3 + _j", 4, Math(False))
    """
    at = element(H, n)
    with kb.block(f"for _j in range({n - 1}):            # reflector _j: rows _j + 1 .."):
        v = (lambda k: at(k, "_j"))
        reflector(kb, v, "_j + 1", ("_j + 2", n), m, f"{TAU}[{tau_at}]")
        with kb.block(f"for _r in range({n}):        # from the right: A (I - tau v v^H)"):
            kb.line(f"_d = {at('_r', '_j + 1')}")
            with kb.block(f"for _k in range(_j + 2, {n}):"):
                kb.line(f"_d += {at('_r', '_k')} * {v('_k')}")
            kb.line("_d *= _tau")
            kb.line(f"{at('_r', '_j + 1')} -= _d")
            with kb.block(f"for _k in range(_j + 2, {n}):"):
                kb.line(f"{at('_r', '_k')} -= _d * {m.conj(v('_k'))}")
        with kb.block(f"for _c in range(_j + 1, {n}):    # from the left: (I - tau v v^H)^H A"):
            reflect(kb, lambda r: at(r, "_c"), v, "_j + 1", ("_j + 2", n), m.conj,
                    m.conj("_tau"), "_k")


def form_q(kb, H, TAU, Z, n, m):
    """Lines forming Z = H_0 ... H_{n-2} from the reflectors `_hessenberg` left in H and TAU
    (offset `_b * n`), then zeroing H below its subdiagonal; m: a Math."""
    h, z = element(H, n), element(Z, n)
    with kb.block(f"for _t in range({n * n}):"):
        kb.line(f"{Z}[_o + _t] = 1.0 if _t // {n} == _t % {n} else 0.0")
    with kb.block(f"for _j in range({n - 2}, -1, -1):       # backwards, as ?orghr"):
        kb.line(f"_tau = {TAU}[_b * {n} + _j]")
        with kb.block(f"for _c in range(_j + 1, {n}):"):
            reflect(kb, lambda r: z(r, "_c"), lambda r: h(r, "_j"), "_j + 1", ("_j + 2", n),
                    m.conj, "_tau", "_k")
    with kb.block(f"for _i in range(2, {n}):"):
        with kb.block("for _j in range(_i - 1):"):
            kb.line(f"{h('_i', '_j')} = {m.zero()}")


def _rotate(kb, at, lo, hi, rows):
    """Lines applying the rotation (_gc, _gs) to the pair _k, _k + 1 of rows (rows=True: G M
    on columns lo..hi-1) or of columns (M G^H on rows lo..hi-1) of `at(i, j)`."""
    with kb.block(f"for _e in range({lo}, {hi}):"):
        p, q = (at("_k", "_e"), at("_k + 1", "_e")) if rows else \
            (at("_e", "_k"), at("_e", "_k + 1"))
        kb.line(f"_x = {p}")
        kb.line(f"_y = {q}")
        if rows:
            kb.line(f"{p} = _gc * _x + _gs * _y")
            kb.line(f"{q} = _gc * _y - _gs.conjugate() * _x")
        else:
            kb.line(f"{p} = _gc * _x + _gs.conjugate() * _y")
            kb.line(f"{q} = _gc * _y - _gs * _x")


def _givens(kb, x, y):
    """Lines setting real `_gc` and complex `_gs` with [[c, s], [-conj(s), c]] (x, y) = (r, 0)."""
    kb.line(f"_nx = abs({x})")
    kb.line(f"_ny = abs({y})")
    with kb.block("if _ny == 0.0:"):
        kb.line("_gc = 1.0")
        kb.line("_gs = 0j")
    with kb.block("elif _nx == 0.0:"):
        kb.line("_gc = 0.0")
        kb.line(f"_gs = ({y}).conjugate() / _ny")
    with kb.block("else:"):
        kb.line("_nr = math.hypot(_nx, _ny)")
        kb.line("_gc = _nx / _nr")
        kb.line(f"_gs = ({x}) / _nx * ({y}).conjugate() / _nr")


def complex_qr_sweeps(kb, H, Z, n):
    """Lines taking the complex Hessenberg H (offset `_o`) to upper triangular T by shifted QR
    sweeps, Z accumulating the rotations; `_fin` false after if they did not converge."""
    at = element(H, n)
    zat = element(Z, n)
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


def _reflect3(kb, at, lo, hi, rows):
    """Lines applying the reflector I - _t1 (1, _v2, _v3)(1, _v2, _v3)^T (_v3 only where
    `_nr == 3`) to rows _k .. _k + 2 of `at(i, j)` over columns lo..hi-1 (rows=True) or to
    those columns over rows lo..hi-1 (LAPACK ?lahqr's unrolled loops)."""
    el = (lambda d, e: at(f"_k + {d}", e) if rows else at(e, f"_k + {d}"))
    with kb.block(f"for _e in range({lo}, {hi}):"):
        kb.line(f"_sm = {el(0, '_e')} + _v2 * {el(1, '_e')}"
                f" + (_v3 * {el(2, '_e')} if _nr == 3 else 0.0)")
        kb.line(f"{el(0, '_e')} -= _sm * _t1")
        kb.line(f"{el(1, '_e')} -= _sm * _t2")
        with kb.block("if _nr == 3:"):
            kb.line(f"{el(2, '_e')} -= _sm * _t3")


def _double_shift(kb, at):
    """Lines setting the first column (_u0, _u1, _u2) of (H - s1)(H - s2) at row _l, s1 and
    s2 the eigenvalues of the trailing 2 x 2 block (exceptional shifts at 10 and 20
    iterations without a deflation), scaled, as LAPACK's ?lahqr."""
    with kb.block("if _its == 10:"):
        kb.line(f"_s = abs({at('_l + 1', '_l')}) + abs({at('_l + 2', '_l + 1')})")
        kb.line(f"_h11 = 0.75 * _s + {at('_l', '_l')}")
        kb.line("_h12, _h21, _h22 = -0.4375 * _s, _s, _h11")
    with kb.block("elif _its == 20:"):
        kb.line(f"_s = abs({at('_i', '_i - 1')}) + abs({at('_i - 1', '_i - 2')})")
        kb.line(f"_h11 = 0.75 * _s + {at('_i', '_i')}")
        kb.line("_h12, _h21, _h22 = -0.4375 * _s, _s, _h11")
    with kb.block("else:"):
        kb.line(f"_h11, _h12 = {at('_i - 1', '_i - 1')}, {at('_i - 1', '_i')}")
        kb.line(f"_h21, _h22 = {at('_i', '_i - 1')}, {at('_i', '_i')}")
    kb.line("_s = abs(_h11) + abs(_h12) + abs(_h21) + abs(_h22)")
    kb.line("_r1, _r1i, _r2, _r2i = 0.0, 0.0, 0.0, 0.0")
    with kb.block("if _s != 0.0:"):
        kb.line("_h11, _h12, _h21, _h22 = _h11 / _s, _h12 / _s, _h21 / _s, _h22 / _s")
        kb.line("_tr = 0.5 * (_h11 + _h22)")
        kb.line("_det = (_h11 - _tr) * (_h22 - _tr) - _h12 * _h21")
        kb.line("_rd = math.sqrt(abs(_det))")
        with kb.block("if _det >= 0.0:                # a complex pair"):
            kb.line("_r1, _r2, _r1i, _r2i = _tr * _s, _tr * _s, _rd * _s, -_rd * _s")
        with kb.block("else:                          # real: both the one nearer _h22"):
            kb.line("_r1 = _tr + _rd if abs(_tr + _rd - _h22) <= abs(_tr - _rd - _h22) "
                    "else _tr - _rd")
            kb.line("_r1 *= _s")
            kb.line("_r2 = _r1")
    kb.line(f"_h21 = {at('_l + 1', '_l')}")
    kb.line(f"_s = abs({at('_l', '_l')} - _r2) + abs(_r2i) + abs(_h21)")
    kb.line("_h21 /= _s")
    kb.line(f"_u0 = _h21 * {at('_l', '_l + 1')} + ({at('_l', '_l')} - _r1) * "
            f"(({at('_l', '_l')} - _r2) / _s) - _r1i * (_r2i / _s)")
    kb.line(f"_u1 = _h21 * ({at('_l', '_l')} + {at('_l + 1', '_l + 1')} - _r1 - _r2)")
    kb.line(f"_u2 = _h21 * {at('_l + 2', '_l + 1')}")
    kb.line("_s = abs(_u0) + abs(_u1) + abs(_u2)")
    kb.line("_u0, _u1, _u2 = _u0 / _s, _u1 / _s, _u2 / _s")


def _francis_step(kb, at, zat, n):
    """Lines of one double-shift QR step on rows _l.._i: 3-element reflectors chasing the
    bulge, applied to all of T and Z."""
    with kb.block("for _k in range(_l, _i):"):
        kb.line("_nr = min(3, _i - _k + 1)")
        with kb.block("if _k > _l:"):
            kb.line(f"_u0, _u1 = {at('_k', '_k - 1')}, {at('_k + 1', '_k - 1')}")
            kb.line(f"_u2 = {at('_k + 2', '_k - 1')} if _nr == 3 else 0.0")
        kb.line("_x = math.sqrt(_u1 * _u1 + _u2 * _u2)")
        kb.line("_t1, _v2, _v3 = 0.0, 0.0, 0.0")
        with kb.block("if _x != 0.0:                  # ?larfg"):
            kb.line("_be = -math.copysign(math.hypot(_u0, _x), _u0)")
            kb.line("_t1 = (_be - _u0) / _be")
            kb.line("_v2, _v3 = _u1 / (_u0 - _be), _u2 / (_u0 - _be)")
            kb.line("_u0 = _be")
        with kb.block("if _k > _l:"):
            kb.line(f"{at('_k', '_k - 1')} = _u0")
            kb.line(f"{at('_k + 1', '_k - 1')} = 0.0")
            with kb.block("if _k < _i - 1:"):
                kb.line(f"{at('_k + 2', '_k - 1')} = 0.0")
        kb.line("_t2, _t3 = _t1 * _v2, _t1 * _v3")
        _reflect3(kb, at, "_k", n, rows=True)
        _reflect3(kb, at, 0, "min(_k + 4, _i + 1)", rows=False)
        _reflect3(kb, zat, 0, n, rows=False)


def _standardise(kb):
    """Lines of LAPACK's ?lanv2 on the block (_pa, _pb, _pc, _pd): its standard form (_pc = 0
    when its eigenvalues are real, else _pa == _pd and _pb _pc < 0), the rotation (_cs, _sn).
    (Not _a.._d: _b is the kernel's matrix index, and a name keeps one type in a kernel.)"""
    sgn = (lambda x: f"math.copysign(1.0, {x})")
    kb.line("_cs, _sn = 1.0, 0.0")
    with kb.block("if _pc == 0.0:"):
        kb.line("pass")
    with kb.block("elif _pb == 0.0:                   # swap rows and columns"):
        kb.line("_cs, _sn = 0.0, 1.0")
        kb.line("_pa, _pb, _pc, _pd = _pd, -_pc, 0.0, _pa")
    with kb.block(f"elif _pa - _pd == 0.0 and {sgn('_pb')} != {sgn('_pc')}:"):
        kb.line("pass")
    with kb.block("else:"):
        kb.line("_tm = _pa - _pd")
        kb.line("_p = 0.5 * _tm")
        kb.line("_bcmax = max(abs(_pb), abs(_pc))")
        kb.line(f"_bcmis = min(abs(_pb), abs(_pc)) * {sgn('_pb')} * {sgn('_pc')}")
        kb.line("_sc = max(abs(_p), _bcmax)")
        kb.line("_z = _p / _sc * _p + _bcmax / _sc * _bcmis")
        with kb.block(f"if _z >= {4 * _EPS}:          # real eigenvalues"):
            kb.line(f"_z = _p + math.copysign(math.sqrt(_sc) * math.sqrt(_z), _p)")
            kb.line("_pa = _pd + _z")
            kb.line("_pd = _pd - _bcmax / _z * _bcmis")
            kb.line("_tau = math.hypot(_pc, _z)")
            kb.line("_cs, _sn = _z / _tau, _pc / _tau")
            kb.line("_pb, _pc = _pb - _pc, 0.0")
        with kb.block("else:                          # a complex pair: equal diagonal"):
            kb.line("_sg = _pb + _pc")
            kb.line("_tau = math.hypot(_sg, _tm)")
            kb.line("_cs = math.sqrt(0.5 * (1.0 + abs(_sg) / _tau))")
            kb.line(f"_sn = -(_p / (_tau * _cs)) * {sgn('_sg')}")
            kb.line("_aa, _bb = _pa * _cs + _pb * _sn, -_pa * _sn + _pb * _cs")
            kb.line("_cc, _dd = _pc * _cs + _pd * _sn, -_pc * _sn + _pd * _cs")
            kb.line("_pa, _pb = _aa * _cs + _cc * _sn, _bb * _cs + _dd * _sn")
            kb.line("_pc, _pd = -_aa * _sn + _cc * _cs, -_bb * _sn + _dd * _cs")
            kb.line("_tm = 0.5 * (_pa + _pd)")
            kb.line("_pa, _pd = _tm, _tm")
            with kb.block("if _pc != 0.0 and _pb != 0.0:"):
                with kb.block(f"if {sgn('_pb')} == {sgn('_pc')}:    # real after all"):
                    kb.line("_sab, _sac = math.sqrt(abs(_pb)), math.sqrt(abs(_pc))")
                    kb.line("_p = math.copysign(_sab * _sac, _pc)")
                    kb.line("_tau = 1.0 / math.sqrt(abs(_pb + _pc))")
                    kb.line("_pa, _pd = _tm + _p, _tm - _p")
                    kb.line("_pb, _pc = _pb - _pc, 0.0")
                    kb.line("_cs1, _sn1 = _sab * _tau, _sac * _tau")
                    kb.line("_cs, _sn = _cs * _cs1 - _sn * _sn1, _cs * _sn1 + _sn * _cs1")
            with kb.block("elif _pc != 0.0:"):
                kb.line("_pb, _pc = -_pc, 0.0")
                kb.line("_cs, _sn = -_sn, _cs")


def real_qr_sweeps(kb, H, Z, n):
    """Lines taking the real Hessenberg H (offset `_o`) to the real Schur form by LAPACK
    ?lahqr's double-shift steps, 2 x 2 blocks standardised, Z accumulating; `_fin` false
    after if they did not converge."""
    at = element(H, n)
    zat = element(Z, n)
    kb.line(f"_i = {n - 1}")
    with kb.block("while _i >= 0:                  # rows _i (and _i - 1) converge next"):
        kb.line("_l = 0")
        kb.line("_done = False")
        with kb.block(f"for _its in range({30 * max(10, n)}):"):
            kb.line("_k = _i")
            with kb.block("while _k > _l:"):
                kb.line(f"_x = abs({at('_k', '_k - 1')})")
                with kb.block(f"if _x <= {_TINY} or _x <= {_EPS} * (abs({at('_k - 1', '_k - 1')})"
                              f" + abs({at('_k', '_k')})):"):
                    kb.line("break")
                kb.line("_k -= 1")
            kb.line("_l = _k")
            with kb.block("if _l > 0:"):
                kb.line(f"{at('_l', '_l - 1')} = 0.0")
            with kb.block("if _l >= _i - 1:"):
                kb.line("_done = True")
                kb.line("break")
            _double_shift(kb, at)
            _francis_step(kb, at, zat, n)
        with kb.block("if not _done:"):
            kb.line("_fin = False")
            kb.line("break")
        with kb.block("if _l == _i - 1:               # a 2 x 2 block: standardised"):
            kb.line(f"_pa, _pb = {at('_i - 1', '_i - 1')}, {at('_i - 1', '_i')}")
            kb.line(f"_pc, _pd = {at('_i', '_i - 1')}, {at('_i', '_i')}")
            _standardise(kb)
            kb.line(f"{at('_i - 1', '_i - 1')}, {at('_i - 1', '_i')} = _pa, _pb")
            kb.line(f"{at('_i', '_i - 1')}, {at('_i', '_i')} = _pc, _pd")
            for lo, hi, el in ((f"_i + 1", n, lambda r, e: at(f"_i - {r}", e)),
                               (0, "_i - 1", lambda r, e: at(e, f"_i - {r}")),
                               (0, n, lambda r, e: zat(e, f"_i - {r}"))):
                with kb.block(f"for _e in range({lo}, {hi}):"):
                    kb.line(f"_x, _y = {el(1, '_e')}, {el(0, '_e')}")
                    kb.line(f"{el(1, '_e')} = _cs * _x + _sn * _y")
                    kb.line(f"{el(0, '_e')} = _cs * _y - _sn * _x")
        kb.line("_i = _l - 1")


def schur_form(kb, A, H, Z, TAU, n, cplx, prepare=None):
    """Lines: the Schur form of matrix `_b` of A into scratch H (T) and Z, complex (`cplx`)
    or real, as the module docstring says; `_fin` false after where A is not finite or the
    sweeps did not converge.  `prepare(kb)` writes lines run on the loaded H first (eig.py's
    balancing).

        schur_form(kb, "A", "H", "Z", "TAU", 4, False)    # H, Z float64 scratch
    """
    kb.line(f"_o = _b * {n * n}")
    load_matrix(kb, H, A, n, "complex" if cplx else "float")
    with kb.block("if _fin:"):
        if prepare is not None:
            prepare(kb)
        reduce_hessenberg(kb, H, TAU, f"_b * {n} + _j", n, Math(cplx))
        form_q(kb, H, TAU, Z, n, Math(cplx))
        (complex_qr_sweeps if cplx else real_qr_sweeps)(kb, H, Z, n)


def _temps(n):
    return [("H", n * n, _C128), ("Z", n * n, _C128), ("tau", n, _C128)]


def _rule(emit):
    """The CUDA rule of an op on a batch of n x n matrices: its outputs allocated (and no
    kernel for an empty batch), then `emit(em, eqn, a, n, batch)` writes the kernel."""
    def rule(em, eqn):
        em.check_dtypes(eqn)
        for v in eqn.outvars:
            em.alloc(v)
        a = eqn.invars[0]
        if a.aval.size:
            emit(em, eqn, a, a.aval.shape[-1], _batch(a.aval.shape))
    return rule


@_rule
def _hessenberg_cuda(em, eqn, a, n, batch):
    m = Math(np.dtype(a.aval.dtype).kind == "c")
    sdt = m.scratch

    def body(kb, names, bufs):
        A, P, T = names
        H, W = bufs["H"], bufs["tau"]
        kb.line(f"_o = _b * {n * n}")
        load_matrix(kb, H, A, n, "complex" if m.cplx else "float")
        reduce_hessenberg(kb, H, W, f"_b * {n} + _j", n, m)
        with kb.block(f"for _t in range({n * n}):"):
            kb.line(f"{P}[_o + _t] = {H}[_o + _t]")
        with kb.block(f"for _j in range({n - 1}):"):
            kb.line(f"{T}[_b * {n - 1} + _j] = {W}[_b * {n} + _j]")

    per_matrix(em, eqn, f"hessenberg of {a.aval.str_short()} (Householder, one thread per "
                "matrix)", batch, body, [("H", n * n, sdt), ("tau", n, sdt)])


@_rule
def _schur_cuda(em, eqn, a, n, batch):
    real = np.dtype(eqn.outvars[0].aval.dtype).kind != "c"

    def body(kb, names, bufs):
        A, T, Zo = names
        H, Z = bufs["H"], bufs["Z"]
        schur_form(kb, A, H, Z, bufs["tau"], n, not real)
        with kb.block("if not _fin:"):
            nan_out(kb, [(T, n * n, not real), (Zo, n * n, not real)])
            kb.line("continue")
        below = f"_t // {n} <= _t % {n} + {1 if real else 0}"
        with kb.block(f"for _t in range({n * n}):"):
            kb.line(f"{T}[_o + _t] = {H}[_o + _t] if {below} else 0")
            kb.line(f"{Zo}[_o + _t] = {Z}[_o + _t]")

    how = "double-shift" if real else "complex"
    temps = [(t, size, _F64) for t, size, _ in _temps(n)] if real else _temps(n)
    per_matrix(em, eqn, f"schur of {a.aval.str_short()} ({how} QR sweeps, one thread per "
                "matrix)", batch, body, temps)


@_rule
def _sqrtm_cuda(em, eqn, a, n, batch):
    out = eqn.outvars[0]
    real = np.dtype(a.aval.dtype).kind == "f"
    eps = float(np.finfo(np.dtype(out.aval.dtype)).eps)

    def body(kb, names, bufs):
        A, S = names
        H, Z, W = bufs["H"], bufs["Z"], bufs["W"]
        h, z, w = element(H, n), element(Z, n), element(W, n)
        schur_form(kb, A, H, Z, bufs["tau"], n, True)
        with kb.block("if not _fin:"):
            nan_out(kb, [(S, n * n, True)])
            kb.line("continue")
        kb.line("_tol = -1.0")
        if real:          # a real matrix's eigenvalue negative up to rounding: i sqrt(|re|)
            with kb.block(f"for _j in range({n}):"):
                kb.line(f"_tol = max(_tol, {100 * eps} * abs({h('_j', '_j')}))")
        with kb.block(f"for _j in range({n}):        # R, the root of T, in place"):
            kb.line(f"_d = {h('_j', '_j')}")
            with kb.block("if _d.real < 0.0 and abs(_d.imag) <= _tol:"):
                kb.line(f"{h('_j', '_j')} = complex(0.0, math.sqrt(-_d.real))")
            with kb.block("else:"):
                kb.line(f"{h('_j', '_j')} = cmath.sqrt(_d)")
            with kb.block("for _i in range(_j - 1, -1, -1):"):
                kb.line(f"_v = {h('_i', '_j')}")
                with kb.block("for _k in range(_i + 1, _j):"):
                    kb.line(f"_v -= {h('_i', '_k')} * {h('_k', '_j')}")
                kb.line(f"{h('_i', '_j')} = _v / ({h('_i', '_i')} + {h('_j', '_j')})")
        with kb.block(f"for _i in range({n}):            # W = R Z^H"):
            with kb.block(f"for _j in range({n}):"):
                kb.line("_v = 0j")
                with kb.block(f"for _k in range(_i, {n}):"):
                    kb.line(f"_v += {h('_i', '_k')} * {z('_j', '_k')}.conjugate()")
                kb.line(f"{w('_i', '_j')} = _v")
        with kb.block(f"for _i in range({n}):            # S = Z W"):
            with kb.block(f"for _j in range({n}):"):
                kb.line("_v = 0j")
                with kb.block(f"for _k in range({n}):"):
                    kb.line(f"_v += {z('_i', '_k')} * {w('_k', '_j')}")
                kb.line(f"{S}[_o + _i * {n} + _j] = _v")

    per_matrix(em, eqn, f"sqrtm of {a.aval.str_short()} (complex Schur, one thread per "
                "matrix)", batch, body, _temps(n) + [("W", n * n, _C128)])


CUDA_RULES[hessenberg_p] = _hessenberg_cuda
CUDA_RULES[schur_p] = _schur_cuda
CUDA_RULES[sqrtm_p] = _sqrtm_cuda
