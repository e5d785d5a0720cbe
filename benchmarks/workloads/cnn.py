"""cnn: ``jit(grad(loss))`` of a small convolutional network, beside JAX.

28x28x1 images -> 3x3 conv, 32 channels, relu -> 2x2 max pool -> 3x3 conv, 64 channels,
relu -> 2x2 max pool -> dense 10, softmax cross-entropy; channels-last layouts
(('NHWC', 'HWIO', 'NHWC')), batch 1, 32 and 128 in float32.  The loss is written once against
a (numpy, lax, log_softmax) triple and run by xforms and JAX; the limit is JAX (the issue's
bar: no slower than JAX on the CPU).  ``f`` is the xforms forward pass alone.
"""
from __future__ import annotations

import numpy as np

from ..harness import Case

NAME = "cnn"
SWEEP = "batch"
DN = ("NHWC", "HWIO", "NHWC")


def loss(params, x, y, np_, lax, log_softmax):
    """Mean softmax cross-entropy of conv-relu-pool-conv-relu-pool-dense."""
    h = lax.conv_general_dilated(x, params["c1"], (1, 1), "VALID", dimension_numbers=DN)
    h = lax.reduce_window(np_.maximum(h + params["b1"], 0.0), -np.inf, lax.max,
                          (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = lax.conv_general_dilated(h, params["c2"], (1, 1), "VALID", dimension_numbers=DN)
    h = lax.reduce_window(np_.maximum(h + params["b2"], 0.0), -np.inf, lax.max,
                          (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    logits = h.reshape(h.shape[0], -1) @ params["w"] + params["b"]
    return -np_.mean(np_.sum(y * log_softmax(logits), axis=-1))


def make_data(batch, dtype, seed=0, size=28, c1=32, c2=64):
    """Parameters, images and labels (`size`, `c1`, `c2` smaller on the CUDA simulator)."""
    rng = np.random.default_rng(seed)
    side = ((size - 2) // 2 - 2) // 2            # (after two 3x3 VALID convs and 2x2 pools)
    params = {"c1": rng.standard_normal((3, 3, 1, c1)) / 3.0,
              "b1": 0.1 * rng.standard_normal(c1),
              "c2": rng.standard_normal((3, 3, c1, c2)) / np.sqrt(9 * c1),
              "b2": 0.1 * rng.standard_normal(c2),
              "w": rng.standard_normal((side * side * c2, 10)) / 40.0,
              "b": np.zeros(10)}
    params = {k: v.astype(dtype) for k, v in params.items()}
    x = rng.standard_normal((batch, size, size, 1)).astype(dtype)
    y = np.eye(10, dtype=dtype)[rng.integers(0, 10, batch)]
    return params, x, y


def _xforms(ctx):
    def setup(d):
        p = ctx.peer("xforms")
        from xforms import lax
        g = ctx.xjit(p.xf.grad(lambda P, x, y: loss(P, x, y, p.xnp, lax, p.nn.log_softmax)))
        return g, ctx.xput(*d)
    return setup


def _jax(ctx):
    def setup(d):
        p = ctx.peer("jax")
        return ctx.jax_call(p.jax.grad(
            lambda P, x, y: loss(P, x, y, p.jnp, p.jax.lax, p.jax.nn.log_softmax))), d
    return setup


def _f(ctx):
    def setup(d):
        p = ctx.peer("xforms")
        from xforms import lax
        return ctx.xjit(lambda P, x, y: loss(P, x, y, p.xnp, lax, p.nn.log_softmax)), d
    return setup


def cases(ctx):
    batches = (1,) if ctx.sim else (32,) if ctx.quick else (1, 32, 128)
    systems = {"xforms": _xforms(ctx), "jax": _jax(ctx), "f": _f(ctx)}
    return [Case("jit(grad)", {"batch": b, "dtype": "float32"}, systems,
                 make=lambda b=b: make_data(b, "float32", ctx.seed,
                                            **(dict(size=12, c1=4, c2=4) if ctx.sim else {})),
                 unit="ms/call", limit="jax", rtol=2e-3)
            for b in batches]
