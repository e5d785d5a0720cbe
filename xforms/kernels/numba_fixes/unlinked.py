"""Call a jitted runtime helper by a stable symbol, without linking its code into the caller.

Why: Numba links the LLVM module of every jitted function a function calls into the
caller's own module, then optimises and emits the whole module again.  A generated kernel
that calls the precompiled convolution (`runtime/conv.py`'s `conv_run`: ~22,000 lines of
LLVM IR with its blocks) paid for optimising and emitting the convolution code in every
kernel -- two thirds of a 1-D conv net's `jit(grad)` module (issue 35: its kernel, 13,000
lines of IR, carried 32,000 of the convolution's; 6.3 CPU s of Numba).

How: `unlinked(disp, args)` compiles (or loads from Numba's disk cache) `disp` for the
types of `args` and calls its compiled code through an external declaration named
`xforms_unlinked_<qualified name>_<hash of the signature>`, a name that is the same in
every process (Numba's own mangled names carry a per-process counter).  The name is bound
to the compiled code's address (`llvmlite.binding.add_symbol`) when the call is typed and,
for a caller loaded from Numba's disk cache, before its code is loaded (the caller's
`reload_init`), so the caller's cached machine code always finds the helper.  Not inlined:
meant for helpers whose work dwarfs a call.

    >>> import numba, numpy as np
    >>> @numba.njit
    ... def scale(x, s):
    ...     x *= s
    >>> @numba.njit
    ... def kernel(x):
    ...     unlinked(scale, (x, 2.0))      # scale's code stays in its own library
    >>> x = np.ones(3); kernel(x); x
    array([2., 2., 2.])
"""
import functools
import hashlib
import importlib
import inspect

import llvmlite.binding as llvm
from numba.core import cgutils, types
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic

from xforms import config

_bound = set()      # symbol names bound in this process
# (module, qualified name) -> dispatcher, of the helpers typed in this process (a caller
# loaded from disk in a new process finds its helper by importing it)
_known = {}


def symbol(disp, argtys):
    """The stable symbol of dispatcher `disp` compiled for `argtys`."""
    py = disp.py_func
    sig = hashlib.sha256(repr(tuple(str(t) for t in argtys)).encode()).hexdigest()[:16]
    return f"xforms_unlinked_{py.__module__}.{py.__qualname__}_{sig}".replace(".", "_")


def bind(module, qualname, argtys):
    """Compile (or load) the dispatcher `module.qualname` for `argtys` and bind its stable
    symbol to the compiled code; -> (the compile result, the symbol)."""
    disp = _known.get((module, qualname))
    if disp is None:
        mod = disp = importlib.import_module(module)
        for part in qualname.split("."):
            disp = getattr(disp, part)
        if not hasattr(disp, "compile"):   # a plain function jitted under another name
            disp = next(v for v in vars(mod).values()          # (small_mm.takes = njit(rule))
                        if getattr(v, "py_func", None) is disp)
    disp.compile(argtys)
    cres = disp.overloads[argtys]
    name = symbol(disp, argtys)
    if name not in _bound:
        llvm.add_symbol(name, cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name))
        _bound.add(name)
    return cres, name


def named(disp):
    """Whether dispatcher `disp` is what its module and qualified name reach (directly, or
    as the module's dispatcher of the function they reach): only then does its symbol name
    its code alone.  Two closures of one factory share a qualified name, and the second
    one called by symbol ran the first one's code."""
    py = disp.py_func
    try:
        mod = obj = importlib.import_module(py.__module__)
        for part in py.__qualname__.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, TypeError):
        return False
    return obj is disp or (obj is py and any(v is disp for v in vars(mod).values()))


