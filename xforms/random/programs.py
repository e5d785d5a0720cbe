"""Samplers called outside any trace run as one jitted program, as JAX jits its samplers
(`_normal`, `_uniform`, `_threefry_split`, ... with shape, dtype and mode static): an eager
`random.normal(key, (n,))` is one evaluation of a cached program (the fast tier, then
compiled code: xforms/exec/tiered.py), not ~90 eager primitive calls.  Under a trace (jit,
grad, vmap, ...) the function runs as written: its equations join the trace being built,
as an inlined jit's would, and values known there (a Python minval) stay known.

Compiled code computes NumPy's bits only for integer, bit and exactly rounded float
operations (uniform, bits, split, ...): its vectorised log/exp/tan and libm differ from
NumPy's by an ulp or more (normal: <= 3 ulp in 0.5% of draws; gumbel, logistic, cauchy
more).  A sampler with such math is `exact=False`: its program stays on the fast tier
(jit's "interpret" backend), so that a key gives the same numbers on every call, and the
numbers of eager xforms before programs.

    >>> @program(static_argnums=(1,))
    ... def _split(key, shape): ...
    >>> _split(key, (2,))          # eager: one jitted program per signature (shape static)
"""
import functools

from ..core import trace as core
from ..jit import jit


def program(static_argnums=(), exact=True):
    """Decorator: `fun` through `jit(fun, static_argnums=...)` when called outside any trace,
    `fun` itself under one.  Arguments are positional (the statics hashable); `exact`: the
    program's compiled code computes the same bits as its NumPy evaluation (see above)."""
    def wrap(fun):
        # on the CPU, as eager xforms computed them before (a GPU's fused multiply-adds
        # would change uniform's exact arithmetic, and its arrays where results live)
        jitted = jit(fun, static_argnums=static_argnums,
                     backend="cpu" if exact else "interpret")

        @functools.wraps(fun)
        def call(*args):
            if core.current_trace() is core.eval_trace:
                return jitted(*args)
            return fun(*args)
        call.jitted = jitted
        return call
    return wrap
