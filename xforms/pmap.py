"""`pmap` over MPI ranks: the same program as `vmap(f, axis_name=...)`, spread over processes.

Each rank of the communicator is one member of the named axis: it calls the pmapped
function with ITS OWN shard (no leading device axis, unlike JAX's single-process pmap) and
gets its own result.  Collectives over the axis name (`lax.psum(g, "batch")` ...) become
MPI collectives: inside compiled code on COMM_WORLD (numba-mpi, kernels/lower_mpi.py),
eagerly through mpi4py for other communicators or with `jit=False`.

    # mpiexec -n 4 python train.py
    step = xf.pmap(lambda w, x, y: lax.pmean(xf.grad(loss)(w, x, y), "batch"),
                   axis_name="batch")
    g = step(w, x_shard, y_shard)          # the mean gradient, the same on every rank

Safety, because a mistake on one rank must not hang the others:
- before each call the ranks compare the structure, shapes and dtypes of their arguments
  (one small allreduce); a mismatch raises a ValueError on every rank listing each rank's
  signature (`check_inputs=False` skips it);
- an exception on one rank (bad input, a bug) prints the rank and its error and aborts
  every rank (`MPI_Abort`), so nothing waits forever for a collective that never comes
  (`abort_on_error=False` re-raises instead, for interactive use).
"""
import functools
import os
import sys
import traceback
import zlib

import numpy as np

from . import axis_env
from .jit import jit as _jit
from .mpi_comm import MpiComm
from .source_info import describe_function
from .tree_util import tree_flatten


def pmap(fun=None, axis_name=None, *, comm=None, static_broadcasted_argnums=(),
         donate_argnums=(), jit=True, check_inputs=True, abort_on_error=True):
    """Run `fun` on every rank of `comm` (default COMM_WORLD) as one member of the named axis.

    >>> step = xf.pmap(lambda x: lax.psum(x, "i"), axis_name="i")   # doctest: +SKIP
    >>> step(xnp.ones(2) * rank)      # on 2 ranks: Array([1., 1.]) on both
    """
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, comm=comm,
                                 static_broadcasted_argnums=static_broadcasted_argnums,
                                 donate_argnums=donate_argnums, jit=jit,
                                 check_inputs=check_inputs, abort_on_error=abort_on_error)
    return Pmapped(fun, axis_name, MpiComm.of(comm), static_broadcasted_argnums,
                   donate_argnums, jit, check_inputs, abort_on_error)


class Pmapped:
    """The function `pmap` returns; see `pmap`."""

    def __init__(self, fun, axis_name, comm, static, donate, use_jit, check, abort):
        self.fun, self.axis_name, self.comm = fun, axis_name, comm
        self.check, self.abort = check, abort
        static = (static,) if isinstance(static, int) else tuple(static)
        self.static = static

        @functools.wraps(fun)
        def bound(*args, **kwargs):
            with axis_env.bind_axis(axis_name, comm.size, comm):
                return fun(*args, **kwargs)
        compiled = use_jit and comm.is_world
        # tiered=False: every rank must run the same code (a rank on the eager tier and one
        # on compiled code would issue different collectives: unpacked vs packed messages)
        self._call = _jit(bound, static_argnums=static, donate_argnums=donate,
                          tiered=False) if compiled else bound
        functools.update_wrapper(self, fun)

    def __call__(self, *args, **kwargs):
        if self.check:
            check_same_signature(self.comm, (args, kwargs), self.static, self.fun)
        try:
            return self._call(*args, **kwargs)
        except Exception as e:
            if not self.abort or self.comm.size == 1:
                raise
            abort_all(self.comm, e, self.fun)


def _signature(tree, static):
    args, kwargs = tree
    args = [a for i, a in enumerate(args) if i not in static]
    leaves, treedef = tree_flatten((args, kwargs))
    parts = [str(treedef)]
    for x in leaves:
        shape, dtype = np.shape(x), getattr(x, "dtype", type(x).__name__)
        parts.append(f"{dtype}{list(shape)}")
    return "; ".join(parts)


def check_same_signature(comm, tree, static, fun):
    """Raise ValueError on every rank unless all ranks pass the same structure, shapes and
    dtypes (one 16-byte allreduce when they do)."""
    sig = _signature(tree, static)
    h = np.int64(zlib.crc32(sig.encode()))
    MPI = __import__("mpi4py.MPI", fromlist=["MPI"])
    lo_hi = np.array([h, -h], np.int64)
    out = np.empty_like(lo_hi)
    comm.comm.Allreduce(lo_hi, out, op=MPI.MAX)
    if out[0] == -out[1]:
        return
    sigs = comm.comm.allgather(sig)
    lines = "\n".join(f"  rank {r}: {s}" for r, s in enumerate(sigs))
    raise ValueError(f"pmap of {describe_function(fun)}: the ranks passed arguments of "
                     f"different structure, shapes or dtypes (a collective over them would "
                     f"be wrong or hang):\n{lines}")


def abort_all(comm, exc, fun):
    """Print this rank's error and abort every rank of the job."""
    rank = comm.rank
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    sys.stderr.write(f"[xforms.pmap rank {rank}/{comm.size}] {type(exc).__name__} in "
                     f"{describe_function(fun)}: {exc}\n{text}"
                     f"[xforms.pmap rank {rank}] aborting all ranks (MPI_Abort)\n")
    sys.stderr.flush()
    comm.comm.Abort(1)
    os._exit(1)          # MPI_Abort may return before the process manager ends this rank
