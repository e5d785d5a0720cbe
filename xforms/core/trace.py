"""Primitives, `bind`, the current-trace context, eager evaluation and IR building.

There are two kinds of trace (JAX's stackless design, simplified further): `EvalTrace`
runs NumPy implementations op by op, and `Builder` stages operations into a jaxpr.
Transforms (jvp, transpose, vmap, partial evaluation) are interpreters over jaxprs that run
under a `Builder`, so each maps IR to IR and nesting needs no special case: evaluating an
IR binds its primitives on whatever trace is current.

A `Builder` may carry *known values* beside abstract values (un-jitted transforms trace
with them), so Python `if x > 0:` works under `grad` as in JAX; a trace that used one is
marked value-dependent and never cached.
"""
import threading
from contextlib import contextmanager

import numpy as np

from . import eager_reuse, ir, memo, pass_counts, source_info
from .avals import SUPPORTED_DTYPES, ShapedArray, aval_of_value
from ..errors import ConcretizationError, MissingRuleError, UnexpectedTracerError
from .facts import Facts
from .ir import ClosedJaxpr, Eqn, IRTypeError, Jaxpr, Literal, Names, Var, pp_eqn

# ---- rule tables owned by the core (other tables live with their transforms) --------------
abstract_eval_rules = {}   # prim -> (*avals, **params) -> list[ShapedArray]
impl_rules = {}            # prim -> (*np_arrays, **params) -> list[np.ndarray]


class Primitive:
    """An operation of the IR.  `bind` dispatches it to the current trace.  `facts` holds
    what the lowering needs to know about it (xforms/core/facts.py; set with `facts.declare`).

    `trace_time_eval = False` keeps a tracer with known inputs from evaluating the
    primitive while tracing (collectives: their value depends on other ranks or members)."""
    trace_time_eval = True

    def __init__(self, name, multiple_results=False):
        self.name, self.multiple_results = name, multiple_results
        self.facts = Facts()

    def __repr__(self):
        return self.name

    def bind(self, *args, **params):
        outs = _state.current.process(self, args, params)
        return outs if self.multiple_results else outs[0]


def abstract_eval(prim, avals, params):
    rule = abstract_eval_rules.get(prim)
    if rule is None:
        raise MissingRuleError(prim.name, "abstract evaluation")
    try:
        return rule(*avals, **params)
    except TypeError as e:
        if getattr(e, "_xf_located", False):
            raise
        info = source_info.current()
        where = f" (at {info})" if info else ""
        err = type(e)(f"{e}{where}")
        err._xf_located = True
        raise err from None


# ---- eager values ----------------------------------------------------------------------
class Array(np.ndarray):
    """An eager result: a NumPy array that also supports `x.at[idx].set(v)`, and indexing
    with a traced index (both installed by xforms/numpy/methods.py, as Tracer's operators).

    `weak_type` is True for results derived only from Python scalars (as in JAX), so
    `float32_array * xnp.sin(2.0)` stays float32 eagerly as it does under tracing.
    """
    weak_type = False

    # Numba types this subclass like a plain ndarray on its fast C path (no __array_finalize__
    # either: a Python-level one costs a call on every view/boxing of an Array).
    __numba_array_subtype_dispatch__ = False


def as_array(x):
    """Wrap a NumPy result as an eager `Array` (no copy)."""
    return np.asarray(x).view(Array)


def canonical_value(x):
    """Check a concrete input and return it with a supported dtype (TypeError otherwise)."""
    if isinstance(x, np.ndarray):
        if x.dtype in _OK_DTYPES:
            return x
        if not x.dtype.isnative:          # big-endian data (from a file): native byte order
            return canonical_value(x.astype(x.dtype.newbyteorder("=")))
        aval = aval_of_value(x)
        return x.astype(aval.dtype)
    if isinstance(x, (bool, int, float, complex, np.generic)):
        aval_of_value(x)
        return x
    if isinstance(x, (list, tuple)):
        try:
            arr = np.asarray(x)
        except ValueError:
            raise TypeError("ragged nested sequence: xforms accepts rectangular arrays; "
                            "convert with np.asarray and check the shapes") from None
        if arr.dtype == object:
            inexact = _python_inexact_dtype(arr)
            if inexact is not None:        # [2**70, 1.5] is float64, as in JAX
                return canonical_value(np.asarray(x, dtype=inexact))
            for v in arr.flat:             # ints beyond int64 (NumPy keeps them as objects)
                if isinstance(v, int) and not isinstance(v, bool):
                    aval_of_value(v)       # OverflowError, as JAX
            raise TypeError("ragged or object sequence: xforms accepts rectangular numeric arrays")
        return canonical_value(arr)
    if hasattr(x, "__array__") and not isinstance(x, Tracer):
        return canonical_value(np.asarray(x))
    aval_of_value(x)   # raises a TypeError that says what is accepted
    return x


