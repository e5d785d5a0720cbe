"""Source-text helpers shared by the CPU and CUDA emitters, and the hook that loads the Numba
side for both (the bottom of the code generator: imports nothing else of kernels/).

>>> lit(0.5, np.float32), dtype_str(np.bool_), shape_str((3,))
('np.float32(0.5)', 'np.bool_', '(3,)')
"""
import keyword
import math
import os
import sys
import threading
from contextlib import contextmanager

import numpy as np

from xforms.errors import LoweringError
from xforms.core.ir import Literal, Names, Var, fmt_literal, pp_eqn


# ---- the Numba side: loaded by the first program that needs it ------------------------------
#: set-up steps run once, in order, by `numba_side()`: the CPU backend binds its Numba path
#: (xforms' patches, its module emitter), xforms.kernels adds every op family's rules.  Here,
#: below both backends, so that each backend loads the rules without importing the other.
NUMBA_SETUP = []
_numba_lock = threading.Lock()
_numba_loaded = []


def numba_side():
    """Load the Numba side (Numba with xforms' patches, the emitters, every rule they read)
    by running `NUMBA_SETUP` once.  Idempotent; cheap once done.  A program of the CPU's
    direct LLVM path never calls it, so it never imports Numba.

        numba_side()      # in an emitter, before it reads a rule the Numba side registers
    """
    if _numba_loaded:
        return
    with _numba_lock:
        if _numba_loaded:
            return
        before = set(sys.modules)
        try:
            for setup in NUMBA_SETUP:
                setup()
        except BaseException:
            # Ctrl-C half-way through an import: forget what this attempt half-loaded (a
            # `numba` without its submodules), so that the next program imports it afresh
            for name in set(sys.modules) - before:
                if name.partition(".")[0] == "numba" or name.startswith("xforms.kernels"):
                    del sys.modules[name]
            raise
        _numba_loaded.append(True)       # (last: the flag that every step ran)


def shape_str(shape):
    # ints stay as they are: a symbolic size (kernels/shape_symbols.Dim) prints its name
    shape = tuple(s if isinstance(s, int) else int(s) for s in shape)
    return f"({shape[0]},)" if len(shape) == 1 else str(shape)


def dtype_str(dt):
    dt = np.dtype(dt)
    return "np.bool_" if dt.kind == "b" else f"np.{dt.name}"


def float_lit(v):
    """A float as Python source (nan and inf through NumPy)."""
    v = float(v)
    if math.isnan(v):
        return "np.nan"
    if math.isinf(v):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def lit(val, dtype):
    """A literal that Numba types exactly as `dtype`."""
    dt = np.dtype(dtype)
    val = np.asarray(val).astype(dt)[()]
    if dt.kind == "b":
        return "True" if val else "False"
    if dt.kind in "iu":
        return str(int(val)) if dt == np.int64 else f"np.{dt.name}({int(val)})"
    if dt.kind == "f":
        s = float_lit(val)
        return s if dt == np.float64 else f"np.{dt.name}({s})"
    return f"np.{dt.name}(complex({float_lit(val.real)}, {float_lit(val.imag)}))"


class SourceBuilder:
    """Lines with an indentation level; `block(header)` opens an indented block."""

    def __init__(self):
        self.lines, self.depth = [], 0

    def line(self, s=""):
        self.lines.append(("    " * self.depth + s) if s else "")

    @contextmanager
    def block(self, header):
        self.line(header)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1


class Naming:
    """The names an emitter gives Vars: `s(v)` a scalar, `A(v)` an array (upper case), as
    the IR listing prints them (`bind_names`), prefixed per sub-program (`scope_prefix`);
    `fresh(base)` a new temporary.  The emitter sets `names`, `_fresh`, `_scopes`;
    `RESERVED` are names its module uses itself, `FRESH` the spelling of temporaries."""

    RESERVED = frozenset()
    FRESH = "{}{}"

    def bind_names(self, jaxpr, prefix=""):
        names = Names()
        for v in list(jaxpr.constvars) + list(jaxpr.invars):
            names(v)
        for e in jaxpr.eqns:
            for v in e.outvars:
                names(v)
            for a in e.invars:
                names(a)
        for v, n in names.names.items():
            if isinstance(v, Var):
                self.names[v] = prefix + n
        return names

    def scope_prefix(self, kind):
        self._scopes += 1
        return f"{kind}{self._scopes}_"

    def s(self, v):
        """Scalar name of a Var."""
        n = self.names.get(v)
        if n is None:
            n = self.names[v] = f"u{len(self.names)}_"
        if keyword.iskeyword(n) or n in self.RESERVED:
            n += "_"
        return n

    def A(self, v):
        """Array name of a materialized Var."""
        return self.s(v).upper()

    def fresh(self, base="t"):
        self._fresh += 1
        return self.FRESH.format(base, self._fresh)


