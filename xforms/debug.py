"""`xforms.debug`: printing and callbacks from traced code, as `jax.debug`.

`print` and `callback` run when the program runs -- eagerly, on the fast tier, and inside
compiled CPU kernels -- with the values of that run (under jit, not the tracers): once per
iteration inside `scan` / `fori_loop` / `while_loop` bodies, once per batch element under
vmap, with the primal values under grad.  The simplifier never drops them.
"""
import builtins
import string
from dataclasses import dataclass

from .callbacks import call
from .primitives.callbacks import debug_callback_p


def callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Call `callback(*args, **kwargs)` with NumPy arrays when the program runs, for its
    effect (its return value is ignored).

    >>> xf.jit(lambda x: xf.debug.callback(print, x * 2))(xnp.arange(3))
    [0 2 4]
    """
    call(debug_callback_p, callback, args, kwargs, results=False, ordered=bool(ordered))


@dataclass(frozen=True)
class _Format:
    """Prints `fmt.format(*args, **kwargs)` (a value, so every trace of a print records
    an equal callback)."""
    fmt: str

    def __call__(self, *args, **kwargs):
        builtins.print(self.fmt.format(*args, **kwargs))

    def __repr__(self):                       # (error messages name the print)
        return f"debug.print({self.fmt!r})"


def print(fmt, *args, ordered=False, skip_format_check=False, **kwargs):  # noqa: A001
    """Print `fmt.format(*args, **kwargs)` with the arrays' values when the program runs
    (str.format placeholders, positional or by name).

    >>> xf.jit(lambda x: xf.debug.print("x={x} y={}", x + 1, x=x))(2.0)
    x=2.0 y=3.0
    """
    if not skip_format_check:
        _check_format(fmt, args, kwargs)
    callback(_Format(fmt), *args, ordered=ordered, **kwargs)


def _check_format(fmt, args, kwargs):
    """The placeholders of `fmt` must find their arguments (checked now, not at run time,
    where the error would come from inside the program)."""
    auto = 0
    for _, field, _, _ in string.Formatter().parse(fmt):
        if field is None:
            continue
        head = field.split(".")[0].split("[")[0]
        if head == "":
            head, auto = auto, auto + 1
        elif head.isdigit():
            head = int(head)
        if isinstance(head, int) and head >= len(args) or (
                isinstance(head, str) and head not in kwargs):
            raise ValueError(f"debug.print: the format string {fmt!r} refers to "
                             f"{head!r}, which is not among the arguments (positional: "
                             f"{len(args)}, keywords: {sorted(kwargs)})")


__all__ = ["print", "callback"]
