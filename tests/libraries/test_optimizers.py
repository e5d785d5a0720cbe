"""`xforms.example_libraries.optimizers` against `jax.example_libraries.optimizers`: several
steps of every optimizer and schedule on a pytree of parameters, eagerly and under jit."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.example_libraries import optimizers as opt
from xforms.tree_util import tree_leaves, tree_map

jax = pytest.importorskip("jax")
from jax.example_libraries import optimizers as jopt  # noqa: E402

OPTIMIZERS = [("sgd", (0.1,), {}), ("momentum", (0.1, 0.9), {}), ("nesterov", (0.05, 0.8), {}),
              ("adagrad", (0.3,), {"momentum": 0.5}), ("rmsprop", (0.01,), {"gamma": 0.8}),
              ("rmsprop_momentum", (0.01,), {}), ("adam", (0.05,), {"b1": 0.8}),
              ("adamax", (0.05,), {}), ("sm3", (0.2,), {})]


def _params():
    r = np.random.default_rng(0)
    return {"w": r.normal(size=(3, 4)), "b": r.normal(size=4), "s": np.float64(0.5),
            "layers": [r.normal(size=(2, 2, 3))]}


def _grad(p, k):          # a deterministic "gradient" that depends on the parameters
    return tree_map(lambda x: np.sin(np.asarray(x) * (k + 1)) + 0.1 * k, p)


def _run(module, name, args, kw, steps=5):
    init, update, get_params = getattr(module, name)(*args, **kw)
    state = init(_params())
    for k in range(steps):
        state = update(k, _grad(get_params(state), k), state)
    return get_params(state)


@pytest.mark.parametrize("name,args,kw", OPTIMIZERS)
def test_steps_match_jax(name, args, kw):
    got, want = _run(opt, name, args, kw), _run(jopt, name, args, kw)
    for a, b in zip(tree_leaves(got), jax.tree.leaves(want)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=name)


SCHEDULES = [("constant", (0.3,), {}), ("exponential_decay", (0.5, 3, 0.7), {}),
             ("inverse_time_decay", (0.5, 2, 0.3), {}),
             ("inverse_time_decay", (0.5, 2, 0.3), {"staircase": True}),
             ("polynomial_decay", (0.5, 4, 0.01), {"power": 2.0}),
             ("piecewise_constant", ([2, 4], [0.5, 0.2, 0.05]), {})]


@pytest.mark.parametrize("name,args,kw", SCHEDULES)
def test_schedules_match_jax(name, args, kw):
    s, js = getattr(opt, name)(*args, **kw), getattr(jopt, name)(*args, **kw)
    for i in range(7):
        np.testing.assert_allclose(s(i), js(i), rtol=1e-13)
    got = _run(opt, "momentum", (getattr(opt, name)(*args, **kw), 0.9), {})
    want = _run(jopt, "momentum", (getattr(jopt, name)(*args, **kw), 0.9), {})
    for a, b in zip(tree_leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_utilities_match_jax():
    g = _params()
    np.testing.assert_allclose(opt.l2_norm(g), jopt.l2_norm(g), rtol=1e-13)
    for m in (0.5, 100.0):
        for a, b in zip(tree_leaves(opt.clip_grads(g, m)), jax.tree.leaves(jopt.clip_grads(g, m))):
            np.testing.assert_allclose(a, b, rtol=1e-13)
    with pytest.raises(ValueError, match="one shorter"):
        opt.piecewise_constant([1, 2], [1.0])
    with pytest.raises(TypeError):
        opt.make_schedule(np.ones(2))


def test_state_is_a_pytree_under_jit_and_pack_roundtrip():
    init, update, get_params = opt.adam(0.1)

    def loss(p):
        return xnp.sum(p["w"] ** 2) + xnp.sum((p["b"] - 1.0) ** 2)

    @xf.jit
    def step(i, state):
        return update(i, xf.grad(loss)(get_params(state)), state)

    state = init({"w": np.ones((2, 2)), "b": np.zeros(3)})
    jinit, jupdate, jget = jopt.adam(0.1)
    jstate = jinit({"w": np.ones((2, 2)), "b": np.zeros(3)})
    jloss = lambda p: jax.numpy.sum(p["w"] ** 2) + jax.numpy.sum((p["b"] - 1.0) ** 2)  # noqa
    for i in range(4):
        state = step(i, state)
        jstate = jupdate(i, jax.grad(jloss)(jget(jstate)), jstate)
    assert isinstance(state, opt.OptimizerState)
    hash(xf.tree.structure(state))      # hashable aux data: jit finds its compiled function
    for a, b in zip(tree_leaves(get_params(state)), jax.tree.leaves(jget(jstate))):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    unpacked = opt.unpack_optimizer_state(state)
    assert isinstance(unpacked["w"], opt.JoinPoint) and len(unpacked["w"].subtree) == 3
    again = opt.pack_optimizer_state(unpacked)
    assert again.tree_def == state.tree_def and again.subtree_defs == state.subtree_defs
    for a, b in zip(tree_leaves(again), tree_leaves(state)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="did not match"):
        update(0, {"w": np.ones((2, 2))}, state)
