"""User-defined primitives (`xforms.extend`) in the compilers: generated code calls the
primitive's Numba implementation (`extend.numba_impls[prim]`, registered by `def_numba`).

Per kind of implementation:

- **elementwise scalar** `fn(*scalars, *params) -> scalar`: the equation is fused into loops
  like a built-in elementwise one (xforms/kernels/plan/fusion.py asks `is_elementwise`); the loop body
  calls the function once per element and converts the result to the declared dtype.  CPU:
  an `njit(inline="always")` function (inlined into the loop, which stays vectorisable).  CUDA: a
  device function inlined by Numba (`cuda.jit(device=True, inline="always")`, which also
  compiles to PTX without a GPU); params are passed positionally there (the simulator
  takes no keywords).

      # b:f64[4] = huber[delta=1.0] a              custom_rules.py:60 (huber)
      b = np.float64(impl_huber(a_, delta=1.0))

- **array** `fn(*arrays, *params) -> array` (a tuple for `multiple_results`): its own step on
  the CPU, called once; each result is checked against the declared shape and copied into
  the program's buffer (so it may return views of its operands; it must not write to them).
  Rank-0 operands and results are scalars.  The CUDA backend cannot run it (LoweringError
  saying to declare an elementwise implementation or use the CPU backend).
- **none**: `MissingRuleError` naming the primitive and saying to call `def_numba`.

Params are passed as literals (Python/NumPy scalars, strings, tuples of them).

Disk cache.  A generated module cannot embed the user's function by source (closures,
globals, lambdas), so it fetches it when imported from the registry here, under a key made
of the primitive's name and a digest of the function: its bytecode (`marshal`), defaults,
closure cells and the globals it reads, following the Python and Numba functions it calls.
The key is part of the module's text, so `codecache` (content-addressed) stays correct: a
changed function means another module.  When a function reads a global the digest cannot
describe (an object of unknown type), the key is unique to this process and the module is
marked `codecache.NO_DISK_CACHE` (kept out of the shared cache).

    from xforms.kernels.user_prims import user_impl
    impl_huber = user_impl("huber-3f9c1a2b7e40d115", "cpu")    # huber_scalar (custom_rules.py:44)
"""
import contextlib
import enum
import hashlib
import inspect
import itertools
import marshal
import os
import re
import threading
import types

import numpy as np

from xforms import config
from xforms.errors import LoweringError, MissingRuleError
from xforms.extend import Primitive, numba_impls

from .codegen import float_lit, lit, shape_str

NO_DISK_CACHE = "# xforms: not disk-cached"     # codecache keeps such modules private

_lock = threading.RLock()
_registry = {}          # key -> user's Python function
_compiled = {}          # (key, target) -> Numba dispatcher (or the function, without JIT)
_local_keys = {}        # function -> process-local key (functions the digest cannot describe)
_serial = itertools.count(1)


# ---- which equations --------------------------------------------------------------------------
def is_user(prim):
    """Is `prim` a user-defined primitive (xforms.extend)?"""
    return isinstance(prim, Primitive) or prim in numba_impls


def is_elementwise(eqn):
    """A user primitive with an elementwise scalar implementation whose operands have the
    output's shape or rank 0 (fusion treats it like a built-in elementwise equation)."""
    impl = numba_impls.get(eqn.prim)
    if impl is None or not impl.elementwise or len(eqn.outvars) != 1:
        return False
    shape = tuple(eqn.outvars[0].aval.shape)
    return all(not a.aval.shape or tuple(a.aval.shape) == shape for a in eqn.invars)


def _where(eqn):
    info = eqn.source_info
    return f" at {info.location} ({info.function})" if info else ""


def impl_of(eqn, target):
    """The primitive's NumbaImpl, or MissingRuleError saying how to give one."""
    impl = numba_impls.get(eqn.prim)
    if impl is None:
        name = eqn.prim.name
        err = MissingRuleError(name, "Numba implementation")
        err.args = (f"primitive '{name}' has no Numba implementation, which the {target.upper()} "
                    f"backend needs to compile it{_where(eqn)}: register one with "
                    f"`<primitive>.def_numba(fn, elementwise=True)` (a scalar function, fused "
                    f"into loops) or `.def_numba(fn)` (a function of arrays); see "
                    f"xforms.extend",)
        raise err
    return impl


def _error(eqn, target, why):
    avals = ", ".join(a.aval.str_short() for a in eqn.invars)
    return LoweringError(f"the {target.upper()} backend cannot lower user primitive "
                         f"'{eqn.prim.name}' on ({avals}){_where(eqn)}: {why}")


