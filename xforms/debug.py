"""`xforms.debug`: printing and callbacks from traced code, as `jax.debug`.

`print` and `callback` run when the program runs -- eagerly, on the fast tier, and inside
compiled CPU kernels -- with the values of that run (under jit, not the tracers): once per
iteration inside `scan` / `fori_loop` / `while_loop` bodies, once per batch element under
vmap, with the primal values under grad.  The simplifier never drops them and keeps them
in program order (`ordered=` is accepted; every callback is ordered).  Their equations
carry JAX's effects -- `DebugEffect`, or `OrderedDebugEffect` with ordered=True -- which
`make_jaxpr(f).effects` lists, as JAX's does.
"""
import builtins
import functools
import logging
import string
from dataclasses import dataclass

import numpy as np

from .core import axis_env, source_info
from .callbacks import call
from .primitives.callbacks import DebugEffect, OrderedDebugEffect, debug_callback_p
from .runtime import devices
from .sharding import NamedSharding, PartitionSpec, SingleDeviceSharding
from .tree_util import tree_leaves

logger = logging.getLogger(__name__)


def callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Call `callback(*args, **kwargs)` when the program runs, the arrays among the
    arguments as NumPy arrays, for its effect (its return value is ignored).  Without a
    callback: the function taking it (JAX's two-call form).

    >>> xf.jit(lambda x: xf.debug.callback(print, x * 2))(xnp.arange(3))
    [0 2 4]
    """
    if callback is None:
        _no_arguments("debug.callback", args, kwargs)
        return functools.partial(_debug_callback, ordered=ordered)
    call(debug_callback_p, callback, args, kwargs, results=False, ordered=bool(ordered))


_debug_callback = callback       # (the parameter `callback` hides the function's name)


@dataclass(frozen=True)
class _Format:
    """Prints `fmt.format(*args, **kwargs)` under the NumPy print options of the trace, or
    logs it at INFO as from `log_at` ((file, line) of the user's call; debug.log).  A
    value, so every trace of one print records an equal callback."""
    fmt: str
    printoptions: tuple
    log_at: tuple = None

    def __call__(self, *args, **kwargs):
        with np.printoptions(**dict(self.printoptions)):
            msg = self.fmt.format(*args, **kwargs)
        if self.log_at is None:
            builtins.print(msg)
        else:
            logger.handle(logger.makeRecord(logger.name, logging.INFO, *self.log_at, msg,
                                            (), None))

    def __repr__(self):                       # (error messages name the print)
        return f"debug.print({self.fmt!r})"


def print(fmt=None, *args, ordered=False, partitioned=False,  # noqa: A001
          skip_format_check=False, _use_logging=False, **kwargs):
    """Print `fmt.format(*args, **kwargs)` with the arrays' values when the program runs
    (str.format placeholders, positional or by name; every argument must be used).
    Without `fmt`: the function taking it (JAX's two-call form).

    >>> xf.jit(lambda x: xf.debug.print("x={x} y={}", x + 1, x=x))(2.0)
    x=2.0 y=3.0
    """
    if fmt is None:
        _no_arguments("debug.print", args, kwargs)
        return functools.partial(print, ordered=ordered, skip_format_check=skip_format_check,
                                 _use_logging=_use_logging)
    if not skip_format_check:
        _FormatCheck().format(fmt, *args, **kwargs)
    options = tuple(sorted(np.get_printoptions().items()))
    where = None
    if _use_logging:
        info = source_info.current()
        where = (info.file, info.line) if info else ("(unknown file)", 0)
    callback(_Format(fmt, options, where), *args, ordered=ordered, **kwargs)


def log(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
        **kwargs):
    """`print`, but through `logging` (logger "xforms.debug", level INFO, the record
    naming the user's file and line), as jax.debug.log.

    >>> xf.jit(lambda x: xf.debug.log("x={}", x))(2.0)      # logs "x=2.0"
    """
    return print(fmt, *args, ordered=ordered, partitioned=partitioned,
                 skip_format_check=skip_format_check, _use_logging=True, **kwargs)


class _FormatCheck(string.Formatter):
    """Formats nothing; raises, naming them, when arguments are missing or left unused
    (now, not when the program runs)."""

    def get_value(self, key, args, kwargs):
        try:
            return super().get_value(key, args, kwargs)
        except (IndexError, KeyError) as e:
            raise type(e)(f"debug.print: the format string refers to {key!r}, which is not "
                          f"among the arguments ({len(args)} positional, keywords "
                          f"{sorted(kwargs)})") from None

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for k, a in enumerate(args) if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `debug.print`: {unused}")
        unused = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused keyword arguments to `debug.print`: {unused}. You "
                             "may be passing an f-string (f\"{x}\") instead of a format "
                             "string")


def _no_arguments(what, args, kwargs):
    if args or kwargs:
        raise TypeError(f"{what} received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")


def inspect_array_sharding(value, *, callback):
    """Call `callback` with the sharding of each array of the pytree `value`, as JAX does
    "as early as possible": eagerly at once, under jit when the function is traced (once per
    signature, as JAX's once per compile; never when a cached program runs).  xforms keeps
    each array on one device, so outside shard_map that is a `SingleDeviceSharding` of the
    default device; inside a shard_map body, `NamedSharding(mesh, P())` (a member's block),
    and inside a pmap body the same over the mesh of the MPI ranks -- JAX's answers.  It
    runs while tracing, so it leaves no equation in the program (JAX's jaxpr holds an
    inspect_sharding equation, with DebugEffect, whose callback runs when it is lowered).

    >>> xf.debug.inspect_array_sharding(xnp.ones(3), callback=print)
    SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    """
    if not callable(callback):
        raise TypeError(f"inspect_array_sharding: callback must be callable, got "
                        f"{type(callback).__name__}")
    sharding = _current_sharding()
    for _ in tree_leaves(value):
        callback(sharding)


def _current_sharding():
    """What every value traced here has: the innermost shard_map's (or pmap's) mesh,
    unsplit within a member, else the default device."""
    for frame in reversed(axis_env.frames()):
        if frame.mesh is not None or frame.comm is not None:
            from .mpi import make_mesh as ranks_mesh   # (mpi4py only under pmap)
            mesh = frame.mesh or ranks_mesh(frame.name, comm=frame.comm)
            return NamedSharding._of(mesh, PartitionSpec())
    return SingleDeviceSharding._of(devices()[0])


def breakpoint(*args, **kwargs):  # noqa: A001  (jax.debug.breakpoint's name)
    """jax.debug.breakpoint is not supported: compiled kernels cannot stop in a Python
    debugger.  Raises NotImplementedError saying what to use instead."""
    raise NotImplementedError(
        "xforms.debug.breakpoint is not supported: call the function without jit (un-jitted "
        "transforms run your Python, where breakpoint() works), or inspect values with "
        "xforms.debug.print / xforms.debug.callback")


__all__ = ["print", "log", "callback", "breakpoint", "DebugEffect", "OrderedDebugEffect",
           "inspect_array_sharding"]


def __getattr__(name):
    """jax.debug's sharding views: absent (xforms has no explicit sharding), saying why."""
    if name in ("visualize_array_sharding", "visualize_sharding"):
        raise AttributeError(f"xforms.debug.{name}: explicit sharding is not implemented: "
                             "xforms places each array on its one device "
                             "(inspect_array_sharding reports that placement)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
