"""Staging into a jaxpr: the `Builder` trace, which records each bound primitive as an
equation (optionally carrying known values beside the abstract ones, so that Python
control flow on values works under un-jitted transforms), and `trace_to_jaxpr`.

    >>> closed, _ = trace_to_jaxpr(lambda x: [x * 2.0], [ShapedArray((3,), np.float64)])
"""
import gc
import math
import weakref

import numpy as np

from .. import config
from . import pass_counts, source_info
from .avals import SUPPORTED_DTYPES, aval_of_value
from ..errors import ConcretizationError, UnexpectedTracerError
from .ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from .eager.quiet import silently
from .trace import (abstract_eval, Array, canonical_value, eval_trace, fix_dtype, impl_rules,
                    OK_DTYPES, PENDING, set_current_trace, _state, Tracer)


_CONTROL_HINT = ("Use lax.cond / lax.switch for branches, lax.while_loop / lax.fori_loop for "
                 "loops, xnp.where for elementwise choice, or mark the argument static with "
                 "static_argnums.")
# A batch number passed to a jitted step: static_argnums would compile once per value
_INDEX_HINT = ("A traced integer cannot index a NumPy array or bound a Python slice: index an "
               "xforms array instead (xnp.asarray(data)[i]), take a fixed-size window with "
               "lax.dynamic_slice(x, (i * size, 0), (size, x.shape[1])); loop with "
               "lax.fori_loop / lax.while_loop, branch with lax.cond. Marking the argument "
               "static (static_argnums) also works but compiles once per value.")


