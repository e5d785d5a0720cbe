"""The IR: printed listings of a few programs, the type checker, source lines kept per
equation, and eager evaluation of an IR."""
import textwrap

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core import trace as core
from xforms.core.avals import ShapedArray
from xforms.core.trace import check_jaxpr
from xforms.core.ir import ClosedJaxpr, Eqn, IRTypeError, Jaxpr, Literal, Var
from xforms.primitives import elementwise as ew


def listing(text):
    return textwrap.dedent(text).strip("\n")


def assert_listing(closed, text):
    check_jaxpr(closed.jaxpr)
    assert str(closed) == listing(text), "\n" + str(closed)


def test_scalar_program():
    closed = xf.make_jaxpr(lambda x, y: x * y + xnp.sin(x))(0.5, 4.2)
    assert_listing(closed, """
        { lambda ; a:f64[] b:f64[]. let
            c:f64[] = mul a b
            d:f64[] = sin a
            e:f64[] = add c d
          in (e,) }""")
    assert repr(closed) == str(closed)
    assert [a.weak_type for a in closed.in_avals] == [True, True]


def test_float32_with_weak_python_scalar():
    closed = xf.make_jaxpr(lambda x: 2.0 * x + 1)(np.ones(3, np.float32))
    assert_listing(closed, """
        { lambda ; a:f32[3]. let
            b:f32[3] = mul 2.0 a
            c:f32[3] = add b 1.0
          in (c,) }""")


def test_weak_scalar_argument_is_converted():
    closed = xf.make_jaxpr(lambda x, s: x * s)(np.ones(3, np.float32), 2.0)
    assert_listing(closed, """
        { lambda ; a:f32[3] b:f64[]. let
            c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
            d:f32[3] = mul a c
          in (d,) }""")


def test_structural_program_with_pytree_output():
    def f(x):
        return {"s": xnp.sum(x ** 2, axis=0), "m": x @ x.T, "i": x[1:, ::-1][0]}
    closed = xf.make_jaxpr(f)(np.ones((2, 3)))
    # outputs follow the sorted dict keys: i, m, s
    assert_listing(closed, """
        { lambda ; a:f64[2,3]. let
            b:f64[2,3] = integer_pow[y=2] a
            c:f64[3] = reduce_sum[axes=(0,)] b
            d:f64[3,2] = transpose[permutation=(1, 0)] a
            e:f64[2,2] = dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] a d
            f:f64[2,3] = rev[dimensions=(1,)] a
            g:f64[1,3] = slice[start_indices=(1, 0) limit_indices=(2, 3) strides=(1, 1)] f
            h:f64[3] = squeeze[dimensions=(0,)] g
          in (h, e, c) }""")


def test_broadcasting_and_closed_over_constant():
    c = np.arange(3.0)
    closed = xf.make_jaxpr(lambda x: xnp.where(x > 0, x, c) + x[:, None])(np.ones(3))
    assert_listing(closed, """
        { lambda a:f64[3] ; b:f64[3]. let
            c:bool[3] = gt b 0.0
            d:f64[3] = select_n c a b
            e:f64[3,3] = broadcast_in_dim[shape=(3, 3) broadcast_dimensions=(1,)] d
            f:f64[3,3] = broadcast_in_dim[shape=(3, 3) broadcast_dimensions=(0,)] b
            g:f64[3,3] = add e f
          in (g,) }""")
    assert closed.consts[0] is c or np.array_equal(closed.consts[0], c)
    np.testing.assert_array_equal(core.eval_jaxpr(closed, np.array([1.0, -1.0, 2.0]))[0],
                                  np.where([True, False, True], [1.0, -1.0, 2.0], c)
                                  + np.array([[1.0], [-1.0], [2.0]]))


