"""`jit`: trace once per abstract signature, compile the IR with a backend, call fast.

The backends it compiles with are `xforms/jit/backends.py`'s registry.  Under another
transform (`grad(jit(f))`), a jitted function is traced inline into the outer IR, which is
itself compiled when the outermost `jit` runs.

>>> f = jit(lambda x: x * 2.0); f(1.0)
"""
import contextlib
import functools
import logging
import warnings

import numpy as np

from .. import config
from ..core import trace as core
from ..exec import exe_cache, gc_pause, tiered
from ..exec import exact_bits
from ..argnums import resolve_static, split_call
from ..core import jit_switch, monitoring
from ..core.source_info import describe_function, function_name
from ..transforms.tracing import flatten_args, float0_as_static, trace_flat
from ..core.avals import DEVICE_ARRAY_TYPES, float0
from ..stages import Traced, Wrapped
from ..tree_util import tree_flatten, tree_unflatten
from .backends import cheap_default, data_backend, default_backend, in_process, require
from .misses import explain_miss, key_leaf_kinds
from ..errors import BackendError

logger = logging.getLogger("xforms.jit")   # (the name config's log_compiles documents)


def _leaf_key(x):
    t = type(x)
    if t is float:
        return "f"
    if t is int:
        return "i"
    if t is bool:
        return "b"
    try:
        return (x.shape, x.dtype)
    except AttributeError:
        return core.get_aval(x)


def _make_fast_call(exe, key, out_tree):
    """The executable's generated fast path for this argument structure, if it has one:
    it checks the arguments itself and raises one of _FAST_MISSES on a mismatch."""
    make = getattr(exe, "make_fast_call", None)
    if make is None:
        return None
    statics, kw = None, {}
    if key[0] == "static":
        _, statics, skw, dyn_kw_tree, kinds = key
        in_tree, kw_tree = dyn_kw_tree.children
        statics = dict(statics)
        if skw or kw_tree.children:      # keywords: read by name (a newer backend's feature)
            kw = {"kw_tree": kw_tree if kw_tree.children else None, "static_kw": dict(skw)}
    else:
        in_tree, kinds = key
    try:
        return make(in_tree, [k if isinstance(k, str) else None for k in kinds], out_tree,
                    statics, **kw)
    except Exception:          # no fast path: the general path still works
        return None


# what a fast path raises when the arguments are not its signature's (LookupError covers
# the generated checks' own exception, xforms.kernels.cpu.dispatch.Miss)
_FAST_MISSES = (TypeError, AttributeError, LookupError, ValueError)


def _float0_out_of_program(out):
    return float0_as_static(out), None


def _refuse_tracing(fun):
    """What jit traces under no_tracing: it may only reuse a trace, so running it raises."""
    @functools.wraps(fun)
    def refuse(*args, **kwargs):
        raise RuntimeError(f"re-tracing function {describe_function(fun)} for `jit`, but "
                           "'no_tracing' is set")
    return refuse


