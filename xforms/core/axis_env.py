"""Named axes: which axis names are bound while a function is traced, and to what.

`vmap(f, axis_name="i")` binds "i" to its batch (size = the batch size); `pmap(f,
axis_name="i")` binds "i" to the ranks of an MPI communicator (size = the number of
ranks).  Collectives (`lax.psum(x, "i")` ...) look their axis up here when they are bound,
so the traced program records the axis size, and the communicator for an MPI axis; an
unbound name is an error, as in JAX.

    >>> with bind_axis("i", 4):
    ...     lookup("i").size
    4
"""
import threading
from contextlib import contextmanager
from dataclasses import dataclass


class _Frames(threading.local):
    """The bound axes, per thread (a tiered background compile traces beside the caller)."""
    def __init__(self):
        self.stack = []


_frames = _Frames()


@dataclass(frozen=True)
class AxisFrame:
    """One bound axis.  `comm` is an `MpiComm` for pmap axes, None for vmap axes; `vma`
    marks a shard_map body traced with JAX's check_vma=True; `mesh` is the shard_map's mesh
    (an xforms.sharding.Mesh: debug.inspect_array_sharding reports it), None elsewhere."""
    name: object
    size: int
    comm: object = None
    vma: bool = False
    mesh: object = None


@contextmanager
def bind_axis(name, size, comm=None, vma=False, mesh=None):
    """Bind axis `name` of `size` members for the duration of the block."""
    _frames.stack.append(AxisFrame(name, int(size), comm, vma, mesh))
    try:
        yield _frames.stack[-1]
    finally:
        _frames.stack.pop()


def lookup(name):
    """The innermost frame binding `name` (NameError naming it when unbound; an unhashable
    name, such as an array, is no axis name: JAX's TypeError "unhashable type")."""
    try:
        hash(name)
    except TypeError as e:
        raise TypeError(f"an axis name must be hashable, got {type(name).__name__}: {e}") \
            from None
    for frame in reversed(_frames.stack):
        if frame.name == name:
            return frame
    bound = ", ".join(repr(f.name) for f in _frames.stack) or "none"
    raise NameError(f"unbound axis name: {name!r} (bound axis names: {bound}). Collectives "
                    "such as lax.psum need an enclosing vmap(..., axis_name=...) or "
                    "pmap(..., axis_name=...) that binds the name.")


def frames():
    """The bound axes, innermost last."""
    return tuple(_frames.stack)


def vma_axes():
    """The names bound by shard_map bodies traced with check_vma=True."""
    return tuple(f.name for f in _frames.stack if f.vma)


def key():
    """A hashable summary of the bound axes: traces that read them are cached per key."""
    return tuple((f.name, f.size, f.comm) for f in _frames.stack)
