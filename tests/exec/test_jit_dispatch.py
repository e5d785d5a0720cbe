"""`jit` as users meet it: the fast call path and its fallbacks, static arguments and
retracing, result types and aliasing, `lower().as_text()`, and LoweringErrors."""
import os

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core.trace import Array, Primitive, abstract_eval_rules, impl_rules
from xforms.errors import LoweringError


def poly(x, y):
    return {"s": x * y + 1.0, "t": [xnp.sin(x), (x - y, None)]}


jpoly = xf.jit(poly)


def test_results_are_xforms_arrays_with_pytree_structure():
    x, y = np.arange(3.0), np.ones(3)
    out = jpoly(x, y)
    assert set(out) == {"s", "t"} and out["t"][1][1] is None
    for leaf in (out["s"], out["t"][0], out["t"][1][0]):
        assert isinstance(leaf, Array)
    np.testing.assert_allclose(out["s"], x * y + 1.0)
    s = xf.jit(lambda x: xnp.sum(x) * 2.0)(x)
    assert isinstance(s, Array) and s.shape == () and s.dtype == np.float64 and s == 6.0
    assert xf.jit(lambda x: x * 2)(np.float32(1.5)).dtype == np.float32


def test_fast_path_falls_back_on_new_signatures():
    f = xf.jit(lambda x, p: p["w"] * x + p["b"])
    p = {"w": np.ones(3), "b": np.zeros(3)}
    np.testing.assert_allclose(f(2.0, p), 2.0 * np.ones(3))
    assert f._fast_call is not None
    np.testing.assert_allclose(f(3.0, p), 3.0 * np.ones(3))               # fast path
    np.testing.assert_allclose(f(2, p), 2 * np.ones(3))                   # int: retrace
    p4 = {"w": np.ones(4), "b": np.arange(4.0)}
    np.testing.assert_allclose(f(1.0, p4), 1.0 + np.arange(4.0))          # new shape
    assert f(np.float32(1.0), {"w": np.ones(2, np.float32),
                               "b": np.ones(2, np.float32)}).dtype == np.float32
    np.testing.assert_allclose(f(np.array(2.0), p), 2.0 * np.ones(3))     # 0-d array
    np.testing.assert_allclose(f(2.0, {"w": np.ones((3, 2))[:, 0], "b": p["b"]}), 2.0)
    ro = np.ones(3)
    ro.flags.writeable = False
    np.testing.assert_allclose(f(2.0, {"w": ro, "b": p["b"]}), 2.0)       # read-only input
    np.testing.assert_allclose(f(2.0, p), 2.0 * np.ones(3))
    with pytest.raises(KeyError):
        f(2.0, {"w": np.ones(3)})                                         # user's own error


def test_outputs_never_alias_inputs_or_earlier_results():
    x = np.arange(4.0)
    ident = xf.jit(lambda a: (a, a.reshape(2, 2), a + 0.0))
    a, b, c = ident(x)
    assert not np.shares_memory(a, x) and not np.shares_memory(b, x)
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(a)[0] = 100.0   # (an Array refuses item assignment, its NumPy view too: #31)
    x[0] = 7.0                     # the caller's array is theirs: the results do not change
    assert a[0] == 0.0 and b[0, 0] == 0.0 and c[0] == 0.0
    f = xf.jit(lambda a: xnp.exp(a) * 2.0)
    r1 = f(x)
    r1_copy = np.array(r1)
    r2 = f(x + 1.0)
    np.testing.assert_array_equal(r1, r1_copy)
    assert not np.shares_memory(r1, r2)


def test_static_argnums_argnames_and_retrace():
    calls = []

    def f(x, n, scale=1.0):
        calls.append(n)
        return x ** n * scale

    jf = xf.jit(f, static_argnums=1, static_argnames="scale")
    x = np.arange(3.0)
    np.testing.assert_allclose(jf(x, 2), x ** 2)
    np.testing.assert_allclose(jf(x, 3), x ** 3)
    np.testing.assert_allclose(jf(x, 3, scale=2.0), 2 * x ** 3)
    n_traces = len(calls)
    np.testing.assert_allclose(jf(x + 1, 2), (x + 1) ** 2)
    assert len(calls) == n_traces                       # cached: no retrace
    np.testing.assert_allclose(jf(np.ones((2, 2)), 2), np.ones((2, 2)))
    assert len(calls) == n_traces + 1                   # new shape: retrace


def test_donate_argnums_accepted_and_lower_compile():
    f = xf.jit(lambda x: x * 2.0, donate_argnums=0)
    x = np.arange(3.0)
    lowered = f.lower(x)
    compiled = lowered.compile()
    np.testing.assert_allclose(compiled(x), f(x))


def user_function_for_source(x):
    return xnp.tanh(x) * 3.0          # MARKER-LINE


def test_lower_as_text_is_readable_source_with_user_lines():
    text = xf.jit(user_function_for_source).lower(np.ones((2, 3))).as_text()
    line = next(k for k, ln in enumerate(open(__file__).read().splitlines(), 1)
                if "MARKER-LINE" in ln and "return" in ln)
    assert "def kernel(" in text
    assert f"test_jit_dispatch.py:{line} (user_function_for_source)" in text
    assert "tanh" in text and "while i0 < 2:" in text
    compile(text, "<generated>", "exec")                 # valid Python


# ---- errors ------------------------------------------------------------------------------
def _toy_primitive(name):
    p = Primitive(name)
    abstract_eval_rules[p] = lambda x: [x]
    impl_rules[p] = lambda x: [np.asarray(x)]
    return p


def test_unknown_primitive_raises_lowering_error_with_user_line():
    p = _toy_primitive("toy_unlowered")
    try:
        with pytest.raises(LoweringError) as e:
            xf.jit(lambda x: p.bind(x) + 1.0)(np.ones(2))
        msg = str(e.value)
        assert "toy_unlowered" in msg and "test_jit_dispatch.py" in msg
    finally:
        del abstract_eval_rules[p], impl_rules[p]


def test_numba_typing_error_becomes_lowering_error():
    from xforms.kernels.cpu.numba.emit import OP_RULES
    p = _toy_primitive("toy_badcode")
    OP_RULES["toy_badcode"] = lambda em, eqn: em.line(
        f"{em.atom(eqn.outvars[0])} = np.no_such_function({em.atom(eqn.invars[0])})")
    try:
        with pytest.raises(LoweringError) as e:
            xf.jit(lambda x: p.bind(x) * 2.0)(np.ones(2))
        msg = str(e.value)
        assert "toy_badcode" in msg and "test_jit_dispatch.py" in msg
        path = msg.split("generated code at ")[1].split(":")[0]
        assert os.path.exists(path) and "no_such_function" in open(path).read()
        assert "TypingError" not in type(e.value).__name__
    finally:
        del OP_RULES["toy_badcode"], abstract_eval_rules[p], impl_rules[p]
