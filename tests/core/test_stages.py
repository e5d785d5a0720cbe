"""xforms.stages: jit's ahead-of-time objects under jax.stages' names.

JAX 0.10.2 (checked with the installed jax): jit(f) is a jax.stages.Wrapped;
jit(f).trace(x, y) a Traced with .jaxpr, .fun_name, .in_tree/.out_tree, .in_avals
(((aval_x, aval_y), {})); .lower() a Lowered; .compile() a Compiled that runs for the lowered
signature and raises TypeError ("Argument types differ ...") for another.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import stages


def _f(x, y):
    return x * 2.0, {"a": y}


def test_the_stages_of_jit():
    g = xf.jit(_f, tiered=False)
    assert isinstance(g, stages.Wrapped)
    traced = g.trace(xnp.ones(3), 2.0)
    assert isinstance(traced, stages.Traced) and traced.fun_name == "_f"
    assert [e.prim.name for e in traced.jaxpr.eqns] == ["mul"]
    (ax, ay), kw = traced.in_avals
    assert ax.shape == (3,) and ay.shape == () and kw == {}
    out = traced.out_avals
    assert out[0].shape == (3,) and out[1]["a"].shape == ()
    lowered = traced.lower()
    assert isinstance(lowered, stages.Lowered) and "def " in lowered.as_text()
    compiled = lowered.compile()
    assert isinstance(compiled, stages.Compiled)
    y, d = compiled(xnp.ones(3), 2.0)
    np.testing.assert_array_equal(y, [2.0, 2.0, 2.0])
    assert float(d["a"]) == 2.0
    with pytest.raises(TypeError, match="compiled for arguments"):
        compiled(xnp.ones(4), 2.0)


def test_lower_is_trace_then_lower():
    g = xf.jit(lambda x: xnp.sin(x) + 1.0)
    x = np.arange(3.0)
    assert isinstance(g.lower(x), stages.Lowered)
    np.testing.assert_allclose(g.lower(x).compile()(x), np.sin(x) + 1.0)