class Builder:
    """Stages primitives into a jaxpr.  Values from parent traces become constvars.

    A `guide` (the jaxpr of an earlier trace of the same function) makes tracing cheaper
    where the function records the same program again, as un-jitted transforms do on every
    call: while each bind repeats the guide's next equation (same primitive, parameters,
    operands and source line), that equation and its variables are taken as they are (no
    abstract evaluation, no new objects), and a trace that repeats the whole guide builds
    the guide itself.  At the first difference the trace goes on as without a guide."""

    def __init__(self, parent, with_values=False, fun=None, guide=None):
        self.parent, self.with_values, self.fun = parent, with_values, fun
        self.invars, self.eqns = [], []
        self.constvars, self.consts, self._const_ids = [], [], {}
        self.value_dependent = False
        self.dead = False
        self._pending = {}      # Var -> (eqn number, args, output tracers) not yet computed
        self.guide = guide
        self._adoptable = set(guide.constvars) if guide is not None else ()

    def new_arg(self, aval, val=None):
        """An input; `val` its known value, or a tracer of an enclosing trace whose value
        (computed when asked for) it is."""
        g, k = self.guide, len(self.invars)
        if g is not None and k < len(g.invars) and g.invars[k].aval == aval:
            v = g.invars[k]
        else:
            self.guide, v = None, Var(aval)
        self.invars.append(v)
        return Tracer(self, v, val if self.with_values else None)

    def _is_ancestor(self, trace):
        t = self.parent
        while t is not None:
            if t is trace:
                return True
            t = getattr(t, "parent", None)
        return False

    def to_var(self, x, expect=None):
        """The IR atom for `x`: own tracer -> var, scalar -> literal, anything else -> constvar
        (the guide's constvar `expect`, if it takes this new constant's place)."""
        if type(x) is np.ndarray or type(x) is Array:     # (a constant: the common case)
            hit = self._const_ids.get(id(x))
            if hit is not None:
                return hit[0]
            if x.ndim and x.dtype in OK_DTYPES:
                return self._const(x, aval_of_value(x), expect)
        if isinstance(x, Tracer):
            if x._trace is self:
                return x._var
            if x._trace.dead or not self._is_ancestor(x._trace):
                raise UnexpectedTracerError(
                    f"a traced value {x.aval.str_short()} escaped the transformation that "
                    "created it (stored in a global or closure?). Pass it as an argument instead.")
            return self._const(x, x.aval, expect)
        if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.ndarray):
            return Literal(x, aval_of_value(x))
        if isinstance(x, np.generic):
            aval = aval_of_value(x)
            return Literal(x, aval)
        if isinstance(x, Literal):
            return x
        x = canonical_value(x)
        if isinstance(x, np.ndarray) and x.ndim == 0:
            return Literal(x[()], aval_of_value(x))
        return self._const(x, aval_of_value(x), expect)

    def _const(self, x, aval, expect=None):
        key = id(x)
        if key in self._const_ids:
            return self._const_ids[key][0]
        if expect in self._adoptable and expect.aval == aval:
            self._adoptable.discard(expect)      # (each guide constvar stands for one value)
            v = expect
        else:
            v = Var(aval)
        self._const_ids[key] = (v, x)        # keep x alive so its id stays unique
        self.constvars.append(v)
        self.consts.append(x)
        return v

    def known(self, atom):
        if isinstance(atom, Literal):
            return atom.val
        for v, c in zip(self.constvars, self.consts):
            if v is atom:
                if isinstance(c, Tracer):
                    return c._val
                return c if self.with_values else None
        return None

    def process(self, prim, args, params):
        # (every traced operation comes here: own tracers are read without a call; the user's
        # frame is looked for above this one and its caller, a primitive's bind or a trace
        # that wraps this one, both xforms' own)
        info = source_info.current(3)
        if self.guide is not None:
            e = self._repeated(prim, args, params, info)
            if e is not None:
                self.eqns.append(e)
                return self._outputs(prim, args, e.outvars)
            self.guide = None
        invars = [a._var if type(a) is Tracer and a._trace is self else self.to_var(a)
                  for a in args]
        outvars = [Var(a) for a in abstract_eval(prim, [v.aval for v in invars], params)]
        self.eqns.append(Eqn(prim, invars, outvars, params, info))
        return self._outputs(prim, args, outvars)

    def _repeated(self, prim, args, params, info):
        """The guide's next equation if this bind repeats it, else None."""
        eqns, k = self.guide.eqns, len(self.eqns)
        if k >= len(eqns):
            return None
        e = eqns[k]
        if (e.prim is not prim or len(e.invars) != len(args)
                or (e.source_info is not info and e.source_info != info)
                or not _same_params(e.params, params)):
            return None
        for a, g in zip(args, e.invars):
            if type(a) is Tracer and a._trace is self:
                if a._var is not g:
                    return None
            elif type(a) in _REAL_SCALAR_TYPES and type(g) is Literal:
                if not _same_scalar(a, g.val):      # (no Literal built to compare)
                    return None
            elif not _same_atom(self.to_var(a, g), g):
                return None
        return e

    def _outputs(self, prim, args, outvars):
        """Tracers of `outvars`, the equation just recorded; their values pending (computed
        when asked for) when every operand's value is known."""
        if not (self.with_values and prim.trace_time_eval):
            return [Tracer(self, v, None) for v in outvars]
        for a in args:
            if type(a) is Tracer:
                v = a._v                     # (Tracer.has_value, inlined: once per operand)
                if v is None or (type(v) is Tracer and not v.has_value()):
                    return [Tracer(self, v, None) for v in outvars]
        pending = self._pending
        if len(outvars) == 1:                # (most primitives)
            v = outvars[0]
            out = Tracer(self, v, PENDING)
            pending[v] = (len(self.eqns) - 1, args, (out,))
            return [out]
        outs = [Tracer(self, v, PENDING) for v in outvars]
        record = (len(self.eqns) - 1, args, outs)
        for v in outvars:
            pending[v] = record
        return outs

    def value_of(self, tracer):
        """Compute `tracer`'s known value: evaluate, in program order, the equations it
        depends on whose values nobody has asked for yet (iteratively: a chain of
        thousands of equations needs no deep recursion)."""
        records, stack, seen = [], [tracer], set()
        while stack:
            t = stack.pop()
            if t._v is not PENDING or id(t) in seen:
                continue
            rec = self._pending[t._var]
            seen.update(id(o) for o in rec[2])
            records.append(rec)
            stack.extend(a for a in rec[1] if type(a) is Tracer and a._trace is self)
        for k, args, outs in sorted(records, key=lambda r: r[0]):
            eqn = self.eqns[k]
            invals = [self._known_val(a, v) for a, v in zip(args, eqn.invars)]
            with set_current_trace(eval_trace):
                vals = silently(impl_rules[eqn.prim], *invals, **eqn.params)
            for o, val, v in zip(outs, vals, eqn.outvars):
                o._v = fix_dtype(val, v.aval, invals)
                self._pending.pop(v, None)
        return tracer._v

    def _known_val(self, arg, atom):
        if isinstance(arg, Tracer):
            return arg._val
        if isinstance(atom, Literal):
            return atom.val
        return canonical_value(arg)

    def concrete_value(self, tracer, what, hint=None):
        if tracer._val is not None:
            t = self
            while isinstance(t, Builder):   # every enclosing trace now depends on this value
                t.value_dependent = True
                t = t.parent
            return tracer._val
        info = source_info.current()
        fun = source_info.describe_function(self.fun) if self.fun is not None else "the function"
        raise ConcretizationError(
            f"{what} was called on an abstract traced value {tracer.aval.str_short()} in {fun}"
            f"{' at ' + info.location if info else ''}. Under jit/make_jaxpr the values of "
            "arguments are not known while tracing. " + (
                hint or (_INDEX_HINT if what == "an index" else _CONTROL_HINT)))

    def array_conversion_error(self, tracer):
        info = source_info.current()
        fun = source_info.describe_function(self.fun) if self.fun is not None else "the function"
        return ConcretizationError(
            f"np.asarray() was called on a traced value {tracer.aval.str_short()} (directly, "
            f"through a NumPy function, or on a list holding it) in {fun}"
            f"{' at ' + info.location if info else ''}. NumPy cannot follow transformations: "
            "the result would lose its derivative or batch axis. Use xforms.numpy (xnp.asarray, "
            "xnp.sum, ...) on traced values, or compute constants outside the function; to "
            "index a NumPy array `data` with a traced integer, write xnp.asarray(data)[i].")

    def build(self, outs):
        outvars = [self.to_var(o) for o in outs]
        g = self.guide
        if (g is not None and len(self.eqns) == len(g.eqns) and self.constvars == g.constvars
                and self.invars == g.invars and len(outvars) == len(g.outvars)
                and all(_same_atom(a, b) for a, b in zip(outvars, g.outvars))):
            return ClosedJaxpr(g, self.consts)      # the guide again: the same program
        jaxpr = Jaxpr(self.constvars, self.invars, self.eqns, outvars)
        return ClosedJaxpr(jaxpr, self.consts)


