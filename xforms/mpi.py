"""Explicit MPI operations, mpi4jax-style, usable eagerly, under `jit` (numba-mpi calls in
the compiled code, COMM_WORLD) and under transforms where a derivative is defined.

Unlike the named-axis collectives of `xforms.lax` these need no `pmap`: each rank simply
calls them with its own values.

    >>> from xforms import mpi                        # mpiexec -n 2 python ...
    >>> mpi.allreduce(xnp.ones(3) * mpi.rank())       # Array([1., 1., 1.]) on both ranks

| operation | derivative |
|---|---|
| `allreduce(x, op="sum")` | sum: linear (its transpose is itself); max/min: the tangent of the ranks attaining the extremum |
| `allgather(x)` (stacked on axis 0) | linear (transpose: reduce-scatter) |
| `bcast(x, root)`, `scatter(x, root)`, `gather(x, root)` | linear (built on allreduce / allgather) |
| `sendrecv(x, source, dest)` | linear (transpose: sendrecv with source and dest swapped) |
| `send`, `recv`, `barrier` | eager only (they return no value a program could depend on) |
"""
import numpy as np

from .core import trace as core
from .core.mpi_comm import MpiComm, mpi4py_MPI
from .primitives import collectives as C
from .primitives.elementwise import eq as _eq, select_n as _select_n
from .primitives.structural import full
from .runtime import Device
from .sharding import Mesh

_MPI_AXES = ("__mpi__",)       # not a name any vmap or pmap binds
_REDUCERS = {"sum": C.psum_p, "max": C.pmax_p, "min": C.pmin_p}


def _comm(comm):
    return MpiComm.of(comm)


def rank(comm=None):
    return _comm(comm).rank


def size(comm=None):
    return _comm(comm).size


def make_mesh(axis_name, *, comm=None):
    """A one-axis mesh whose members are the ranks of `comm` (default COMM_WORLD), for
    `xf.shard_map`: each rank passes the whole inputs and gets the whole outputs, computing
    its own block (collectives are MPI calls, inside the compiled code as in `pmap`).

    >>> mesh = mpi.make_mesh("batch")       # mpiexec -n 4: Mesh('batch': 4, MPI ranks)
    """
    c = _comm(comm)
    return Mesh([Device(r, "cpu", "mpi rank", r) for r in range(c.size)], (axis_name,),
                comm=c)


def _op_name(op):
    if isinstance(op, str):
        return op.lower()
    MPI = mpi4py_MPI()
    for name, o in (("sum", MPI.SUM), ("max", MPI.MAX), ("min", MPI.MIN)):
        if op == o:
            return name
    raise NotImplementedError(f"xforms.mpi.allreduce: operator {op!r} (sum, max, min are "
                              "supported)")


def allreduce(x, op="sum", *, comm=None):
    """Reduce `x` elementwise over all ranks; every rank gets the result."""
    name = _op_name(op)
    if name not in _REDUCERS:
        raise NotImplementedError(f"xforms.mpi.allreduce: operator {op!r}")
    return _REDUCERS[name].bind(x, axes=_MPI_AXES, comm=_comm(comm))[0]


def allgather(x, *, comm=None):
    """Every rank's `x`, stacked along a new axis 0, on every rank."""
    c = _comm(comm)
    return C.all_gather_p.bind(x, axes=_MPI_AXES, comm=c, axis_size=c.size)


def _mine(x, root, c):
    """x on the root rank, zeros elsewhere (so a sum delivers the root's value)."""
    aval = core.get_aval(x)
    keep = _eq(C.axis_index_p.bind(axes=_MPI_AXES, comm=c), np.int32(root))
    return _select_n(keep, full(aval.shape, 0, aval.dtype), x)


def bcast(x, root, *, comm=None):
    """The root rank's `x` on every rank (all ranks pass an array of the same shape)."""
    c = _comm(comm)
    return allreduce(_mine(x, root, c), "sum", comm=c)


def gather(x, root, *, comm=None):
    """On the root rank, every rank's `x` stacked along axis 0; elsewhere `x` unchanged
    (mpi4jax's convention).  Elsewhere it is this rank's row of the gathered array (the
    same bits as `x`): a program that returned `x` itself would drop the unused gather
    under jit on those ranks and leave the root waiting; and the derivative then reaches
    every rank's `x` through the root's result too."""
    c = _comm(comm)
    stacked = allgather(x, comm=c)
    return stacked if c.rank == root else stacked[c.rank]


def scatter(x, root, *, comm=None):
    """Row k of the root's `x` (shape (size, ...)) on rank k.  Other ranks pass an array of
    the shape of one row (ignored), as in mpi4jax."""
    c = _comm(comm)
    aval = core.get_aval(x)
    if c.rank == root:
        if not aval.shape or aval.shape[0] != c.size:
            raise ValueError(f"xforms.mpi.scatter: the root's array must have shape "
                             f"({c.size}, ...), got {aval.shape}")
        full_x = x
    else:
        full_x = full((c.size,) + aval.shape, 0, aval.dtype)
    return C.psum_scatter_p.bind(full_x, axes=_MPI_AXES, comm=c, axis_size=c.size)


def sendrecv(sendbuf, source, dest, *, comm=None):
    """Send `sendbuf` to rank `dest` and return what rank `source` sent (same shape)."""
    return C.sendrecv_p.bind(sendbuf, comm=_comm(comm), source=int(source), dest=int(dest))


def _eager_only(what, x=None):
    if isinstance(x, core.Tracer) or core.current_trace() is not core.eval_trace:
        raise NotImplementedError(f"xforms.mpi.{what} inside jit or a transform: its effect "
                                  "would not be ordered in the program; use sendrecv, "
                                  "xforms.lax.ppermute or a collective instead")


def send(x, dest, *, tag=0, comm=None):
    _eager_only("send", x)
    _comm(comm).comm.Send(np.ascontiguousarray(x), dest=dest, tag=tag)


def recv(x, source=None, *, tag=None, comm=None):
    """Receive into a fresh array shaped like `x` (eagerly)."""
    _eager_only("recv", x)
    MPI = mpi4py_MPI()
    out = np.empty_like(np.asarray(x))
    _comm(comm).comm.Recv(out, source=MPI.ANY_SOURCE if source is None else source,
                          tag=MPI.ANY_TAG if tag is None else tag)
    return core.as_array(out)


def barrier(*, comm=None):
    _eager_only("barrier")
    _comm(comm).comm.Barrier()


__all__ = ["allreduce", "allgather", "bcast", "gather", "scatter", "sendrecv", "send", "recv",
           "barrier", "rank", "size"]
