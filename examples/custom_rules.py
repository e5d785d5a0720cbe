"""User-defined differentiation rules and primitives, in the style of JAX's tutorials.

1. `custom_jvp`: a numerically stable derivative for log(1 + exp(x)).
2. `custom_vjp`: clip the gradient flowing through a value.
3. `checkpoint`: recompute instead of storing residuals; `hook`: edit a cotangent.
4. A user-defined primitive (the Huber loss) with a NumPy and a Numba implementation and
   its jvp and batching rules, differentiated, batched and compiled: under `jit` its scalar
   Numba function is called inside the fused loops of the generated code, on the CPU and,
   with `backend="cuda"`, as a device function in the CUDA kernels.  A second primitive has
   an array implementation (a function of whole arrays, CPU only).

Run: python examples/custom_rules.py
"""
import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms import extend
from xforms.transforms.ad import vjp_jaxprs


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


def running_max_impl(x):
    """An array implementation: the running maximum along the last axis (no NumPy ufunc
    accumulates in Numba, so it is a plain loop; the compiler copies the result out)."""
    out = x.copy()
    for i in range(1, x.shape[-1]):
        out[..., i] = np.maximum(out[..., i - 1], x[..., i])
    return out


running_max_p = extend.Primitive("running_max")
running_max_p.def_impl(lambda x: np.maximum.accumulate(x, axis=-1))
running_max_p.def_numba(running_max_impl)
running_max_p.def_abstract_eval(lambda x: x)


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
    loss = xf.jit(lambda x: xnp.sum(huber(x) * xnp.cos(x)), backend="cpu")
    g = xf.jit(xf.grad(lambda x: xnp.sum(huber(x))), backend="cpu")(x)
    vg = xf.jit(xf.vmap(xf.grad(huber)), backend="cpu")(x)
    print(f"   jit: loss = {loss(x):.6f}, grad = {g}, vmap(grad) = {vg}")
    assert np.isclose(loss(x), np.sum(huber(x) * np.cos(x)), rtol=1e-14)
    assert np.allclose(g, np.clip(x, -1, 1)) and np.allclose(vg, np.clip(x, -1, 1))
    call = next(ln.strip() for ln in loss.lower(x).as_text().splitlines() if "impl_huber(" in ln)
    print(f"   the compiled loop calls huber_scalar per element: {call}")
    rm = xf.jit(lambda x: running_max_p.bind(huber(x[::-1])), backend="cpu")(x)
    print(f"   running_max(huber(x[::-1])) (an array implementation, jitted) = {rm}")
    assert np.array_equal(rm, np.maximum.accumulate(huber(x[::-1])))
    if xf.default_backend() == "cuda":             # a GPU, or NUMBA_ENABLE_CUDASIM=1
        gc = xf.jit(xf.grad(lambda x: xnp.sum(huber(x) * xnp.cos(x))), backend="cuda")(x)
        want = xf.grad(lambda x: xnp.sum(huber(x) * xnp.cos(x)))(x)
        print(f"   on CUDA: grad of the loss = {np.asarray(gc)}")
        assert np.allclose(np.asarray(gc), want, rtol=1e-13)
    else:
        print('   (with a GPU, jit(..., backend="cuda") calls huber_scalar as a device function)')


if __name__ == "__main__":
    main()
