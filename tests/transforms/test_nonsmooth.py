"""Derivatives at non-smooth points follow JAX's conventions.

Each row: a function of one scalar, the point, and JAX 0.10.2's (64-bit mode) values of
grad, jvp with tangent 1, and grad of grad there, recorded once with

    jax.grad(f)(x), jax.jvp(f, (x,), (1.0,))[1], jax.grad(jax.grad(f))(x)

so this table runs without JAX.  Each is checked in reverse mode (grad), forward mode (jvp),
forward-over-reverse (jvp of grad) and reverse-over-reverse (grad of grad), eagerly and
under jit.
"""
import math

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import nn

nan, inf = math.nan, math.inf

# name: (function, point, JAX grad, JAX jvp, JAX second derivative)
TABLE = {
    "logaddexp at x == y": (lambda x: xnp.logaddexp(x, 0.4), 0.4, 0.5, 0.5, 0.25),
    "logaddexp(x, x)": (lambda x: xnp.logaddexp(x, x), 0.4, 1.0, 1.0, 0.0),
    "maximum tie": (lambda x: xnp.maximum(x, 0.4), 0.4, 0.5, 0.5, 0.0),
    "minimum tie": (lambda x: xnp.minimum(x, 0.4), 0.4, 0.5, 0.5, 0.0),
    "maximum(x, x)": (lambda x: xnp.maximum(x, x), 0.4, 1.0, 1.0, 0.0),
    "max reduction, 3-way tie": (lambda x: xnp.max(xnp.stack([x, 0.4 + 0 * x, x])),
                                 0.4, 2 / 3, 2 / 3, 0.0),
    "min reduction tie": (lambda x: xnp.min(xnp.stack([x, 0.4 + 0 * x])), 0.4, 0.5, 0.5, 0.0),
    "max of equal entries": (lambda x: xnp.max(xnp.array([x, x])) * 2.0, 1.0, 2.0, 2.0, 0.0),
    "abs at 0": (xnp.abs, 0.0, 1.0, 1.0, 0.0),
    "sign at 0": (xnp.sign, 0.0, 0.0, 0.0, 0.0),
    "sign at 1.5": (xnp.sign, 1.5, 0.0, 0.0, 0.0),
    "where at the switch": (lambda x: xnp.where(x > 0.0, x ** 2, 3.0 * x), 0.0, 3.0, 3.0, 0.0),
    "clip at the lower bound": (lambda x: xnp.clip(x, 0.0, 1.0), 0.0, 0.5, 0.5, 0.0),
    "clip at the upper bound": (lambda x: xnp.clip(x, 0.0, 1.0), 1.0, 0.5, 0.5, 0.0),
    "sqrt at 0": (xnp.sqrt, 0.0, inf, inf, -inf),
    "x ** 0.5 at 0": (lambda x: x ** 0.5, 0.0, inf, inf, -inf),
    "x ** 2.0 at 0": (lambda x: x ** 2.0, 0.0, 0.0, 0.0, 2.0),
    "cbrt at 0": (xnp.cbrt, 0.0, inf, inf, -inf),
    "relu at 0": (nn.relu, 0.0, 0.0, 0.0, 0.0),
    "softplus at 0": (nn.softplus, 0.0, 0.5, 0.5, 0.25),
    "std of equal values": (lambda x: xnp.std(xnp.stack([x, x])), 1.0, nan, nan, nan),
    "var of equal values": (lambda x: xnp.var(xnp.stack([x, x])), 1.0, 0.0, 0.0, 0.0),
    "norm at 0": (lambda x: xnp.linalg.norm(xnp.stack([x, x])), 0.0, nan, nan, nan),
    "sqrt(x * x) at 0": (lambda x: xnp.sqrt(x * x), 0.0, nan, nan, nan),
    "floor at an integer": (xnp.floor, 2.0, 0.0, 0.0, 0.0),
    "round at a half": (xnp.round, 0.5, 0.0, 0.0, 0.0),
    "mod at a multiple": (lambda x: xnp.mod(x, 1.0), 1.0, 1.0, 1.0, 0.0),
    "arctan2(x, 0) at 0": (lambda x: xnp.arctan2(x, 0.0), 0.0, nan, nan, nan),
    "safe x log x at 0": (lambda x: xnp.where(x > 0, x * xnp.log(xnp.where(x > 0, x, 1.0)),
                                              0.0), 0.0, 0.0, 0.0, 0.0),
    "tanh at 0": (xnp.tanh, 0.0, 1.0, 1.0, 0.0),
    "0.0 ** y": (lambda y: 0.0 ** y, 2.0, 0.0, 0.0, 0.0),
    "x ** 0.0 at 0": (lambda x: x ** 0.0, 0.0, nan, nan, nan),
    "x ** 3 at 0": (lambda x: x ** 3, 0.0, 0.0, 0.0, 0.0),
    "x ** 1.5 at 0": (lambda x: xnp.power(x, 1.5), 0.0, 0.0, 0.0, inf),
    "x ** (x + 2) at 0": (lambda x: xnp.power(x, x + 2.0), 0.0, 0.0, 0.0, 2.0),
    "maximum(x, 0) at 0": (lambda x: xnp.maximum(x, 0.0), 0.0, 0.5, 0.5, 0.0),
    "minimum(x, x * x) at 1": (lambda x: xnp.minimum(x, x * x), 1.0, 1.5, 1.5, 1.0),
    "max over an axis, tie": (lambda x: xnp.sum(xnp.max(xnp.stack(
        [xnp.stack([x, x]), xnp.stack([x, 1.0 + 0 * x])]), axis=1)), 1.0, 1.5, 1.5, 0.0),
    "logsumexp with -inf": (lambda x: nn.logsumexp(xnp.stack([x, -inf + 0 * x])),
                            0.5, 1.0, 1.0, 0.0),
    "softmax with -inf": (lambda x: nn.softmax(xnp.stack([x, -inf + 0 * x]))[0],
                          0.5, 0.0, 0.0, 0.0),
    "logaddexp(x, -inf)": (lambda x: xnp.logaddexp(x, -inf), 0.5, 1.0, 1.0, 0.0),
    "arctan2(0, x) at 0": (lambda x: xnp.arctan2(0.0, x), 0.0, nan, nan, nan),
    "remainder at 0": (lambda x: xnp.remainder(x, 2.0), 0.0, 1.0, 1.0, 0.0),
    "floor_divide at a multiple": (lambda x: xnp.floor_divide(x, 2.0), 2.0, 0.0, 0.0, 0.0),
    "where(x == 0, 0, x * x) at 0": (lambda x: xnp.where(x == 0, 0.0, x * x),
                                     0.0, 0.0, 0.0, 0.0),
    "sigmoid at 0": (nn.sigmoid, 0.0, 0.25, 0.25, 0.0),
    "log at 0": (xnp.log, 0.0, inf, inf, -inf),
    "1 / x at 0": (lambda x: 1.0 / x, 0.0, -inf, -inf, inf),
    "var(ddof=1) of equal values": (lambda x: xnp.var(xnp.stack([x, x]), ddof=1),
                                    1.0, 0.0, 0.0, 0.0),
    "std of one value": (lambda x: xnp.std(xnp.stack([x])), 1.0, nan, nan, nan),
    "prod with a zero entry": (lambda x: xnp.prod(xnp.stack([x, 0.0 * x, x])),
                               2.0, 0.0, 0.0, 0.0),
    "prod at 0": (lambda x: xnp.prod(xnp.stack([x, x, 3.0 + 0 * x])), 0.0, 0.0, 0.0, 6.0),
    # infinite operands: JAX's logaddexp rule exp(r(x) - r(out)), r(+inf) = 0
    "logaddexp(x, 1) at +inf": (lambda x: xnp.logaddexp(x, 1.0), inf, 1.0, 1.0, 0.0),
    "logaddexp(+inf, y) at 1": (lambda y: xnp.logaddexp(inf, y), 1.0, math.e, math.e, math.e),
    "logaddexp(x, x) at +inf": (lambda x: xnp.logaddexp(x, x), inf, 2.0, 2.0, 0.0),
    "logaddexp(x, -inf) at +inf": (lambda x: xnp.logaddexp(x, -inf), inf, 1.0, 1.0, 0.0),
    "logaddexp(x, -inf) at -inf": (lambda x: xnp.logaddexp(x, -inf), -inf, nan, nan, nan),
    "logaddexp(-inf, y) at +inf": (lambda y: xnp.logaddexp(-inf, y), inf, 1.0, 1.0, 0.0),
    "logaddexp2(x, 1) at +inf": (lambda x: xnp.logaddexp2(x, 1.0), inf, 1.0, 1.0, 0.0),
    "logaddexp2(+inf, y) at 1": (lambda y: xnp.logaddexp2(inf, y), 1.0, 2.0, 2.0,
                                 1.3862943611198906),
    "softplus at +inf": (nn.softplus, inf, 1.0, 1.0, 0.0),
    "softplus at -inf": (nn.softplus, -inf, 0.0, 0.0, 0.0),
}


