"""Our own CUDA kernels for the spectral factorisations -- eigh (cyclic Jacobi), svd
(one-sided Jacobi) and qr (Householder), real and complex -- where cuSOLVER is absent: on
Numba's simulator and on a GPU without the library (solver.py calls them then; with
cuSOLVER the library computes every size).  eig: eig.py.

One thread per matrix (a grid-stride loop over the batch), computing in float64 / complex128
scratch whatever the dtype (a 32-bit matrix's factors are rounded once, at the end), in
O(n^3) per sweep: right for the small matrices of batched models, the fallback for large ones.

    eigh  rotations W of each pair (p, q) zero S[p, q] of S = W^H S W (and V = V W) until
          the off-diagonal part is below 1e-15 of the whole (NaN: at most 60 sweeps); the
          values ascending with their vectors, as JAX's.  Reads the `lower` triangle (a
          complex diagonal's imaginary parts are ignored, as LAPACK's).  For a complex S,
          W = diag(1, conj(u)) J, u = S[p, q] / |S[p, q]|: the phase makes the pair real,
          then the real rotation J of |S[p, q]|.
    svd   the pairs of columns of X = A (A^H when wide) rotated to orthogonality (W = W J,
          the same W, of the Gram entry x_p^H x_q), then s = their norms, descending; columns
          of U for zero values and a full U's extra columns completed by Gram-Schmidt on the
          unit vectors.
    qr    LAPACK's Householder reflectors (?geqrf's beta = -sign(Re alpha) |(alpha, x)|, H^H
          applied to the rest), Q formed by applying them backwards to the identity
          (?orgqr/?ungqr's order): R's diagonal real, as LAPACK's.

    # v:f64[4,4] w:f64[4] = eigh a, abridged:
    for _b in range(cuda.grid(1), 1, cuda.gridsize(1)):
        ...
        for _sweep in range(60):
            for _p in range(3):
                for _q in range(_p + 1, 4):
"""
import numpy as np

from .per_matrix import Math, per_matrix, reflect, reflector

_F64 = np.dtype(np.float64)
_SWEEPS = 60
_TOL = 1e-15                  # relative size of what a sweep leaves off the diagonal


def _rotation(kb, a, b, g, cplx):
    """Lines setting `_c`, `_s` of the Jacobi rotation that zeroes `g` between (real)
    diagonal entries `a` and `b` (Numerical Recipes' t = sign(theta) / (|theta| +
    sqrt(theta^2 + 1))); complex `g`: of |g|, and the phase's products `_cv`, `_sv` (columns)
    and `_cw`, `_sw` (rows) of the unitary W = diag(1, conj(u)) J, u = g / |g|."""
    kb.line(f"_ga = abs({g})")
    kb.line(f"_th = ({b} - {a}) / (2.0 * _ga)" if cplx else f"_th = ({b} - {a}) / (2.0 * {g})")
    kb.line("_t = 1.0 / (abs(_th) + math.sqrt(_th * _th + 1.0))")
    kb.line("_t = -_t if _th < 0.0 else _t")
    kb.line("_c = 1.0 / math.sqrt(_t * _t + 1.0)")
    kb.line("_s = _t * _c")
    if cplx:
        kb.line(f"_u = {g} / _ga")
        kb.line("_cw, _sw = _c * _u, _s * _u")
        kb.line("_cv, _sv = _cw.conjugate(), _sw.conjugate()")


def _rotate(kb, count, at, cplx, rows=False, note=""):
    """A loop over `_k` in range(count) rotating the pairs at("_p"), at("_q") (element
    expressions in `_k`): columns _p, _q of a matrix times W, or (rows) its rows by W^H.
    Real: W = [[c, s], [-s, c]].

        _rotate(kb, 4, lambda c: f"S[_o + _k * 4 + {c}]", False)   # columns _p, _q of S
    """
    p, q = at("_p"), at("_q")
    cq, sq = (("_cw", "_sw") if rows else ("_cv", "_sv")) if cplx else ("_c", "_s")
    with kb.block(f"for _k in range({count}):{note}"):
        kb.line(f"_x = {p}")
        kb.line(f"_y = {q}")
        kb.line(f"{p} = _c * _x - {sq} * _y")
        kb.line(f"{q} = _s * _x + {cq} * _y")


