"""Convolutions on the direct LLVM path (issue #35): a plan's `Op` step of
conv_general_dilated as the one call the Numba kernel makes (xforms/kernels/ops/conv.py):
the precompiled, shape-generic `conv_run` (xforms/kernels/runtime/conv.py, kept in Numba's
disk cache), called by its stable symbol (numba_fixes/unlinked.py) with the same flat
operands and the same 45 sizes, strides and geometry -- so the results are its bit for bit
and nothing about the convolution is compiled here.

    takes(eqn)              # a float32/float64 convolution
    emit(module, eqn)       # module: the loops.py `_Loops` being written

The call follows Numba's calling convention: a status (0: done), a pointer for the result
(conv_run returns none) and one for an exception's details, then each argument's members
(a 1-D array: meminfo, parent, size, itemsize, data, shape, stride; the plan's ints one
i64 each).  The arrays pass no meminfo (conv_run keeps none of them).  A failed call (it
allocates its blocks' buffers: a MemoryError in the Numba kernel) raises MemoryError.
"""
import threading

import numpy as np

from ....codegen import conv_geometry, conv_sizes
from ..memory import no_memory
from ..scalar import Refused

OPS = ("conv_general_dilated",)
_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_symbols = {}               # element type -> conv_run's stable symbol, bound in this process
_lock = threading.Lock()


def takes(eqn):
    """Whether conv_general_dilated `eqn` is one the direct path calls conv_run for: its
    operands and result of one float dtype (as the Numba kernel's, which allocates the
    result in the output's dtype).

        >>> takes(eqn)      # f32[32,28,28,1] * f32[3,3,1,32] -> f32[32,26,26,32]
        True
    """
    return (eqn.prim.name in OPS
            and len({np.dtype(v.aval.dtype) for v in (*eqn.invars, *eqn.outvars)}) == 1
            and np.dtype(eqn.outvars[0].aval.dtype) in _TYPES)


def plan_ints(eqn):
    """conv_run's 45 ints for `eqn`, as the Numba kernel passes them: sizes and strides of
    lhs, rhs and out along their logical axes, the geometry, 0 (conv_run picks the parts)."""
    return tuple(int(i) for i in conv_sizes(eqn) + conv_geometry(eqn.params) + (0,))


def emit(mod, eqn):
    """Write the call of conv_run for `eqn` into `mod` (operands and output: its arrays)."""
    if not takes(eqn):
        raise Refused(f"a convolution of {eqn.outvars[0].aval}")
    vs = (*eqn.invars, *eqn.outvars)
    if not all(v in mod.arrays for v in vs):
        raise Refused("a convolution of values that are no arrays of the module")
    out = eqn.outvars[0]
    if 0 in tuple(int(d) for d in out.aval.shape):
        return
    dt = np.dtype(out.aval.dtype)
    sym, k = _symbol(dt), mod.fresh()[2:]
    # (Numba's convention: where the callee puts its result and an exception's details)
    mod.allocas += [f"%cvret{k} = alloca ptr", f"%cvexc{k} = alloca ptr"]
    args = [f"ptr %cvret{k}", f"ptr %cvexc{k}"]
    for v in vs:
        n = int(np.prod([int(d) for d in v.aval.shape], dtype=np.int64))
        args += ["ptr null", "ptr null", f"i64 {n}", f"i64 {dt.itemsize}",
                 f"ptr {mod.arrays[v][0]}", f"i64 {n}", f"i64 {dt.itemsize}"]
    args += [f"i64 {i}" for i in plan_ints(eqn)]
    mod.decls.add(f"declare i32 @{sym}({', '.join(a.split()[0] for a in args)})")
    mod.emit(f"%cvst{k} = call i32 @{sym}({', '.join(args)})")
    mod.emit(f"%cvfail{k} = icmp ne i32 %cvst{k}, 0")
    no_memory(mod, f"%cvfail{k}")


def _symbol(dt):
    """conv_run's stable symbol for `dt` (1-D C arrays of it, and 45 int64s), bound to its
    code, compiled or loaded from Numba's disk cache once a process (as the Numba kernel's
    first call binds it)."""
    with _lock:
        if dt not in _symbols:
            from numba.core import types
            from numba.np.numpy_support import from_dtype
            from ....numba_fixes.unlinked import bind
            a = types.Array(from_dtype(dt), 1, "C")
            _, _symbols[dt] = bind("xforms.kernels.runtime.conv", "conv_run",
                                   (a, a, a, types.UniTuple(types.int64, 45)))
    return _symbols[dt]