def _check_elementwise(eqn, target):
    """An elementwise implementation that fusion refused: say why."""
    if len(eqn.outvars) != 1:
        why = "an elementwise implementation has exactly one result"
    else:
        shapes = ", ".join(str(tuple(a.aval.shape)) for a in eqn.invars)
        why = (f"it is declared elementwise, but its operands have shapes {shapes} and its "
               f"result {tuple(eqn.outvars[0].aval.shape)}; elementwise operands have the "
               "result's shape or rank 0 (broadcast them first, e.g. xnp.broadcast_to)")
    raise _error(eqn, target, why)


# ---- function digests ---------------------------------------------------------------------
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_LIBRARIES = frozenset(["builtins", "math", "cmath", "numpy", "numba", "numba_cuda"])


def _names(code):
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def _feed(h, x, seen):
    """Feed a description of value x into hash h; False if x is not describable."""
    if isinstance(x, enum.Enum):
        h.update(f"enum:{type(x).__module__}.{type(x).__qualname__}.{x.name}={x.value!r};"
                 .encode())
        return True
    if isinstance(x, _SCALARS):
        h.update(f"{type(x).__name__}:{x!r};".encode())
        return True
    if isinstance(x, (tuple, list)):
        h.update(f"{type(x).__name__}[{len(x)}]:".encode())
        return all(_feed(h, v, seen) for v in x)
    if isinstance(x, np.ndarray):
        h.update(f"ndarray:{x.dtype.str}:{x.shape}:".encode())
        h.update(np.ascontiguousarray(x).tobytes())
        return True
    if isinstance(x, (np.generic, np.dtype)):
        h.update(f"{type(x).__name__}:{x!r};".encode())
        return True
    if isinstance(x, types.ModuleType):
        h.update(f"module:{x.__name__};".encode())
        return True
    if isinstance(x, type) and x.__module__.split(".")[0] not in _LIBRARIES:
        return False                             # a user's class: its methods may change
    if isinstance(x, (types.BuiltinFunctionType, np.ufunc, type)):
        h.update(f"{type(x).__name__}:{getattr(x, '__module__', '')}."
                 f"{getattr(x, '__qualname__', getattr(x, '__name__', ''))};".encode())
        return True
    if isinstance(x, types.FunctionType):
        return _feed_function(h, x, seen)
    py = getattr(x, "py_func", None)             # a Numba dispatcher (CPU or CUDA)
    if isinstance(py, types.FunctionType) and type(x).__module__.startswith("numba"):
        h.update(f"{type(x).__name__}:".encode())
        opts = getattr(x, "targetoptions", {})
        h.update(repr(sorted((k, repr(v)) for k, v in opts.items())).encode())
        return _feed_function(h, py, seen)
    return False


def _feed_function(h, fn, seen):
    if fn in seen:
        h.update(b"recursive;")
        return True
    seen.add(fn)
    code = fn.__code__
    h.update(b"function:")
    # marshal version 2: versions 3+ flag objects by their reference counts, so the same
    # code dumps differently as a process runs (the worker then refused the parent's key)
    h.update(marshal.dumps(code, 2))
    ok = _feed(h, fn.__defaults__, seen) and _feed(h, tuple(sorted(
        (fn.__kwdefaults__ or {}).items())), seen)
    for cell in fn.__closure__ or ():
        try:
            ok = ok and _feed(h, cell.cell_contents, seen)
        except ValueError:                      # an empty cell
            h.update(b"empty-cell;")
    g = fn.__globals__
    for name in sorted(_names(code)):
        if name in g:
            h.update(f"global {name}=".encode())
            ok = ok and _feed(h, g[name], seen)
    return ok


def digest(fn):
    """Hex digest of what the compiled `fn` depends on, or None when some of it cannot be
    described (then no cache may rely on it)."""
    h = hashlib.sha256()
    return h.hexdigest()[:16] if _feed_function(h, fn, set()) else None


# ---- the registry -------------------------------------------------------------------------
def _ident(name):
    s = re.sub(r"\W", "_", name, flags=re.ASCII).strip("_") or "prim"
    return s if not s[0].isdigit() else "p" + s