_OK_DTYPES = frozenset(SUPPORTED_DTYPES)


def _python_inexact_dtype(arr):
    """The dtype JAX gives an object array of Python numbers holding a float or complex
    (float64 or complex128: the ints in it, however large, become that); None otherwise."""
    kinds = set()
    for v in arr.flat:
        if not isinstance(v, (int, float, complex)):
            return None
        kinds.add(complex if isinstance(v, complex) else float if isinstance(v, float) else int)
    return np.complex128 if complex in kinds else np.float64 if float in kinds else None


def get_aval(x):
    if isinstance(x, Tracer):
        return x.aval
    return aval_of_value(x)


class EvalTrace:
    """Runs each primitive's NumPy implementation immediately."""
    parent = None

    def process(self, prim, args, params):
        vals = [canonical_value(a) for a in args]
        out_avals = abstract_eval(prim, [aval_of_value(v) for v in vals], params)
        outs = impl_rules[prim](*vals, **params)
        return [_fix_dtype(o, a) for o, a in zip(outs, out_avals, strict=True)]


def _fix_dtype(x, aval):
    x = np.asarray(x)
    if x.dtype != aval.dtype:
        x = x.astype(aval.dtype)
    x = x.view(Array)
    if aval.weak_type:
        x.weak_type = True
    return x


eval_trace = EvalTrace()


class _TraceState(threading.local):
    """The current trace, per thread: a compile running in a background thread (tiered
    execution) may trace while the main thread evaluates eagerly."""
    current = eval_trace


_state = _TraceState()


def current_trace():
    return _state.current


@contextmanager
def set_current_trace(trace):
    prev, _state.current = _state.current, trace
    try:
        yield trace
    finally:
        _state.current = prev


# ---- staging into a jaxpr ------------------------------------------------------------
_PENDING = object()     # a known value not computed yet (Builder.value_of computes it)