def symbol_call(disp, argtys):
    """(return type, emit(context, builder, values)) of a call of dispatcher `disp`'s code
    for `argtys` by its stable symbol (TypeError for one that is not `named`)."""
    py = disp.py_func
    if not named(disp):
        raise TypeError(f"{py.__module__}.{py.__qualname__} is not the function its module "
                        "and name reach (a closure, or redefined): a call by symbol would "
                        "run whichever function of that name was bound first")
    _known[py.__module__, py.__qualname__] = disp
    cres, name = bind(py.__module__, py.__qualname__, argtys)
    restype = cres.signature.return_type

    def emit(context, builder, vals):
        # a cached caller binds the symbol again before its code loads (Numba runs the
        # library's reload_init first: numba.core.compiler.CompileResult._rebuild)
        context.active_code_library._reload_init.add(
            functools.partial(bind, py.__module__, py.__qualname__, argtys))
        fnty = context.call_conv.get_function_type(restype, cres.signature.args)
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        status, res = context.call_conv.call_function(builder, fn, restype,
                                                      cres.signature.args, vals)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return res
    return restype, emit


def reads_only(*positions):
    """Mark a jitted helper's array arguments at `positions` as only read: `unlinked` passes
    them as mutable arrays (the same data), so that read-only and writable operands share
    one compiled signature -- conv_run's cold compile is ~20 CPU s a signature, and a
    read-only operand (a constant, a user's non-writeable array) made a second one.

        >>> import numba
        >>> @reads_only(0)
        ... @numba.njit
        ... def total(x, out):
        ...     out[0] = x.sum()
    """
    def mark(disp):
        disp.xforms_reads_only = frozenset(positions)
        return disp
    return mark


def _as_read(disp, argtys):
    """argtys with the read-only arrays at `disp`'s reads_only positions made mutable."""
    ro = getattr(disp, "xforms_reads_only", ())
    return tuple(t.copy(readonly=False) if k in ro and isinstance(t, types.Array)
                 and not t.mutable else t for k, t in enumerate(argtys))


@intrinsic
def unlinked(typingctx, disp, args):
    """disp(*args), `disp` a jitted function, its code called by symbol (see the module)."""
    if not isinstance(disp, types.Dispatcher) or not isinstance(args, types.BaseTuple):
        return None
    given = tuple(args.types)
    argtys = _as_read(disp.dispatcher, given)
    restype, emit = symbol_call(disp.dispatcher, argtys)

    def codegen(context, builder, sig_, llargs):
        vals = cgutils.unpack_tuple(builder, llargs[1], len(args))
        vals = [context.cast(builder, v, t, u) for v, t, u in zip(vals, given, argtys)]
        return emit(context, builder, vals)
    return restype(disp, args), codegen


@functools.cache
def by_symbol(disp):
    """`disp` as a function whose jitted callers call its code by symbol (`unlinked`
    without the call-site change: a generated kernel imports its runtime helpers through
    this).  Anything but a Numba dispatcher (an intrinsic, a Python function), and every
    helper under XFORMS_DISABLE_JIT (the module runs as Python), is returned as it is; so
    is a dispatcher that is not `named` (a factory's closure: its symbol would not be its own).
    Literal arguments are passed as their plain types, so the helper compiles once per
    type, not once per value.

    >>> @numba.njit
    ... def twice(x):
    ...     x *= 2.0
    >>> twice_ = by_symbol(twice)
    >>> @numba.njit
    ... def kernel(x):
    ...     twice_(x)                          # twice's code stays in its own library
    """
    if config.DISABLE_JIT or not isinstance(disp, Dispatcher) or not named(disp):
        return disp                     # (not named: called as Numba links it, correctly)

    def typer(typingctx, *args):
        argtys = tuple(types.unliteral(t) for t in args)
        restype, emit = symbol_call(disp, argtys)

        def codegen(context, builder, sig_, llargs):
            vals = [context.cast(builder, v, t, u) for v, t, u in zip(llargs, args, argtys)]
            return emit(context, builder, vals)
        return restype(*args), codegen
    typer.__name__ = typer.__qualname__ = f"by_symbol_{disp.py_func.__name__}"
    # Numba folds a call's arguments by the typer's signature: the helper's own, not *args
    params = inspect.signature(disp.py_func).parameters.values()
    typer.__signature__ = inspect.Signature(
        [inspect.Parameter("typingctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [q.replace(default=inspect.Parameter.empty) for q in params])
    return intrinsic(typer)