def _same_atom(a, b):
    """Are IR atoms `a` and `b` the same: one variable, or literals of one type, abstract
    value and value (-0.0 is not 0.0; NaN matches nothing)?"""
    if a is b:
        return True
    if type(a) is not Literal or type(b) is not Literal:
        return False
    v, w = a.val, b.val
    return (type(v) is type(w) and a.aval == b.aval and isinstance(v, _REAL_SCALARS)
            and _same_scalar(v, w))


def _same_scalar(v, w):
    """Are real scalars `v` and `w` one literal: one type (which fixes the abstract value:
    a Python scalar is weakly typed, a NumPy one has its dtype) and value, -0.0 not 0.0?"""
    return (type(v) is type(w) and v == w
            and (v != 0 or math.copysign(1.0, v) == math.copysign(1.0, w)))


_REAL_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)
# (a Python int equal to the guide's literal is in int64's range, which to_var checks)
_REAL_SCALAR_TYPES = frozenset([bool, int, float, np.bool_] + [
    type(d.type(0)) for d in map(np.dtype, SUPPORTED_DTYPES) if d.kind in "iuf"])
_PLAIN_PARAMS = frozenset((int, str, bool, type(None))) | frozenset(
    type(d) for d in SUPPORTED_DTYPES)


def _same_params(p, q):
    """Are two equations' params the same?  Only ints, strings, bools, None, dtypes and
    tuples of ints compare by value (exactly: 1 is not True or 1.0); anything else must be
    the same object."""
    if len(p) != len(q):
        return False
    for k, v in p.items():
        w = q.get(k, _MISSING_PARAM)
        if v is w:
            continue
        t = type(v)
        if t is not type(w) or not (t in _PLAIN_PARAMS or (t is tuple and is_int_tree(v)
                                                          and is_int_tree(w))) or v != w:
            return False
    return True


