"""The plan's copying ops on the direct LLVM path (issue #35): `concatenate` and a general
`reshape` as byte copies into the buffer the kernel's module allocated for the result
(`loops.Loops`), the values the Numba path's (xforms/kernels/cpu/numba/ops.py: a concatenate's
copy loops, a reshape's view) exactly: only copied.

    y = concatenate([a, b], 1)        # a: (32, 128), b: (32, 384), y: (32, 512)
    for p in range(32):               # (the axes before 1: rows of contiguous blocks)
        memcpy(y + (p * 512 + 0) * 4, a + p * 128 * 4, 128 * 4)
        memcpy(y + (p * 512 + 128) * 4, b + p * 384 * 4, 384 * 4)

The operands placed in a concatenate's slots (`plan.placed`: their producers wrote them
there, xforms/kernels/cpu/llvm/slots.py) are not copied.
"""
import numpy as np

from .....loops.ir import Scalar
from ...scalar import Refused

OPS = ("concatenate", "reshape")
_MEMCPY = "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)"


def emit(m, eqn):
    """Emit op `eqn` (a name in OPS) into kernel module `m`."""
    (_concatenate if eqn.prim.name == "concatenate" else _reshape)(m, eqn)


def memcpy(m, dst, src, nbytes):
    """Copy `nbytes` (a Python int or an i64 value) from `src` to `dst` (no overlap)."""
    m.decls.add(_MEMCPY)
    if nbytes != 0:
        m.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {src}, i64 {nbytes}, i1 false)")


def _size(shape):
    return int(np.prod([int(d) for d in shape], dtype=np.int64))


def _reshape(m, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    if not out.aval.shape or not x.aval.shape:      # (a float's or an integer's value)
        ty, mem = m._element(out)
        if ty != mem:
            raise Refused("a one-element reshape of bools")
    if not out.aval.shape:                  # (a one-element array's value)
        r = m.fresh()
        m.emit(f"{r} = load {ty}, ptr {m.arrays[x][0]}")
        m.names[out] = r
        return
    data, shape = m.arrays[out]
    if not x.aval.shape:
        m.emit(f"store {ty} {m.expr(Scalar(x), ty)}, ptr {data}")
        return
    memcpy(m, data, m.arrays[x][0], _size(shape) * np.dtype(out.aval.dtype).itemsize)


def _concatenate(m, eqn):
    out, dim = eqn.outvars[0], eqn.params["dimension"]
    data, shape = m.arrays[out]
    item = np.dtype(out.aval.dtype).itemsize
    rows, inner = _size(shape[:dim]), _size(shape[dim + 1:])
    off = 0
    for x in eqn.invars:
        n = int(x.aval.shape[dim])
        slot = m.plan.placed.get(x)
        if n and rows and inner and not (slot is not None and slot.out is out):
            _blocks(m, data, m.arrays[x][0], rows, n * inner * item,
                    int(shape[dim]) * inner * item, off * inner * item)
        off += n


def _blocks(m, dst, src, rows, block, dst_stride, dst_off):
    """`rows` contiguous blocks of `block` bytes from `src` into `dst` (row p at
    p * dst_stride + dst_off)."""
    if rows == 1:
        memcpy(m, m.address("i8", dst, [(dst_off, 1)]), src, block)
        return
    row = object()

    def one():
        i = m.syms[row]
        s = m.address("i8", src, [(i, block)])
        memcpy(m, m.address("i8", dst, [(i, dst_stride)] + [(dst_off, 1)] * bool(dst_off)), s,
               block)
    m._counted(row, 0, rows, False, one)
