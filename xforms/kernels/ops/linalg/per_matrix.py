"""The one-thread-per-matrix CUDA kernels of our own factorisations (jacobi.py: eigh, svd,
qr; schur.py: hessenberg, schur, sqrtm; eig.py: eig): the kernel around a body
that writes matrix `_b`'s code, and the lines and spellings those bodies share -- conj,
|x|^2, zero and the scratch dtype for real or complex scratch, an element of a scratch
matrix, loading a matrix with whether it is finite, a Householder reflector made from a
column and applied to one, NaN outputs.

    # per_matrix(em, eqn, "eigh of f64[2,4,4] (...)", 2, body, [("S", 16, float64)]):
    for _b in range(cuda.grid(1), 2, cuda.gridsize(1)):
        ...                        # body(kb, names, bufs): matrix _b, scratch _TS
"""
import numpy as np

from ...cuda.printer.emit import KernelBuilder
from ...cuda.printer.kernel_builder import cdiv

_F64, _C128 = np.dtype(np.float64), np.dtype(np.complex128)


def per_matrix(em, eqn, what, batch, body, temps):
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


class Math:
    """How the generated code spells conj, |x|^2 and zero for real or complex scratch, and
    that scratch's dtype (float64 or complex128, whatever the matrix's).

    >>> Math(True).abs2("_x"), Math(False).conj("_x"), Math(True).scratch.name
    ('((_x).real ** 2 + (_x).imag ** 2)', '_x', 'complex128')
    """

    def __init__(self, cplx):
        self.cplx = cplx
        self.scratch = _C128 if cplx else _F64

    def conj(self, e):
        return f"({e}).conjugate()" if self.cplx else e

    def abs2(self, e):
        return f"(({e}).real ** 2 + ({e}).imag ** 2)" if self.cplx else f"({e}) ** 2"

    def zero(self):
        return "0j" if self.cplx else "0.0"


def element(M, n, base="_o"):
    """Element (i, j) of the n x n scratch matrix M at offset `base`, as a function of i, j.

    >>> element("H", 4)("_i + 1", "_j")
    'H[_o + (_i + 1) * 4 + _j]'
    """
    return lambda i, j: f"{M}[{base} + ({i}) * {n} + {j}]"


def load_matrix(kb, dst, src, n, cast):
    """Copy matrix `_b` of `src` into scratch `dst` (offset `_o`), `cast` around each entry;
    `_fin` is then whether every entry is finite."""
    kb.line("_fin = True")
    with kb.block(f"for _t in range({n * n}):"):
        kb.line(f"_v = {cast}({src}[_o + _t])")
        kb.line(f"{dst}[_o + _t] = _v")
        with kb.block("if not (abs(_v) < math.inf):                 # (NaN or infinite)"):
            kb.line("_fin = False")


def reflector(kb, at, alpha, rows, m, tau_out, i="_i"):
    """Lines of LAPACK's ?larfg on one column, inside a loop over reflectors (a zero one
    `continue`s it): alpha = at(alpha) and x = at(r), r in range(*rows), become beta and the
    vector v = x / (alpha - beta); `_tau` = (beta - alpha) / beta, also stored in tau_out;
    beta = -sign(Re alpha) |(alpha, x)|.  m: a Math.

        reflector(kb, lambda r: f"W[_o + {r} * 3 + _j]", "_j", ("_j + 1", 3), Math(False),
                  "T[_b * 3 + _j]")
    """
    kb.line(f"_al = {at(alpha)}")
    kb.line("_x = 0.0")
    with kb.block(f"for {i} in range({rows[0]}, {rows[1]}):"):
        kb.line(f"_x += {m.abs2(at(i))}")
    with kb.block("if _x == 0.0" + (" and _al.imag == 0.0:" if m.cplx else ":")):
        kb.line(f"{tau_out} = {m.zero()}       # H = I")
        kb.line("continue")
    re_al = "_al.real" if m.cplx else "_al"
    kb.line(f"_be = -math.copysign(math.sqrt({m.abs2('_al')} + _x), {re_al})")
    kb.line("_tau = complex((_be - _al.real) / _be, -_al.imag / _be)" if m.cplx
            else "_tau = (_be - _al) / _be")
    kb.line(f"{tau_out} = _tau")
    kb.line("_sc = 1.0 / (_al - _be)")
    with kb.block(f"for {i} in range({rows[0]}, {rows[1]}):"):
        kb.line(f"{at(i)} *= _sc")
    kb.line(f"{at(alpha)} = _be")


def reflect(kb, at, v, pivot, rows, conj, tau, i="_i"):
    """Lines applying a Householder reflector I - tau u u^H from the left to one column, the
    elements at(r): u's 1 at row `pivot`, v(r) below it for r in range(*rows) (loop variable
    `i`); d = tau u^H x, then x -= d u.  `conj` spells a conjugate (Math.conj).

        reflect(kb, lambda r: f"Q[{r} * 3 + _c]", lambda r: f"W[{r} * 3 + _j]", "_j",
                ("_j + 1", 3), Math(False).conj, "_tau")
    """
    kb.line(f"_d = {at(pivot)}")
    with kb.block(f"for {i} in range({rows[0]}, {rows[1]}):"):
        kb.line(f"_d += {conj(v(i))} * {at(i)}")
    kb.line(f"_d *= {tau}")
    kb.line(f"{at(pivot)} -= _d")
    with kb.block(f"for {i} in range({rows[0]}, {rows[1]}):"):
        kb.line(f"{at(i)} -= _d * {v(i)}")


def nan_out(kb, outs):
    """Lines writing NaN into matrix `_b` of each (name, elements per matrix, complex)."""
    for name, size, cplx in outs:
        with kb.block(f"for _t in range({size}):"):
            kb.line(f"{name}[_b * {size} + _t] = "
                    + ("complex(math.nan, math.nan)" if cplx else "math.nan"))