def _column(M, ld, base="_o"):
    """Element (_k, j) of matrix M (row stride `ld`, at offset `base`), as a function of j."""
    return lambda j: f"{M}[{base} + _k * {ld} + {j}]"


def _rotate_columns(kb, M, ld, rows, cplx, base="_o"):
    """Columns _p, _q of M (row stride `ld`) times the rotation W."""
    _rotate(kb, rows, _column(M, ld, base), cplx)


def _swap_columns(kb, M, ld, rows, i, j, base="_o"):
    at = _column(M, ld, base)
    with kb.block(f"for _k in range({rows}):"):
        kb.swap(at(i), at(j))


def _selection_sort(kb, n, key, descending, columns, then):
    """Order the (real) values key("_i") (i < n) by selection, swapping the `columns`
    (tuples of `_swap_columns`' M, ld, rows[, base]) with them; then the line `then` for
    each _i.

        _selection_sort(kb, 4, lambda i: f"S[_o + {i} * 5]", False, [("Q", 4, 4)], "W[_i] = ...")
    """
    order, cmp = ("descending", ">") if descending else ("ascending", "<")
    with kb.block(f"for _i in range({n}):               # {order}: selection sort"):
        kb.line("_m = _i")
        with kb.block(f"for _j in range(_i + 1, {n}):"):
            with kb.block(f"if {key('_j')} {cmp} {key('_m')}:"):
                kb.line("_m = _j")
        with kb.block("if _m != _i:"):
            kb.swap(key("_i"), key("_m"), "_ks")
            for M, ld, rows, *base in columns:
                _swap_columns(kb, M, ld, rows, "_i", "_m", *base)
        kb.line(then)


def _eigh_load(kb, A, S, Q, n, lower, cplx):
    """Lines: matrix _b's `lower` (else upper) triangle into the Hermitian scratch S, Q = I."""
    with kb.block(f"for _i in range({n}):"):
        with kb.block(f"for _j in range({n}):"):
            hi, lo = "max(_i, _j)", "min(_i, _j)"
            src = f"{hi} * {n} + {lo}" if lower else f"{lo} * {n} + {hi}"
            kb.line(f"_x = {A}[_o + {src}]")
            if cplx:       # the other triangle conjugated, the diagonal real
                mirrored = "_i < _j" if lower else "_i > _j"
                kb.line(f"_x = complex(_x.real, 0.0) if _i == _j else "
                        f"(_x.conjugate() if {mirrored} else complex(_x))")
            kb.line(f"{S}[_o + _i * {n} + _j] = _x")
            kb.line(f"{Q}[_o + _i * {n} + _j] = 1.0 if _i == _j else 0.0")