class NameView:
    """Prints variables with an emitter's names (`em.s(v)`), literals as the IR does: the
    names the generated code's equation comments use."""

    def __init__(self, em):
        self.em = em

    def __call__(self, v):
        if isinstance(v, Literal):
            return fmt_literal(v.val)
        return self.em.s(v)


def eqn_comment(eqn, em, width, squeeze=False):
    """One equation as a comment line's text (without the `#`): the IR listing with the
    emitter's names, cut to `width` characters (whitespace runs squeezed to one space when
    `squeeze`), then the user's file, line and function."""
    text = pp_eqn(eqn, NameView(em)).replace("\n", " ")
    if squeeze:
        text = " ".join(text.split())
    if len(text) > width:
        text = text[:width - 3] + "..."
    info = eqn.source_info
    where = f"  {os.path.basename(info.file)}:{info.line} ({info.function})" if info else ""
    return text + where


def size_product(xs):
    """The product of sizes as a Python int; a symbolic size (an int, its text kept:
    xforms/kernels/prepare/shape_symbols.py `Dim`) stays a factor of the text, other
    integers (NumPy's) are made ints.

        size_product([Dim(100, "n0"), np.int64(8)])   # -> (n0 * 8), equal to 800"""
    return math.prod(x if isinstance(x, int) else int(x) for x in xs)


# BLAS/LAPACK type of each dtype, as xforms/kernels/runtime/linalg.py numbers its s/d/c/z routines
# (kept here, not imported from there: that module loads SciPy's LAPACK, which only programs
# that use it should pay for)
BLAS_CODES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.complex64): 2,
              np.dtype(np.complex128): 3}


def dot_dims(eqn):
    """(xf, yf, (B, M, K, N)) of a dot_general equation: the free dims of each operand and
    the batch, row, contraction and column sizes, for both backends.

        x f64[2,5,3] . y f64[2,3,4] (batch 0/0, contract 2/1) -> ([1], [2], (2, 5, 3, 4))"""
    x, y = eqn.invars
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    xs, ys = x.aval.shape, y.aval.shape
    xf = [d for d in range(len(xs)) if d not in lc and d not in lb]
    yf = [d for d in range(len(ys)) if d not in rc and d not in rb]
    sizes = (size_product([xs[d] for d in lb]), size_product([xs[d] for d in xf]),
             size_product([xs[d] for d in lc]), size_product([ys[d] for d in yf]))
    return xf, yf, sizes


def view_layouts(eqn, xf, yf):
    """('n'|'t', 'n'|'t') when each batch index of both operands selects a matrix BLAS reads in
    place (`la_mm_views`): one free and one contracted axis each, the last axis one of them
    (its elements adjacent), any axes around them batch axes -- q @ k.T per head of q and
    k in (batch, seq, heads, dim), which would otherwise be transposed into copies; else None."""
    (lc, rc), _ = eqn.params["dimension_numbers"]
    if len(xf) != 1 or len(yf) != 1 or len(lc) != 1:
        return None
    layouts = []
    for a, first, second in ((eqn.invars[0], xf[0], lc[0]), (eqn.invars[1], rc[0], yf[0])):
        if len(a.aval.shape) - 1 not in (first, second):
            return None
        layouts.append("n" if first < second else "t")
    return tuple(layouts)


# below this many multiply-adds a loop beats the BLAS call's overhead (CPU)
BLAS_MIN_FLOPS = 512


def symbolic(*sizes):
    """Whether a size is printed as a symbol (xforms/kernels/prepare/shape_symbols.py): it
    varies between calls, so the code must not depend on it being small."""
    return any(type(s) is not int and isinstance(s, int) for s in sizes)


def cpu_blas(eqn):
    """Whether the CPU backend computes dot_general `eqn` by BLAS (else by loops): a BLAS
    dtype, no scalar operand, enough multiply-adds (or sizes that vary), some output."""
    x, y = eqn.invars
    _, _, (B, M, K, N) = dot_dims(eqn)
    return bool(np.dtype(eqn.outvars[0].aval.dtype) in BLAS_CODES and x.aval.shape
                and y.aval.shape and (B * M * N * K >= BLAS_MIN_FLOPS or symbolic(B, M, N, K))
                and M * N > 0)


