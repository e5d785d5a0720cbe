"""Where in the user's code an equation came from.

Captured at bind time by walking up the Python stack past frames that belong to
xforms/kernels themselves.  Transforms re-binding an existing equation install its
source info with `user_frame_override` so the derived equations point at the same line.
"""
import functools
import os
import sys
import threading
from contextlib import contextmanager
from typing import NamedTuple, Optional

import numpy as np

# frames in these files are not the user's: xforms' own (its compilers included), and NumPy's (np.sum of
# a traced value calls its .sum method from inside NumPy)
_PKG_DIRS = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,   # xforms/
             os.path.dirname(os.path.abspath(np.__file__)) + os.sep)


class SourceInfo(NamedTuple):
    file: str
    line: int
    function: str

    def __str__(self):
        return f"{os.path.basename(self.file)}:{self.line} ({self.function})"

    @property
    def location(self):
        return f"{self.file}:{self.line}"


class _Override(threading.local):
    """The source info a transform stamps on derived equations, per thread (a tiered
    background compile traces while the main thread evaluates)."""
    info: Optional[SourceInfo] = None


_state = _Override()


def _is_internal(filename):
    return filename.startswith(_PKG_DIRS) or filename.startswith("<frozen")


_internal_code = {}     # code object -> whether it is xforms' own (every bind asks: cached)
_infos = {}             # (code object, instruction offset) -> its SourceInfo


def current(depth=1) -> Optional[SourceInfo]:
    """The innermost user frame (or the override set by a transform), looking from the
    `depth`-th frame up (1: the caller's; more where the caller knows that the frames
    between are xforms' own: each frame stepped through costs a frame object)."""
    if _state.info is not None:
        return _state.info
    try:
        frame = sys._getframe(depth)
    except ValueError:                   # (a stack shallower than that: no user frame)
        return None
    while frame is not None:
        code = frame.f_code
        internal = _internal_code.get(code)
        if internal is None:
            if len(_internal_code) > 20000:      # generated code (exec) makes new objects
                _internal_code.clear()
            internal = _internal_code[code] = _is_internal(code.co_filename)
        if not internal:
            # one object per instruction reached (f_lineno and a new tuple cost more than
            # the lookup; equal lines are then mostly the same object)
            key = (code, frame.f_lasti)
            info = _infos.get(key)
            if info is None:
                if len(_infos) > 20000:
                    _infos.clear()
                info = _infos[key] = SourceInfo(code.co_filename, frame.f_lineno, code.co_name)
            return info
        frame = frame.f_back
    return None


@contextmanager
def user_frame_override(info):
    prev = _state.info
    _state.info = info if info is not None else prev
    try:
        yield
    finally:
        _state.info = prev


def function_name(fun) -> str:
    """A user function's __name__ (a partial's function's), as JAX's events name it.

    >>> function_name(functools.partial(np.add, 1))
    'add'
    """
    while isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__name__", type(fun).__name__)


def describe_function(fun) -> str:
    """'name (file:line)' for a user function, for error messages."""
    # past xforms' own wrappers (code in xforms' files, or no code) to the user's function
    while getattr(fun, "__wrapped__", None) is not None and (
            getattr(fun, "__code__", None) is None or _is_internal(fun.__code__.co_filename)):
        fun = fun.__wrapped__
    name = getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None) or repr(fun)
    code = getattr(fun, "__code__", None)
    if code is not None:
        return f"{name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"
    return name