class Jitted(Wrapped):
    def __init__(self, fun, static_argnums=(), static_argnames=(), backend=None,
                 donate_argnums=(), tiered=None, exact_compile=False):
        self.fun = fun
        # backend "interpret" with exact_compile: a signature whose program compiles to the
        # evaluator's bits (exec/exact_bits.py) is compiled for the CPU in the background,
        # the evaluator answering meanwhile (xforms/random/programs.py)
        self.exact_compile = exact_compile
        # each completed from the other through fun's signature, negatives resolved (JAX)
        self.static_argnums, self.static_argnames = resolve_static(fun, static_argnums,
                                                                   static_argnames)
        if backend is not None and backend not in ("cpu", "cuda", "interpret"):
            raise BackendError(f"unknown backend {backend!r}: use 'cpu' or 'cuda'")
        self.backend = backend
        self.donate_argnums = donate_argnums
        self.tiered = tiered             # None: XFORMS_TIERED decides (xforms/exec/tiered.py)
        self._fast = {}
        self._fast_call = None       # the generated fast path of the latest signature
        functools.update_wrapper(self, fun, updated=())   # never copy fun.__dict__ over ours

    def _on(self, backend):
        """This function jitted for `backend` (its executables kept apart: the default
        device is part of the cache key, as in JAX)."""
        per = self.__dict__.setdefault("_per_backend", {})
        if backend not in per:
            per[backend] = Jitted(self.fun, self.static_argnums, self.static_argnames,
                                  backend, self.donate_argnums, self.tiered,
                                  self.exact_compile)
        return per[backend]

    def _elsewhere(self, leaves, platform=None):
        """The Jitted of another backend this call runs on, or None (this one's): the
        backend of the first device array among argument `leaves` (JAX's computation follows
        committed data), else `platform`, an open default_device's.  The one place a call
        looks for device arrays."""
        placed = data_backend(leaves) if DEVICE_ARRAY_TYPES else None
        if platform is not None:
            return self._on(placed or platform)
        if placed is not None and placed != default_backend():
            return self._on(placed)
        return None

    def _trace(self, args, kwargs, with_values=False):
        call, dyn, dkw = split_call(self.fun, args, kwargs, self.static_argnums,
                                    self.static_argnames)
        flat, in_tree = flatten_args((dyn, dkw), self.fun)
        traced = _refuse_tracing(self.fun) if config.no_tracing.value else call
        # (lax.platform_dependent reads the platform the trace is for)
        platform = (contextlib.nullcontext() if (self.backend or cheap_default()) != "cuda"
                    else config.lowering_platform("cuda"))
        # traced once per signature while the jitted function lives (JAX's rule)
        with platform:
            closed, out_tree, _ = trace_flat(
                traced, flat, in_tree, with_values=with_values,
                key=(self.fun, ("jit", call.statics, call.skw, call.n)),
                post=_float0_out_of_program, fun_name=function_name(self.fun))
        return closed, out_tree, flat, in_tree

    def _key(self, args, kwargs):
        """-> (this call's signature key, the argument leaves it was read from): the
        pytree structure and each leaf's type or (shape, dtype), the static values, and the
        settings of the options that change a trace (`config.trace_context`, as JAX keys
        them).  TypeError where the arguments cannot form a key (unhashable statics)."""
        if not kwargs and not self.static_argnums:
            leaves, in_tree = tree_flatten(args)
            key = (in_tree, tuple(map(_leaf_key, leaves)))
        else:
            call, dyn, dkw = split_call(self.fun, args, kwargs, self.static_argnums,
                                        self.static_argnames)
            leaves, in_tree = tree_flatten((dyn, dkw))
            key = ("static", call.statics, call.skw, in_tree, tuple(map(_leaf_key, leaves)))
        return ((key, config.trace_context()) if config.trace_options else key), leaves

    def _lookup(self, args, kwargs):
        """-> (signature key, argument leaves, the key's executable entry or None)."""
        try:
            key, leaves = self._key(args, kwargs)
            return key, leaves, self._fast.get(key)
        except TypeError:        # (unhashable: traced below, which says why, or uncached)
            return None, None, None

    def _executable(self, closed, background=False, backend=None):
        backend = backend or self.backend or default_backend()
        found = require(backend)
        with monitoring.timed(monitoring.BACKEND_COMPILE_EVENT,
                              f"jit({function_name(self.fun)})"):
            return found.compile(closed, {"donate_argnums": self.donate_argnums,
                                          "backend": backend, "background": background,
                                          "name": describe_function(self.fun)})

    def _log_compile(self, closed, how):
        """xf.log_compiles: one line per compile (WARNING while on, else DEBUG, as JAX)."""
        level = logging.WARNING if config.log_compiles.value else logging.DEBUG
        if logger.isEnabledFor(level):
            shapes = ", ".join(v.aval.str_short() for v in closed.jaxpr.invars)
            logger.log(level, "Compiling %s (%s) for backend %r%s", describe_function(self.fun),
                       shapes, self.backend or default_backend(), how)

    def _new_executable(self, closed):
        """The compiled executable, or (tiered) one that runs the IR eagerly while the
        compile runs in the background."""
        cut = (exact_bits.exact_head(closed) if self.exact_compile and tiered.enabled(
            self.tiered) and self.backend == "interpret" else None)
        started = self.__dict__.get("_exact_started", 0)
        if cut is not None and started < exact_bits.LIMIT:
            self._exact_started = started + 1
            head, tail = cut
            self._log_compile(head, " in the background (the evaluator answers meanwhile)")
            exe = tiered.TieredExecutable(
                head, lambda: self._executable(head, background=True, backend="cpu"),
                describe_function(self.fun), in_process)
            exe.patient = False     # (the evaluator is this function's own tier: no wait)
            return exe if tail is None else exact_bits.HeadCompiled(exe, tail)
        if tiered.enabled(self.tiered) and (self.backend or cheap_default()) == "cpu":
            tier, budget_s = tiered.first_call_tier(closed, in_process)
            if tier != "compile":
                self._log_compile(closed, " in the background (the fast tier answers "
                                  + ("meanwhile)" if tier == "fast" else "unless it is first)"))
                return tiered.TieredExecutable(
                    closed, lambda: self._executable(closed, background=True),
                    describe_function(self.fun), in_process, race=budget_s)
        self._log_compile(closed, "")
        return self._executable(closed)

    def _install(self, key, exe, out_tree):
        """Make `exe` the executable of signature `key` (and its fast path current)."""
        # (no fast path for a key that carries non-default traced options: it checks the
        # arguments only, and would answer later calls made under the defaults)
        fast = None if config.trace_options else _make_fast_call(exe, key, out_tree)
        self._fast_call = fast
        self._fast[key] = (exe, out_tree, fast)
        exe_cache.add(self, key)
        return exe, fast

    def wait_compiled(self, timeout=None):
        """Block until every signature called so far runs compiled code (tiered execution,
        xforms/exec/tiered.py) and threaded code where that compile was deferred (xforms/kernels/cpu/backend.py
        `_threads_later`); -> True if they all run compiled code."""
        ok = True
        for key, (exe, out_tree, _) in list(self._fast.items()):
            if type(exe) is exact_bits.HeadCompiled:
                ok = exe.wait(timeout) is not None and ok
                continue
            if type(exe) is tiered.TieredExecutable:
                compiled = exe.wait(timeout)
                if compiled is None:
                    ok = False
                elif self._fast.get(key, (None,))[0] is exe:
                    self._install(key, compiled, out_tree)
                exe = compiled
            ready = getattr(exe, "threads_ready", None)   # a threaded variant compiling
            if ready is not None:
                ready.wait(timeout)
        tiered.flush_warnings()
        return ok

    def __call__(self, *args, **kwargs):
        if jit_switch.active or config.float_checks:
            if jit_switch.jit_disabled():                       # xforms.disable_jit()
                return self.fun(*args, **kwargs)
            platform = jit_switch.default_platform()           # xforms.default_device()
            if platform is not None and self.backend is None:
                return self._elsewhere(tree_flatten((args, kwargs))[0],
                                       platform)(*args, **kwargs)
            rec = jit_switch.recorder                        # xf.profiler.trace
            if rec is not None and core._state.current is core.eval_trace and rec.idle():
                with rec.execution(f"jit({getattr(self.fun, '__name__', 'fun')})"):
                    return self(*args, **kwargs)          # (not idle now: runs as usual)
            if config.float_checks and core._state.current is core.eval_trace:
                config.check_execution(f"jit({getattr(self.fun, '__name__', 'fun')})")
            if config.float_checks and core._state.current is core.eval_trace and \
                    (config.debug_nans.value or config.debug_infs.value):
                return self._checked_call(args, kwargs)
        fast = self._fast_call       # (installed for the default options' signature only)
        if fast is not None and core._state.current is core.eval_trace and not config.trace_options:
            try:
                return fast(*args, **kwargs) if kwargs else fast(*args)
            except _FAST_MISSES:       # another signature: take the general path below
                pass
        if core.current_trace() is not core.eval_trace:
            args, kwargs = float0_as_static((args, kwargs))
            closed, out_tree, flat, _ = self._trace(args, kwargs)
            return tree_unflatten(out_tree, core.eval_jaxpr(closed, *flat))
        key, leaves, hit = self._lookup(args, kwargs)
        if DEVICE_ARRAY_TYPES and self.backend is None:     # (only once a backend made one)
            other = self._elsewhere(leaves if leaves is not None else
                                    tree_flatten((args, kwargs))[0])
            if other is not None:
                return other(*args, **kwargs)
        if hit is None and (key is None or any(k[1] == float0 for k in key_leaf_kinds(key))):
            # float0 arguments (as JAX allows) stay out of the program: their shapes join
            # the key (only here, off the path of calls that hit)
            args, kwargs = float0_as_static((args, kwargs))
            key, leaves, hit = self._lookup(args, kwargs)
        if hit is not None:
            exe, out_tree, fast = hit
            if fast is None and type(exe) is tiered.TieredExecutable:
                # (a later call waits here, before the swap-in below: in a timing after one
                # call, only the call that waited pays the swap's one-time work)
                exe.wait_if_later_call()
            if fast is None and type(exe) is tiered.TieredExecutable and exe.done:
                if tiered.has_pending_warnings():
                    tiered.flush_warnings()
                if exe.compiled is not None:            # swap the compiled tier in
                    exe, fast = self._install(key, exe.compiled, out_tree)
            else:
                exe_cache.touch(self, key)
            self._fast_call = fast
            return tree_unflatten(out_tree, exe(*leaves))
        if config.explain_cache_misses.value:
            explain_miss(self.fun, key, list(self._fast))
        with gc_pause.paused():          # (the compile's objects live until it ends)
            with tiered.first_call_running(self.tiered):      # (tracing: no compiler yet)
                closed, out_tree, flat, in_tree = self._trace(args, kwargs)
            exe = self._new_executable(closed)
        if key is not None:
            self._install(key, exe, out_tree)
        else:
            self._warn_uncached(in_tree)
        return tree_unflatten(out_tree, exe(*flat))

    def _checked_call(self, args, kwargs):
        """xf.debug_nans / debug_infs: the call's outputs are checked (on either tier
        alike); a NaN or inf among them re-runs the program on the fast tier, checking each
        equation, to name the one that made it (JAX re-runs the de-optimized function)."""
        with config.debug_nans(False), config.debug_infs(False):
            out = self(*args, **kwargs)
        kind = core.float_problem(np.asarray(x) for x in tree_flatten(out)[0])
        if kind is None:
            return out
        closed, _, flat, _ = self._trace(args, kwargs)
        core.eval_jaxpr(closed, *flat)                # raises, naming the equation
        raise FloatingPointError(
            f"invalid value ({kind}) in the output of jit({describe_function(self.fun)}); "
            "re-run equation by equation, no equation produced it: an input passed through "
            "to the output, or a value computed differently by the compiled code")

    def _warn_uncached(self, in_tree):
        """The arguments traced but their structure cannot key the cache: every call
        retraces, silently slow.  Say so once per jitted function."""
        if getattr(self, "_warned_uncached", False):
            return
        self._warned_uncached = True
        try:
            hash(in_tree)
            why = "its arguments cannot form a cache key"
        except TypeError as e:
            why = f"the pytree structure of its arguments is unhashable ({e})"
        warnings.warn(f"jit of {describe_function(self.fun)} retraces on every call: {why}. "
                      "Make custom pytree nodes' aux data hashable (a tuple, not a list or "
                      "dict).", RuntimeWarning, stacklevel=3)

    def _signature(self, args, kwargs):
        """This call's signature key, or None where the arguments form none."""
        try:
            key = self._key(args, kwargs)[0]
            hash(key)
            return key
        except TypeError:
            return None

    def trace(self, *args, **kwargs):
        """The program traced for these arguments' signature (`xforms.stages.Traced`)."""
        closed, out_tree, _, in_tree = self._trace(args, kwargs)
        return Traced(self, closed, in_tree, out_tree, self._signature(args, kwargs))

    def _compile_traced(self, closed):
        with gc_pause.paused():
            self._log_compile(closed, "")
            return self._executable(closed)

    def lower(self, *args, **kwargs):
        """Trace and compile synchronously, never the fast tier (`xforms.stages.Lowered`)."""
        return self.trace(*args, **kwargs).lower()


def jit(fun=None, *, static_argnums=(), static_argnames=(), backend=None, donate_argnums=(),
        tiered=None):
    """Compile `fun` with Numba (CPU by default).  Usable as a decorator.

    On the CPU backend the first calls of each new signature run the traced IR eagerly
    while the compile runs in a background process (xforms/exec/tiered.py); `tiered=False` (or
    XFORMS_TIERED=0) compiles on the first call instead; `f.wait_compiled()` waits for it.

    >>> f = xf.jit(lambda x: xnp.sin(x) * 2.0)
    >>> f(1.0)
    """
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             backend=backend, donate_argnums=donate_argnums, tiered=tiered)
    return Jitted(fun, static_argnums, static_argnames, backend, donate_argnums, tiered)