def matrix_layouts(eqn, xf, yf):
    """(kx, ky, xl, yl) of a CPU BLAS product: the contraction dims of each operand in the
    order that makes both (views of) contiguous matrices where one exists, and each
    operand's layout ('n': batch, free, contracted dims in memory order; 't': batch,
    contracted, free; None: neither -- it is copied or read by views).

        x f64[5,3] . y f64[4,3] (contract 1/1) -> ([1], [1], 'n', 't')"""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    nx, ny = len(eqn.invars[0].aval.shape), len(eqn.invars[1].aval.shape)
    kx = sorted(lc)
    ky = [rc[list(lc).index(d)] for d in kx]
    xl, yl = _layout(nx, lb, xf, kx), _layout(ny, rb, ky, yf)
    if yl is None:
        ky2 = sorted(rc)
        kx2 = [lc[list(rc).index(d)] for d in ky2]
        if _layout(nx, lb, xf, kx2) is not None and _layout(ny, rb, ky2, yf):
            kx, ky = kx2, ky2
            xl, yl = _layout(nx, lb, xf, kx), _layout(ny, rb, ky, yf)
    return kx, ky, xl, yl


def _layout(nd, batch, first, second):
    """'n' if dims in memory order are batch+first+second, 't' if batch+second+first."""
    order = list(range(nd))
    if order == list(batch) + list(first) + list(second):
        return "n"
    if order == list(batch) + list(second) + list(first):
        return "t"
    return None


def lowering_error(eqn, backend, why="", advice=""):
    """The LoweringError of a backend (`"CPU"`, `"CUDA"`) that cannot lower `eqn`: the
    primitive, its operand types, the user's line, why, and what to do."""
    info = eqn.source_info
    where = f" at {info.location} ({info.function})" if info else ""
    avals = ", ".join(a.aval.str_short() for a in eqn.invars)
    return LoweringError(f"the {backend} backend cannot lower primitive '{eqn.prim.name}' on "
                         f"({avals}){where}{': ' + why if why else ''}{advice}")


OUT_GROUP = 8     # outputs are returned in nested tuples of this many (Numba compiles a
                  # flat tuple of n arrays in O(n^2) time; the direct LLVM path takes as many)


def output_accessor(k, n):
    """How the caller reads output k of n from the kernel's return value `r`."""
    if n == 1:
        return "r"
    if n <= OUT_GROUP:
        return f"r[{k}]"
    return f"r[{k // OUT_GROUP}][{k % OUT_GROUP}]"


# ---- convolutions: the sizes conv_run reads (xforms/kernels/runtime/conv.py) ----------------
def _conv_pad3(xs, fill):
    """A spatial tuple padded in front to 3 entries."""
    return (fill,) * (3 - len(xs)) + tuple(xs)


def conv_logical(shape, spec):
    """(sizes, element strides) of a C-contiguous array of `shape` along the axes `spec`
    names (two leading axes, then the spatial ones), spatial padded in front to three."""
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    sizes = (shape[spec[0]], shape[spec[1]]) + _conv_pad3([shape[d] for d in spec[2:]], 1)
    st = (strides[spec[0]], strides[spec[1]]) + _conv_pad3([strides[d] for d in spec[2:]], 0)
    return sizes, st


def conv_geometry(p):
    """The `geo` tuple of conv_run: strides, low paddings, lhs and rhs dilations (three each,
    padded in front), feature_group_count, batch_group_count."""
    return (_conv_pad3(p["window_strides"], 1) + _conv_pad3([lo for lo, _ in p["padding"]], 0)
            + _conv_pad3(p["lhs_dilation"], 1) + _conv_pad3(p["rhs_dilation"], 1)
            + (p["feature_group_count"], p["batch_group_count"]))


def conv_sizes(eqn):
    """The sizes and element strides of conv_general_dilated `eqn`'s lhs, rhs and output along
    their logical axes (`conv_logical`, 30 ints): the head of conv_run's plan
    (xforms/kernels/runtime/conv.py), which the CPU kernel (kernels/ops/conv.py) and the
    direct LLVM path (kernels/cpu/llvm/ops/signal/convolutions.py) both pass."""
    plan = ()
    for v, spec in zip((*eqn.invars, *eqn.outvars), eqn.params["dimension_numbers"]):
        sizes, strides = conv_logical(tuple(v.aval.shape), spec)
        plan += sizes + strides
    return plan
