"""Look inside: the IR of f, grad(f) and hvp, and the generated Numba source of jit(grad(f)).

    python examples/inspect_ir.py  (not inspect.py: that name would shadow the standard library module for every script in examples/)
"""
import numpy as np

import xforms as xf
import xforms.numpy as xnp


def f(x):
    return xnp.sum(xnp.tanh(x) ** 2 * xnp.sin(x))


if __name__ == "__main__":
    x = np.linspace(-1.0, 1.0, 5)
    print("=== make_jaxpr(f)")
    print(xf.make_jaxpr(f)(x))
    print("\n=== make_jaxpr(grad(f))")
    print(xf.make_jaxpr(xf.grad(f))(x))
    print("\n=== make_jaxpr(hvp)")
    print(xf.make_jaxpr(lambda x, v: xf.hvp(f, (x,), (v,)))(x, np.ones(5)))
    print("\n=== jit(grad(f)).lower(x).as_text()")
    print(xf.jit(xf.grad(f)).lower(x).as_text())
