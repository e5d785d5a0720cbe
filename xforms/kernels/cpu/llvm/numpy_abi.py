"""What LLVM-compiled array kernels assume of NumPy's C structs, checked against real
arrays at first use (xforms/kernels/cpu/llvm/loops.py reads arrays through them).

    ok()          # True: the offsets below hold in this process, the symbols are bound

`OFFSETS`: bytes from a `PyArrayObject` to its data pointer, rank, shape pointer, descr
and flags (numpy/ndarraytypes.h `PyArrayObject_fields`), and from a `PyArray_Descr` to
its byte order and type number.  `PyArray_NewFromDescr` is entry 94 of NumPy's C-API
table (numpy/__multiarray_api.h); it is called once here to check that it is (making an
`xforms` Array: the kernels' outputs are of the eager array type, as Numba's are).  Where anything
differs the array kernels are refused and Numba compiles the programs instead.
"""
import ctypes

import numpy as np

OFFSETS = {"data": 16, "nd": 24, "dimensions": 32, "descr": 56, "flags": 64,
           "byteorder": 26, "type_num": 28}
C_ALIGNED = 0x0001 | 0x0100              # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED
_NEW_INDEX = 94
_state = []


def ok():
    """Whether the array kernels' assumptions hold (checked once, symbols bound then)."""
    if not _state:
        try:
            _state.append(_check())
        except Exception:
            _state.append(False)
    return _state[0]


def _read(address, ctype):
    return ctype.from_address(address).value


def _new_function():
    from numpy._core import _multiarray_umath as mu
    capsule = ctypes.py_object(mu._ARRAY_API)
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_void_p, [ctypes.py_object]
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_void_p]
    table = get(capsule, name(capsule))
    return _read(table + 8 * _NEW_INDEX, ctypes.c_void_p)


def _check():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)[:, 1:]
    base = id(a)
    if (_read(base + OFFSETS["data"], ctypes.c_void_p) != a.ctypes.data
            or _read(base + OFFSETS["nd"], ctypes.c_int) != 2
            or _read(base + OFFSETS["descr"], ctypes.c_void_p) != id(a.dtype)
            or _read(base + OFFSETS["flags"], ctypes.c_int) != a.flags.num):
        return False
    dims = _read(base + OFFSETS["dimensions"], ctypes.c_void_p)
    if [_read(dims + 8 * k, ctypes.c_int64) for k in range(2)] != [2, 2]:
        return False
    for dt in (np.float32, np.float64):
        d = np.dtype(dt)
        if (_read(id(d) + OFFSETS["type_num"], ctypes.c_int) != d.num
                or _read(id(d) + OFFSETS["byteorder"], ctypes.c_char) != b"="):
            return False
    return _check_new(_new_function())


def _check_new(address):
    """Call the C-API entry taken for PyArray_NewFromDescr once; bind the symbols if it is."""
    from xforms.core.trace import Array
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                            ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_int, ctypes.c_void_p)(address)
    d = np.dtype(np.float64)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(d))       # (NewFromDescr steals it)
    made = new(id(Array), id(d), 2, (ctypes.c_int64 * 2)(3, 5), None, None, 0, None)
    if not (type(made) is Array and made.shape == (3, 5) and made.dtype == d
            and made.flags.c_contiguous):
        return False
    import llvmlite.binding as llvm
    for name, addr in (("xf_PyArray_NewFromDescr", address), ("PyArray_Type", id(np.ndarray)),
                       ("xf_Array_Type", id(Array)),
                       ("xf_descr_float32", id(np.dtype(np.float32))),
                       ("xf_descr_float64", id(np.dtype(np.float64)))):
        llvm.add_symbol(name, addr)
    for name in ("PyType_IsSubtype", "Py_IncRef"):
        llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name),
                                          ctypes.c_void_p).value)
    return True
