"""IR size under differentiation (structural, no timing).

For each benchmark program we count the equations of f, grad(f), hvp(f) (forward over
reverse) and a third derivative (grad(grad(grad(f))) for the scalar chain; for functions of
arrays the gradient of <v, hvp(f)(x, v)>, i.e. D^3 f[v, v, .]).  Reverse mode must cost a small
constant factor (the target: grad(f) at most 4x the equations of f), and each further order a
bounded factor, so that higher orders do not grow exponentially.  The absolute bounds sit
about 25% above the counts measured when this file was written (in the comments), so a
regression in simplification or in a jvp/transpose rule shows up here.

Run this file as a script to print the table.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import nn
from xforms.tree_util import tree_leaves


def mlp_loss(params, x, labels):
    (W1, b1), (W2, b2), (W3, b3) = params
    h = xnp.tanh(x @ W1 + b1)
    h = xnp.tanh(h @ W2 + b2)
    logits = h @ W3 + b3
    return -xnp.mean(xnp.sum(labels * nn.log_softmax(logits), axis=-1))


def elementwise(x):
    return xnp.sum(xnp.sin(x) * xnp.cos(x) + xnp.exp(-x ** 2))


def extended_rosenbrock(x):
    odd, even = x[::2], x[1::2]
    return xnp.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


_CHAIN_OPS = (xnp.sin, xnp.cos, lambda z: z * 1.01, lambda z: z + 0.3, xnp.tanh, lambda z: z * z)


def scalar_chain(x, n=300):
    for i in range(n):
        x = _CHAIN_OPS[i % len(_CHAIN_OPS)](x)
    return x


def _mlp_args():
    sizes = (784, 512, 512, 10)
    params = tuple((np.zeros((a, b)), np.zeros(b)) for a, b in zip(sizes[:-1], sizes[1:]))
    return params, (np.zeros((8, 784)), np.zeros((8, 10)))


def _vdot(a, b):
    return sum(xnp.sum(p * q) for p, q in zip(tree_leaves(a), tree_leaves(b)))


def eqn_counts(f, x, rest=()):
    """(f, grad f, hvp f, third derivative) equation counts at primal x."""
    fx = lambda x: f(x, *rest)
    n = lambda closed: len(closed.eqns)
    hvp = lambda x, v: xf.hvp(fx, (x,), (v,))[0]
    if not isinstance(x, tuple) and np.ndim(x) == 0:
        d3 = xf.make_jaxpr(xf.grad(xf.grad(xf.grad(fx))))(x)
    else:
        d3 = xf.make_jaxpr(lambda x, v: xf.grad(lambda x: _vdot(v, hvp(x, v)))(x))(x, x)
    return (n(xf.make_jaxpr(fx)(x)), n(xf.make_jaxpr(xf.grad(fx))(x)),
            n(xf.make_jaxpr(hvp)(x, x)), n(d3))


# name -> (program, primal, other args, upper bounds for (f, grad, hvp, d3))
PROGRAMS = {
    # measured: 27 40 84 169
    "mlp_784_512_512_10": (mlp_loss, _mlp_args()[0], _mlp_args()[1], (27, 50, 105, 212)),
    # measured: 8 11 21 32
    "elementwise": (elementwise, np.ones(6), (), (8, 14, 27, 40)),
    # measured: 10 15 21 29
    "extended_rosenbrock": (extended_rosenbrock, np.ones(6), (), (10, 19, 27, 37)),
    # measured: 300 749 1845 5070 (the third derivative on a 120-op chain, to stay fast:
    # 120 299 735 2010)
    "scalar_chain_300": (scalar_chain, 0.5, (), (300, 936, 2306, None)),
    "scalar_chain_120": (lambda x: scalar_chain(x, 120), 0.5, (), (120, 374, 920, 2525)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_eqn_counts(name):
    f, x, rest, bounds = PROGRAMS[name]
    if bounds[3] is None:       # long chain: first and second order only
        fx = lambda x: f(x, *rest)
        counts = (len(xf.make_jaxpr(fx)(x).eqns), len(xf.make_jaxpr(xf.grad(fx))(x).eqns),
                  len(xf.make_jaxpr(lambda x, v: xf.hvp(fx, (x,), (v,)))(x, x).eqns))
    else:
        counts = eqn_counts(f, x, rest)
    n_f, n_grad, n_hvp = counts[:3]
    assert n_grad <= 4 * n_f, f"grad(f) has {n_grad} equations, more than 4x f's {n_f}"
    assert n_hvp <= 3 * n_grad, f"hvp has {n_hvp} equations, more than 3x grad's {n_grad}"
    if len(counts) == 4:
        assert counts[3] <= 3.5 * n_hvp, f"third derivative has {counts[3]} equations"
    for what, c, bound in zip(("f", "grad", "hvp", "d3"), counts, bounds):
        assert c <= bound, f"{name}: {what} has {c} equations (bound {bound}): {counts}"


def test_gradient_of_matmul_needs_no_transposes():
    """Both cotangents of x @ W come out of one dot_general each, in the operand's layout."""
    jp = xf.make_jaxpr(xf.grad(lambda x, W: xnp.sum(xnp.tanh(x @ W)), argnums=(0, 1)))(
        np.ones((4, 3)), np.ones((3, 2)))
    names = [e.prim.name for e in jp.eqns]
    assert "transpose" not in names, str(jp)
    assert names.count("dot_general") == 3, str(jp)


