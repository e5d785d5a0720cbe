"""The CPU backend: ClosedJaxpr -> plan -> Python source -> Numba kernel -> `CpuExecutable`.

    exe = compile_cpu(closed, {"name": "loss"})
    outs = exe(*flat_args)            # a list of xforms Arrays
    print(exe.source)                 # the generated module

Compiled programs are cached in memory per ClosedJaxpr (the tracing cache returns the same
object for the same function and signature) and per generated source, and on disk by
`codecache`.  Numba errors become `LoweringError`s naming the equation, the user's line
and the generated file.
"""
import os
import re
import threading
import traceback
import weakref

import numba
import numpy as np
from numba.core import types
from numba.core.errors import NumbaError
from numba.np.numpy_support import from_dtype

from xforms import config
from xforms.core import Array
from xforms.errors import LoweringError

from . import codecache, emit_cpu_control, emit_cpu_ops  # noqa: F401  (register rules)
from . import lower_cumulative, lower_sorting  # noqa: F401  (register rules)
from .cpu_buffers import BufferPool
from .dispatch import make_fast_call
from .emit_cpu_module import OUT_GROUP, emit_module, eqn_at_line
from .fusion import plan_program

_by_jaxpr = weakref.WeakKeyDictionary()
_lock = threading.RLock()


def _arg_type(aval):
    dt = from_dtype(np.dtype(aval.dtype))
    return dt if not aval.shape else types.Array(dt, len(aval.shape), "C")


def _const_value(c):
    c = np.asarray(c)
    if c.ndim == 0:
        return c[()]
    # the signature says writeable C arrays: a read-only view (an eager broadcast or
    # expand_dims result closed over by the function) would match no definition
    return c if c.flags.c_contiguous and c.flags.writeable else np.array(c, order="C")


def _threads_available():
    return numba.config.NUMBA_NUM_THREADS > 1


def as_array0(x, dtype):
    """A 0-d xforms Array holding the scalar x."""
    return np.array(x, dtype).view(Array)


class CpuExecutable:
    """A compiled program: `exe(*flat_args) -> list of outputs`; `.source`, `.path`.

    `pool` (a `cpu_buffers.BufferPool`, or None) holds the workspace and output buffers
    that the kernel takes after the constants; `output_slots` are the indices of the
    outputs that are such a buffer itself (the caller gets a new view of it)."""

    def __init__(self, kernel, source, path, consts, in_avals, out_avals, plan_text,
                 pool=None, output_slots=()):
        self.kernel, self.source, self.path = kernel, source, path
        self.consts = tuple(consts)
        self.in_avals, self.out_avals = list(in_avals), list(out_avals)
        self.plan_text = plan_text
        self._n_out = len(out_avals)
        self.pool = pool
        self.output_slots = frozenset(output_slots)

    def _arg(self, x, aval):
        if not aval.shape:
            if isinstance(x, np.ndarray) or isinstance(x, np.generic):
                x = np.asarray(x)[()]
            return aval.dtype.type(x) if type(x) is not aval.dtype.type else x
        if not isinstance(x, np.ndarray):
            x = np.asarray(x)
        if x.dtype != aval.dtype:
            x = x.astype(aval.dtype)
        if not (x.flags.c_contiguous and x.flags.writeable):
            x = np.array(x, order="C")
        return x

    def _run(self, args, extra):
        try:              # Numba checks dtypes, ranks, layouts; convert only when it refuses
            return self.kernel(*args, *self.consts, *extra)
        except TypeError:
            conv = [self._arg(x, a) for x, a in zip(args, self.in_avals, strict=True)]
            return self.kernel(*conv, *self.consts, *extra)

    def __call__(self, *args):
        """Run on flat arguments of this executable's signature (shapes already checked by
        the caller); returns the flat outputs."""
        pool = self.pool
        if pool is None:
            r = self._run(args, ())
        else:
            entry = pool.acquire()
            try:
                r = self._run(args, pool.args(entry))
            finally:
                pool.release(entry)
        n = self._n_out
        flat = [r] if n == 1 else list(r) if n <= OUT_GROUP else [x for g in r for x in g]
        slots = self.output_slots
        return [as_array0(x, a.dtype) if not a.shape else x.view(Array) if k in slots else x
                for k, (x, a) in enumerate(zip(flat, self.out_avals))]

    def make_fast_call(self, in_tree, leaf_kinds, out_tree, statics=None, kw_tree=None,
                       static_kw=None):
        return make_fast_call(self.kernel, in_tree, leaf_kinds, self.in_avals, self.consts,
                              out_tree, self.out_avals, statics, pool=self.pool,
                              output_slots=self.output_slots, kw_tree=kw_tree,
                              static_kw=static_kw)


