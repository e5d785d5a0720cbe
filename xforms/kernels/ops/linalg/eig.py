"""Our CUDA kernel for eig (eigenvalues and right eigenvectors of a general matrix) where
cuSOLVER is absent -- the simulator, a GPU without the library (with it, solver.py calls
cusolverDnXgeev) -- one thread per matrix in complex128 scratch, O(n^3), the steps of
LAPACK's ?geev but for its balancing's permutations:

    balance    ?gebal's scaling: B = D^-1 A D, D diagonal of powers of 2 that bring each
               row's and column's norms together (the vectors are D's times B's).
    real A     schur.py's real Schur form (the Hessenberg reduction and ?lahqr's
               double-shift steps, 2 x 2 blocks in ?lanv2's standard form [[a, b], [c, a]],
               b c < 0), whose eigenvalues come in ?hseqr's order, a pair as a +- i w,
               w = sqrt|b| sqrt|c| (the positive one first); then each block made triangular
               by the unitary G = [[b, i w], [i w, b]] / |(b, w)| (its first column is the
               block's eigenvector of a + i w), T = G^H T G, Z = Z G.
    complex A  schur.py's complex Schur form (single-shift sweeps).
    vectors    ?trevc's back-substitution on the triangular T: y_k = 1, y_i = -(sum_j T[i, j]
               y_j) / (T[i, i] - T[k, k]) (a divisor below eps |T[k, k]| taken as that; y
               rescaled where it grows past 1e100, as at a defective value), x = Z y;
               each x of unit norm with its largest entry real: positive for a complex A
               (?geev's rule), of its real part's sign for a real A's pair (dgeev's rotation),
               and a real A's real eigenvalue's vector real, its sign as back-substitution
               left it; the second of a pair the conjugate of the first, as dgeev's.

Without ?gebal's permutations the order of the values may differ from the CPU's where one
would isolate an eigenvalue (a row or column zero off the diagonal; on 300 random 5 x 5
matrices the scaled Schur form's order was dgeev's every time, the unscaled one's in 295);
the vectors are unique up to that phase (distinct eigenvalues).  A non-finite
matrix, or QR sweeps that do not converge, give NaN values and vectors (LAPACK's failure).

    # w:c128[4] v:c128[4,4] = eig[vectors=True] a, abridged:
    for _b in range(cuda.grid(1), 1, cuda.gridsize(1)):
        ...
        for _k in range(4):          # eigenvector _k: back-substitution on T
"""
import numpy as np

from .per_matrix import Math, element, nan_out, per_matrix
from .schur import schur_form

_F64, _C128 = np.dtype(np.float64), np.dtype(np.complex128)
_EPS = float(np.finfo(np.float64).eps)


def _balance(kb, M, D, n, cplx):
    """Lines of LAPACK ?gebal's scaling (job 'S', its permutations left out) on the scratch
    matrix M: row and column i scaled by 1/f and f, powers of 2, until each row's and
    column's norms are within 0.95 of balanced; D (offset `_b * n`) gathers the f's."""
    at = element(M, n)
    sfmin1 = float(np.finfo(np.float64).tiny) / _EPS
    sfmin2, sfmax1 = sfmin1 * 2.0, 1.0 / sfmin1
    sfmax2 = 1.0 / sfmin2
    a2 = Math(cplx).abs2
    d = f"{D}[_b * {n} + _i]"
    with kb.block(f"for _i in range({n}):"):
        kb.line(f"{d} = 1.0")
    with kb.block("for _bal in range(10000):          # (LAPACK: until none is scaled)"):
        kb.line("_bn = False")
        with kb.block(f"for _i in range({n}):"):
            kb.line("_bc, _br, _bca, _bra = 0.0, 0.0, 0.0, 0.0")
            with kb.block(f"for _j in range({n}):"):
                kb.line(f"_bx, _by = {a2(at('_j', '_i'))}, {a2(at('_i', '_j'))}")
                kb.line("_bc, _bca = _bc + _bx, max(_bca, _bx)")
                kb.line("_br, _bra = _br + _by, max(_bra, _by)")
            kb.line("_bc, _br = math.sqrt(_bc), math.sqrt(_br)")
            kb.line("_bca, _bra = math.sqrt(_bca), math.sqrt(_bra)")
            with kb.block("if _bc == 0.0 or _br == 0.0:"):
                kb.line("continue")
            kb.line("_bg, _bf, _bs = _br / 2.0, 1.0, _bc + _br")
            with kb.block(f"while _bc < _bg and max(_bf, _bc, _bca) < {sfmax2} and "
                          f"min(_br, _bg, _bra) > {sfmin2}:"):
                kb.line("_bf, _bc, _bca = _bf * 2.0, _bc * 2.0, _bca * 2.0")
                kb.line("_br, _bg, _bra = _br / 2.0, _bg / 2.0, _bra / 2.0")
            kb.line("_bg = _bc / 2.0")
            with kb.block(f"while _bg >= _br and max(_br, _bra) < {sfmax2} and "
                          f"min(_bf, _bc, _bg, _bca) > {sfmin2}:"):
                kb.line("_bf, _bc, _bg, _bca = _bf / 2.0, _bc / 2.0, _bg / 2.0, _bca / 2.0")
                kb.line("_br, _bra = _br * 2.0, _bra * 2.0")
            kb.line(f"_bd = {d}")
            with kb.block(f"if (_bc + _br >= 0.95 * _bs or (_bf < 1.0 and _bd < 1.0 and "
                          f"_bf * _bd <= {sfmin1}) or (_bf > 1.0 and _bd > 1.0 and "
                          f"_bd >= {sfmax1} / _bf)):"):
                kb.line("continue")
            kb.line(f"{d} = _bd * _bf")
            kb.line("_bn = True")
            with kb.block(f"for _j in range({n}):"):
                kb.line(f"{at('_i', '_j')} /= _bf")
                kb.line(f"{at('_j', '_i')} *= _bf")
        with kb.block("if not _bn:"):
            kb.line("break")


