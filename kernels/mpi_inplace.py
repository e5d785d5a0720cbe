"""`MPI_Allreduce(MPI_IN_PLACE, buf, ...)` on COMM_WORLD, callable from compiled kernels:
the thin binding numba-mpi lacks (its `allreduce` always has a separate receive buffer).

kernels/lower_mpi.py reduces a large operand in place when the buffer planner gave the
result the operand's buffer (the operand is the kernel's own intermediate and dies at the
collective): no fresh output, no page faults on it, no copy inside MPI (an out-of-place
allreduce first copies the send buffer into the receive buffer).

The function comes from the library numba-mpi's calls use (`numba_mpi.common.libmpi`).
MPI_IN_PLACE is not a portable value (MPICH and its derivatives: (void*)-1; Open MPI:
(void*)1), so it is derived, not assumed: mpi4py's `MPI.IN_PLACE` is the constant of the
`mpi.h` it was built against; we use it only when mpi4py runs the same library as
numba-mpi (same `MPI_Get_library_version` string) and, for vendors we know, it matches
theirs.  Otherwise `available()` is False and collectives stay out of place.
Handles (communicator, datatype, operator) are the integers mpi4py holds
(`MPI._handleof`); compiled code bakes them in as constants, which is sound because such
kernels are never disk-cached (kernels/lower_mpi.py).

    >>> buf = np.arange(3.0) + rank                  # doctest: +SKIP
    >>> allreduce_inplace(buf, OPS["SUM"])           # 0 (MPI_SUCCESS); buf now the sum
"""
import ctypes

import numpy as np
from numba.extending import overload
from numba.np.numpy_support import as_dtype

# the MPI_IN_PLACE value of each MPI family (mpi.h), to check mpi4py's against
_KNOWN_IN_PLACE = {"MPICH": -1, "Intel MPI": -1, "MVAPICH": -1, "MVAPICH2": -1,
                   "Microsoft MPI": -1, "Open MPI": 1}
_DTYPE_NAMES = {"float64": "DOUBLE", "float32": "FLOAT", "int64": "INT64_T",
                "int32": "INT32_T", "uint8": "UINT8_T"}
_STATE = {}


def _library_version(libmpi):
    fn = libmpi.MPI_Get_library_version
    buf = ctypes.create_string_buffer(8192)
    n = ctypes.c_int(0)
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    if fn(buf, ctypes.byref(n)) != 0:
        return None
    return buf.raw[:n.value].decode(errors="replace").rstrip("\0").strip()


def _probe():
    """-> (why-not or None, binding dict)."""
    try:
        from mpi4py import MPI
        from numba_mpi.common import libmpi
    except Exception as e:                       # no MPI here: nothing to bind
        return f"MPI is not importable ({e})", {}
    if _library_version(libmpi) != MPI.Get_library_version().rstrip("\0").strip():
        return "mpi4py and numba-mpi load different MPI libraries", {}
    sentinel = int(MPI.IN_PLACE)
    vendor = MPI.get_vendor()[0]
    if vendor in _KNOWN_IN_PLACE and _KNOWN_IN_PLACE[vendor] != sentinel:
        return f"mpi4py's MPI_IN_PLACE {sentinel} is not {vendor}'s", {}

    def handle_type(kind):
        return ctypes.c_int if MPI._sizeof(kind) == ctypes.sizeof(ctypes.c_int) \
            else ctypes.c_void_p
    comm_t, dtype_t, op_t = handle_type(MPI.Comm), handle_type(MPI.Datatype), \
        handle_type(MPI.Op)
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                             dtype_t, op_t, comm_t)
    # a function object of our own (numba-mpi sets argtypes on the library's attribute)
    fn = proto(("MPI_Allreduce", libmpi))
    fn.argtypes, fn.restype = proto._argtypes_, ctypes.c_int
    return None, {
        "fn": fn, "in_place": np.uintp(sentinel % (1 << 64)),
        "world": MPI._handleof(MPI.COMM_WORLD),
        "ops": {n: MPI._handleof(getattr(MPI, n)) for n in ("SUM", "MAX", "MIN")},
        "dtypes": {np.dtype(k): MPI._handleof(getattr(MPI, v))
                   for k, v in _DTYPE_NAMES.items()},
    }


def _state():
    if not _STATE:
        why, b = _probe()
        _STATE.update(b, why=why)
    return _STATE


def available():
    """True when in-place allreduce can be called safely from compiled code."""
    return _state()["why"] is None


def unavailable_reason():
    return _state()["why"]


def op_handle(name):
    """The MPI_Op handle of "SUM", "MAX" or "MIN" (an int)."""
    return _state()["ops"][name]


def dtype_supported(dtype):
    return np.dtype(dtype) in _state().get("dtypes", {})


def allreduce_inplace(buf, op):
    """Reduce the C-contiguous 1-d array `buf` over COMM_WORLD in place with the MPI_Op
    handle `op`; -> the MPI status (0 on success).  Plain Python here; compiled kernels
    get the overload below (the same call, typed)."""
    s = _state()
    return s["fn"](int(s["in_place"]), buf.ctypes.data, buf.size, s["dtypes"][buf.dtype],
                   op, s["world"])


@overload(allreduce_inplace)
def _allreduce_inplace_nb(buf, op):
    s = _state()
    fn, in_place, world = s["fn"], s["in_place"], s["world"]
    dt = s["dtypes"][as_dtype(buf.dtype)]

    def impl(buf, op):
        return fn(in_place, buf.ctypes.data, buf.size, dt, op, world)
    return impl
