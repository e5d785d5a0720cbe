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

# (several names below are read through this module, `core.X`, by other modules)
from . import ir, memo, pass_counts, source_info  # noqa: F401
from .eager import reuse as eager_reuse
from .eager.float_checks import check_floats, float_problem  # noqa: F401  (core.float_problem)
from .eager.frozen import freeze_bases, sealed
from .eager.quiet import IGNORE as QUIET, enter as quiet_enter, leave as quiet_leave, note_user
from .eager.plans import GENERATE_AFTER, Plan, generate, interpret, run_steps  # noqa: F401
from .. import config
from .avals import (DEVICE_ARRAY_TYPES, SUPPORTED_DTYPES, ShapedArray, aval_of_value,  # noqa: F401
                    is_device_array)
from ..errors import ConcretizationError, MissingRuleError, UnexpectedTracerError  # noqa: F401
from .facts import Facts
from .ir import ClosedJaxpr, Eqn, IRTypeError, Jaxpr, Literal, Names, Var, pp_eqn  # noqa: F401

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
        for a in args:
            if type(a) in _SEQUENCES:
                _refuse_sequence(self, args, a)
        outs = _state.current.process(self, args, params)
        return outs if self.multiple_results else outs[0]


_SEQUENCES = (list, tuple)


def _refuse_sequence(prim, args, value):
    """JAX's TypeError for a list or tuple operand of a primitive (`lax.add(x, [1., 2.])`):
    it may be ragged or hold traced values; the caller converts it (xnp.asarray)."""
    i = next(i for i, a in enumerate(args) if a is value)
    raise TypeError(f"Error interpreting argument to {prim.name} as a JAX value. The "
                    f"problematic value is of type {type(value)} and was passed to "
                    f"{prim.name} at position {i}: convert it with xnp.asarray (as JAX)")


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
    with a traced index (both installed by xforms/numpy/arrays/methods.py, as Tracer's operators).

    `weak_type` is True for results derived only from Python scalars (as in JAX; jitted
    functions' outputs too), so `float32_array * xnp.sin(2.0)` stays float32 eagerly as it
    does under tracing.  The binary operators (xforms/numpy/arrays/methods.py) are NumPy's own
    where NumPy's result dtype is JAX's, else xforms.numpy's: `f32_array + i32_array` is
    float32, as for a jax.Array.
    """
    weak_type = False

    # Numba types this subclass like a plain ndarray on its fast C path (no __array_finalize__
    # either: a Python-level one costs a call on every view/boxing of an Array).
    __numba_array_subtype_dispatch__ = False


#: ndarray.setflags(x, write): `read_only` clears x's WRITEABLE flag with it: every Array a
#: user gets is read-only, as a jax.Array's `np.asarray` is (#31)
_set_flags = np.ndarray.setflags


def read_only(x):
    """`x` (an ndarray) and every array its `.base` chain reaches (the evaluator's own
    memory: core/eager/frozen.py) made read-only in place, returned: what every `Array`
    constructor does, so that `np.asarray(xnp.arange(4.)[1:3])[:] = -1` raises ValueError as in JAX
    instead of writing through a view (an eager slice shares its operand's memory).  The
    memory stays the program's: a view of a writable buffer may be read-only while the
    buffer is not, so a kernel may write a pooled buffer that a caller's view reads.

        >>> read_only(np.zeros(2)).flags.writeable        # False"""
    _set_flags(x, False)        # (write=False: positional, 150 ns less than the keyword)
    b = x.base                  # (what x views: read-only too, #31)
    if b is None or type(b) is Array:
        return x
    if type(b) is np.ndarray and b.base is None:   # (the usual chain: one owner)
        if b.flags.writeable:
            _set_flags(b, False)
        return x
    freeze_bases(b, Array)
    return x


def as_array(x):
    """Wrap a NumPy result as an eager, read-only `Array` (no copy)."""
    return read_only(np.asarray(x).view(Array))


def as_weak(x):
    """A jitted function's output `x` whose abstract value is weakly typed, as an `Array`
    that is: a JAX Array keeps `weak_type` across the jit boundary, so that
    `jit(lambda t: t + 1)(0)` added to an int32 array gives int32 (both tiers mark theirs).

        >>> as_weak(np.array(1)).weak_type      # True"""
    if type(x) is not Array:
        x = read_only(np.asarray(x).view(Array))
    x.weak_type = True
    return x


def canonical_value(x):
    """Check a concrete input and return it with a supported dtype (TypeError otherwise)."""
    if isinstance(x, np.ndarray):
        if x.dtype in OK_DTYPES:
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
        v = canonical_value(np.asarray(x))
        # (a device array's host copy keeps its weak type: a jit output, as JAX's)
        return as_weak(v) if getattr(x, "weak_type", False) is True else v
    aval_of_value(x)   # raises a TypeError that says what is accepted
    return x


def canonical_arg(x):
    """`canonical_value` of a transformed function's argument, where a backend's device array
    stays as it is (its abstract value comes from its shape and dtype, and its backend reads
    its data where it lives: no copy to the host and back).  Elsewhere -- an operand of an
    eager operation, a trace's constant -- canonical_value reads it to the host.

    >>> canonical_arg(xf.device_put(x, backend="cuda"))       # the DeviceArray itself
    """
    return x if is_device_array(x) else canonical_value(x)


OK_DTYPES = frozenset(SUPPORTED_DTYPES)


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


#: [fn(prim, args, params) -> outputs]: how a primitive given a backend's device arrays is
#: evaluated where they live (xforms/device.py installs it: one cached program per primitive
#: and parameters, as JAX dispatches an eager op), instead of on copies read to the host
DEVICE_EVAL = []


class EvalTrace:
    """Runs each primitive's NumPy implementation immediately (or, given device arrays,
    `DEVICE_EVAL`'s program on their device)."""
    parent = None

    def process(self, prim, args, params):
        if config.float_checks:                    # (also counts xf.no_execution)
            config.check_execution(f"jit({prim.name})")
        if DEVICE_ARRAY_TYPES and DEVICE_EVAL and not DEVICE_ARRAY_TYPES.isdisjoint(map(type, args)):
            outs = DEVICE_EVAL[0](prim, args, params)
            if outs is not None:                   # (None: no program for it there)
                return outs
        vals = [canonical_value(a) for a in args]
        out_avals = abstract_eval(prim, [aval_of_value(v) for v in vals], params)
        # the impls get plain arrays: NumPy runs an Array (a subclass with its own
        # __array_ufunc__, xforms/numpy/arrays/numpy_ufuncs.py) through Python; the results
        # become Arrays (silently: NumPy's floating-point warnings off, as XLA's are:
        # eager/quiet.py)
        token = quiet_enter(QUIET)
        if token.old_value is not QUIET:       # (the user's state, for their callbacks)
            note_user(token.old_value)
        try:
            outs = impl_rules[prim](*[v.view(np.ndarray) if type(v) is Array else v
                                      for v in vals], **params)
        finally:
            quiet_leave(token)
        outs = [fix_dtype(o, a, vals) for o, a in zip(outs, out_avals, strict=True)]
        if config.float_checks:                    # xf.debug_nans / debug_infs
            check_floats(outs, prim.name)
        return outs


def fix_dtype(x, aval, inputs=()):
    """An implementation's result `x` as a read-only Array of `aval`'s dtype and weak type,
    with nothing writable on its `.base` chain (a copy where that chain reaches one of the
    user's `inputs`: frozen.sealed)."""
    x = np.asarray(x)
    if x.dtype != aval.dtype:
        x = x.astype(aval.dtype)
    x = sealed(x, inputs, Array).view(Array)   # (the array first, then its view: both read-only)
    if aval.weak_type:
        x.weak_type = True
    return x


def owned_array(x, inputs=()):
    """A plain ndarray `x` as a read-only Array that nothing can write: a copy where `x` is,
    or views, one of the user's `inputs` (frozen.owned; JAX's result never shares a NumPy
    operand's memory), else `x`'s own chain made read-only.

        >>> a = np.arange(2.); owned_array(a, [a]) is a, a.flags.writeable   # (False, True)
    """
    return sealed(x, inputs, Array).view(Array)


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
PENDING = object()     # a known value not computed yet (Builder.value_of computes it)


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
        if v is PENDING:
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

    def _concrete(self, what, hint=None):
        """The value behind this tracer, or a ConcretizationError saying that `what` needs
        it (`hint`: what to do instead; default, the control-flow advice)."""
        return self._trace.concrete_value(self, what, hint)

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


def eval_with_residuals(closed, n_out, *args):
    """`eval_jaxpr` of a linearized primal program whose outputs after the first `n_out` are
    residuals, read only by the program's linear or transposed half: eagerly those stay
    plain ndarrays of their avals' dtypes (no `Array` wrap, which would also make every
    NumPy call of the other half that reads them pay for a subclass result).

    >>> outs = eval_with_residuals(primal, n_out, *args); res = outs[n_out:]
    """
    if _state.current is not eval_trace:
        return eval_jaxpr(closed, *args)
    return eval_eager(closed.jaxpr, closed.consts, args, n_out)


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


def eval_eager(jaxpr, consts, args, n_wrapped=None):
    """Run `jaxpr`'s NumPy implementations from its cached plan.  The results are `Array`s of
    their avals' dtypes and weak types (what eager code sees; only the first `n_wrapped`,
    the rest plain values of their dtypes: `eval_with_residuals`); values between equations
    are plain ndarrays, cast only where the dtype differs (an `Array` would cost a subclass
    wrap in every ufunc and a Python-level `__getitem__` in every slice).  Under
    xf.debug_nans/debug_infs every equation's results are checked, by the interpreter."""
    checked = bool(config.float_checks) and _checks_on()
    plan = memo.plans.lookup(jaxpr, "checked" if checked else "eager", _plan, jaxpr,
                             not checked)
    if len(consts) + len(args) != plan.n_in:
        raise ValueError(f"eval_jaxpr: {len(consts)} constants and {len(args)} arguments "
                         f"for a jaxpr taking {plan.n_in}")
    if not checked and plan.run is None:
        plan.calls += 1
        if plan.calls > GENERATE_AFTER:    # run again and again: worth generated code
            plan.run = generate(plan)
    given, (consts, args) = args, (_unwrapped(consts), _unwrapped(args))
    token = quiet_enter(QUIET)              # (NumPy's warnings off: eager/quiet.py)
    if token.old_value is not QUIET:        # (the user's state, for their callbacks)
        note_user(token.old_value)
    try:
        if checked:
            vals = interpret(plan, consts, args, jaxpr.eqns)
        elif plan.run is not None:
            vals = plan.run(*consts, *args)
        else:
            vals = run_steps(plan, consts, args)
    finally:
        quiet_leave(token)
    if n_wrapped is None:
        return [fix_dtype(v, o[2], given) for v, o in zip(vals, plan.outs)]
    outs = plan.outs
    return ([fix_dtype(v, o[2], given) for v, o in zip(vals[:n_wrapped], outs)]
            + [_plain(v, o[2]) for v, o in zip(vals[n_wrapped:], outs[n_wrapped:])])


def eager_runner(closed):
    """`fn(args)`: `closed` run eagerly as `eval_jaxpr` would, its plan made and generated
    now -- for a caller that keeps a program for its hot calls (xforms/numpy/eager_programs.py),
    without eval_eager's lookup per call.  Unchecked: under debug_nans / debug_infs the
    caller takes eval_jaxpr.  >>> eager_runner(make_jaxpr(f)(x))([x])   # [f(x)]"""
    plan = _plan(closed.jaxpr)
    run, consts, outs = generate(plan), _unwrapped(closed.consts), plan.outs

    def call(args):
        token = quiet_enter(QUIET)              # (NumPy's warnings off: eager/quiet.py)
        try:
            vals = run(*consts, *_unwrapped(args))
        finally:
            quiet_leave(token)
        return [fix_dtype(v, o[2], args) for v, o in zip(vals, outs)]
    return call


def _unwrapped(xs):
    """Inputs with every `Array` viewed as a plain ndarray: a NumPy call on a subclass
    returns the subclass, which every later call would pay for again.  A backend's device
    array is read to the host, where the NumPy implementations compute (an implicit copy,
    which xf.transfer_guard sees)."""
    for x in xs:
        t = type(x)
        if t is Array or (DEVICE_ARRAY_TYPES and t in DEVICE_ARRAY_TYPES):
            return [x.view(np.ndarray) if type(x) is Array else
                    np.asarray(x) if is_device_array(x) else x for x in xs]
    return xs


def _plain(x, aval):
    """`x` as a plain ndarray (or NumPy scalar) of `aval`'s dtype."""
    if type(x) is np.ndarray and x.dtype == aval.dtype:
        return x
    return np.asarray(fix_dtype(x, aval)).view(np.ndarray)


def _checks_on():
    return config.debug_nans.value or config.debug_infs.value


# in-place ufuncs and pads folded into adds (xforms/core/eager/reuse.py); off: each equation
# allocates its result, as the impl rules do (tests compare the two)
reuse_buffers = True


def _plan(jaxpr, reuse=True):
    inputs = jaxpr.constvars + jaxpr.invars
    slot = {v: k for k, v in enumerate(inputs)}     # (a variable listed twice: the last)
    n = n_in = len(inputs)
    steps = []
    for e in jaxpr.eqns:
        ins = tuple((True, a.val) if isinstance(a, Literal) else (False, slot[a])
                    for a in e.invars)
        for v in e.outvars:
            slot[v], n = n, n + 1
        rule = impl_rules[e.prim]
        if getattr(rule, "real", None) is not None and not any(
                a.aval.dtype.kind == "c" for a in e.invars):
            rule = rule.real         # (no complex operand: no kernel to check for)
        steps.append((rule, ins, e.params,
                      tuple((slot[v], v.aval.dtype) for v in e.outvars)))
    if reuse_buffers and reuse:
        steps = eager_reuse.rewrite(jaxpr, steps, slot)
    outs = tuple((True, a.val, a.aval) if isinstance(a, Literal) else (False, slot[a], a.aval)
                 for a in jaxpr.outvars)
    return Plan(n, n_in, steps, outs)


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
# as numpy/arrays/methods.py installs Tracer's methods, so ir.py imports nothing above it
ir.check_jaxpr = check_jaxpr