def test_nd_times_matrix_is_one_unbatched_product():
    """(..., M, K) @ (K, N) is one dot_general over the leading dims, as a dense layer over a
    batch of sequences or a convolution written with slices uses it: the matrix is not
    broadcast to the batch, and under vmap the batch axis stays in front."""
    x, W = np.ones((2, 5, 4, 3)), np.ones((3, 6))
    jp = xf.make_jaxpr(lambda x, W: x @ W)(x, W)
    (eqn,) = [e for e in jp.eqns if e.prim.name == "dot_general"]
    assert eqn.params["dimension_numbers"][1] == ((), ()), str(jp)
    assert "broadcast_in_dim" not in [e.prim.name for e in jp.eqns], str(jp)
    g = xf.make_jaxpr(xf.grad(lambda x, W: xnp.sum(xnp.tanh(x @ W)), argnums=(0, 1)))(x, W)
    names = [e.prim.name for e in g.eqns]
    assert "broadcast_in_dim" not in names and "reduce_sum" not in names, str(g)
    vm = xf.make_jaxpr(xf.vmap(lambda x, W: x @ W, (0, None)))(x, W)
    assert vm.jaxpr.outvars[0].aval.shape == (2, 5, 4, 6)
    assert [e.prim.name for e in vm.eqns] == ["dot_general"], str(vm)


def test_simplifier_rewrites_are_exact():
    """Negations cancel, scalars broadcast implicitly, reshapes compose; values unchanged."""
    def f(x, y):
        a = -(-x)                                  # neg(neg x) = x
        b = (-x) * (-y)                            # = x * y
        c = x * y + (-(x * y))                     # = x*y - x*y
        d = xnp.reshape(xnp.reshape(x, (3, 2)), (6,))
        return a + b + c + d + xnp.full(6, 2.0) * y + y * x
    x, y = np.linspace(-1, 1, 6), np.linspace(0.5, 2, 6)
    jp = xf.make_jaxpr(f)(x, y)
    names = [e.prim.name for e in jp.eqns]
    assert "neg" not in names and names.count("reshape") <= 1, str(jp)
    assert "broadcast_in_dim" not in names, str(jp)
    assert names.count("mul") == 2, str(jp)          # x*y shared (commutative CSE), 2.0*y
    np.testing.assert_array_equal(xf.jit(f, backend="interpret")(x, y), f(x, y))


def test_constant_masks_fold_into_one_constant():
    """`tril(ones((T, T), bool))` under jit is select_n of three constant masks: simplify
    folds it into one constant mask, whose broadcast stays a broadcast; float arithmetic on
    constants and masks past FOLD_MAX_ELEMENTS (300 x 300) stay equations.  Values as NumPy's
    (JAX's for this program; CI has no JAX)."""

    def f(np_, s):
        big = np_.tril(np_.ones((300, 300), bool))
        masked = np_.where(np_.tril(np_.ones((4, 4), bool)), s, -1e9)
        return masked + np_.exp(np_.ones((4, 4))) + np_.sum(big)
    s = np.linspace(-1.0, 1.0, 32).reshape(2, 4, 4)
    jp = xf.make_jaxpr(lambda s: f(xnp, s))(s)
    consts = set(jp.jaxpr.constvars)
    selects = [e.outvars[0].aval.shape for e in jp.eqns if e.prim.name == "select_n"
               and all(v in consts for v in e.invars)]
    assert selects == [(300, 300)], str(jp)
    assert [e.prim.name for e in jp.eqns].count("exp") == 1, str(jp)
    mask = [c for c in jp.consts if c.dtype == bool and c.shape == (4, 4)]
    assert len(mask) == 1 and np.array_equal(mask[0], np.tri(4, dtype=bool)), str(jp)
    np.testing.assert_allclose(xf.jit(lambda s: f(xnp, s))(s), f(np, s), rtol=1e-12)


if __name__ == "__main__":
    print(f"{'program':22s} {'f':>6s} {'grad':>6s} {'hvp':>6s} {'d3':>6s}  grad/f")
    for name, (f, x, rest, _) in PROGRAMS.items():
        c = eqn_counts(f, x, rest)
        print(f"{name:22s} {c[0]:6d} {c[1]:6d} {c[2]:6d} {c[3]:6d}  {c[1] / c[0]:.2f}")
