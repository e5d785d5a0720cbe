"""Numba's `_MemInfo` objects export their memory read-only.

An array a Numba kernel allocates reaches Python over a `_MemInfo` (the array's `.base`),
which exports the memory through the buffer protocol as writable (numba's _nrt_python.c,
`MemInfo_getbuffer`: readonly 0).  xforms boxes its results read-only, as a jax.Array's
`np.asarray` is (issue #31), but `np.frombuffer(result.base, result.dtype)[0] = 7` or a
`memoryview` of the base wrote into the immutable result (or into a cached constant) all the
same.  The type's buffer slot is replaced here, once, by a function that refuses a writable
export (BufferError, as for `bytes`) and marks the others read-only: nothing is copied and
no call of a compiled function pays anything.

    >>> install()
    >>> memoryview(result.base).readonly          # a Numba kernel's output
    True

The replacement is a few lines of LLVM IR (a C function is needed: a buffer slot reports
its refusal by an exception set and -1, which a ctypes callback cannot); it calls Numba's
own `MemInfo_getbuffer`.  It is installed only where the type's layout is the one read here
(CPython's type object, Py_buffer's fields), checked on a probe `_MemInfo` before and after.
"""
import ctypes
import threading

_PYBUF_WRITABLE = 0x0001
_TP_AS_BUFFER = 20 * 8        # PyTypeObject: the 21st pointer-sized field (3.8-3.13)
_READONLY = 4 * 8             # Py_buffer: buf, obj, len, itemsize, then int readonly
_kept = []                    # (the engine, the slot table: alive as long as the process)
_lock = threading.Lock()
_MESSAGE = "the memory of an xforms result is read-only (xforms arrays are immutable)"

_IR = """
@msg = private constant [MSG_LEN x i8] c"MSG\\00"
define i32 @xf_meminfo_getbuffer(ptr %exporter, ptr %view, i32 %flags) {
entry:
  %w = and i32 %flags, 1
  %writable = icmp ne i32 %w, 0
  br i1 %writable, label %refuse, label %fill
refuse:
  %exc = load ptr, ptr inttoptr (i64 BUFFER_ERROR to ptr)
  call void inttoptr (i64 SET_STRING to ptr)(ptr %exc, ptr @msg)
  ret i32 -1
fill:
  %r = call i32 inttoptr (i64 ORIGINAL to ptr)(ptr %exporter, ptr %view, i32 %flags)
  %ok = icmp eq i32 %r, 0
  br i1 %ok, label %mark, label %done
mark:
  %ro = getelementptr i8, ptr %view, i64 READONLY
  store i32 1, ptr %ro
  ret i32 0
done:
  ret i32 %r
}
"""


def _slot(tp):
    """The address of type `tp`'s tp_as_buffer field."""
    return id(tp) + _TP_AS_BUFFER


def _probe():
    """A `_MemInfo` of a few bytes, and the type."""
    from numba.core.runtime import nrt
    mi = nrt.rtsys.meminfo_alloc(16)
    return mi, type(mi)


def _layout_holds(mi, tp):
    """Does tp_as_buffer sit where it is read, and export `mi`'s memory?"""
    procs = ctypes.c_void_p.from_address(_slot(tp)).value
    name = ctypes.c_char_p.from_address(id(tp) + 3 * 8).value
    if not procs or name != b"_nrt_python._MemInfo":
        return False
    read = ctypes.c_void_p.from_address         # (int has no buffer slot, bytes has one)
    if read(_slot(int)).value is not None or read(_slot(bytes)).value is None:
        return False
    view = memoryview(mi)
    return view.nbytes == 16 and not view.readonly and _address(view) == mi.data


def _address(view):
    import numpy as np
    return np.frombuffer(view, np.uint8).ctypes.data


def install():
    """Replace `_MemInfo`'s buffer slot (once; a layout other than the one checked leaves
    Numba as it is)."""
    with _lock:
        if _kept:
            return _kept[0] is not None
        try:
            ok = _install()
        except Exception:          # (a layout or a toolchain not as assumed: Numba's own)
            ok = False
        if not ok:
            _kept.append(None)
        return ok


def _install():
    import llvmlite.binding as llvm
    mi, tp = _probe()
    if not _layout_holds(mi, tp):
        return False
    original_procs = ctypes.c_void_p.from_address(_slot(tp)).value
    original = ctypes.c_void_p.from_address(original_procs).value       # bf_getbuffer
    api = ctypes.pythonapi
    text = (_IR.replace("BUFFER_ERROR", str(ctypes.addressof(
        ctypes.c_void_p.in_dll(api, "PyExc_BufferError"))))
        .replace("SET_STRING", str(ctypes.cast(api.PyErr_SetString, ctypes.c_void_p).value))
        .replace("ORIGINAL", str(original)).replace("READONLY", str(_READONLY))
        .replace("MSG_LEN", str(len(_MESSAGE) + 1)).replace("MSG", _MESSAGE))
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    context = llvm.create_context()      # (its own: a Numba compile may share the global)
    module = llvm.parse_assembly(text, context)
    module.verify()
    engine = llvm.create_mcjit_compiler(
        module, llvm.Target.from_default_triple().create_target_machine(jit=True))
    engine.finalize_object()
    fn = engine.get_function_address("xf_meminfo_getbuffer")
    procs = (ctypes.c_void_p * 2)(fn, None)          # PyBufferProcs: get, release
    ctypes.c_void_p.from_address(_slot(tp)).value = ctypes.addressof(procs)
    _kept.append((engine, context, procs, original_procs))
    view = memoryview(mi)
    if view.readonly and _address(view) == mi.data:
        return True
    ctypes.c_void_p.from_address(_slot(tp)).value = original_procs       # (undone)
    _kept.clear()
    return False