class Tracer:
    """A value being staged into a jaxpr: an abstract value plus, maybe, a known value.

    A known value is computed only when something asks for it (`_val`: Python control flow
    on it, a shape that depends on it): un-jitted transforms trace with known values on
    every call, and most traces never look at one, so the primal is not evaluated twice."""
    __slots__ = ("_trace", "_var", "_v")
    __array_ufunc__ = None          # make NumPy defer to our reflected operators
    __array_priority__ = 1000

    def __init__(self, trace, var, val=None):
        self._trace, self._var, self._v = trace, var, val

    @property
    def _val(self):
        """The known value (None: unknown), computed on first use."""
        v = self._v
        if v is _PENDING:
            v = self._trace.value_of(self)
        elif type(v) is Tracer:          # an enclosing trace's value, passed in as known
            v = self._v = v._val
        return v

    def has_value(self):
        """Whether the value is known (maybe not computed yet), without computing it."""
        v = self._v
        return v is not None and (type(v) is not Tracer or v.has_value())

    aval = property(lambda self: self._var.aval)
    shape = property(lambda self: self._var.aval.shape)
    dtype = property(lambda self: self._var.aval.dtype)
    ndim = property(lambda self: len(self._var.aval.shape))
    size = property(lambda self: self._var.aval.size)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>"

    def _concrete(self, what):
        val = self._trace.concrete_value(self, what)
        return val

    def __bool__(self):
        return bool(self._concrete("bool()"))

    def __float__(self):
        return float(self._concrete("float()"))

    def __int__(self):
        return int(self._concrete("int()"))

    def __index__(self):
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer traced arrays can be used as an index, got {self.aval}")
        return int(self._concrete("an index"))

    def __complex__(self):
        return complex(self._concrete("complex()"))

    def __array__(self, dtype=None, copy=None):
        # Never, even when the value is known (un-jitted grad): the NumPy array would carry
        # no derivative and no batch axis, so the result would be silently wrong (JAX too).
        raise self._trace.array_conversion_error(self)

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        raise TypeError("traced arrays are not hashable; mark the argument static with "
                        "static_argnums if it must be used as a dict key")


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
    """Stages primitives into a jaxpr.  Values from parent traces become constvars."""

    def __init__(self, parent, with_values=False, fun=None):
        self.parent, self.with_values, self.fun = parent, with_values, fun
        self.invars, self.eqns = [], []
        self.constvars, self.consts, self._const_ids = [], [], {}
        self.value_dependent = False
        self.dead = False
        self._pending = {}      # Var -> (eqn number, args, output tracers) not yet computed

    def new_arg(self, aval, val=None):
        """An input; `val` its known value, or a tracer of an enclosing trace whose value
        (computed when asked for) it is."""
        v = Var(aval)
        self.invars.append(v)
        return Tracer(self, v, val if self.with_values else None)

    def _is_ancestor(self, trace):
        t = self.parent
        while t is not None:
            if t is trace:
                return True
            t = getattr(t, "parent", None)
        return False

    def to_var(self, x):
        """The IR atom for `x`: own tracer -> var, scalar -> literal, anything else -> constvar."""
        if isinstance(x, Tracer):
            if x._trace is self:
                return x._var
            if x._trace.dead or not self._is_ancestor(x._trace):
                raise UnexpectedTracerError(
                    f"a traced value {x.aval.str_short()} escaped the transformation that "
                    "created it (stored in a global or closure?). Pass it as an argument instead.")
            return self._const(x, x.aval)
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
        return self._const(x, aval_of_value(x))

    def _const(self, x, aval):
        key = id(x)
        if key in self._const_ids:
            return self._const_ids[key][0]
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
        invars = [self.to_var(a) for a in args]
        out_avals = abstract_eval(prim, [v.aval for v in invars], params)
        outvars = [Var(a) for a in out_avals]
        self.eqns.append(Eqn(prim, invars, outvars, params, source_info.current()))
        known = (self.with_values and prim.trace_time_eval and
                 all(a.has_value() for a in args if isinstance(a, Tracer)))
        outs = [Tracer(self, v, _PENDING if known else None) for v in outvars]
        if known:
            record = (len(self.eqns) - 1, args, outs)
            for v in outvars:
                self._pending[v] = record
        return outs

    def value_of(self, tracer):
        """Compute `tracer`'s known value: evaluate, in program order, the equations it
        depends on whose values nobody has asked for yet (iteratively: a chain of
        thousands of equations needs no deep recursion)."""
        records, stack, seen = [], [tracer], set()
        while stack:
            t = stack.pop()
            if t._v is not _PENDING or id(t) in seen:
                continue
            rec = self._pending[t._var]
            seen.update(id(o) for o in rec[2])
            records.append(rec)
            stack.extend(a for a in rec[1] if type(a) is Tracer and a._trace is self)
        for k, args, outs in sorted(records, key=lambda r: r[0]):
            eqn = self.eqns[k]
            invals = [self._known_val(a, v) for a, v in zip(args, eqn.invars)]
            with set_current_trace(eval_trace):
                vals = impl_rules[eqn.prim](*invals, **eqn.params)
            for o, val, v in zip(outs, vals, eqn.outvars):
                o._v = _fix_dtype(val, v.aval)
                self._pending.pop(v, None)
        return tracer._v

    def _known_val(self, arg, atom):
        if isinstance(arg, Tracer):
            return arg._val
        if isinstance(atom, Literal):
            return atom.val
        return canonical_value(arg)

    def concrete_value(self, tracer, what):
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
            "arguments are not known while tracing. " + (_INDEX_HINT if what == "an index"
                                                          else _CONTROL_HINT))

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
        jaxpr = Jaxpr(self.constvars, self.invars, self.eqns, outvars)
        return ClosedJaxpr(jaxpr, self.consts)


def trace_to_jaxpr(fun, in_avals, in_vals=None, fun_for_errors=None):
    """Trace flat `fun(*tracers) -> list` to a ClosedJaxpr.

    Returns (closed_jaxpr, value_dependent).  With `in_vals` the tracers carry known values.
    """
    pass_counts.local.trace += 1
    builder = Builder(_state.current, with_values=in_vals is not None,
                      fun=fun_for_errors or fun)
    vals = in_vals if in_vals is not None else [None] * len(in_avals)
    args = [builder.new_arg(a, v) for a, v in zip(in_avals, vals, strict=True)]
    try:
        with set_current_trace(builder):
            outs = fun(*args)
            closed = builder.build(outs)
    finally:
        builder.dead = True
    return closed, builder.value_dependent


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


# ---- evaluating an IR on the current trace --------------------------------------------------
def eval_jaxpr(closed, *args):
    """Evaluate a closed jaxpr on the current trace: the one evaluator.

    Eagerly it runs the NumPy implementations from a plan (slots, not dicts), made once per
    jaxpr and cached (xforms/core/memo.py); under a trace it binds each equation there, which
    inlines the program into the trace being built.

    >>> eval_jaxpr(make_jaxpr(lambda x: x * 2.0)(1.0), 3.0)
    [Array(6.)]
    """
    return eval_open_jaxpr(closed.jaxpr, closed.consts, args)


