"""What a public wrapper returns and raises: eager results as `core.Array`s (immutable
NumPy arrays with `.at`), and errors that name the user's source line -- a list where an
array belongs as JAX's TypeError naming the public function (`returns_arrays`).

    >>> wrap_result(2.0).weak_type     # an Array, weakly typed as the Python float was
    True
"""
import functools

import numpy as np

from ...core import trace as core, source_info
from ...core.trace import Tracer
from .values import PYTHON_SCALARS, ListOperandError


def _list_error(name, err, args, kwargs):
    """JAX's message for a list argument of `name`, with the way out."""
    where = next((f"at position {i}" for i, a in enumerate(args) if a is err.value), None)
    where = where or next((f"at position {j} of argument {i}" for i, a in enumerate(args)
                           if isinstance(a, (list, tuple))
                           for j, v in enumerate(a) if v is err.value), None)
    where = where or next((f"in argument {k!r}" for k, a in kwargs.items()
                           if a is err.value), "")
    return TypeError(f"{name} requires ndarray or scalar arguments, got {type(err.value)} "
                     f"{where}. Convert it with xnp.asarray (JAX refuses lists and tuples "
                     "here: they may be ragged or hold traced values)".replace("  ", " "))



def wrap_result(x, inputs=()):
    """Eager results are `core.Array`s (NumPy arrays with `.at`); tuples/lists elementwise.
    A plain ndarray that is or views one of `inputs` (the user's operands) is copied."""
    if type(x) is core.Array or isinstance(x, Tracer):
        return x
    if isinstance(x, np.ndarray):       # (may be, or view, a user's array: never frozen)
        return core.owned_array(x, inputs)
    if isinstance(x, np.generic):
        return core.as_array(x)
    if isinstance(x, PYTHON_SCALARS):
        out = core.as_array(core.canonical_value(np.asarray(x)))
        if not isinstance(x, bool):
            out.weak_type = True                 # a Python scalar stays weakly typed
        return out
    if type(x) in (tuple, list):
        return type(x)(wrap_result(v, inputs) for v in x)
    return x


def add_user_location(err):
    """Append the user's source line to an error raised inside xforms.numpy (once)."""
    if getattr(err, "_xf_located", False) or not err.args or not isinstance(err.args[0], str):
        return
    info = source_info.current()
    if info is not None:
        err.args = (f"{err.args[0]} (at {info})",) + err.args[1:]
    try:
        err._xf_located = True
    except AttributeError:
        pass


def locate_errors(fn):
    """Decorate so shape/dtype/index errors name the user's file:line and function."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, IndexError) as e:
            add_user_location(e)
            raise
    return wrapped


def _leaves(args, kwargs):
    """The ndarrays among a call's arguments (in lists and tuples too), Arrays left out
    (read-only down their chains): what a plain result might view."""
    out = []
    for a in (*args, *kwargs.values()):
        if type(a) in (list, tuple):
            out.extend(e for e in a if isinstance(e, np.ndarray) and type(e) is not core.Array)
        elif isinstance(a, np.ndarray) and type(a) is not core.Array:
            out.append(a)
    return out


def returns_arrays(fn):
    """Decorate a public function: eager results are always `core.Array`s, and errors name
    the user's source line."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return wrap_result(fn(*args, **kwargs), _leaves(args, kwargs))
        except (TypeError, ValueError, IndexError) as e:
            locate_public_error(fn.__name__, e, args, kwargs)
            raise
    return wrapped


def locate_public_error(name, err, args, kwargs):
    """Before a public function `name` re-raises `err`: the user's source line added; a list
    where an array belongs raised instead as JAX's TypeError naming `name`."""
    if isinstance(err, ListOperandError):
        named = _list_error(name, err, args, kwargs)
        add_user_location(named)
        raise named from None
    add_user_location(err)

