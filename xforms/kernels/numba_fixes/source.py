"""The source text of the Numba functions xforms/kernels/numba_fixes/patches.py and alloc.py check
before replacing them (a patch is installed only where Numba's code still reads as assumed).

inspect.getsource tokenizes a function to find where it ends: 3 ms for some of Numba's, most
of the patches' share of `import kernels`.  The code object already knows its last line.

    >>> "def source_of(fn)" in source_of(source_of)
    True
"""
import inspect
import linecache
import types
from operator import itemgetter


def source_of(fn):
    """The source text of a plain function, from its file's lines over its code's line span:
    the same text as inspect.getsource, without tokenizing (falls back to it when the
    file's lines are not at hand)."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    lines = linecache.getlines(code.co_filename) if code is not None else None
    if not lines:
        return inspect.getsource(fn)
    return "".join(lines[code.co_firstlineno - 1:_last_line(code)])


def _last_line(code):
    """The last source line of a code object, nested functions' included."""
    last = max(filter(None, map(itemgetter(2), code.co_lines())),
               default=code.co_firstlineno)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            last = max(last, _last_line(c))
    return last
