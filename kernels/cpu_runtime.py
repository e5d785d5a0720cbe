"""Helpers imported by the generated CPU modules.

Library calls that every program needs (matrix products, the vectorisable math) are
ordinary `@njit(cache=True)` functions here rather than code in each kernel: Numba compiles
each once (and keeps it on disk), while a kernel only compiles a call to it; LLVM still
inlines them into the kernel.

The vectorisable math of `kernels.vecmath` is re-exported here as ordinary (not
`inline="always"`) Numba functions: each is compiled once per process instead of being
re-inlined and re-typed at every call site, and LLVM still inlines and vectorises it inside
the generated loops (the machine code is identical).

`box(a)` returns a Numba array so that it reaches Python as an `xforms.core.Array` (the
eager array type, which supports `.at[]`) without a Python-level `.view()` per output: the
array gets a Numba type whose `box_type` is `Array`.  `box0(x, like)` makes a 0-d Array
from a scalar.  Each helper is also a plain Python function, so a generated module runs
without Numba (`XFORMS_DISABLE_JIT=1`).
"""
import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic, models, overload, register_model

from xforms.core import Array


class ArrayBoxedAsXforms(types.Array):
    """A Numba array type identical to types.Array except that it boxes to xforms' Array."""

    def __init__(self, dtype, ndim, layout, readonly=False, aligned=True):
        super().__init__(dtype, ndim, layout, readonly=readonly, aligned=aligned,
                         name=f"xforms.Array({dtype}, {ndim}d, {layout})")

    @property
    def box_type(self):
        return Array

    @property
    def key(self):
        return ("xforms.Array",) + super().key


register_model(ArrayBoxedAsXforms)(models.ArrayModel)


@intrinsic
def _as_xforms(typingctx, a):
    if not isinstance(a, types.Array):
        return None
    sig = ArrayBoxedAsXforms(a.dtype, a.ndim, a.layout)(a)

    def codegen(context, builder, sig, args):
        context.nrt.incref(builder, sig.args[0], args[0])
        return args[0]
    return sig, codegen


def box(a):
    """Mark array `a` to be returned to Python as an xforms Array."""
    return np.asarray(a).view(Array)


@overload(box, inline="always")
def _box_impl(a):
    if isinstance(a, types.Array):
        return lambda a: _as_xforms(a)


def box0(x, dtype):
    """A 0-d xforms Array holding scalar `x` (dtype a NumPy scalar type)."""
    return np.asarray(x, dtype).view(Array)


@overload(box0, inline="always")
def _box0_impl(x, dtype):
    def impl(x, dtype):
        a = np.empty((), dtype)
        a[()] = x
        return _as_xforms(a)
    return impl


def _vecmath_functions():
    try:
        from . import vecmath
    except Exception:              # optional: the generator then falls back to libm
        return {}
    funcs = vecmath.rebuild_with(lambda f: numba.njit(cache=True)(f))
    return {name: funcs[name] for name in set(vecmath.VECMATH.values())}


VECMATH_FUNCS = _vecmath_functions()
globals().update(VECMATH_FUNCS)


# ---- matrix products: O = op(A) @ op(B) for C-contiguous 2-D A, B, O (op: identity or .T) --
@numba.njit(cache=True, nogil=True)
def mm_nn(a, b, o):
    np.dot(a, b, o)


@numba.njit(cache=True, nogil=True)
def mm_tn(a, b, o):
    np.dot(a.T, b, o)


@numba.njit(cache=True, nogil=True)
def mm_nt(a, b, o):
    np.dot(a, b.T, o)


@numba.njit(cache=True, nogil=True)
def mm_tt(a, b, o):
    np.dot(a.T, b.T, o)


@numba.njit(cache=True, nogil=True)
def vdot(a, b):
    return np.dot(a, b)