def _split_pairs(kb, H, Z, n):
    """Lines making each standardised 2 x 2 block of the real Schur form in H (now complex)
    upper triangular by G (module docstring), T and Z updated."""
    t, z = element(H, n), element(Z, n)
    with kb.block(f"for _i in range({n - 1}):"):
        with kb.block(f"if {t('_i + 1', '_i')}.real == 0.0:"):
            kb.line("continue")
        kb.line(f"_za, _zb = {t('_i', '_i')}.real, {t('_i', '_i + 1')}.real")
        kb.line(f"_zw = math.sqrt(abs(_zb)) * math.sqrt(abs({t('_i + 1', '_i')}.real))")
        kb.line("_zn = math.hypot(_zb, _zw)")
        kb.line("_g1, _g2 = _zb / _zn, complex(0.0, _zw / _zn)     # G = [[g1, g2], [g2, g1]]")
        with kb.block(f"for _e in range(_i, {n}):          # G^H T: conj(g2) = -g2"):
            kb.line(f"_zx, _zy = {t('_i', '_e')}, {t('_i + 1', '_e')}")
            kb.line(f"{t('_i', '_e')} = _g1 * _zx - _g2 * _zy")
            kb.line(f"{t('_i + 1', '_e')} = _g1 * _zy - _g2 * _zx")
        for M, rows in ((t, "_i + 2"), (z, n)):
            with kb.block(f"for _e in range({rows}):"):
                kb.line(f"_zx, _zy = {M('_e', '_i')}, {M('_e', '_i + 1')}")
                kb.line(f"{M('_e', '_i')} = _g1 * _zx + _g2 * _zy")
                kb.line(f"{M('_e', '_i + 1')} = _g2 * _zx + _g1 * _zy")
        kb.line(f"{t('_i + 1', '_i')} = 0j")
        kb.line(f"{t('_i', '_i')} = complex(_za, _zw)")
        kb.line(f"{t('_i + 1', '_i + 1')} = complex(_za, -_zw)")


