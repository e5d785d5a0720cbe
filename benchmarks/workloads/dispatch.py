"""dispatch: per-call overhead of ``jit(grad(f))`` on a Python float.

f(x) = sin(x)*x + x**2, so grad f(x) = cos(x)*x + sin(x) + 2x.  The work is a
handful of flops; what is measured is the cost of getting in and out of the
compiled code.  The Numba row is an ``@njit`` hand-written gradient (the floor
of a compiled call from Python); ``f`` is an ``@njit`` forward.  Under ``--backend cuda``
a second case times the same program with the direct launcher
(xforms/kernels/cuda/launch.py) in place of numba-cuda's dispatcher.
"""
from __future__ import annotations

import math

import numpy as np

from ..harness import Case

NAME = "dispatch"
X = 0.7


def _xforms(ctx):
    def setup(_):
        p = ctx.peer("xforms")
        return ctx.xjit(p.xf.grad(lambda x: p.xnp.sin(x) * x + x ** 2)), (X,)
    return setup


def _jax(ctx):
    def setup(_):
        p = ctx.peer("jax")
        return ctx.jax_call(p.jax.grad(lambda x: p.jnp.sin(x) * x + x ** 2)), (X,)
    return setup


def _pytensor(ctx):
    def setup(_):
        p = ctx.peer("pytensor")
        x = p.pt.dscalar("x")
        y = p.pt.sin(x) * x + x ** 2
        return p.pytensor.function([x], p.pytensor.grad(y, x)), (X,)
    return setup


def _autograd(ctx):
    def setup(_):
        p = ctx.peer("autograd")
        return p.ag.grad(lambda x: p.anp.sin(x) * x + x ** 2), (X,)
    return setup


def _numpy(_ctx):
    def setup(_):
        return (lambda x: np.cos(x) * x + np.sin(x) + 2.0 * x), (X,)
    return setup


def _numba(ctx):
    def setup(_):
        njit = ctx.peer("numba").njit
        return njit(lambda x: math.cos(x) * x + math.sin(x) + 2.0 * x), (X,)
    return setup


def _f(ctx):
    def setup(_):
        njit = ctx.peer("numba").njit
        return njit(lambda x: math.sin(x) * x + x * x), (X,)
    return setup


def cases(ctx):
    systems = {"xforms": _xforms(ctx), "jax": _jax(ctx), "pytensor": _pytensor(ctx),
               "autograd": _autograd(ctx), "numpy": _numpy(ctx), "numba": _numba(ctx), "f": _f(ctx)}
    out = [Case("jit(grad)", {"x": "float"}, systems, unit="µs/call", limit="numba", rtol=1e-12)]
    if ctx.backend == "cuda":    # the same program through the direct launcher (issue 34)
        direct, background = ctx.direct_launch(_xforms(ctx))
        out.append(Case("jit(grad) direct launch", {"x": "float"},
                        {"xforms": direct, "jax": _jax(ctx), "numba": _numba(ctx)},
                        unit="µs/call", limit="numba", rtol=1e-12, background=background))
    return out