def eigh(em, eqn, a, batch, dt):
    """v, w = eigh a: cyclic Jacobi."""
    v, w = eqn.outvars
    n = a.aval.shape[-1]
    lower = bool(eqn.params["lower"])
    cplx = np.dtype(dt).kind == "c"
    spell = Math(cplx)
    re = ".real" if cplx else ""

    def body(kb, names, bufs):
        A, V, Wv = names
        S, Q, E = bufs["S"], bufs["V"], bufs["w"]
        kb.line(f"_o = _b * {n * n}")
        _eigh_load(kb, A, S, Q, n, lower, cplx)
        with kb.block(f"for _sweep in range({_SWEEPS}):"):
            kb.line("_off = 0.0")
            kb.line("_all = 0.0")
            with kb.block(f"for _t in range({n * n}):"):
                kb.line(f"_e2 = {spell.abs2(f'{S}[_o + _t]')}")
                kb.line("_all += _e2")
                with kb.block(f"if _t % {n + 1} != 0:"):
                    kb.line("_off += _e2")
            with kb.block(f"if not _off > {_TOL ** 2} * _all:      # (NaN: stop)"):
                kb.line("break")
            with kb.block(f"for _p in range({n - 1}):"):
                with kb.block(f"for _q in range(_p + 1, {n}):"):
                    kb.line(f"_g = {S}[_o + _p * {n} + _q]")
                    with kb.block("if _g == 0.0:"):
                        kb.line("continue")
                    _rotation(kb, f"{S}[_o + _p * {n + 1}]{re}", f"{S}[_o + _q * {n + 1}]{re}",
                              "_g", cplx)
                    _rotate_columns(kb, S, n, n, cplx)
                    _rotate(kb, n, lambda r: f"{S}[_o + {r} * {n} + _k]", cplx, rows=True,
                            note="      # and the rows: W^H S W")
                    _rotate_columns(kb, Q, n, n, cplx)
        with kb.block(f"for _i in range({n}):"):
            kb.line(f"{E}[_b * {n} + _i] = {S}[_o + _i * {n + 1}]{re}")
        _selection_sort(kb, n, lambda i: f"{E}[_b * {n} + {i}]", False, [(Q, n, n)],
                        f"{Wv}[_b * {n} + _i] = {E}[_b * {n} + _i]")
        with kb.block(f"for _t in range({n * n}):"):
            kb.line(f"{V}[_o + _t] = {Q}[_o + _t]")

    sdt = spell.scratch
    per_matrix(em, eqn, f"eigh of {a.aval.str_short()} (Jacobi, one thread per matrix)",
               batch, body, [("S", n * n, sdt), ("V", n * n, sdt), ("w", n, _F64)])


def _one_sided_sweeps(kb, X, Wm, R, C, LD, uv, cplx):
    """Lines rotating the pairs of X's C columns (R rows, stride LD) to orthogonality, W
    (C x C, offset `_ow`) accumulating the rotations where `uv`."""
    spell = Math(cplx)
    with kb.block(f"for _sweep in range({_SWEEPS}):"):
        kb.line("_rotated = False")
        with kb.block(f"for _p in range({C - 1}):"):
            with kb.block(f"for _q in range(_p + 1, {C}):"):
                kb.line("_al = 0.0")
                kb.line("_be = 0.0")
                kb.line("_g = 0j" if cplx else "_g = 0.0")
                with kb.block(f"for _k in range({R}):"):
                    kb.line(f"_x = {X}[_o + _k * {LD} + _p]")
                    kb.line(f"_y = {X}[_o + _k * {LD} + _q]")
                    kb.line(f"_al += {spell.abs2('_x')}")
                    kb.line(f"_be += {spell.abs2('_y')}")
                    kb.line(f"_g += {spell.conj('_x')} * _y")
                with kb.block(f"if not abs(_g) > {_TOL} * math.sqrt(_al * _be):"):
                    kb.line("continue               # (orthogonal, zero or NaN)")
                kb.line("_rotated = True")
                _rotation(kb, "_al", "_be", "_g", cplx)
                _rotate_columns(kb, X, LD, R, cplx)
                if uv:
                    _rotate_columns(kb, Wm, C, C, cplx, "_ow")
        with kb.block("if not _rotated:"):
            kb.line("break")