def eval_open_jaxpr(jaxpr, consts, args):
    if _state.current is eval_trace:
        return eval_eager(jaxpr, consts, args)
    env = {}
    for v, x in zip(jaxpr.constvars, consts, strict=True):
        env[v] = x
    for v, x in zip(jaxpr.invars, args, strict=True):
        env[v] = x
    for eqn in jaxpr.eqns:
        invals = [a.val if isinstance(a, Literal) else env[a] for a in eqn.invars]
        with source_info.user_frame_override(eqn.source_info):
            outs = eqn.prim.bind(*invals, **eqn.params)
        if not eqn.prim.multiple_results:
            outs = [outs]
        for v, x in zip(eqn.outvars, outs, strict=True):
            env[v] = x
    return [a.val if isinstance(a, Literal) else env[a] for a in jaxpr.outvars]


def eval_eager(jaxpr, consts, args, as_arrays=True):
    """Run `jaxpr`'s NumPy implementations from its cached plan.  `as_arrays`: every value
    becomes an `Array` of its aval's dtype and weak type (what eager code sees); without it
    values stay as the implementations return them, cast only where the dtype differs (loop
    bodies, run many times by the control-flow primitives)."""
    n_slots, n_in, steps, outs = memo.plans.lookup(jaxpr, "eager", _plan, jaxpr)
    if len(consts) + len(args) != n_in:
        raise ValueError(f"eval_jaxpr: {len(consts)} constants and {len(args)} arguments "
                         f"for a jaxpr taking {n_in}")
    env = [None] * n_slots
    env[:len(consts)] = consts
    env[len(consts):n_in] = args
    for fn, ins, params, out_slots in steps:
        res = fn(*[v if lit else env[v] for lit, v in ins], **params)
        if as_arrays:
            for (s, aval), o in zip(out_slots, res):
                env[s] = _fix_dtype(o, aval)
        else:
            for (s, aval), o in zip(out_slots, res):
                dt = aval.dtype
                env[s] = o if getattr(o, "dtype", None) == dt else np.asarray(o).astype(dt)
    vals = [v if lit else env[v] for lit, v, _ in outs]
    if not as_arrays:
        return vals
    # eager results are Arrays, also a literal (a zero derivative) or an input
    return [x if isinstance(x, Array) else _fix_dtype(x, o[2]) for x, o in zip(vals, outs)]


# in-place ufuncs and pads folded into adds (xforms/core/eager_reuse.py); off: each equation
# allocates its result, as the impl rules do (tests compare the two)
reuse_buffers = True


def _plan(jaxpr):
    inputs = jaxpr.constvars + jaxpr.invars
    slot = {v: k for k, v in enumerate(inputs)}     # (a variable listed twice: the last)
    n = n_in = len(inputs)
    steps = []
    for e in jaxpr.eqns:
        ins = tuple((True, a.val) if isinstance(a, Literal) else (False, slot[a])
                    for a in e.invars)
        for v in e.outvars:
            slot[v], n = n, n + 1
        steps.append((impl_rules[e.prim], ins, e.params,
                      tuple((slot[v], v.aval) for v in e.outvars)))
    if reuse_buffers:
        steps = eager_reuse.rewrite(jaxpr, steps, slot)
    outs = tuple((True, a.val, a.aval) if isinstance(a, Literal) else (False, slot[a], a.aval)
                 for a in jaxpr.outvars)
    return n, n_in, steps, outs


def jaxpr_as_fun(closed):
    return lambda *args: eval_jaxpr(closed, *args)


# ---- type checker ------------------------------------------------------------------------
def check_jaxpr(jaxpr):
    """Re-derive every equation's output avals and check that variables are defined once."""
    defined = set(jaxpr.constvars) | set(jaxpr.invars)

    def read(v):
        if isinstance(v, Literal):
            return v.aval
        if v not in defined:
            raise IRTypeError(f"variable {v} used before definition")
        return v.aval

    for eqn in jaxpr.eqns:
        in_avals = [read(v) for v in eqn.invars]
        for p in eqn.params.values():
            for sub in (p if isinstance(p, tuple) else (p,)):
                if isinstance(sub, ClosedJaxpr):
                    check_jaxpr(sub.jaxpr)
        rule = abstract_eval_rules.get(eqn.prim)
        if rule is not None:
            out_avals = rule(*in_avals, **eqn.params)
            for v, a in zip(eqn.outvars, out_avals, strict=True):
                if (v.aval.shape, v.aval.dtype) != (a.shape, a.dtype):
                    raise IRTypeError(f"{pp_eqn(eqn, Names())}: output {v.aval.str_short()} "
                                      f"but rule gives {a.str_short()}")
        for v in eqn.outvars:
            if v in defined:
                raise IRTypeError(f"variable {v} defined twice")
            defined.add(v)
    for v in jaxpr.outvars:
        read(v)
    return True


# `from xforms.core.ir import check_jaxpr` (its former home) keeps working: installed from here,
# as numpy/methods.py installs Tracer's methods, so ir.py imports nothing above it
ir.check_jaxpr = check_jaxpr
