"""User-defined differentiation rules and primitives, in the style of JAX's tutorials.

1. `custom_jvp`: a numerically stable derivative for log(1 + exp(x)).
2. `custom_vjp`: clip the gradient flowing through a value.
3. `checkpoint`: recompute instead of storing residuals; `hook`: edit a cotangent.
4. A user-defined primitive (the Huber loss) with a NumPy and a Numba implementation and
   its jvp and batching rules, differentiated, batched and jitted.

Run: python examples/custom_rules.py
"""
import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms import extend
from xforms.ad import vjp_jaxprs
from xforms.errors import XformsError


# ---- 1. custom_jvp ----------------------------------------------------------------------------
@xf.custom_jvp
def log1pexp(x):
    return xnp.log(1.0 + xnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # d/dx log(1 + e^x) = 1 - 1/(1 + e^x): no inf/inf where e^x overflows
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + xnp.exp(x)))


def naive(x):
    return xnp.log(1.0 + xnp.exp(x))


# ---- 2. custom_vjp ----------------------------------------------------------------------------
@xf.custom_vjp
def clip_gradient(lo, hi, x):
    return x                                      # identity on the way forward


clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
                     lambda res, g: (None, None, xnp.clip(g, *res)))


# ---- 4. a user-defined primitive --------------------------------------------------------------
def huber_scalar(x, delta):
    """One element; plain arithmetic, so Numba compiles it into the fused loops."""
    a = abs(x)
    return 0.5 * x * x if a <= delta else delta * (a - 0.5 * delta)


huber_p = extend.Primitive("huber", elementwise=True)     # elementwise: batching for free
huber_p.def_impl(lambda x, *, delta: np.where(np.abs(x) <= delta, 0.5 * x * x,
                                              delta * (np.abs(x) - 0.5 * delta)))
huber_p.def_numba(huber_scalar, elementwise=True)
huber_p.def_abstract_eval(lambda x, *, delta: x)


def huber(x, delta=1.0):
    return huber_p.bind(x, delta=float(delta))


huber_p.def_jvp(lambda primals, tangents, *, delta: (
    huber(primals[0], delta), tangents[0] * xnp.clip(primals[0], -delta, delta)))


def main():
    with np.errstate(over="ignore", invalid="ignore"):
        x32 = np.float32(100.0)
        print(f"1. grad of naive log1pexp at x=100 (float32): {xf.grad(naive)(x32)}")
        print(f"   grad with the custom_jvp rule:              {xf.grad(log1pexp)(x32)}")
        xs = np.array([-3.0, 0.0, 3.0, 1000.0])
        print(f"   vmap(grad(log1pexp))({xs}) = {xf.vmap(xf.grad(log1pexp))(xs)}")

    f = lambda x: xnp.sum(clip_gradient(-1.0, 1.0, x) ** 2)
    x = np.array([0.1, 0.4, 3.0])
    print(f"2. grad of sum(x**2) at {x} with the gradient clipped to [-1, 1]: {xf.grad(f)(x)}")

    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((8, 8)) / 3 for _ in range(4)]
    h0 = rng.standard_normal((2, 8))

    def make_loss(layer):
        def loss(ws, h):
            for w in ws:
                h = layer(w, h)
            return xnp.sum(h ** 2)
        return loss
    layer = lambda w, h: xnp.tanh(h @ w) + 0.1 * xnp.sin(h @ w)
    plain, remat = make_loss(layer), make_loss(xf.checkpoint(layer))
    for name, loss in (("plain", plain), ("checkpointed", remat)):
        closed = xf.make_jaxpr(loss)(ws, h0)
        n_res = vjp_jaxprs(closed, [True] * len(closed.in_avals), 1)[2]
        g = xf.grad(loss)(ws, h0)
        print(f"3. {name:>12} grad: {n_res:2d} residuals stored, dL/dW0[0,0] = {g[0][0, 0]:.12f}")
    flipped = xf.grad(lambda x: xnp.sum(xf.hook(lambda g: -g, xnp.sin(x))))(x)
    print(f"   hook(lambda g: -g, sin(x)) turns the gradient cos(x) into {flipped}")

    x = np.array([-3.0, -0.5, 0.2, 2.0])
    print(f"4. huber({x}) = {huber(x)}")
    print(f"   grad = {xf.grad(lambda x: xnp.sum(huber(x)))(x)}, "
          f"vmap(grad) = {xf.vmap(xf.grad(huber))(x)}")
    try:
        print(f"   jit(grad) = {xf.jit(xf.grad(lambda x: xnp.sum(huber(x))))(x)}")
    except XformsError as e:                       # no compiler for it (yet) here
        print(f"   jit: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