def register(prim):
    """Register the primitive's Numba function; -> (key, disk-cacheable?)."""
    fn = numba_impls[prim].fn
    d = digest(fn)
    with _lock:
        if d is not None:
            key = f"{_ident(prim.name)}-{d}"
        else:
            key = _local_keys.get(fn)
            if key is None:
                key = _local_keys[fn] = (f"{_ident(prim.name)}-process{os.getpid()}-"
                                         f"{next(_serial)}")
        _registry.setdefault(key, fn)
        return key, d is not None


def importable(key):
    """(module, qualified name) by which another process (the compile worker) finds the
    function registered under `key`, or None: a lambda, a local function, or one that name
    does not reach.

    >>> importable(register(threefry2x32_p)[0])
    ('xforms.random.threefry', 'threefry_scalar')
    """
    fn = _registry.get(key)
    module, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "<")
    if fn is None or not module or "<" in qual:
        return None
    try:
        found = _resolve(module, qual)
    except (ImportError, AttributeError):
        return None
    return (module, qual) if found is fn else None


def register_importable(key, module, qualname):
    """Register under `key`, in another process, the function `importable(key)` named;
    LookupError if it is not the function that made `key` (its digest differs)."""
    fn = _resolve(module, qualname)
    if key.rsplit("-", 1)[-1] != digest(fn):
        raise LookupError(f"{module}.{qualname} is not the function registered under "
                          f"{key!r} in the parent process")
    with _lock:
        _registry.setdefault(key, fn)


def _resolve(module, qualname):
    import importlib
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


_KEYS = re.compile(r'user_impl\("([^"]+)"')


def keys_in(source):
    """The registry keys a generated module's source fetches."""
    return _KEYS.findall(source)


def user_impl(key, target):
    """What a generated module calls its implementation by: the Numba-compiled function for
    `target` ("cpu" or "cuda"; the plain function under XFORMS_DISABLE_JIT)."""
    with _lock:
        out = _compiled.get((key, target))
        if out is not None:
            return out
        fn = _registry.get(key)
        if fn is None:
            raise LookupError(f"no user primitive implementation registered under {key!r}: a "
                              "generated module was imported without being generated in "
                              "this process")
        if target == "cuda":
            from numba import cuda
            out = cuda.jit(device=True, inline="always")(fn)
        elif config.DISABLE_JIT:
            out = fn
        else:
            import numba
            # inlined at Numba level (like CUDA's device functions): left to LLVM, a call
            # to a larger function (the PRNG hash) stays a call and the loop is not
            # vectorised (random.normal: 100 -> 11 ns/element)
            out = numba.njit(error_model="numpy", nogil=True, inline="always")(fn)
        _compiled[(key, target)] = out
        return out


def _global_name(em, eqn):
    """The module-level name the emitter `em`'s module calls the implementation by."""
    table = em.__dict__.setdefault("user_impls", {})     # key -> (name, comment, cacheable)
    key, cacheable = register(eqn.prim)
    if key not in table:
        base = f"impl_{_ident(eqn.prim.name)}"
        taken = {n for n, _, _ in table.values()}
        name = base if base not in taken else next(f"{base}_{k}" for k in itertools.count(2)
                                                   if f"{base}_{k}" not in taken)
        fn = _registry[key]
        code = getattr(fn, "__code__", None)
        where = f" ({os.path.basename(code.co_filename)}:{code.co_firstlineno})" if code else ""
        table[key] = (name, f"{getattr(fn, '__qualname__', fn)}{where}", cacheable)
    return table[key][0]


def module_lines(em, target):
    """Lines binding the implementations a module uses (empty when it uses none)."""
    table = em.__dict__.get("user_impls")
    if not table:
        return []
    lines = ["from xforms.kernels.user_prims import user_impl", ""]
    if not all(c for _, _, c in table.values()):
        lines.append(f"{NO_DISK_CACHE}: a user function reads globals of unknown type")
    for key, (name, what, _) in table.items():
        lines.append(f'{name} = user_impl("{key}", "{target}")    # {what}')
    return lines


# ---- calls -----------------------------------------------------------------------------------
def _param_lit(eqn, target, k, v):
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return float_lit(v)
    if isinstance(v, (np.integer, np.floating, np.complexfloating)):
        return lit(v, v.dtype)
    if isinstance(v, complex):
        return f"complex({float_lit(v.real)}, {float_lit(v.imag)})"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, tuple):
        return "(" + "".join(_param_lit(eqn, target, k, x) + ", " for x in v).rstrip(" ") + ")"
    raise _error(eqn, target, f"param {k}={v!r} is a {type(v).__name__}; params reach the Numba "
                              "implementation as literals, so they must be Python or NumPy "
                              "scalars, strings or tuples of them")


