"""A direct LLVM kernel's heap buffers and their failure: MemoryError, the arrays the
kernel made so far released, NULL returned (as a Numba kernel raises it).

    p = heap(m, 4096)          # (the kernel calls `free(p)` when done with it)
    no_memory(m, failed)       # where i1 `failed` holds: raise MemoryError

`m` is the kernel module being emitted (xforms/kernels/cpu/llvm/loops.py's `Loops`: its
`owned` arrays are released).
"""


def heap(m, nbytes):
    """A buffer of `nbytes` from `aligned_alloc` (the kernel frees it); when it fails the
    kernel raises MemoryError (`no_memory`)."""
    m.decls.add("declare ptr @aligned_alloc(i64, i64)")
    m.decls.add("declare void @free(ptr)")
    p, z = m.fresh(), m.fresh()
    m.emit(f"{p} = call ptr @aligned_alloc(i64 64, i64 {-(-max(nbytes, 1) // 64) * 64})")
    m.emit(f"{z} = icmp eq ptr {p}, null")
    no_memory(m, z)
    return p


def no_memory(m, failed):
    """Where i1 `failed` holds: MemoryError, the arrays made so far released, NULL returned."""
    k = m.fresh()[2:]
    m.emit(f"br i1 {failed}, label %nomem{k}, label %mem{k}")
    m.lines.append(f"nomem{k}:")
    m.decls.add("declare ptr @PyErr_NoMemory()")
    m.emit("call ptr @PyErr_NoMemory()")
    for obj in m.owned:
        m.emit(f"call void @Py_DecRef(ptr {obj})")
    m.emit("ret ptr null")
    m.label(f"mem{k}")