def svd(em, eqn, a, batch, dt):
    """s[, u, vt] = svd a: one-sided Jacobi on A (A^H when wide)."""
    m, n = a.aval.shape[-2:]
    uv = bool(eqn.params["compute_uv"])
    full = bool(eqn.params["full_matrices"])
    cplx = np.dtype(dt).kind == "c"
    spell = Math(cplx)
    wide = n > m
    R, C = (n, m) if wide else (m, n)          # X = A^H (wide) or A: R x C, R >= C
    # the left factor of X: R x R when a full one is asked for (U of A, or V^H of a wide A)
    LD = R if uv and full else C

    def body(kb, names, bufs):
        A, S = names[:2]
        X, Wm = bufs["X"], bufs["W"]
        kb.line(f"_o = _b * {R * LD}")
        kb.line(f"_ow = _b * {C * C}")
        with kb.block(f"for _i in range({R}):"):
            with kb.block(f"for _j in range({C}):"):
                src = f"{A}[_b * {m * n} + " + (f"_j * {n} + _i]" if wide else f"_i * {n} + _j]")
                src = spell.conj(src) if wide else src
                kb.line(f"{X}[_o + _i * {LD} + _j] = {src}")
        if uv:
            with kb.block(f"for _t in range({C * C}):"):
                kb.line(f"{Wm}[_ow + _t] = 1.0 if _t % {C + 1} == 0 else 0.0")
        _one_sided_sweeps(kb, X, Wm, R, C, LD, uv, cplx)
        sv = bufs["s"]
        with kb.block(f"for _j in range({C}):"):
            kb.line("_nrm = 0.0")
            with kb.block(f"for _k in range({R}):"):
                kb.line(f"_nrm += {spell.abs2(f'{X}[_o + _k * {LD} + _j]')}")
            kb.line(f"{sv}[_b * {C} + _j] = math.sqrt(_nrm)")
        columns = [(X, LD, R)] + ([(Wm, C, C, "_ow")] if uv else [])
        _selection_sort(kb, C, lambda i: f"{sv}[_b * {C} + {i}]", True, columns,
                        f"{S}[_b * {C} + _i] = {sv}[_b * {C} + _i]")
        if not uv:
            return
        _left_vectors(kb, X, sv, R, C, LD, cplx)
        U, VT = names[2:]
        ku, kv = (m, n) if full else (C, C)
        if wide:        # A = W S X^H: u = W (m x m), vt = X^H (kv rows)
            left, right = (Wm, "_ow", C), (X, "_o", LD)
        else:           # A = X S W^H: u = X (ku columns), vt = W^H
            left, right = (X, "_o", LD), (Wm, "_ow", C)
        with kb.block(f"for _i in range({m}):"):
            with kb.block(f"for _j in range({ku}):"):
                kb.line(f"{U}[_b * {m * ku} + _i * {ku} + _j] = "
                        f"{left[0]}[{left[1]} + _i * {left[2]} + _j]")
        with kb.block(f"for _i in range({kv}):"):
            with kb.block(f"for _j in range({n}):"):
                el = f"{right[0]}[{right[1]} + _j * {right[2]} + _i]"
                kb.line(f"{VT}[_b * {kv * n} + _i * {n} + _j] = {spell.conj(el)}")

    sdt = spell.scratch
    temps = [("X", R * LD, sdt), ("W", C * C if uv else 1, sdt), ("s", C, _F64)]
    per_matrix(em, eqn, f"svd of {a.aval.str_short()} (one-sided Jacobi, one thread per "
               "matrix)", batch, body, temps)


