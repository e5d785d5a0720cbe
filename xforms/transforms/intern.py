"""Interning traced programs: two traces that record the same program share one ClosedJaxpr.

The transforms used without `jit` (grad, vjp, jvp, linearize, vmap, the Jacobians) run the
user's Python on every call, as JAX does: a function that draws noise, prints or reads a
global must see each call.  What they derive from the trace (the linearized, transposed and
simplified programs, each costlier than the trace) is cached by the program's *structure*
instead, so a loop of `grad(f)(x)` calls derives once:

    >>> closed, consts = intern(raw)      # raw: the fresh trace of this call
    >>> vjp_jaxprs(closed, [False] * len(consts) + diff, 1)   # memo.derived: once per structure

`intern` hoists the trace's constants (arrays the function closed over or made, such as this
call's random noise) to leading inputs, so the interned program holds no value of any call,
and keys it by its equations, parameters, literal values and abstract values.  A program
whose parameters hold something without a structural key (a live user function, a large
array) is keyed by that object's identity, held weakly: a dropped function never stays
alive through this cache and is never confused with a new one.
"""
import weakref

import numpy as np

from ..core.ir import ClosedJaxpr, Jaxpr, Literal
from ..core.memo import LRU
from .simplify import simplify

_programs = LRU()       # structural key -> interned (simplified, const-free) ClosedJaxpr
_SMALL = 64             # arrays in params of at most this many elements are keyed by value


class _Unkeyable(Exception):
    pass


class _WeakIdentity:
    """A key part equal only to a part made from the same live object; never keeps it alive."""
    __slots__ = ("ref", "ident")

    def __init__(self, obj):
        self.ref, self.ident = weakref.ref(obj), id(obj)

    def __hash__(self):
        return self.ident

    def __eq__(self, other):
        return (type(other) is _WeakIdentity and other.ident == self.ident
                and self.ref() is not None and self.ref() is other.ref())


def intern(raw):
    """-> (ClosedJaxpr without constants whose leading inputs stand for them, the constants):
    the same object for every trace of the same program (simplified once, on first sight)."""
    j = raw.jaxpr
    hoisted = Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars)
    try:
        key = program_key(hoisted)
    except _Unkeyable:
        return simplify(ClosedJaxpr(hoisted, [])), list(raw.consts)
    found = _programs.get(key)
    if found is None:
        found = simplify(ClosedJaxpr(hoisted, []))
        _programs.put(key, found)
    return found, list(raw.consts)


def clear():
    """Forget every interned program (xforms.clear_caches)."""
    _programs.clear()


def program_key(jaxpr, consts=()):
    """A hashable key equal for two jaxprs (with these constants) that compute the same way.

    >>> program_key(make_jaxpr(f)(x).jaxpr) == program_key(make_jaxpr(f)(x).jaxpr)
    True
    """
    names = {}

    def name(v):
        if type(v) is Literal:
            return ("L", _value_key(v.val), v.aval)
        n = names.get(v)
        if n is None:
            raise _Unkeyable(v)           # (a free variable: never in a well-formed jaxpr)
        return n

    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        names[v] = len(names)
    parts = [tuple(v.aval for v in jaxpr.constvars), tuple(v.aval for v in jaxpr.invars),
             tuple(_value_key(c) for c in consts)]
    for e in jaxpr.eqns:
        parts.append((e.prim, _params_key(e.params), tuple(map(name, e.invars)),
                      tuple(v.aval for v in e.outvars)))
        for v in e.outvars:
            names[v] = len(names)
    parts.append(tuple(map(name, jaxpr.outvars)))
    return tuple(parts)


def _params_key(params):
    return tuple((k, _value_key(params[k])) for k in sorted(params))


_PLAIN = frozenset((int, str, bool, type(None), np.dtype))


def _value_key(v):
    t = type(v)
    if t in _PLAIN or isinstance(v, np.dtype):      # most params: sizes, axes, dtypes
        return (t, v)
    if t is tuple and all(type(x) is int for x in v):
        return v
    if t is ClosedJaxpr:
        return ("closed", program_key(v.jaxpr, v.consts))
    if t is Jaxpr:
        return ("jaxpr", program_key(v))
    if t in (tuple, list):
        return (t.__name__,) + tuple(_value_key(x) for x in v)
    if t is dict:
        return ("dict",) + tuple((k, _value_key(v[k])) for k in sorted(v, key=repr))
    if isinstance(v, np.ndarray):
        if v.size <= _SMALL:
            return ("array", v.dtype.str, v.shape, v.tobytes())
        return _weak(v)
    if isinstance(v, float) and v != v:
        return ("nan", t)                 # NaN != NaN: key every NaN of a type alike
    if isinstance(v, np.generic):
        return ("scalar", v.dtype.str, v.tobytes())
    if t.__hash__ is object.__hash__ and not isinstance(v, type):
        return _weak(v)                   # hashed by identity (functions, rule objects)
    try:
        hash(v)
    except TypeError:
        raise _Unkeyable(v) from None
    return (t, v)


def _weak(obj):
    try:
        return _WeakIdentity(obj)
    except TypeError:                     # not weakly referenceable: not cached
        raise _Unkeyable(obj) from None
