"""custom_vmap and sequential_vmap (xforms/custom_batching.py): the rule under vmap, the
function elsewhere, JAX's rules under differentiation.  The rule below deliberately computes
a different function (cos for sin) so that the tests see which one ran; the expected values
are JAX's (jax 0.10.2, jax_enable_x64), recorded here from the same program under jax."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.custom_batching import custom_vmap, sequential_vmap

COS = np.cos(np.arange(3.0))


def _make():
    calls = []

    @custom_vmap
    def f(x, y):
        return xnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        calls.append((axis_size, list(in_batched), np.shape(x), np.shape(y)))
        return xnp.cos(x) * y, in_batched[0] or in_batched[1]
    return f, calls


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14, atol=1e-15)


def test_function_outside_vmap_rule_inside():
    f, calls = _make()
    _close(f(1.0, 2.0), 1.682941969615793)
    _close(xf.jit(f, tiered=False)(1.0, 2.0), 1.682941969615793)
    assert calls == []
    _close(xf.vmap(f, (0, None))(xnp.arange(3.0), 2.0), 2 * COS)
    assert calls == [(3, [True, False], (3,), ())]
    # nothing batched: the rule is not called, the result is broadcast (as JAX)
    _close(xf.vmap(f, (None, None), axis_size=3)(1.0, 2.0), [1.682941969615793] * 3)
    assert len(calls) == 1


def test_rule_compiles_and_nests():
    f, calls = _make()
    _close(xf.jit(xf.vmap(f), tiered=False)(xnp.arange(3.0), xnp.ones(3)), COS)
    _close(xf.vmap(xf.vmap(f))(xnp.ones((2, 3)), xnp.ones((2, 3))), np.full((2, 3), np.cos(1)))
    assert (3, [True, True], (3,), (3,)) in calls      # the inner vmap's rule, batched by the outer


def test_forward_mode_follows_the_rule_under_vmap():
    f, _ = _make()
    p, t = xf.jvp(f, (1.0, 2.0), (1.0, 0.0))
    _close(p, 1.682941969615793), _close(t, 1.0806046117362795)
    p, t = xf.vmap(lambda x: xf.jvp(f, (x, 2.0), (1.0, 0.0)))(xnp.arange(2.0))
    _close(p, [2.0, 1.0806046117362795]), _close(t, [0.0, -1.682941969615793])
    p, t = xf.jvp(xf.vmap(f), (xnp.arange(2.0), xnp.ones(2)), (xnp.ones(2), xnp.zeros(2)))
    _close(p, [1.0, 0.5403023058681398]), _close(t, [0.0, -0.8414709848078965])


def test_reverse_mode_as_jax():
    f, _ = _make()
    # vmap inside grad differentiates the rule's code
    g = xf.grad(lambda x: xf.vmap(f)(x, xnp.ones(3)).sum())(xnp.arange(3.0))
    _close(g, [0.0, -0.8414709848078965, -0.9092974268256817])
    with pytest.raises(TypeError, match="reverse-mode differentiation of custom_vmap function .*f "):
        xf.grad(f)(1.0, 2.0)
    with pytest.raises(TypeError, match="reverse-mode differentiation of custom_vmap"):
        xf.vmap(xf.grad(f))(xnp.arange(3.0), xnp.ones(3))


def test_pytrees_unbatched_outputs_and_errors():
    @custom_vmap
    def h(x):
        return {"a": x, "b": 2 * x}

    h.def_vmap(lambda n, b, x: ({"a": x + 1, "b": x[0] + 2}, {"a": True, "b": False}))
    out = xf.vmap(h)(xnp.arange(3.0))
    _close(out["a"], [1, 2, 3]), _close(out["b"], [2, 2, 2])     # "b" unbatched: broadcast
    h.def_vmap(lambda n, b, x: ({"a": x + 1, "b": x + 2}, True))
    with pytest.raises(ValueError, match="structure"):
        xf.vmap(h)(xnp.arange(3.0))
    h.def_vmap(lambda n, b, x: ({"a": x + 1, "b": x + 2}, {"a": False, "b": True}))
    with pytest.raises(TypeError, match="returned output 0 as f64\\[3\\].*batched=False"):
        xf.vmap(h)(xnp.arange(3.0))
    bare = custom_vmap(lambda x: x)
    with pytest.raises(AttributeError, match="No batching rule"):
        xf.vmap(bare)(xnp.arange(3.0))


def test_sequential_vmap_maps_the_function():
    seen = []

    def total(x, y):
        seen.append(np.shape(x))
        return (x * y).sum()
    g = sequential_vmap(total)
    _close(xf.vmap(g, (0, None))(xnp.ones((3, 2)), xnp.arange(2.0)), [1.0, 1.0, 1.0])
    assert (2,) in seen and (3, 2) not in seen              # traced per example, not batched
    _close(xf.jit(xf.vmap(g), tiered=False)(xnp.ones((3, 2)), xnp.ones((3, 2))), [2.0] * 3)


def test_keywords_and_defaults_reach_the_rule_as_positional_arguments():
    @custom_vmap
    def f(x, y=2.0):
        return x * y

    f.def_vmap(lambda n, b, x, y: (x * y + 1, b[0] or b[1]))
    _close(f(1.0, y=3.0), 3.0)
    _close(xf.vmap(lambda x: f(x, y=3.0))(xnp.ones(2)), [4.0, 4.0])    # JAX's values
    _close(xf.vmap(f)(xnp.ones(2)), [3.0, 3.0])
