"""`pmap` over MPI ranks: the same program as `vmap(f, axis_name=...)`, spread over processes.

Each rank of the communicator is one member of the named axis: it calls the pmapped
function with ITS OWN shard (no leading device axis, unlike JAX's single-process pmap) and
gets its own result.  Collectives over the axis name (`lax.psum(g, "batch")` ...) become
MPI collectives: inside compiled code on COMM_WORLD (numba-mpi, xforms/kernels/ops/mpi.py),
eagerly through mpi4py for other communicators or with `jit=False`.

    # mpiexec -n 4 python train.py
    step = xf.pmap(lambda w, x, y: lax.pmean(xf.grad(loss)(w, x, y), "batch"),
                   axis_name="batch")
    g = step(w, x_shard, y_shard)          # the mean gradient, the same on every rank

Safety, because a mistake on one rank must not hang the others:
- before each call the ranks compare the structure, shapes and dtypes of their arguments
  and the values of their static arguments (one small allreduce); a mismatch raises a
  ValueError on every rank naming each rank that differs, with what it passed, and listing
  each rank's signature (`check_inputs=False` skips it);
- an exception on one rank (bad input, a bug) prints the rank and its error and aborts
  every rank (`MPI_Abort`), so nothing waits forever for a collective that never comes
  (`abort_on_error=False` re-raises instead, for interactive use).
"""
import functools
import os
import re
import sys
import time
import traceback
import zlib

import numpy as np

from .core import axis_env
from .jit import jit as _jit
from .core.mpi_comm import MpiComm
from .core.source_info import describe_function
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
    """This rank's call as texts that must agree on every rank: the structure, each array
    argument's dtype and shape, and each static argument's value (each selects the traced
    program: ranks that differ in one run different collectives, and hang)."""
    args, kwargs = tree
    static = sorted({i % len(args) for i in static if -len(args) <= i < len(args)})
    dynamic = [a for i, a in enumerate(args) if i not in static]
    leaves, treedef = tree_flatten((dynamic, kwargs))
    parts = [f"structure {treedef}"]
    parts += [f"{getattr(x, 'dtype', type(x).__name__)}{list(np.shape(x))}" for x in leaves]
    parts += [f"static argument {i} = {_static_text(args[i])}" for i in static]
    return parts


def _static_text(value):
    """A static argument as text that is the same on every rank for the same value: its
    repr without memory addresses (a set's elements sorted: each rank hashes strings with
    its own seed), a function by its name and where it is defined (two closures of one line
    that capture different values are not told apart)."""
    code = getattr(value, "__code__", None)
    if code is not None:
        name = getattr(value, "__qualname__", type(value).__name__)
        return f"{name} ({code.co_filename}:{code.co_firstlineno})"
    if isinstance(value, (set, frozenset)):
        return f"{type(value).__name__}({sorted(map(_static_text, value))})"
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def check_same_signature(comm, tree, static, fun):
    """Raise ValueError on every rank unless all ranks pass the same structure, shapes,
    dtypes and static argument values (one 16-byte allreduce when they do); the error
    names each rank that differs from rank 0 and what it passed."""
    parts = _signature(tree, static)
    h = np.int64(zlib.crc32("\n".join(parts).encode()))
    MPI = __import__("mpi4py.MPI", fromlist=["MPI"])
    lo_hi = np.array([h, -h], np.int64)
    out = np.empty_like(lo_hi)
    comm.comm.Allreduce(lo_hi, out, op=MPI.MAX)
    if out[0] == -out[1]:
        return
    sigs = comm.comm.allgather(parts)
    raise ValueError(f"pmap of {describe_function(fun)}: the ranks passed different static "
                     f"arguments or arguments of different structure, shapes or dtypes (a "
                     f"collective over them would be wrong or hang): "
                     f"{'; '.join(_differences(sigs))}\n"
                     + "\n".join(f"  rank {r}: {'; '.join(s)}" for r, s in enumerate(sigs)))


def _differences(sigs):
    """'rank r passed X where rank 0 passed Y' for each rank's first difference."""
    out = []
    for r, sig in enumerate(sigs[1:], 1):
        diff = next(((a, b) for a, b in zip(sigs[0], sig) if a != b), None)
        if diff is None and len(sig) != len(sigs[0]):
            diff = ("; ".join(sigs[0]), "; ".join(sig))
        if diff is not None:
            out.append(f"rank {r} passed {diff[1]} where rank 0 passed {diff[0]}")
    return out


def abort_all(comm, exc, fun):
    """Print this rank's error and abort every rank of the job."""
    rank = comm.rank
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    sys.stderr.write(f"[xforms.pmap rank {rank}/{comm.size}] {type(exc).__name__} in "
                     f"{describe_function(fun)}: {exc}\n{text}"
                     f"[xforms.pmap rank {rank}] aborting all ranks (MPI_Abort)\n")
    sys.stderr.flush()
    # MPICH's process manager drops a rank's unread output when it handles the abort first
    # (CI lost the whole message once); a moment lets it forward the text before the kill
    time.sleep(1.0)
    comm.comm.Abort(1)
    os._exit(1)          # MPI_Abort may return before the process manager ends this rank
