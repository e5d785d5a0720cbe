"""CPU rule for the callbacks (debug.print, pure_callback, io_callback;
xforms/primitives/callbacks.py): the kernel calls back into Python through Numba's
objmode, where the primitive's own NumPy implementation runs (the same code as eagerly:
argument rebuilding, the user's function, the result checks).

The function is a live Python object, not source: the module fetches it from the registry
here by a key unique to this process, so the module is marked `NO_DISK_CACHE` (compiled
once per process, never by the compile worker), as user primitives whose functions the
digest cannot describe are (xforms/kernels/user_prims.py, whose result copy this reuses).
Operands are copied on the way out (the kernel reuses its buffers; a callback may keep
what it was given) and results come back C-contiguous of the declared dtype.

    # _ = debug_callback[callback=debug.print('x={}')] a        demo.py:4 (f)
    with objmode_0():
        callback_0(A)
    # b:f64[3] = pure_callback[callback=sin ...] a               demo.py:5 (f)
    with objmode_0(r1="float64[::1]"):
        r1 = callback_1(A)
"""
import itertools
import threading
import warnings

import numpy as np
from numba.core.errors import NumbaWarning

from xforms.core.trace import impl_rules
from xforms.primitives.callbacks import CALLBACK_PRIMITIVES

from ..cpu.numba.emit import OP_RULES
from ..user_prims import NO_DISK_CACHE, copy_into

_lock = threading.Lock()
_registry = {}              # key -> the function a module calls
_serial = itertools.count(1)
_keys = {}                  # (primitive, params, operand dtypes) -> its registry key


def fetch(key):
    """The function registered under `key` (what a generated module calls)."""
    return _registry[key]


def _runner(eqn):
    """fn(*operands) -> the result (a tuple of them, or None): the primitive's impl."""
    impl, params = impl_rules[eqn.prim], eqn.params
    dtypes = [np.dtype(a.aval.dtype) for a in eqn.invars]
    n = len(eqn.outvars)

    def run(*xs):
        outs = impl(*[np.array(x, dtype=dt) for x, dt in zip(xs, dtypes)], **params)
        outs = [o[()] if o.ndim == 0 else np.ascontiguousarray(o) for o in outs]
        return None if n == 0 else outs[0] if n == 1 else tuple(outs)
    return run


def _register(eqn):
    """The registry key of `eqn`'s runner: one per distinct callback equation (params are
    hashable and a Callback compares by value), so recompiling a kernel adds no entry."""
    ident = (eqn.prim, tuple(sorted(eqn.params.items())),
             tuple(str(v.aval.dtype) for v in eqn.invars))
    with _lock:
        try:
            key = _keys.get(ident)
        except TypeError:                 # (unhashable params: a fresh entry)
            ident, key = None, None
        if key is None:
            key = f"{eqn.prim.name}-{next(_serial)}"
            _registry[key] = _runner(eqn)
            if ident is not None:
                _keys[ident] = key
    return key


def _numba_type(aval):
    """Numba's spelling of the type objmode unboxes a result as."""
    dt = np.dtype(aval.dtype)
    name = "boolean" if dt.kind == "b" else dt.name
    if not aval.shape:
        return name
    return f"{name}[{', '.join([':'] * (len(aval.shape) - 1) + ['::1'])}]"


def emit_callback(em, eqn):
    em.globals.setdefault("__xforms_private__", repr(NO_DISK_CACHE))
    objmode = em._global("__import__('numba').objmode", "objmode_")
    fn = em._global(f"__import__('xforms.kernels.ops.callbacks', fromlist=['_'])"
                    f".fetch({_register(eqn)!r})", "callback_")
    rs = [em.fresh("r") for _ in eqn.outvars]
    types = ", ".join(f'{r}="{_numba_type(v.aval)}"' for r, v in zip(rs, eqn.outvars))
    call = f"{fn}({', '.join(em.atom(a) for a in eqn.invars)})"
    with em.block(f"with {objmode}({types}):"):
        em.line(f"{', '.join(rs)} = {call}" if rs else call)
    for r, v in zip(rs, eqn.outvars):
        if v.aval.shape:
            copy_into(em, v, r)
        else:
            em.line(f"{em.s(v)} = {r}")


for _p in CALLBACK_PRIMITIVES:
    OP_RULES[_p] = emit_callback
# kernels are compiled nogil; the objmode block takes the GIL back for the call, as it must
warnings.filterwarnings("ignore", "Code running in object mode won't allow parallel",
                        NumbaWarning)
