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

from ..core.avals import SUPPORTED_DTYPES
from ..core.staging import is_int_tree
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
        key = _Key(program_key(hoisted))
    except _Unkeyable:
        return simplify(ClosedJaxpr(hoisted, [])), list(raw.consts)
    found = _programs.get(key)
    if found is None:
        found = simplify(ClosedJaxpr(hoisted, []))
        _programs.put(key, found)
    return found, list(raw.consts)


class _Key:
    """A program key with its hash computed once (the cache hashes a key on every lookup,
    and a key has a part per equation)."""
    __slots__ = ("parts", "hash")

    def __init__(self, parts):
        self.parts, self.hash = parts, hash(parts)

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        return type(other) is _Key and other.hash == self.hash and other.parts == self.parts


def clear():
    """Forget every interned program (xforms.clear_caches)."""
    _programs.clear()


def program_key(jaxpr, consts=()):
    """A hashable key equal for two jaxprs (with these constants) that compute the same way.
    Abstract values enter as (shape, dtype, weak_type) tuples, compared in C.

    >>> program_key(make_jaxpr(f)(x).jaxpr) == program_key(make_jaxpr(f)(x).jaxpr)
    True
    """
    names = {}
    for v in jaxpr.constvars:
        names[v] = len(names)
    for v in jaxpr.invars:
        names[v] = len(names)
    parts = [tuple([v.aval.key for v in jaxpr.constvars]),
             tuple([v.aval.key for v in jaxpr.invars]),
             tuple([_value_key(c) for c in consts])]
    try:
        for e in jaxpr.eqns:
            params = e.params
            parts.append((e.prim, _params_key(params) if params else (),
                          tuple([names[a] if type(a) is not Literal else _literal_key(a)
                                 for a in e.invars]),
                          tuple([v.aval.key for v in e.outvars])))
            for v in e.outvars:
                names[v] = len(names)
        parts.append(tuple([names[a] if type(a) is not Literal else _literal_key(a)
                            for a in jaxpr.outvars]))
    except KeyError as e:
        raise _Unkeyable(e.args[0]) from None     # (a free variable: never in a well-formed jaxpr)
    return tuple(parts)


def _literal_key(a):
    return ("L", _value_key(a.val), a.aval.key)


def _params_key(params):
    # (in the dict's order: two binds that spell params in another order only miss the cache)
    return tuple([(k, _value_key(v)) for k, v in params.items()])


_PLAIN = frozenset((int, str, bool, type(None))) | frozenset(type(d) for d in SUPPORTED_DTYPES)


def _value_key(v):
    t = type(v)
    if t in _PLAIN or isinstance(v, np.dtype):      # most params: sizes, axes, dtypes
        return (t, v)
    if t is tuple and is_int_tree(v):     # its own key: no other key holds only ints
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
    if t is float:                        # hex: -0.0 is not 0.0; every NaN keyed alike
        return ("float", v.hex())
    if t is complex:
        return ("complex", v.real.hex(), v.imag.hex())
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