def _vectors(kb, H, Z, Y, X, D, V, n, real):
    """Lines writing matrix _b's unit eigenvectors (columns of V) from T = H and Z: the
    back-substitution, x = D Z y (D: the balancing's scales), the norm and the phase
    (module docstring)."""
    t, z = element(H, n), element(Z, n)
    y, x = (lambda i: f"{Y}[_b * {n} + {i}]"), (lambda i: f"{X}[_b * {n} + {i}]")
    with kb.block(f"for _k in range({n}):          # eigenvector _k: back-substitution on T"):
        kb.line(f"_zl = {t('_k', '_k')}")
        if real:
            with kb.block("if _zl.imag < 0.0:          # a pair's second: the first's conjugate"):
                with kb.block(f"for _i in range({n}):"):
                    kb.line(f"{V}[_o + _i * {n} + _k] = {V}[_o + _i * {n} + _k - 1].conjugate()")
                kb.line("continue")
        kb.line(f"_zm = max({_EPS} * (abs(_zl.real) + abs(_zl.imag)), 1e-300)")
        kb.line(f"{y('_k')} = 1.0")
        with kb.block("for _i in range(_k - 1, -1, -1):"):
            kb.line("_zs = 0j")
            with kb.block("for _j in range(_i + 1, _k + 1):"):
                kb.line(f"_zs += {t('_i', '_j')} * {y('_j')}")
            kb.line(f"_zd = {t('_i', '_i')} - _zl")
            with kb.block("if abs(_zd.real) + abs(_zd.imag) < _zm:"):
                kb.line("_zd = complex(_zm, 0.0)")
            kb.line(f"{y('_i')} = -_zs / _zd")
            with kb.block(f"if abs({y('_i')}) > 1e100:       # (a defective T: y grows by "
                          "1/eps a row; x is normalised later, so rescale)"):
                with kb.block("for _j in range(_i, _k + 1):"):
                    kb.line(f"{y('_j')} *= 1e-100")
        kb.line("_zq = 0.0")
        kb.line("_zt = 0.0")
        kb.line("_zi = 0")
        with kb.block(f"for _i in range({n}):            # x = D Z y"):
            kb.line("_zs = 0j")
            with kb.block("for _j in range(_k + 1):"):
                kb.line(f"_zs += {z('_i', '_j')} * {y('_j')}")
            kb.line(f"_zs *= {D}[_b * {n} + _i]                # undo the balancing: D x")
            kb.line(f"{x('_i')} = _zs")
            kb.line("_za = _zs.real ** 2 + _zs.imag ** 2")
            kb.line("_zq += _za")
            with kb.block("if _za > _zt:"):
                kb.line("_zt, _zi = _za, _i")
        kb.line(f"_zs = {x('_zi')}")
        kb.line("_zp = _zs.conjugate() / math.sqrt(_zt) if _zt > 0.0 else complex(1.0, 0.0)")
        if real:     # dgeev: a real value's vector as it is, a pair's largest entry real
            with kb.block("if _zl.imag == 0.0:"):
                kb.line("_zp = complex(1.0, 0.0)")
            with kb.block("elif _zs.real < 0.0:"):
                kb.line("_zp = -_zp")
        kb.line("_zp /= math.sqrt(_zq)")
        with kb.block(f"for _i in range({n}):"):
            kb.line(f"_zs = {x('_i')} * _zp")
            if real:
                with kb.block("if _zl.imag == 0.0 or _i == _zi:"):
                    kb.line("_zs = complex(_zs.real, 0.0)")
            else:
                with kb.block("if _i == _zi:"):
                    kb.line("_zs = complex(_zs.real, 0.0)")
            kb.line(f"{V}[_o + _i * {n} + _k] = _zs")


def eig(em, eqn, a, batch, dt):
    """w[, v] = eig a: the Schur form, then back-substitution (module docstring)."""
    n = a.aval.shape[-1]
    real = np.dtype(dt).kind == "f"
    vectors = len(eqn.outvars) > 1

    def body(kb, names, bufs):
        A, W = names[:2]
        H, Z = bufs["H"], bufs["Z"]
        S, Q, tau = (bufs["Hr"], bufs["Zr"], bufs["taur"]) if real else (H, Z, bufs["tau"])
        schur_form(kb, A, S, Q, tau, n, not real,
                   lambda kb: _balance(kb, S, bufs["d"], n, not real))
        if real:
            with kb.block("if _fin:"):
                with kb.block(f"for _t in range({n * n}):"):
                    kb.line(f"{H}[_o + _t] = complex({S}[_o + _t], 0.0)")
                    kb.line(f"{Z}[_o + _t] = complex({Q}[_o + _t], 0.0)")
                _split_pairs(kb, H, Z, n)
        with kb.block("if not _fin:"):
            nan_out(kb, [(W, n, True)] + ([(names[2], n * n, True)] if vectors else []))
            kb.line("continue")
        with kb.block(f"for _k in range({n}):"):
            kb.line(f"{W}[_b * {n} + _k] = {H}[_o + _k * {n + 1}]")
        if vectors:
            _vectors(kb, H, Z, bufs["y"], bufs["x"], bufs["d"], names[2], n, real)

    temps = [("H", n * n, _C128), ("Z", n * n, _C128), ("tau", n, _C128),
             ("y", n, _C128), ("x", n, _C128), ("d", n, _F64)]
    if real:
        temps += [("Hr", n * n, _F64), ("Zr", n * n, _F64), ("taur", n, _F64)]
    how = "real Schur form" if real else "complex Schur form"
    per_matrix(em, eqn, f"eig of {a.aval.str_short()} ({how}, back-substitution, one thread "
               "per matrix)", batch, body, temps)
