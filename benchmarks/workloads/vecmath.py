"""vecmath: one transcendental over n elements, float32 and float64 (issue 20's math rows).

``tanh``, ``exp``, ``log`` and ``sin`` of a vector, each jitted alone, at n = 1e6 (1e4
under ``--quick``).  xforms computes float32 in float32 (xforms/kernels/libm/vecmath/f32.py) and
float64 with the vectorised float64 family; sin goes through the branch-free bounded
reduction with the libm redo for large arguments.  The limit is NumPy's ufunc (its own
SIMD kernels); the ``threads`` parameter is the thread count each system may use
(NUMBA_NUM_THREADS for xforms and Numba).
"""
from __future__ import annotations

import os

import numpy as np

from ..harness import Case

NAME = "vecmath"
SWEEP = "n"
FUNCS = ("tanh", "exp", "log", "sin")


def _threads():
    try:
        import numba
        return int(numba.config.NUMBA_NUM_THREADS)
    except Exception:          # numba absent: the environment's setting
        return int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count() or 1))


def _systems(ctx, fname):
    def xforms(x):
        p = ctx.peer("xforms")
        return ctx.xjit(getattr(p.xnp, fname)), ctx.xput(x)

    def jax(x):
        p = ctx.peer("jax")
        return ctx.jax_call(getattr(p.jnp, fname)), (x,)

    def numpy(x):
        return getattr(np, fname), (x,)

    return dict(xforms=xforms, jax=jax, numpy=numpy)


def _make(ctx, fname, n, dtype):
    def make():
        rng = np.random.default_rng(ctx.seed)
        lo, hi = (1e-3, 1e3) if fname == "log" else ((-100, 100) if fname == "sin" else (-5, 5))
        return rng.uniform(lo, hi, n).astype(dtype)
    return make


def cases(ctx):
    n = 10 ** 4 if ctx.quick else 10 ** 6
    out = []
    for dtype in ("float32", "float64"):
        for fname in FUNCS:
            out.append(Case(f"{fname}_{dtype}", {"n": n, "threads": _threads()},
                            _systems(ctx, fname), make=_make(ctx, fname, n, dtype),
                            unit="ns/elem", per=n, limit="numpy",
                            rtol=2e-6 if dtype == "float32" else 1e-12))
    return out
