"""Eager results whose memory nothing can write (issue #31).

An eager `Array` is a read-only view, but a view's `.base` is the array it views: were that
writable, `r.base[0] = 7` (or `np.frombuffer(r.base)`) would change a result that must be
immutable, and a later call that reuses the buffer would see it.  So every array on a
result's `.base` chain is made read-only too, up to the first `Array` (whose own chain was
made read-only when it was made).  Usually the chain is one fresh array that NumPy just
allocated: the constructors clear its flag first and view it after (a view of a read-only
array is read-only), which costs what clearing the view's flag did.

Two chains are not the evaluator's to freeze: one that reaches a user's writable NumPy
input (`xnp.reshape(np_array, ...)` is a view of it in NumPy; JAX's result is a copy, so a
later write to `np_array` must not show) and one that ends at a writable non-array buffer
(a bytearray, an mmap): those results are copied instead, and the user's arrays keep their
flags.

    >>> r = xnp.sin(xnp.arange(3.)); r.base.flags.writeable         # False
"""
import numpy as np

_ND, _SET_FLAGS = np.ndarray, np.ndarray.setflags


def freeze_bases(b, stop):
    """Clear WRITEABLE on `b` and every ndarray on its `.base` chain, up to the first
    instance of `stop` (the Array type, read-only down its chain already)."""
    while isinstance(b, _ND) and type(b) is not stop:
        _SET_FLAGS(b, False)
        b = b.base


def sealed(x, inputs, stop):
    """A plain ndarray result `x` made read-only, with nothing writable on its `.base` chain:
    a view goes through `owned`; an operand returned as it is (a user's array, never frozen)
    is copied.  The eager results' one way out (core.trace.fix_dtype, numpy's wrap).

        >>> a = np.arange(3.); sealed(a, [a], Array) is a       # False: a read-only copy
    """
    if x.base is not None:      # (a view: of an operand, or of the impl's own buffer)
        x = owned(x, inputs, stop)
    else:
        for v in inputs:
            if v is x:
                x = x.copy()
                break
    _SET_FLAGS(x, False)        # (write=False positional: 70 ns where the keyword costs 220)
    return x


def owned(x, inputs, stop):
    """`x` (a plain ndarray with a `.base`) with its chain made read-only, or a copy of it
    (a fresh array of its own) where the chain reaches memory that is not the evaluator's:
    a writable array on the chain of one of `inputs` (the operands a NumPy implementation
    was given: Arrays among them are skipped at once), or a writable non-array buffer.

        >>> a = np.arange(4.); owned(a.reshape(2, 2), [a], Array).base is None   # a copy
    """
    b = x.base
    if type(b) is _ND and b.base is None and not b.flags.writeable:
        for v in inputs:        # (the common case: a view of an Array's read-only memory;
            if type(v) is not stop and isinstance(v, _ND):     # NumPy's chains end at the
                break           # owner, subclasses or not -- unless a user's array is here)
        else:
            return x
    chain = []
    while isinstance(b, _ND) and type(b) is not stop:
        chain.append(b)
        b = b.base
    if b is not None and type(b) is not stop and _writable_buffer(b):
        return x.copy(order="K")
    for v in inputs:
        if isinstance(v, _ND) and type(v) is not stop and _shares_writable(chain, v, stop):
            return x.copy(order="K")
    for c in chain:
        _SET_FLAGS(c, False)
    return x


def _shares_writable(chain, v, stop):
    """Is a writable array of `v`'s `.base` chain (a user's operand) one of `chain`?"""
    mine = {id(c) for c in chain}          # (ids of objects alive for the whole call)
    while isinstance(v, _ND) and type(v) is not stop:
        if id(v) in mine and v.flags.writeable:
            return True
        v = v.base
    return False


def _writable_buffer(obj):
    """Does `obj` (a chain's non-array end: bytes, a bytearray, an mmap, Numba's _MemInfo)
    export writable memory?"""
    try:
        return not memoryview(obj).readonly
    except (TypeError, ValueError, BufferError):
        return False