def compile_cpu(closed, options=None):
    """Backend entry point registered with `xforms.jit.register_backend("cpu", ...)`."""
    options = options or {}
    with _lock:
        exe = _by_jaxpr.get(closed)
        if exe is not None:
            return exe
        exe = _compile(closed, options)
        _by_jaxpr[closed] = exe
        return exe


def _compile(closed, options):
    label = options.get("name") or "a jitted function"
    plan = plan_program(closed)
    source, em = emit_module(plan, label, allow_parallel=_threads_available(),
                             caller_buffers=True)
    mod, path, h = codecache.load_module(source)
    if config.DUMP:
        print(f"[xforms] {label}: {path}\n{plan.dump()}")
    consts = [_const_value(c) for _, c in em.const_params]
    in_avals = [v.aval for v in plan.jaxpr.invars]
    sig = tuple(_arg_type(a) for a in in_avals) + tuple(
        from_dtype(np.asarray(c).dtype) if np.ndim(c) == 0 else
        types.Array(from_dtype(c.dtype), c.ndim, "C") for c in consts)
    if em.workspace_bytes:
        sig += (types.Array(types.uint8, 1, "C"),)
    sig += tuple(types.Array(from_dtype(b.dtype), len(b.shape), "C") for b in em.output_buffers)
    if config.DISABLE_JIT:
        kernel = mod.kernel
    else:
        try:
            kernel = codecache.compile_kernel(mod, h, sig, parallel=em.uses_prange)
        except Exception as e:           # never let a raw Numba error reach the user
            raise _lowering_error(e, em, path) from None
    pool = None
    if em.workspace_bytes or em.output_buffers:
        pool = BufferPool(em.workspace_bytes, [(b.shape, b.dtype) for b in em.output_buffers])
    return CpuExecutable(kernel, source, path, consts, in_avals,
                         [v.aval for v in closed.jaxpr.outvars], plan.dump(), pool,
                         em.output_slots)


def _lines_from_traceback(e, path):
    """Numba sometimes raises plain Python errors during type inference; the frames still
    hold the IR location (`loc`) being typed."""
    found = []
    for frame, _ in traceback.walk_tb(e.__traceback__):
        for obj in (frame.f_locals.get("self"), frame.f_locals.get("inst")):
            loc = getattr(obj, "loc", None)
            if getattr(loc, "filename", None) == path and getattr(loc, "line", None):
                found.append(loc.line)
    return found


def _lowering_error(e, em, path):
    msg = f"{type(e).__name__}: {e}" if not isinstance(e, NumbaError) else str(e)
    lines = [int(m) for m in re.findall(re.escape(os.path.basename(path)) + r'", line (\d+)',
                                        msg)] or _lines_from_traceback(e, path)
    eqn = eqn_at_line(em, lines[-1]) if lines else None
    first = next((ln.strip() for ln in msg.splitlines() if ln.strip()), msg)
    where = f"{path}:{lines[-1]}" if lines else path
    if eqn is not None:
        info = eqn.source_info
        user = f" (user code: {info.location}, in {info.function})" if info else ""
        text = (f"Numba could not compile primitive '{eqn.prim.name}'{user}; generated code "
                f"at {where}: {first}")
    else:
        text = f"Numba could not compile the generated kernel {where}: {first}"
    err = LoweringError(text)
    err.numba_error = e
    return err
