"""elementwise: ``sum(sin(x)*cos(x) + exp(-x**2))``, forward and gradient.

A memory- and transcendental-bound map-reduce over n = 1e3..1e7 float64 (1e8 too under
``--backend cuda``, issue 34's bandwidth target; parameter
``threads``: NUMBA_NUM_THREADS, the threads xforms' parallel loops may use).
The gradient is cos(2x) - 2x exp(-x**2).  The Numba limit is one fused loop
written by hand; ``bandwidth`` is the time to read x and write the gradient
(16n bytes) at the copy bandwidth measured in this run with ``np.copyto`` --
no implementation of the gradient can beat it.  Under ``--backend cuda`` it is
the time at the device's theoretical peak bandwidth instead, and the xforms row
carries ``peak_bandwidth_fraction`` (the issue's aim: above 0.7).
"""
from __future__ import annotations

import functools

import numpy as np

from ..harness import Case, Measured
from .. import peers, timing

NAME = "elementwise"
SWEEP = "n"


def f_generic(x, np_):
    return np_.sum(np_.sin(x) * np_.cos(x) + np_.exp(-x ** 2))


def numpy_grad(x):
    return np.cos(2 * x) - 2 * x * np.exp(-x * x)


@functools.lru_cache(maxsize=None)
def _numba_kernels():
    from ..peers import load
    njit = load("numba").njit

    @njit
    def forward(x):
        s = 0.0
        for i in range(x.size):
            s += np.sin(x[i]) * np.cos(x[i]) + np.exp(-x[i] * x[i])
        return s

    @njit
    def gradient(x):
        g = np.empty_like(x)
        for i in range(x.size):
            c, s = np.cos(x[i]), np.sin(x[i])
            g[i] = c * c - s * s - 2.0 * x[i] * np.exp(-x[i] * x[i])
        return g
    return forward, gradient


def copy_bandwidth(n, ctx) -> float:
    """Bytes per second of ``np.copyto`` between two n-float64 arrays (read + write)."""
    src, dst = np.ones(n), np.empty(n)
    t = timing.measure(np.copyto, (dst, src), repeats=ctx.repeats, target=ctx.target)
    return 16 * n / t.median


def _systems(ctx, grad):
    def xforms(x):
        p = ctx.peer("xforms")
        f = lambda x: f_generic(x, p.xnp)  # noqa: E731
        return ctx.xjit(p.xf.grad(f) if grad else f), ctx.xput(x)

    def jax(x):
        p = ctx.peer("jax")
        f = lambda x: f_generic(x, p.jnp)  # noqa: E731
        return ctx.jax_call(p.jax.grad(f) if grad else f), (x,)

    def pytensor(x):
        p = ctx.peer("pytensor")
        X = p.pt.vector("x", dtype="float64")
        y = f_generic(X, p.pt)
        return p.pytensor.function([X], p.pytensor.grad(y, X) if grad else y), (x,)

    def autograd(x):
        p = ctx.peer("autograd")
        f = lambda x: f_generic(x, p.anp)  # noqa: E731
        return (p.ag.grad(f) if grad else f), (x,)

    def numpy(x):
        return (numpy_grad if grad else (lambda x: f_generic(x, np))), (x,)

    def numba(x):
        fwd, grd = _numba_kernels()
        return (grd if grad else fwd), (x,)

    out = dict(xforms=xforms, jax=jax, pytensor=pytensor, autograd=autograd, numpy=numpy, numba=numba)
    if grad:
        def f(x):
            return _numba_kernels()[0], (x,)

        def bandwidth(x):
            if ctx.backend == "cuda":
                from xforms.kernels.cuda.runtime import peak_bandwidth
                bw = peak_bandwidth()
                if not bw:
                    raise peers.Skip("the device does not report its peak memory bandwidth")
                ctx.meta.setdefault("device_peak_bandwidth_GBps", bw / 1e9)
                return Measured(16 * x.size / bw, {"device_peak_bandwidth_GBps": bw / 1e9})
            bw = copy_bandwidth(x.size, ctx)
            ctx.meta.setdefault("copy_bandwidth_GBps", {})[str(x.size)] = bw / 1e9
            return Measured(16 * x.size / bw, {"copy_bandwidth_GBps": bw / 1e9})
        out.update(f=f, bandwidth=bandwidth)
    return out


def _threads():
    import numba
    return int(numba.config.NUMBA_NUM_THREADS)


def cases(ctx):
    sizes = ([10 ** 3] if ctx.sim else [10 ** 5] if ctx.quick
             else [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7])
    if ctx.backend == "cuda" and not ctx.quick:
        sizes.append(10 ** 8)      # (issue 34's target: >= 80% of the GPU's bandwidth at 10^8)
    make = lambda n: (lambda: np.random.default_rng(ctx.seed).uniform(-2, 2, n))  # noqa: E731
    return [Case(task, {"n": n, "threads": _threads()}, _systems(ctx, task == "grad"),
                 make=make(n),
                 unit="ns/elem", per=n, limit="numba", rtol=1e-9)
            for task in ("forward", "grad") for n in sizes]
