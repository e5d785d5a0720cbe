"""Staging a flat function into a program: trace it once, simplify it once.

Every program the transforms build (a jvp, a transposed linear part, a batched body, the
Jacobian seeds) and every user function `tracing.py` traces goes through `stage`, so each
transform level costs one trace and one simplification (counted in xforms/core/pass_counts.py;
tests/core/test_pass_counts.py pins them).

    >>> closed, reusable = stage(lambda x: [x * 2.0], [ShapedArray((3,), np.float64)])
"""
from ..core import trace as core
from ..core import staging
from .simplify import simplify


def stage(fun, in_avals, in_vals=None, fun_for_errors=None):
    """-> (simplified ClosedJaxpr of flat `fun(*tracers) -> list`, reusable).

    `in_vals` are known input values (Python control flow on them is allowed); `reusable`
    is False when the program read one of them or closes over a value of an enclosing
    trace, so that it holds for this trace only and may not be cached."""
    closed, value_dependent = staging.trace_to_jaxpr(fun, list(in_avals), in_vals,
                                                  fun_for_errors=fun_for_errors)
    reusable = not value_dependent and not any(isinstance(c, core.Tracer)
                                               for c in closed.consts)
    return simplify(closed), reusable