def _left_vectors(kb, X, sv, R, C, LD, cplx):
    """X's first C columns divided by their norms; columns of zero norm and columns C..LD-1
    (a full factor) set to unit vectors orthogonalised (twice) against those before them."""
    spell = Math(cplx)
    tiny = "1e-300"
    el = (lambda k, j: f"{X}[_o + {k} * {LD} + {j}]")
    with kb.block(f"for _j in range({LD}):"):
        kb.line(f"_nrm = {sv}[_b * {C} + _j] if _j < {C} else 0.0")
        with kb.block(f"if _nrm > {tiny}:"):
            with kb.block(f"for _k in range({R}):"):
                kb.line(f"{el('_k', '_j')} /= _nrm")
            kb.line("continue")
        with kb.block(f"for _e in range({R}):"):
            with kb.block(f"for _k in range({R}):"):
                kb.line(f"{el('_k', '_j')} = 1.0 if _k == _e else 0.0")
            with kb.block("for _twice in range(2):"):
                with kb.block("for _l in range(_j):"):
                    kb.line("_d = 0j" if cplx else "_d = 0.0")
                    with kb.block(f"for _k in range({R}):"):
                        kb.line(f"_d += {spell.conj(el('_k', '_l'))} * {el('_k', '_j')}")
                    with kb.block(f"for _k in range({R}):"):
                        kb.line(f"{el('_k', '_j')} -= _d * {el('_k', '_l')}")
            kb.line("_nrm = 0.0")
            with kb.block(f"for _k in range({R}):"):
                kb.line(f"_nrm += {spell.abs2(el('_k', '_j'))}")
            with kb.block("if _nrm > 0.25:"):
                kb.line("_nrm = math.sqrt(_nrm)")
                with kb.block(f"for _k in range({R}):"):
                    kb.line(f"{el('_k', '_j')} /= _nrm")
                kb.line("break")


def _householder(kb, W, T, v, m, n, k, cplx):
    """Lines of ?geqr2 on matrix _b of W (m x n, offset `_o`): reflector _j's vector below
    its diagonal, its tau in T, R above."""
    spell = Math(cplx)
    with kb.block(f"for _j in range({k}):"):
        reflector(kb, v, "_j", ("_j + 1", m), spell, f"{T}[_b * {k} + _j]")
        with kb.block(f"for _l in range(_j + 1, {n}):    # H^H the rest: I - conj(tau) v v^H"):
            reflect(kb, lambda i: f"{W}[_o + {i} * {n} + _l]", v, "_j", ("_j + 1", m),
                    spell.conj, spell.conj("_tau"))


def qr(em, eqn, a, batch, dt):
    """q, r = qr a: Householder."""
    q, r = eqn.outvars
    m, n = a.aval.shape[-2:]
    k, kq, kr = min(m, n), q.aval.shape[-1], r.aval.shape[-2]
    cplx = np.dtype(dt).kind == "c"
    spell = Math(cplx)

    def body(kb, names, bufs):
        A, Qo, Ro = names
        W, T, Q = bufs["W"], bufs["tau"], bufs["Q"]
        v = (lambda i: f"{W}[_o + {i} * {n} + _j]")     # reflector _j's vector, below row _j
        kb.line(f"_o = _b * {m * n}")
        kb.line(f"_oq = _b * {m * kq}")
        with kb.block(f"for _t in range({m * n}):"):
            kb.line(f"{W}[_o + _t] = {A}[_o + _t]")
        _householder(kb, W, T, v, m, n, k, cplx)
        with kb.block(f"for _t in range({m * kq}):"):
            kb.line(f"{Q}[_oq + _t] = 1.0 if _t // {kq} == _t % {kq} else 0.0")
        with kb.block(f"for _j in range({k - 1}, -1, -1):      # Q = H_0 ... H_k-1 I"):
            kb.line(f"_tau = {T}[_b * {k} + _j]")
            with kb.block(f"for _c in range({kq}):"):
                reflect(kb, lambda i: f"{Q}[_oq + {i} * {kq} + _c]", v, "_j", ("_j + 1", m),
                        spell.conj, "_tau")
        with kb.block(f"for _t in range({m * kq}):"):
            kb.line(f"{Qo}[_oq + _t] = {Q}[_oq + _t]")
        with kb.block(f"for _i in range({kr}):"):
            with kb.block(f"for _l in range({n}):"):
                kb.line(f"{Ro}[_b * {kr * n} + _i * {n} + _l] = "
                        f"{W}[_o + _i * {n} + _l] if _l >= _i else 0.0")

    sdt = spell.scratch
    per_matrix(em, eqn, f"qr of {a.aval.str_short()} (Householder, one thread per matrix)",
               batch, body, [("W", m * n, sdt), ("tau", k, sdt), ("Q", m * kq, sdt)])
