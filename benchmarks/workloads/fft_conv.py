"""fft_conv: ``jit(grad(loss))`` of a circular convolution through the FFT.

loss(x, k) = sum((irfft(rfft(x) * rfft(k), n) - y)^2) for signals of length n = 2^10 ..
2^20 (float64; float32 at 2^16), gradient in x and k.  The loss is written once against a
NumPy-like namespace (``np_.fft``) and reused by every system; the limit is the hand-written
NumPy backward pass (four real FFTs, the minimum).
"""
from __future__ import annotations

import numpy as np

from ..harness import Case

NAME = "fft_conv"
SWEEP = "n"


def loss(x, k, y, np_):
    n = x.shape[-1]
    conv = np_.fft.irfft(np_.fft.rfft(x) * np_.fft.rfft(k), n)
    return np_.sum((conv - y) ** 2)


def make_data(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x, k, y = (rng.standard_normal(n) for _ in range(3))
    return x.astype(dtype), (k / np.sqrt(n)).astype(dtype), y.astype(dtype)


def numpy_grad(x, k, y):
    """d/dx and d/dk: circular correlations of the residual, through the FFT."""
    n = x.shape[-1]
    X, K = np.fft.rfft(x), np.fft.rfft(k)
    r = 2 * (np.fft.irfft(X * K, n) - y)
    R = np.fft.rfft(r)
    return (np.fft.irfft(R * np.conj(K), n).astype(x.dtype),
            np.fft.irfft(R * np.conj(X), n).astype(x.dtype))


def _xforms(ctx):
    def setup(d):
        p = ctx.peer("xforms")
        import xforms.numpy.fft  # noqa: F401
        g = ctx.xjit(p.xf.grad(lambda x, k, y: loss(x, k, y, p.xnp), argnums=(0, 1)))
        return g, ctx.xput(*d)
    return setup


def _jax(ctx):
    def setup(d):
        p = ctx.peer("jax")
        g = p.jax.grad(lambda x, k, y: loss(x, k, y, p.jnp), argnums=(0, 1))
        return ctx.jax_call(g), d
    return setup


def _numpy(_ctx):
    return lambda d: (numpy_grad, d)


def _f(_ctx):
    return lambda d: ((lambda x, k, y: loss(x, k, y, np)), d)


def cases(ctx):
    if ctx.quick:
        grid = [(64 if ctx.sim else 1 << 12, "float64")]
    else:
        grid = [(1 << e, "float64") for e in (10, 12, 14, 16, 18, 20)] + [(1 << 16, "float32")]
    systems = {"xforms": _xforms(ctx), "jax": _jax(ctx), "numpy": _numpy(ctx), "f": _f(ctx)}
    return [Case("jit(grad)", {"n": n, "dtype": dt}, systems,
                 make=lambda n=n, dt=dt: make_data(n, dt, ctx.seed),
                 unit="ms/call", limit="numpy", rtol=2e-3 if dt == "float32" else 1e-8)
            for n, dt in grid]
