"""MPI calls for compiled kernels that numba-mpi lacks: `MPI_Allreduce(MPI_IN_PLACE, ...)`
(its `allreduce` always has a separate receive buffer) and allreduce / allgather over any
communicator (it reaches COMM_WORLD only; `axis_index_groups` makes sub-communicators).

xforms/kernels/ops/mpi.py reduces a large operand in place when the buffer planner gave the
result the operand's buffer (the operand is the kernel's own intermediate and dies at the
collective): no fresh output, no page faults on it, no copy inside MPI (an out-of-place
allreduce first copies the send buffer into the receive buffer).

The functions come from the library numba-mpi's calls use (`numba_mpi.common.libmpi`).
MPI_IN_PLACE is not a portable value (MPICH and its derivatives: (void*)-1; Open MPI:
(void*)1), so it is derived, not assumed: mpi4py's `MPI.IN_PLACE` is the constant of the
`mpi.h` it was built against; we use it only when mpi4py runs the same library as
numba-mpi (same `MPI_Get_library_version` string) and, for vendors we know, it matches
theirs.  Otherwise `available()` is False: collectives stay out of place and on
COMM_WORLD.  Handles (communicator, datatype, operator) are the integers mpi4py holds
(`MPI._handleof`); compiled code bakes them in as constants, which is sound because such
kernels are never disk-cached (xforms/kernels/ops/mpi.py).

    >>> buf = np.arange(3.0) + rank                                   # doctest: +SKIP
    >>> allreduce_inplace(buf, op_handle("SUM"), comm_handle(world))  # 0: buf is the sum
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
    fn = _bind(libmpi, "MPI_Get_library_version", ctypes.c_char_p,
               ctypes.POINTER(ctypes.c_int))
    buf = ctypes.create_string_buffer(8192)       # > MPI_MAX_LIBRARY_VERSION_STRING
    n = ctypes.c_int(0)
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
    vp, i = ctypes.c_void_p, ctypes.c_int
    fns = {"allreduce": _bind(libmpi, "MPI_Allreduce", vp, vp, i, dtype_t, op_t, comm_t),
           "allgather": _bind(libmpi, "MPI_Allgather", vp, i, dtype_t, vp, i, dtype_t,
                              comm_t)}
    return None, {
        **fns, "in_place": np.uintp(sentinel % (1 << 64)),
        "ops": {n: MPI._handleof(getattr(MPI, n)) for n in ("SUM", "MAX", "MIN")},
        "dtypes": {np.dtype(k): MPI._handleof(getattr(MPI, v))
                   for k, v in _DTYPE_NAMES.items()},
    }


def _bind(libmpi, name, *argtypes):
    """A function object of our own for `name` (numba-mpi sets argtypes on the library's
    attribute objects, which we leave alone)."""
    proto = ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)
    fn = proto((name, libmpi))
    fn.argtypes, fn.restype = argtypes, ctypes.c_int
    return fn


def _state():
    if not _STATE:
        why, b = _probe()
        _STATE.update(b, why=why)
    return _STATE


def available():
    """True when these calls can be made safely from compiled code."""
    return _state()["why"] is None


def unavailable_reason():
    return _state()["why"]


def op_handle(name):
    """The MPI_Op handle of "SUM", "MAX" or "MIN" (an int)."""
    return _state()["ops"][name]


def comm_handle(comm):
    """The handle (an int) of an mpi4py communicator."""
    from mpi4py import MPI
    return MPI._handleof(comm)


def dtype_supported(dtype):
    return np.dtype(dtype) in _state().get("dtypes", {})


# Each call below is plain Python (ctypes) for a kernel module run without Numba, and has
# an overload with the same body for compiled kernels.  Buffers are C-contiguous 1-d.
def allreduce_inplace(buf, op, comm):
    """Reduce `buf` over `comm` in place with MPI_Op `op`; -> the status (0: success)."""
    s = _state()
    return s["allreduce"](int(s["in_place"]), buf.ctypes.data, buf.size,
                          s["dtypes"][buf.dtype], op, comm)


def allreduce(send, recv, op, comm):
    """Reduce `send` over `comm` into `recv` (same size, not overlapping)."""
    s = _state()
    return s["allreduce"](send.ctypes.data, recv.ctypes.data, send.size,
                          s["dtypes"][send.dtype], op, comm)


def allgather(send, recv, comm):
    """Every member's `send`, in rank order, into `recv` (size * comm size)."""
    s = _state()
    dt = s["dtypes"][send.dtype]
    return s["allgather"](send.ctypes.data, send.size, dt, recv.ctypes.data, send.size, dt,
                          comm)


@overload(allreduce_inplace)
def _allreduce_inplace_nb(buf, op, comm):
    s = _state()
    fn, in_place, dt = s["allreduce"], s["in_place"], s["dtypes"][as_dtype(buf.dtype)]

    def impl(buf, op, comm):
        return fn(in_place, buf.ctypes.data, buf.size, dt, op, comm)
    return impl


@overload(allreduce)
def _allreduce_nb(send, recv, op, comm):
    s = _state()
    fn, dt = s["allreduce"], s["dtypes"][as_dtype(send.dtype)]

    def impl(send, recv, op, comm):
        return fn(send.ctypes.data, recv.ctypes.data, send.size, dt, op, comm)
    return impl


@overload(allgather)
def _allgather_nb(send, recv, comm):
    s = _state()
    fn, dt = s["allgather"], s["dtypes"][as_dtype(send.dtype)]

    def impl(send, recv, comm):
        return fn(send.ctypes.data, send.size, dt, recv.ctypes.data, send.size, dt, comm)
    return impl
