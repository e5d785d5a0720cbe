"""`xforms.stages`: the objects of jit's ahead-of-time path, under `jax.stages`' names.

`jit(f)` is a `Wrapped`; `jit(f).trace(*args)` a `Traced` (the program traced for those
arguments' signature: `.jaxpr`); `.lower()` (or `jit(f).lower(*args)`) a `Lowered` (the
compiled kernel: `.as_text()` is its generated source); `.compile()` a `Compiled`, which
runs that executable for that signature only.  Each has `.args_info`: the arguments'
structure with an `ArgInfo` (shape, dtype, donated) per array; `CompilerOptions` is JAX's
type of `.compile()`'s options (xforms' compile takes none).

    >>> traced = xf.jit(lambda x: x * 2).trace(1.0)
    >>> traced.jaxpr                     # { lambda ; a:f64[]. let b:f64[] = mul a 2.0 in (b,) }
    >>> compiled = traced.lower().compile()
    >>> compiled(3.0)
    Array(6., dtype=float64)
"""
import typing

from .core.source_info import function_name
from .tree_util import tree_flatten, tree_unflatten

CompilerOptions = dict[str, typing.Union[str, bool]]


class ArgInfo:
    """One array argument of a staged function: its abstract value, and whether jit was asked
    to donate it (`donate_argnums`).

        >>> xf.jit(lambda x: x, donate_argnums=0).lower(xnp.ones(2)).args_info[0][0].donated
        True
    """

    def __init__(self, aval, donated):
        self._aval, self.donated = aval, donated

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __eq__(self, other):
        return isinstance(other, ArgInfo) and (self._aval, self.donated) == (other._aval,
                                                                             other.donated)

    def __hash__(self):
        return hash((self._aval, self.donated))

    def __repr__(self):
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


def _args_info(traced):
    """((ArgInfo per positional argument's arrays, ...), {name: ArgInfo ...}) for `traced`;
    donate_argnums counts positions among all arguments, static ones included."""
    jitted = traced._jitted
    args, kwargs = tree_unflatten(traced.in_tree, traced.jaxpr.in_avals)
    static = set(_positions(getattr(jitted, "static_argnums", ())))
    donated = set(_positions(getattr(jitted, "donate_argnums", ())))
    dynamic = [i for i in range(len(args) + len(static)) if i not in static][:len(args)]

    def infos(tree, donate):
        leaves, td = tree_flatten(tree)
        return tree_unflatten(td, [ArgInfo(a, donate) for a in leaves])
    return (tuple(infos(a, i in donated) for a, i in zip(args, dynamic)),
            {k: infos(v, False) for k, v in kwargs.items()})


def _positions(nums):
    return (nums,) if isinstance(nums, int) else tuple(nums or ())


class Wrapped:
    """What `jit` returns (xforms.jit.Jitted derives from it): call it, or stage it ahead
    of time with `.trace(*args)` / `.lower(*args)`."""


class Traced:
    """`jit(f).trace(*args)`: the program of one signature, before compiling."""

    def __init__(self, jitted, closed, in_tree, out_tree, key):
        self._jitted, self.jaxpr = jitted, closed
        self.in_tree, self.out_tree, self._key = in_tree, out_tree, key

    fun_name = property(lambda self: function_name(self._jitted.fun))
    in_avals = property(lambda self: tree_unflatten(self.in_tree, self.jaxpr.in_avals))
    out_avals = property(lambda self: tree_unflatten(self.out_tree, self.jaxpr.out_avals))
    args_info = property(_args_info)

    def lower(self):
        """Compile the program now (never the fast tier) -> `Lowered`."""
        return Lowered(self, self._jitted._compile_traced(self.jaxpr))


class Lowered:
    """`jit(f).lower(*args)`: the compiled executable of one signature; `.as_text()` is the
    generated kernel source, `.compile()` the callable running it."""

    def __init__(self, traced, executable):
        self._traced, self._exe = traced, executable

    in_tree = property(lambda self: self._traced.in_tree)
    out_tree = property(lambda self: self._traced.out_tree)
    in_avals = property(lambda self: self._traced.in_avals)
    args_info = property(lambda self: self._traced.args_info)

    def as_text(self):
        return self._exe.source

    def compile(self):
        """-> `Compiled`; the jitted function's entry for this signature now holds the
        compiled executable (never the fast tier)."""
        t = self._traced
        if t._key is not None:
            t._jitted._install(t._key, self._exe, t.out_tree)
        return Compiled(self)


class Compiled:
    """`jit(f).lower(*args).compile()`: calls the compiled executable with arguments of
    the signature it was lowered for (others: TypeError, as JAX's)."""

    def __init__(self, lowered):
        self._lowered = lowered

    in_tree = property(lambda self: self._lowered.in_tree)
    out_tree = property(lambda self: self._lowered.out_tree)
    in_avals = property(lambda self: self._lowered.in_avals)
    args_info = property(lambda self: self._lowered.args_info)

    def as_text(self):
        return self._lowered.as_text()

    def __call__(self, *args, **kwargs):
        t = self._lowered._traced
        jitted = t._jitted
        if t._key is not None and jitted._signature(args, kwargs) != t._key:
            raise TypeError(f"Compiled {t.fun_name} was compiled for arguments "
                            f"{t.in_avals}, called with others; lower it again for them "
                            f"(jit(f).lower(*args).compile())")
        return jitted(*args, **kwargs)
