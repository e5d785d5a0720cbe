"""`runtime_check(pred, x; message)` on the direct LLVM path: where `pred` is false the
kernel raises RuntimeError(message) -- the arrays it made so far released, NULL returned,
as xforms/kernels/cpu/llvm/memory.py's MemoryError -- else its result is `x` (the same
buffer, or the same value).  Reverse-mode while loops check their checkpoint count with it
(xforms/primitives/control/loops.py), so an adaptive ODE solve's gradient needs it.

    # n2:i64[] = runtime_check ok n
    br i1 %ok, label %chk7, label %fail7
    fail7:  PyErr_SetString(PyExc_RuntimeError, "...");  release;  ret NULL
    chk7:   (n2 is n)
"""
import numpy as np

from ..scalar import Refused
from .arrays.copies import memcpy

NAME = "runtime_check"


def takes(eqn):
    """Whether `eqn` is a runtime_check of a bool scalar predicate and a 0-d operand."""
    return (eqn.prim.name == NAME and not eqn.invars[0].aval.shape
            and not eqn.invars[1].aval.shape)


def emit(m, eqn):
    """Write check `eqn` (`takes(eqn)`) into kernel module `m` (a `loops.Loops`)."""
    if not takes(eqn):
        raise Refused(eqn)
    pred, x = eqn.invars
    out = eqn.outvars[0]
    ok = _scalar(m, pred)
    k = m.fresh()[2:]
    msg = eqn.params["message"].encode() + b"\x00"
    name = f"@chkmsg{k}"
    m.globals.append(f"{name} = private constant [{len(msg)} x i8] c\""
                     + "".join(f"\\{b:02X}" for b in msg) + '"')
    m.decls.add("@xf_PyExc_RuntimeError = external global ptr")
    m.emit(f"br i1 {ok}, label %chk{k}, label %chkfail{k}")
    m.lines.append(f"chkfail{k}:")
    exc = m.fresh()
    m.emit(f"{exc} = load ptr, ptr @xf_PyExc_RuntimeError")
    m.emit(f"call void @PyErr_SetString(ptr {exc}, ptr {name})")
    for obj in m.owned:
        m.emit(f"call void @Py_DecRef(ptr {obj})")
    m.emit("ret ptr null")
    m.label(f"chk{k}")
    _alias(m, x, out)


def _scalar(m, v):
    """The i1 value of bool scalar `v`: a literal, a value of the module, or its array's."""
    if hasattr(v, "val"):
        return "true" if bool(v.val) else "false"
    if v in m.names:
        return m.names[v]
    data = m.arrays[v][0]
    b, r = m.fresh(), m.fresh()
    m.emit(f"{b} = load i8, ptr {data}")
    m.emit(f"{r} = icmp ne i8 {b}, 0")
    return r


def _alias(m, x, out):
    """`out` = `x`: the value, or the buffer (copied where the plan gave `out` its own)."""
    if hasattr(x, "val") or x in m.names:
        value = m.value(x, m.value_ty(x.aval)) if hasattr(x, "val") else m.names[x]
        if out in m.arrays:
            ty, mem = m._element(out)
            if ty != mem:
                raise Refused("a checked bool")
            m.emit(f"store {ty} {value}, ptr {m.arrays[out][0]}")
        m.names[out] = value
        return
    if x not in m.arrays:
        raise Refused(x)
    if out in m.arrays and m.arrays[out][0] != m.arrays[x][0]:
        memcpy(m, m.arrays[out][0], m.arrays[x][0], np.dtype(x.aval.dtype).itemsize)
    else:
        m.arrays[out] = m.arrays[x]