def _same(got, want):
    got = float(got)
    if math.isnan(want):
        return math.isnan(got)
    return got == want or abs(got - want) <= 1e-12 * max(1.0, abs(want))


def _modes(f):
    """name -> (function of x giving the first derivative, of x giving the second)."""
    return {
        "grad": (xf.grad(f), xf.grad(xf.grad(f))),
        "jvp": (lambda x: xf.jvp(f, (x,), (1.0,))[1],
                lambda x: xf.jvp(xf.grad(f), (x,), (1.0,))[1]),
        "jit grad": (xf.jit(xf.grad(f)), xf.jit(xf.grad(xf.grad(f)))),
        "jit jvp": (xf.jit(lambda x: xf.jvp(f, (x,), (1.0,))[1]),
                    xf.jit(lambda x: xf.jvp(lambda y: xf.jvp(f, (y,), (1.0,))[1],
                                            (x,), (1.0,))[1])),
    }


@pytest.mark.parametrize("name", list(TABLE))
def test_nonsmooth_point_matches_jax(name):
    f, x, g_jax, t_jax, gg_jax = TABLE[name]
    with np.errstate(all="ignore"):
        for mode, (first, second) in _modes(f).items():
            got1 = first(x)
            assert _same(got1, g_jax if "grad" in mode else t_jax), \
                f"{name}, {mode}: first derivative {float(got1)}, JAX {g_jax}"
            got2 = second(x)
            assert _same(got2, gg_jax), \
                f"{name}, {mode}: second derivative {float(got2)}, JAX {gg_jax}"
