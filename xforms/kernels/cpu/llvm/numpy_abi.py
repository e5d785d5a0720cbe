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
WRITEABLE = 0x0400                       # NPY_ARRAY_WRITEABLE (outputs clear it)
# NumPy's type numbers, keyed by how the kernels store an element (checked below; "i8" the
# workspace's bytes, "bool" a bool's byte, "i64"/"i32" int64/int32, the other integers by
# their dtype's name, since LLVM's integer types have no sign: `STORED`)
TYPE_NUMBERS = {"float": 11, "double": 12, "i8": 2, "bool": 0, "i64": 7, "i32": 5,
                "int8": 1, "uint8": 2, "int16": 3, "uint16": 4, "uint32": 6, "uint64": 8,
                "complex64": 14, "complex128": 15}
_DTYPES = {"float": np.float32, "double": np.float64, "bool": np.bool_, "i64": np.int64,
           "i32": np.int32, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
           "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
           "complex64": np.complex64, "complex128": np.complex128}
DESCR = {k: f"xf_descr_{np.dtype(dt).name}" for k, dt in _DTYPES.items()}  # their descrs' symbols
STORED = {np.dtype(dt): k for k, dt in _DTYPES.items()}    # dtype -> its key


# a complex element: a pair of floats, real part first (NumPy's layout and Numba's value)
COMPLEX_TYPES = {"complex64": "{float, float}", "complex128": "{double, double}"}


def llvm_type(key):
    """The LLVM type an element of storage key `key` is loaded and stored as.

        >>> llvm_type("uint32"), llvm_type("double"), llvm_type("complex64")
        ('i32', 'double', '{float, float}')
    """
    if key in COMPLEX_TYPES:
        return COMPLEX_TYPES[key]
    dt = _DTYPES.get(key)
    return key if dt is None or np.dtype(dt).kind not in "iu" else f"i{np.dtype(dt).itemsize * 8}"
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
    frozen = np.zeros(2)
    frozen.setflags(write=False)
    if (not a.flags.num & WRITEABLE
            or _read(id(frozen) + OFFSETS["flags"], ctypes.c_int) & WRITEABLE):
        return False
    dims = _read(base + OFFSETS["dimensions"], ctypes.c_void_p)
    if [_read(dims + 8 * k, ctypes.c_int64) for k in range(2)] != [2, 2]:
        return False
    if TYPE_NUMBERS != {**{k: np.dtype(dt).num for k, dt in _DTYPES.items()},
                        "i8": np.dtype(np.uint8).num}:
        return False
    for dt in _DTYPES.values():
        d = np.dtype(dt)
        if (_read(id(d) + OFFSETS["type_num"], ctypes.c_int) != d.num
                or _read(id(d) + OFFSETS["byteorder"], ctypes.c_char) != d.byteorder.encode()):
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
                       *((DESCR[k], id(np.dtype(dt))) for k, dt in _DTYPES.items())):
        llvm.add_symbol(name, addr)
    for name in ("PyType_IsSubtype", "Py_IncRef"):
        llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name),
                                          ctypes.c_void_p).value)
    return True


def helpers_ir():
    """IR of `xf_data(obj, typenum, ndim, dims) -> data pointer or NULL (TypeError set)`.

    `noinline` (issue #35, session 27): inlined at each array argument (the MLP's hvp has
    15), its checks were ~40% of the kernel's IR after the passes (a third of the MLP f's
    -O3 and a sixth of its code generation: 0.085 -> 0.065 CPU s); called, it costs a few
    ns per argument per call."""
    off = OFFSETS
    return f"""declare i32 @PyType_IsSubtype(ptr, ptr)
declare void @Py_IncRef(ptr)
declare ptr @xf_PyArray_NewFromDescr(ptr, ptr, i32, ptr, ptr, ptr, i32, ptr)
@PyArray_Type = external global i8
@xf_Array_Type = external global i8
{"".join(f"@{d} = external global i8{chr(10)}" for d in DESCR.values())}@amsg = private constant [35 x i8] c"argument is not the kernel's array\\00"

define internal ptr @xf_data(ptr %o, i32 %tn, i32 %nd, ptr %dims) noinline {{
entry:
  %tp = getelementptr i8, ptr %o, i64 8
  %t = load ptr, ptr %tp
  %exact = icmp eq ptr %t, @PyArray_Type
  br i1 %exact, label %isarr, label %sub
sub:
  %s = call i32 @PyType_IsSubtype(ptr %t, ptr @PyArray_Type)
  %sb = icmp ne i32 %s, 0
  br i1 %sb, label %isarr, label %bad
isarr:
  %ndp = getelementptr i8, ptr %o, i64 {off['nd']}
  %and = load i32, ptr %ndp
  %fp = getelementptr i8, ptr %o, i64 {off['flags']}
  %fl = load i32, ptr %fp
  %fm = and i32 %fl, {C_ALIGNED}
  %dp = getelementptr i8, ptr %o, i64 {off['descr']}
  %d = load ptr, ptr %dp
  %tnp = getelementptr i8, ptr %d, i64 {off['type_num']}
  %atn = load i32, ptr %tnp
  %bop = getelementptr i8, ptr %d, i64 {off['byteorder']}
  %bo = load i8, ptr %bop
  %c1 = icmp eq i32 %and, %nd
  %c2 = icmp eq i32 %fm, {C_ALIGNED}
  %c3 = icmp eq i32 %atn, %tn
  %c4 = icmp ne i8 %bo, 62
  %c12 = and i1 %c1, %c2
  %c34 = and i1 %c3, %c4
  %c = and i1 %c12, %c34
  br i1 %c, label %shape, label %bad
shape:
  %shp = getelementptr i8, ptr %o, i64 {off['dimensions']}
  %sh = load ptr, ptr %shp
  %n = sext i32 %nd to i64
  br label %dim
dim:
  %k = phi i64 [0, %shape], [%k1, %same]
  %more = icmp slt i64 %k, %n
  br i1 %more, label %cmp, label %good
cmp:
  %ap = getelementptr i64, ptr %sh, i64 %k
  %a = load i64, ptr %ap
  %wp = getelementptr i64, ptr %dims, i64 %k
  %w = load i64, ptr %wp
  %k1 = add i64 %k, 1
  %eq = icmp eq i64 %a, %w
  br i1 %eq, label %same, label %bad
same:
  br label %dim
good:
  %datap = getelementptr i8, ptr %o, i64 {off['data']}
  %data = load ptr, ptr %datap
  ret ptr %data
bad:
  %exc = load ptr, ptr @xf_PyExc_TypeError
  call void @PyErr_SetString(ptr %exc, ptr @amsg)
  ret ptr null
}}
"""
