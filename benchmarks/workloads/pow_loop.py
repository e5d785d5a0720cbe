"""pow_loop: x**n by a loop of n multiplications, forward and gradient.

``fori_loop(0, n, lambda i, acc: acc * x, 1.0)``: a long loop of trivial
iterations, so the figure (ns per iteration) is the per-iteration cost of the
compiled loop and, for the gradient, of recording/replaying it in reverse.
x = 1 + 0.5/n keeps x**n near e**0.5 for every n.  The Numba limit carries the
derivative along in the same loop (d <- d*x + acc), written by hand.
"""
from __future__ import annotations

import functools
import inspect

from ..harness import Case
from ..peers import Skip

NAME = "pow_loop"
SWEEP = "n"
SLOW_LIMIT = 10_000   # autograd's Python loop / PyTensor's scan beyond this take minutes


def _x(n):
    return 1.0 + 0.5 / n


def _xforms(ctx, n, grad):
    def setup(_):
        p = ctx.peer("xforms")
        f = lambda x: p.lax.fori_loop(0, n, lambda i, acc: acc * x, 1.0)  # noqa: E731
        return ctx.xjit(p.xf.grad(f) if grad else f), (_x(n),)
    return setup


def _jax(ctx, n, grad):
    def setup(_):
        p = ctx.peer("jax")
        f = lambda x: p.jax.lax.fori_loop(0, n, lambda i, acc: acc * x, 1.0)  # noqa: E731
        return ctx.jax_call(p.jax.grad(f) if grad else f), (_x(n),)
    return setup


def _autograd(ctx, n, grad):
    def setup(_):
        if n > SLOW_LIMIT:
            raise Skip(f"Python loop, n > {SLOW_LIMIT}")
        p = ctx.peer("autograd")

        def f(x):
            acc = 1.0
            for _ in range(n):
                acc = acc * x
            return acc
        return (p.ag.grad(f) if grad else f), (_x(n),)
    return setup


def _pytensor(ctx, n, grad):
    def setup(_):
        if n > SLOW_LIMIT:
            raise Skip(f"scan, n > {SLOW_LIMIT}")
        p = ctx.peer("pytensor")
        x = p.pt.dscalar("x")
        kw = {"return_updates": False} if "return_updates" in inspect.signature(p.pytensor.scan).parameters else {}
        res = p.pytensor.scan(lambda acc, x: acc * x, outputs_info=p.pt.constant(1.0, dtype="float64"),
                              non_sequences=[x], n_steps=n, **kw)
        y = (res[0] if isinstance(res, tuple) else res)[-1]
        return p.pytensor.function([x], p.pytensor.grad(y, x) if grad else y), (_x(n),)
    return setup


@functools.lru_cache(maxsize=None)
def _numba_kernels():
    from ..peers import load
    njit = load("numba").njit

    @njit
    def power(x, n):
        acc = 1.0
        for _ in range(n):
            acc = acc * x
        return acc

    @njit
    def dpower(x, n):   # forward-mode by hand: d(acc*x) = d*x + acc
        acc, d = 1.0, 0.0
        for _ in range(n):
            d = d * x + acc
            acc = acc * x
        return d
    return power, dpower


def _numba(n, grad):
    def setup(_):
        power, dpower = _numba_kernels()
        return (dpower if grad else power), (_x(n), n)
    return setup


def cases(ctx):
    sizes = [10 ** 3] if ctx.quick else [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6]
    out = []
    for task, grad in (("forward", False), ("grad", True)):
        for n in sizes:
            systems = {"xforms": _xforms(ctx, n, grad), "jax": _jax(ctx, n, grad),
                       "pytensor": _pytensor(ctx, n, grad), "autograd": _autograd(ctx, n, grad),
                       "numba": _numba(n, grad)}
            if grad:
                systems["f"] = _numba(n, False)
            out.append(Case(task, {"n": n}, systems, unit="ns/iter", per=n, limit="numba", rtol=1e-9))
    return out
