"""cuda_graphs: one MLP training gradient with CUDA graphs off and on (`xf.config.use_cuda_graphs`).

The mlp workload's ``jit(grad)`` at small sizes (784-128-128-10, batch 32, float32), where a
call is a dozen short kernels and host time per launch decides the figure: the same program
timed with graphs off (every kernel launched by the host) and on (after the first call the
launch sequence replays as one CUDA graph, xforms/kernels/cuda/graph/), and off with the
direct launcher (xforms/kernels/cuda/launch.py, XFORMS_CUDA_FAST_LAUNCH) in place of
numba-cuda's dispatcher.  The rows report
kernel launches and host microseconds per call and the graph's state.  CUDA only (no cases
on the CPU); JAX runs beside the "off" row.
"""
from __future__ import annotations

from xforms import config

from ..harness import Case
from . import mlp

NAME = "cuda_graphs"


def _graphs(on):
    """A block with CUDA graphs `on` or off (xforms' option, whose default
    XFORMS_CUDA_GRAPHS sets at import)."""
    return config.use_cuda_graphs(on)


def cases(ctx):
    if ctx.backend != "cuda":
        return []                    # (graphs are a CUDA backend's)
    # (--quick: the simulator's size, where every thread is a Python thread)
    batch, inputs, hidden, dt = (4, 16, 8, "float32") if ctx.quick else (32, 784, 128, "float32")
    out = []
    for on in (False, True):
        systems = {"xforms": mlp._xforms(ctx), "numpy": mlp._numpy(ctx)}
        if not on:
            systems["jax"] = mlp._jax(ctx)
        out.append(Case(f"jit(grad) graphs {'on' if on else 'off'}",
                        {"batch": batch, "dtype": dt, "inputs": inputs, "hidden": hidden},
                        systems, make=lambda: mlp.make_data(batch, hidden, dt, ctx.seed, inputs),
                        unit="µs/call", limit="numpy", rtol=2e-3,
                        background=lambda on=on: _graphs(on)))
    # graphs off, the launches through xforms/kernels/cuda/launch.py's direct launcher
    direct, background = ctx.direct_launch(mlp._xforms(ctx))
    out.append(Case("jit(grad) direct launch",
                    {"batch": batch, "dtype": dt, "inputs": inputs, "hidden": hidden},
                    {"xforms": direct, "numpy": mlp._numpy(ctx), "jax": mlp._jax(ctx)},
                    make=lambda: mlp.make_data(batch, hidden, dt, ctx.seed, inputs),
                    unit="µs/call", limit="numpy", rtol=2e-3, background=background))
    return out