def is_int_tree(v):
    """Is `v` a tuple of ints and such tuples (sizes, axes, dimension numbers)?"""
    for x in v:
        if type(x) is not int and (type(x) is not tuple or not is_int_tree(x)):
            return False
    return True


_MISSING_PARAM = object()


def trace_to_jaxpr(fun, in_avals, in_vals=None, fun_for_errors=None, guide=None):
    """Trace flat `fun(*tracers) -> list` to a ClosedJaxpr.

    Returns (closed_jaxpr, value_dependent).  With `in_vals` the tracers carry known values.
    `guide`: a jaxpr an earlier trace of `fun` built; if this trace records the same program,
    the result's jaxpr is `guide` itself (see `Builder`).
    """
    pass_counts.local.trace += 1
    builder = Builder(_state.current, with_values=in_vals is not None,
                      fun=fun_for_errors or fun, guide=guide)
    vals = in_vals if in_vals is not None else [None] * len(in_avals)
    args = [builder.new_arg(a, v) for a, v in zip(in_avals, vals, strict=True)]
    prev, _state.current = _state.current, builder     # (set_current_trace, inline)
    try:
        outs = fun(*args)
        closed = builder.build(outs)
    finally:
        _state.current = prev
        builder.dead = True
    value_dependent = builder.value_dependent
    # xf.checking_leaks(): checked when the outermost trace ends (a nested one's tracers
    # may still be in use by the enclosing trace's frames; a leaked one holds its trace,
    # whose parent is the outermost)
    if config.leak_checks and prev is eval_trace and config.check_tracer_leaks.value:
        ref, name = weakref.ref(builder), _user_name(fun_for_errors or fun)
        del builder, args, outs
        check_leaks(ref, name)
    return closed, value_dependent


def check_leaks(ref, name):
    """UnexpectedTracerError if the ended trace `ref()` is still alive once nothing of the
    trace itself holds it: a tracer of it outlived the trace (JAX's check_tracer_leaks)."""
    gc.collect()
    builder = ref()
    if builder is None:
        return
    leaked, traces = [], [builder]
    for b in traces:                       # the trace and the nested ones its leak keeps
        for r in gc.get_referrers(b):
            if isinstance(r, Tracer):
                leaked.append(r)
            elif isinstance(r, Builder) and r.parent is b:
                traces.append(r)
    held = [f"{t.aval.str_short()} held by {_holder(t)}" for t in leaked]
    raise UnexpectedTracerError(
        f"Leaked trace of {name}: a traced value outlived the trace that made it. Leaked "
        f"tracer(s): {'; '.join(held) or '(not found)'}. Return "
        "traced values from the function instead of storing them in a global or a closure.")


def _user_name(fun):
    while hasattr(fun, "__wrapped__"):         # (xforms' wrappers name the user's function)
        fun = fun.__wrapped__
    return getattr(fun, "__name__", repr(fun))


def _holder(tracer):
    """What refers to a leaked tracer, as a short description (a list, a dict, an object)."""
    kinds = [type(r).__name__ for r in gc.get_referrers(tracer)
             if not isinstance(r, (Builder, type(gc.get_referrers))) and r is not tracer]
    return f"a {kinds[0]}" if kinds else "an object"


def known_value(x):
    """The concrete value of `x` if it is available (eager value or known tracer), else None."""
    if isinstance(x, Tracer):
        return x._val
    return x


def deferred_value(x):
    """What a nested trace's input `x` is known to be, without computing it: `x` itself (a
    value, or a tracer whose known value the nested trace computes only if it asks), or
    None (unknown).

    >>> trace_to_jaxpr(f, avals, [deferred_value(x) for x in args])"""
    if isinstance(x, Tracer):
        return x if x.has_value() else None
    return x