def test_literal_outputs_integer_ops_and_many_names():
    closed = xf.make_jaxpr(lambda x, n: (x[:2] // 2, True, 3, -1.5, n))(
        np.ones(3, np.int32), np.int64(3))
    # integer // is lax.div (truncating) with jax.numpy's floor fix-up
    assert_listing(closed, """
        { lambda ; a:i32[3] b:i64[]. let
            c:i32[2] = slice[start_indices=(0,) limit_indices=(2,) strides=(1,)] a
            d:i32[2] = div c 2
            e:i32[2] = sign c
            f:bool[2] = ne e 1
            g:i32[2] = rem c 2
            h:bool[2] = ne g 0
            i:bool[2] = and f h
            j:i32[2] = sub d 1
            k:i32[2] = select_n i d j
          in (k, True, 3, -1.5, b) }""")

    def chain(x):
        for _ in range(14):
            x = xnp.sin(x) * 2
        return x
    text = str(xf.make_jaxpr(chain)(1.0))
    assert "    z:f64[] = sin y\n    aa:f64[] = mul z 2.0\n" in text
    assert text.endswith("  in (ac,) }")


def test_sub_jaxprs_print_nested():
    """A higher-order equation (built by hand here) prints its sub-IRs indented."""
    inner = xf.make_jaxpr(lambda v: -v)(np.ones(2))
    prim = core.Primitive("apply_twice")
    core.abstract_eval_rules[prim] = lambda x, **params: [x]
    x = Var(ShapedArray((2,), np.float64))
    y = Var(ShapedArray((2,), np.float64))
    jaxpr = Jaxpr([], [x], [Eqn(prim, [x], [y], {"body": inner, "n": 2, "_hidden": 1})], [y])
    closed = ClosedJaxpr(jaxpr, [])
    assert_listing(closed, """
        { lambda ; a:f64[2]. let
            b:f64[2] = apply_twice[n=2 body=
                { lambda ; a:f64[2]. let
                    b:f64[2] = neg a
                  in (b,) }] a
          in (b,) }""")


def test_check_jaxpr_rejects_broken_programs():
    a = Var(ShapedArray((3,), np.float64))
    b = Var(ShapedArray((3,), np.float64))
    c = Var(ShapedArray((3,), np.float64))
    ok = Jaxpr([], [a], [Eqn(ew.sin_p, [a], [b], {})], [b])
    assert check_jaxpr(ok)
    with pytest.raises(IRTypeError, match="before definition"):
        check_jaxpr(Jaxpr([], [a], [Eqn(ew.sin_p, [c], [b], {})], [b]))
    with pytest.raises(IRTypeError, match="defined twice"):
        check_jaxpr(Jaxpr([], [a], [Eqn(ew.sin_p, [a], [a], {})], [a]))
    wrong = Var(ShapedArray((3,), np.float32))
    with pytest.raises(IRTypeError, match="rule gives f64"):
        check_jaxpr(Jaxpr([], [a], [Eqn(ew.sin_p, [a], [wrong], {})], [wrong]))
    with pytest.raises(IRTypeError, match="before definition"):
        check_jaxpr(Jaxpr([], [a], [], [c]))
    lit = Literal(2.0, ShapedArray((), np.float64, weak_type=True))
    assert check_jaxpr(Jaxpr([], [a], [Eqn(ew.mul_p, [a, lit], [b], {})], [b]))
    d = Var(ShapedArray((2,), np.float64))
    with pytest.raises(TypeError, match="equal shapes"):
        check_jaxpr(Jaxpr([], [a, d], [Eqn(ew.add_p, [a, d], [b], {})], [b]))


def test_every_equation_keeps_the_user_source_line():
    def user_fn(x):
        y = xnp.sin(x)                               # line A
        return xnp.sum(y * y)                        # line B
    first = user_fn.__code__.co_firstlineno
    closed = xf.make_jaxpr(user_fn)(np.ones(3))
    lines = [(e.prim.name, e.source_info.line, e.source_info.function) for e in closed.eqns]
    assert lines == [("sin", first + 1, "user_fn"), ("mul", first + 2, "user_fn"),
                     ("reduce_sum", first + 2, "user_fn")]
    assert closed.eqns[0].source_info.file == __file__
    assert str(closed.eqns[0].source_info) == f"test_ir.py:{first + 1} (user_fn)"


def test_eval_jaxpr_evaluates_with_numpy():
    f = lambda x, y: (xnp.tanh(x @ y).sum(axis=0), x.T * 2.0)
    x, y = np.arange(6.0).reshape(2, 3) / 10, np.ones((3, 2))
    closed = xf.make_jaxpr(f)(x, y)
    out = core.eval_jaxpr(closed, x, y)
    assert all(isinstance(o, core.Array) for o in out)
    np.testing.assert_allclose(out[0], np.tanh(x @ y).sum(axis=0), rtol=1e-14)
    np.testing.assert_allclose(out[1], x.T * 2.0)
    # the same IR evaluated inside another trace is staged again (how transforms nest)
    again = xf.make_jaxpr(lambda a, b: core.eval_jaxpr(closed, a, b))(x, y)
    assert [e.prim.name for e in again.eqns] == [e.prim.name for e in closed.eqns]


def test_make_jaxpr_static_argnums_and_pytree_inputs():
    def f(params, x, n):
        return params["w"] * x ** n + params["b"]
    closed = xf.make_jaxpr(f, static_argnums=2)({"w": 2.0, "b": np.ones(2)}, np.ones(2), 3)
    # jax 0.10.2 prints the same (the weak float's convert to a strong one included)
    assert_listing(closed, """
        { lambda ; a:f64[2] b:f64[] c:f64[2]. let
            d:f64[2] = integer_pow[y=3] c
            e:f64[] = convert_element_type[new_dtype=float64 weak_type=False] b
            f:f64[2] = mul e d
            g:f64[2] = add f a
          in (g,) }""")


def test_trace_state_is_per_thread():
    """A tiered background compile traces beside the caller: axis bindings, the source
    override and the vmap axis name set on one thread are invisible on another."""
    import threading
    from xforms.core import axis_env, source_info
    seen = {}

    def other():
        try:
            axis_env.lookup("i")
            seen["axis"] = "visible"
        except NameError:
            seen["axis"] = "unbound"
        seen["override"] = source_info._state.info

    info = source_info.SourceInfo("f.py", 3, "f")
    with axis_env.bind_axis("i", 4), source_info.user_frame_override(info):
        assert axis_env.lookup("i").size == 4 and source_info.current() == info
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == {"axis": "unbound", "override": None}
