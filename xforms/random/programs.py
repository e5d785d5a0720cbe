"""Samplers called outside any trace run as one jitted program, as JAX jits its samplers
(`_normal`, `_uniform`, `_threefry_split`, ... with shape, dtype and mode static): an eager
`random.normal(key, (n,))` is one evaluation of a cached program, not ~90 eager primitive
calls.  Under a trace (jit, grad, vmap, ...) the function runs as written: its equations
join the trace being built, as an inlined jit's would, and values known there (a Python
minval) stay known.

The programs run on jit's "interpret" backend (the NumPy evaluator, never compiled), for
two measured reasons: compiled code's vectorised log/exp/tan differ from NumPy's by an ulp
or more (normal: <= 3 ulp in 0.5% of draws; gumbel, logistic, cauchy more), so a key would
give other numbers once its program compiled; and a compiled program's second call waits
for the background compile (about 1 s for the first, the worker's start), which made the
first 20 `split` + `normal` rounds of a fresh process 0.8-1.1 s against 48 ms interpreted
(steady state 16 ms compiled, 18-23 ms interpreted; main before programs: 39-61 ms and
33-68 ms; load 3.5-4.6).

    >>> @program(static_argnums=(1,))
    ... def _split(key, shape): ...
    >>> _split(key, (2,))          # eager: one cached program per signature (shape static)
"""
import functools

from ..core import trace as core
from ..jit import jit
from ..jit.jitted import Jitted

#: eager calls of one program function before it may compile: a signature whose program
#: computes NumPy's bits compiled (integer rounds, IEEE arithmetic: split, fold_in, bits,
#: uniform, randint, bernoulli, permutation -- xforms/exec/exact_bits.py) compiles then in
#: the background while the evaluator answers (a tiered `jit`'s first tier, never waited
#: for); a script of a few draws compiles nothing, a loop of draws wins the compile back
#: (about 20-100 ms each, once the compiler is imported: ~0.25 s): ~1 us a call compiled
#: against 130-300 us evaluated (split, uniform of 8; load 7-12)
COMPILE_AFTER = 64
_EXACT = []         # every program's compiling Jitted (`wait_compiled`)


def program(static_argnums=()):
    """Decorator: `fun` through `jit(fun, static_argnums=..., backend="interpret")` when
    called outside any trace (from its COMPILE_AFTER-th such call, compiled in the
    background where that gives the same bits), `fun` itself under one.  Arguments are
    positional (the statics hashable)."""
    def wrap(fun):
        jitted = jit(fun, static_argnums=static_argnums, backend="interpret")
        exact = Jitted(fun, static_argnums, backend="interpret", exact_compile=True)
        calls = [0]
        _EXACT.append(exact)

        @functools.wraps(fun)
        def call(*args):
            if core.current_trace() is core.eval_trace:
                if calls[0] >= COMPILE_AFTER:
                    return exact(*args)
                calls[0] += 1
                return jitted(*args)
            return fun(*args)
        call.jitted = jitted
        call.exact = exact
        return call
    return wrap


def wait_compiled(timeout=None):
    """Wait for the random programs' compiles started so far (what a benchmark calls
    before it times the steady state, as core/eager/kernels.py `wait_built`)."""
    for exact in _EXACT:
        exact.wait_compiled(timeout)
