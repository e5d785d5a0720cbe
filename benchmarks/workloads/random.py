"""random: ``random.normal(key, (n,))`` and ``random.uniform(key, (n,))`` of float64 under
jit, n = 1e5..1e7, beside JAX.

Both systems run JAX's Threefry-2x32 generator and draw the same numbers (the result check
compares xforms' normals with JAX's: bit-exact uniforms, normals within a few ulp), so
this measures the hash (20 rounds of 32-bit add/rotate/xor per pair of words) and, for
normal, the inverse error function.  ``f`` is NumPy's own generator (PCG64; ziggurat
normals): other numbers, not checked, shown for scale.
"""
from __future__ import annotations

import numpy as np

from ..harness import Case

NAME = "random"
SWEEP = "n"


def _systems(ctx, task, n):
    def xforms(key):
        ctx.peer("xforms")                     # raises Absent when xforms is missing
        from xforms import random
        draw = getattr(random, task)
        return ctx.xjit(lambda k: draw(k, (n,))), ctx.xput(key)

    def jax(key):
        jr = ctx.peer("jax").jax.random
        draw = getattr(jr, task)
        return ctx.jax_call(lambda k: draw(k, (n,))), (key,)

    def f(key):
        gen = np.random.default_rng(ctx.seed)
        draw = gen.standard_normal if task == "normal" else gen.random
        return (lambda: draw(n)), ()

    return dict(xforms=xforms, jax=jax, f=f)


def cases(ctx):
    sizes = [10 ** 3] if ctx.sim else [10 ** 5] if ctx.quick else [10 ** 5, 10 ** 6, 10 ** 7]
    make = lambda: np.array([0, ctx.seed + 42], np.uint32)  # noqa: E731  (a raw PRNG key)
    return [Case(task, {"n": n}, _systems(ctx, task, n), make=make, unit="ns/elem", per=n,
                 limit="jax", rtol=1e-12)
            for task in ("normal", "uniform") for n in sizes]
