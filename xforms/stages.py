"""`xforms.stages`: the objects of jit's ahead-of-time path, under `jax.stages`' names.

`jit(f)` is a `Wrapped`; `jit(f).trace(*args)` a `Traced` (the program traced for those
arguments' signature: `.jaxpr`); `.lower()` (or `jit(f).lower(*args)`) a `Lowered` (the
compiled kernel: `.as_text()` is its generated source); `.compile()` a `Compiled`, which
runs that executable for that signature only.  (JAX's `ArgInfo` and `CompilerOptions` have
no xforms counterpart.)

    >>> traced = xf.jit(lambda x: x * 2).trace(1.0)
    >>> traced.jaxpr                     # { lambda ; a:f64[]. let b:f64[] = mul a 2.0 in (b,) }
    >>> compiled = traced.lower().compile()
    >>> compiled(3.0)
    Array(6., dtype=float64)
"""
from .core.source_info import function_name
from .tree_util import tree_unflatten


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