class _Expr(str):
    """Generated source (an operand or a param literal), as opposed to a default value."""


def _call(em, eqn, args, target, keywords):
    """`impl(args..., params...)`: params by keyword (CPU, readable) or positionally with
    defaults filled in (CUDA)."""
    name = _global_name(em, eqn)
    fn = numba_impls[eqn.prim].fn
    params = {k: _Expr(_param_lit(eqn, target, k, v)) for k, v in sorted(eqn.params.items())}
    try:
        bound = inspect.signature(fn).bind(*map(_Expr, args), **params)
    except TypeError as e:
        raise _error(eqn, target, f"its Numba implementation {fn.__qualname__}"
                                  f"{inspect.signature(fn)} cannot take {len(args)} operand(s) "
                                  f"and the params {sorted(params)}: {e}") from None
    if keywords:
        parts = list(args) + [f"{k}={v}" for k, v in params.items()]
    else:
        bound.apply_defaults()
        parts = [p if isinstance(p, _Expr) else _param_lit(eqn, target, "(a default)", p)
                 for p in bound.args]
    return f"{name}({', '.join(parts)})"


def _convert(expr, dtype):
    dt = np.dtype(dtype)
    return f"bool({expr})" if dt.kind == "b" else f"np.{dt.name}({expr})"


def scalar_call(em, eqn, args, target):
    """Expression of one element of an elementwise user primitive (`args`: the operands'
    scalar expressions), converted to the declared dtype."""
    impl_of(eqn, target)
    call = _call(em, eqn, args, target, keywords=(target == "cpu"))
    return _convert(call, eqn.outvars[0].aval.dtype)


# ---- CPU: an array implementation is its own step ------------------------------------------
def emit_cpu_op(em, eqn):
    """The plan's `Op` step of a user primitive (see the module docstring)."""
    impl = impl_of(eqn, "cpu")
    if impl.elementwise:
        _check_elementwise(eqn, "cpu")
    r = em.fresh("r")
    em.line(f"{r} = {_call(em, eqn, [em.atom(a) for a in eqn.invars], 'cpu', True)}")
    outs = eqn.outvars
    vals = [f"{r}[{k}]" for k in range(len(outs))] if eqn.prim.multiple_results else [r]
    for k, (v, val) in enumerate(zip(outs, vals)):
        if not v.aval.shape:
            em.line(f"{em.s(v)} = {_convert(val, v.aval.dtype)}")
            continue
        if val != r:
            t = em.fresh("r")
            em.line(f"{t} = {val}")
            val = t
        shape = shape_str(v.aval.shape)
        with em.block(f"if {val}.shape != {shape}:"):
            which = f"result {k}" if len(outs) > 1 else "an array"
            em.line(f"raise ValueError(\"the Numba implementation of primitive "
                    f"'{eqn.prim.name}' returned {which} of the wrong shape (expected "
                    f"{tuple(v.aval.shape)}, as its abstract evaluation rule says)\")")
        copy_into(em, v, val)


def copy_into(em, v, val):
    """Bind the materialized result Var `v` to a copy of the array named `val` (of v's
    shape): the program's buffers are its own (xforms/kernels/ops/callbacks.py uses it too)."""
    em.alloc(v)
    # an element loop, not `A[...] = r`: Numba compiles that broadcasting setitem ~5x
    # slower (seconds, the first time in a process); the loop also takes any layout
    idx = [em.fresh("j") for _ in v.aval.shape]
    with contextlib.ExitStack() as loops:
        for j, n in zip(idx, v.aval.shape):
            loops.enter_context(em.block(f"for {j} in range({n}):"))
        em.line(f"{em.A(v)}[{', '.join(idx)}] = {val}[{', '.join(idx)}]")


def op_rule(eqn, target):
    """The op rule for a user primitive's equation on `target`, or None for other ones."""
    if not is_user(eqn.prim):
        return None
    if target == "cpu":
        return emit_cpu_op
    return _cuda_op


def _cuda_op(em, eqn):
    impl = impl_of(eqn, "cuda")
    if impl.elementwise:
        _check_elementwise(eqn, "cuda")
    raise _error(eqn, "cuda", "its Numba implementation is a function of arrays, which cannot "
                              "run inside a CUDA kernel; give it an elementwise scalar "
                              "implementation (def_numba(fn, elementwise=True)) or use "
                              "backend='cpu' for this function")
