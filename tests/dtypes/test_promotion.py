"""Dtype promotion against JAX's (issue #31): xnp functions, the operators of eager Arrays,
and weak types across the jit boundary, eagerly and on both tiers of `jit`.

JAX is not a CI dependency: the tables below are jax 0.10.2's answers (64-bit mode),
printed by `python tools/jax_promotion_sweep.py --table add` (and `--table true_divide`)
and pasted here.  Row: the left operand (an array of that dtype, or a Python scalar);
columns: the right operand in the order of COLUMNS; a trailing '*' marks a weakly typed
result, '-' a pair the table does not hold (two Python scalars).
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core.trace import Array
from xforms.exec import tiered

COLUMNS = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float16", "float32", "float64", "complex64", "complex128", True, 2, 1.5, 1 + 2j)
SCALARS = {"True": True, "2": 2, "1.5": 1.5, "(1+2j)": 1 + 2j}

# jax.eval_shape(jnp.add, a, b) with jax_enable_x64 (jax 0.10.2)
ADD = {
    'bool': 'bool int8 uint8 int16 uint16 int32 uint32 int64 uint64 float16 float32 float64 complex64 complex128 bool int64* float64* complex128*',
    'int8': 'int8 int8 int16 int16 int32 int32 int64 int64 float64* float16 float32 float64 complex64 complex128 int8 int8 float64* complex128*',
    'uint8': 'uint8 int16 uint8 int16 uint16 int32 uint32 int64 uint64 float16 float32 float64 complex64 complex128 uint8 uint8 float64* complex128*',
    'int16': 'int16 int16 int16 int16 int32 int32 int64 int64 float64* float16 float32 float64 complex64 complex128 int16 int16 float64* complex128*',
    'uint16': 'uint16 int32 uint16 int32 uint16 int32 uint32 int64 uint64 float16 float32 float64 complex64 complex128 uint16 uint16 float64* complex128*',
    'int32': 'int32 int32 int32 int32 int32 int32 int64 int64 float64* float16 float32 float64 complex64 complex128 int32 int32 float64* complex128*',
    'uint32': 'uint32 int64 uint32 int64 uint32 int64 uint32 int64 uint64 float16 float32 float64 complex64 complex128 uint32 uint32 float64* complex128*',
    'int64': 'int64 int64 int64 int64 int64 int64 int64 int64 float64* float16 float32 float64 complex64 complex128 int64 int64 float64* complex128*',
    'uint64': 'uint64 float64* uint64 float64* uint64 float64* uint64 float64* uint64 float16 float32 float64 complex64 complex128 uint64 uint64 float64* complex128*',
    'float16': 'float16 float16 float16 float16 float16 float16 float16 float16 float16 float16 float32 float64 complex64 complex128 float16 float16 float16 complex64',
    'float32': 'float32 float32 float32 float32 float32 float32 float32 float32 float32 float32 float32 float64 complex64 complex128 float32 float32 float32 complex64',
    'float64': 'float64 float64 float64 float64 float64 float64 float64 float64 float64 float64 float64 float64 complex128 complex128 float64 float64 float64 complex128',
    'complex64': 'complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex128 complex64 complex128 complex64 complex64 complex64 complex64',
    'complex128': 'complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128',
    'True': 'bool int8 uint8 int16 uint16 int32 uint32 int64 uint64 float16 float32 float64 complex64 complex128 - - - -',
    '2': 'int64* int8 uint8 int16 uint16 int32 uint32 int64 uint64 float16 float32 float64 complex64 complex128 - - - -',
    '1.5': 'float64* float64* float64* float64* float64* float64* float64* float64* float64* float16 float32 float64 complex64 complex128 - - - -',
    '(1+2j)': 'complex128* complex128* complex128* complex128* complex128* complex128* complex128* complex128* complex128* complex64 complex64 complex128 complex64 complex128 - - - -',
}

# jax.eval_shape(jnp.true_divide, a, b), as above
TRUE_DIVIDE = {
    'bool': 'float32 float32 float32 float32 float32 float32 float32 float64 float64 float16 float32 float64 complex64 complex128 float32 float64* float64* complex128*',
    'int8': 'float32 float32 float32 float32 float32 float32 float64 float64 float64* float16 float32 float64 complex64 complex128 float32 float32 float64* complex128*',
    'uint8': 'float32 float32 float32 float32 float32 float32 float32 float64 float64 float16 float32 float64 complex64 complex128 float32 float32 float64* complex128*',
    'int16': 'float32 float32 float32 float32 float32 float32 float64 float64 float64* float16 float32 float64 complex64 complex128 float32 float32 float64* complex128*',
    'uint16': 'float32 float32 float32 float32 float32 float32 float32 float64 float64 float16 float32 float64 complex64 complex128 float32 float32 float64* complex128*',
    'int32': 'float32 float32 float32 float32 float32 float32 float64 float64 float64* float16 float32 float64 complex64 complex128 float32 float32 float64* complex128*',
    'uint32': 'float32 float64 float32 float64 float32 float64 float32 float64 float64 float16 float32 float64 complex64 complex128 float32 float32 float64* complex128*',
    'int64': 'float64 float64 float64 float64 float64 float64 float64 float64 float64* float16 float32 float64 complex64 complex128 float64 float64 float64* complex128*',
    'uint64': 'float64 float64* float64 float64* float64 float64* float64 float64* float64 float16 float32 float64 complex64 complex128 float64 float64 float64* complex128*',
    'float16': 'float16 float16 float16 float16 float16 float16 float16 float16 float16 float16 float32 float64 complex64 complex128 float16 float16 float16 complex64',
    'float32': 'float32 float32 float32 float32 float32 float32 float32 float32 float32 float32 float32 float64 complex64 complex128 float32 float32 float32 complex64',
    'float64': 'float64 float64 float64 float64 float64 float64 float64 float64 float64 float64 float64 float64 complex128 complex128 float64 float64 float64 complex128',
    'complex64': 'complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex64 complex128 complex64 complex128 complex64 complex64 complex64 complex64',
    'complex128': 'complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128 complex128',
    'True': 'float32 float32 float32 float32 float32 float32 float32 float64 float64 float16 float32 float64 complex64 complex128 - - - -',
    '2': 'float64* float32 float32 float32 float32 float32 float32 float64 float64 float16 float32 float64 complex64 complex128 - - - -',
    '1.5': 'float64* float64* float64* float64* float64* float64* float64* float64* float64* float16 float32 float64 complex64 complex128 - - - -',
    '(1+2j)': 'complex128* complex128* complex128* complex128* complex128* complex128* complex128* complex128* complex128* complex64 complex64 complex128 complex64 complex128 - - - -',
}


def _cases(table):
    """(left operand, right operand, JAX's dtype, weak) for every pair the table holds."""
    for row, cells in table.items():
        left = SCALARS.get(row, row)
        for right, cell in zip(COLUMNS, cells.split(), strict=True):
            if cell != "-":
                yield left, right, np.dtype(cell.rstrip("*")), cell.endswith("*")


def _operand(kind, wrap=np.asarray):
    """An array [1, 2, 1] of dtype `kind` (through `wrap`), or the Python scalar itself."""
    return wrap(np.array([1, 2, 1], kind)) if isinstance(kind, str) else kind


def _type(x):
    return np.asarray(x).dtype, getattr(x, "weak_type", False) is True


@pytest.fixture
def fast_tier_only(monkeypatch):
    """jit's first calls on the fast tier, and no background compile (one per case)."""
    monkeypatch.setenv("XFORMS_TIERED", "1")
    monkeypatch.setenv("XFORMS_TIERED_WAIT", "0")       # (no compile to wait for)
    monkeypatch.setattr(tiered, "_submit", lambda exe: None)


@pytest.mark.parametrize("name, table", [("add", ADD), ("true_divide", TRUE_DIVIDE)])
def test_xnp_functions_promote_as_jax(name, table, fast_tier_only):
    fn = getattr(xnp, name)
    bad = []
    for a, b, dtype, weak in _cases(table):
        x, y = _operand(a), _operand(b)
        for how, got in (("eager", fn(x, y)), ("jit", xf.jit(lambda u, v: fn(u, v))(x, y))):
            if _type(got) != (dtype, weak):
                bad.append(f"{name}({a!r}, {b!r}) [{how}]: {_type(got)}, jax {dtype}{'*' * weak}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("op, table", [(lambda u, v: u + v, ADD),
                                       (lambda u, v: u / v, TRUE_DIVIDE)])
def test_eager_array_operators_promote_as_jax(op, table):
    # the operators of xforms Arrays (eager results), as those of jax.Arrays; a plain
    # NumPy operand on either side (NumPy defers to the Array's reflected operator)
    bad = []
    for a, b, dtype, weak in _cases(table):
        for x, y in ((_operand(a, xnp.asarray), _operand(b, xnp.asarray)),
                     (_operand(a, xnp.asarray), _operand(b)),
                     (_operand(a), _operand(b, xnp.asarray))):
            if type(x) is Array or type(y) is Array:    # (else NumPy's, not ours)
                got = op(x, y)
                if _type(got)[0] != dtype:
                    bad.append(f"{a!r} op {b!r} ({type(x).__name__}, {type(y).__name__}): "
                               f"{_type(got)}, jax {dtype}")
    assert not bad, "\n".join(bad)


def test_compiled_tier_promotes_as_jax():
    # one compile for several pairs of the ADD table (values checked too)
    f = xf.jit(lambda a, b, c, d, e: (a + b, c + d, e + 1.5, xnp.add(b, d), b / c),
               tiered=False)
    args = [np.array([1, 2], dt) for dt in ("float32", "int32", "uint8", "int8", "int16")]
    outs = f(*args)
    want = [(np.float32, False), (np.int16, False), (np.float64, True), (np.int32, False),
            (np.float32, False)]     # ADD / TRUE_DIVIDE's cells
    assert [_type(o) for o in outs] == [(np.dtype(d), w) for d, w in want]
    np.testing.assert_array_equal(outs[2], [2.5, 3.5])


def test_operators_keep_numpy_where_it_agrees_and_wrap_python_ints():
    x = xnp.asarray(np.array([1.0, 2.0]))
    assert (x + np.ones(2)).dtype == np.float64 and type(x + x) is type(x)
    assert (x * 2.0).dtype == np.float64
    np.testing.assert_array_equal(x == None, [False, False])        # noqa: E711 (NumPy's)
    u8 = xnp.asarray(np.array([1, 200], np.uint8))
    # NumPy refuses a Python int outside uint8; JAX's int64 literal wraps: 201 -> 45, 144
    np.testing.assert_array_equal(u8 + 300, np.array([45, 244], np.uint8))
    assert (u8 + 300).dtype == np.uint8
    i8 = xnp.asarray(np.array([1, -2], np.int8))
    assert (i8 ^ np.array([3, 3], np.uint8)).dtype == np.int16       # JAX: int16
    assert (i8 << np.array([1, 1], np.int32)).dtype == np.int32
    f32 = xnp.asarray(np.ones(2, np.float32))
    assert (f32 @ np.ones(2, np.int32)).dtype == np.float32            # JAX: float32
    assert (np.ones((2, 2), np.int64) @ f32).dtype == np.float32


@pytest.mark.parametrize("tier", ["fast", "compiled"])
def test_jit_outputs_keep_weak_types(tier, request):
    # JAX: jit(lambda t: t + 1)(0) is a weakly typed int64 Array, so adding an int32 array
    # gives int32; jit(lambda t: t * 2.0)(1.0) + float32 array is float32 (jax 0.10.2)
    if tier == "fast":
        request.getfixturevalue("fast_tier_only")
    i32, f32 = np.ones(2, np.int32), np.ones(2, np.float32)
    inc, dbl = xf.jit(lambda t: t + 1), xf.jit(lambda t: t * 2.0)
    for _ in range(2):                        # the general path, then the fast call path
        t, s = inc(0), dbl(1.0)
        assert (t.dtype, t.weak_type, s.dtype, s.weak_type) == (np.int64, True, np.float64, True)
        assert int(t) == 1 and float(s) == 2.0
        assert (t + i32).dtype == np.int32 and (i32 + t).dtype == np.int32
        assert xnp.add(t, i32).dtype == np.int32 and (s * f32).dtype == np.float32
    # strong inputs give strong outputs; a weak output of a many-output function too
    assert not xf.jit(lambda t: t + 1)(np.int64(0)).weak_type
    a, b = xf.jit(lambda t, w: (t + 1, w * 2))(0, np.ones(3))
    assert a.weak_type and not b.weak_type


def test_weak_scalars_from_asarray_and_reductions_promote_as_jax():
    # jax 0.10.2: jnp.asarray(3) and asarray(3.0) are weak; sum(float32 array) is a strong
    # float32; sum(3.0) a strong float64
    i32, f16 = np.ones(2, np.int32), np.ones(2, np.float16)
    assert (xnp.asarray(3) + i32).dtype == np.int32
    assert (xnp.asarray(3.0) + np.ones(2, np.float32)).dtype == np.float32
    assert (xnp.asarray(1j) + np.ones(2, np.float32)).dtype == np.complex64
    s = xnp.sum(np.ones(3, np.float32))
    assert s.dtype == np.float32 and not s.weak_type and (s + f16).dtype == np.float32
    assert not xnp.sum(3.0).weak_type and (xnp.sum(3.0) + np.ones(2, np.float32)).dtype == np.float64


def test_int_array_and_python_float_is_weak_float64():
    # jax: int8 array + 1.5 is a weak float64, so a later float32 operand wins
    x = xnp.add(np.ones(2, np.int8), 1.5)
    assert x.dtype == np.float64 and x.weak_type
    assert xnp.add(x, np.ones(2, np.float32)).dtype == np.float32
    assert (xnp.true_divide(np.ones(2, bool), 2) + np.ones(2, np.float32)).dtype == np.float32


# jax.eval_shape(jnp.<name>, a, b) with jax_enable_x64 (jax 0.10.2), the array operands of
# shape (3,) ('*': weakly typed).  Whether a composite's result is weak follows how jnp
# builds it: one primitive (nextafter, conv) keeps the promoted operands' weak type; a
# constant made by lax._const beside an array is strong and so is the result (hypot,
# logaddexp2, heaviside of an array x1, gcd); an inexact base to an integer power is
# lax.pow's mixed-dtype form (weak only if both are); jnp.array([...]) is strong (cross).
COMPOSITES = [
    ('hypot', 'int8', 1.5, 'float64'),
    ('hypot', 'uint64', 'int8', 'float64'),
    ('nextafter', 'int16', 1.5, 'float64*'),
    ('nextafter', 'bool', 2, 'float64*'),
    ('logaddexp2', 'uint8', 1.5, 'float64'),
    ('logaddexp2', 'int32', 'uint64', 'float64'),
    ('heaviside', 1.5, 'int8', 'float64*'),
    ('heaviside', 'bool', 2, 'float64'),
    ('power', 1.5, 'int16', 'float64'),
    ('power', (1+2j), 'uint8', 'complex128'),
    ('power', 2, 'bool', 'int64'),
    ('power', 2, 'int64', 'int64'),
    ('gcd', 'bool', 2, 'int64'),
    ('lcm', 2, 'bool', 'int64'),
    ('remainder', 'bool', 2, 'int64*'),
    ('fmod', 'bool', 2, 'int64*'),
    ('right_shift', 2, 'bool', 'int64*'),
    ('copysign', 1.5, 'float64', 'float64'),
    ('convolve', 'int8', 'uint64', 'float64*'),
    ('correlate', 'uint64', 'int16', 'float64*'),
    ('polydiv', 'int32', 'uint64', 'float64 float64*'),
    ('polymul', 'uint64', 'int64', 'float64*'),
    ('cross', 'int8', 'uint64', 'float64'),
    ('divmod', 'bool', 2, 'int64* int64*'),
]


def _types(out):
    return " ".join(f"{_type(o)[0].name}{'*' * _type(o)[1]}"
                    for o in (out if isinstance(out, tuple) else (out,)))


def test_composite_functions_weak_types_as_jax(fast_tier_only):
    bad = []
    for name, a, b, want in COMPOSITES:
        fn = getattr(xnp, name)
        x, y = _operand(a), _operand(b)
        for how, f in (("eager", fn), ("jit", xf.jit(lambda u, v, fn=fn: fn(u, v)))):
            got = _types(f(x, y))
            if got != want:
                bad.append(f"{name}({a!r}, {b!r}) [{how}]: {got}, jax {want}")
    assert not bad, "\n".join(bad)


def test_composite_weak_type_shows_against_a_narrower_dtype():
    # jax 0.10.2: hypot(int8 array, 1.5) is a strong float64, so adding float32 stays
    # float64; nextafter(int16 array, 1.5) is weak, so float32 wins
    f32 = np.ones(3, np.float32)
    i8, i16 = np.array([3, 0, -1], np.int8), np.array([1, 2, 3], np.int16)
    assert (xnp.hypot(i8, 1.5) + f32).dtype == np.float64
    assert (xnp.nextafter(i16, 1.5) + f32).dtype == np.float32
    np.testing.assert_allclose(xnp.hypot(i8, 1.5), np.hypot(i8.astype(float), 1.5))
    out = xf.jit(lambda u: xnp.nextafter(i16, u))(1.5)
    assert out.weak_type and (out + f32).dtype == np.float32


@pytest.mark.parametrize("op", ["lshift", "rshift", "left_shift", "right_shift"])
def test_bool_shifts_are_int32_as_jax(op, fast_tier_only):
    # jax 0.10.2: [T, F, T] << [T, T, T] is int32 [2, 0, 2], >> gives [0, 0, 0] (eagerly
    # and under jit); NumPy's operator gives int8, the shift primitives refuse bools
    fn = {"lshift": lambda u, v: u << v, "rshift": lambda u, v: u >> v,
          "left_shift": xnp.left_shift, "right_shift": xnp.right_shift}[op]
    want = [2, 0, 2] if "l" in op[:1] else [0, 0, 0]
    b = np.array([True, False, True])
    for x, y in ((xnp.asarray(b), xnp.asarray(np.ones(3, bool))), (xnp.asarray(b), True)):
        for got in (fn(x, y), xf.jit(fn)(x, y), xf.jit(fn, tiered=False)(x, y)):
            assert got.dtype == np.int32 and not got.weak_type
            np.testing.assert_array_equal(got, want)


def test_operator_dtype_probe_stages_nothing_into_a_trace():
    # the eager operators decide once per dtype pair whether NumPy's operator agrees with
    # JAX; when the first such use happens while tracing, the probe must not be recorded
    from xforms.core import staging
    from xforms.core.avals import ShapedArray
    from xforms.numpy.arrays import methods

    def f(t):
        methods._operator_plan("__add__", np.ndarray.__add__, xnp.add, np.dtype(np.float32),
                               np.dtype(np.int16))
        return [t]
    closed, _ = staging.trace_to_jaxpr(f, [ShapedArray((), np.float64)])
    assert closed.jaxpr.eqns == []


def test_weak_arrays_keep_weak_type_through_indexing_and_lists():
    # jax 0.10.2: a slice of a weak array is weak; jnp.array([t, t]) of weak t is strong
    w = xnp.add(np.ones(3, np.int8), 1.5)
    assert w.weak_type and w[1:].weak_type and w[None, :].weak_type and w[0].weak_type
    both = xf.jit(lambda t: (xnp.asarray([t, t]), xnp.stack([t, t])))(1.5)
    assert [o.weak_type for o in both] == [False, True]


def test_mixed_dtype_operators_cast_then_use_numpy():
    # f32 + i32 is float32, int8 < uint64 compares in float64, bool + 2 is a weak int64,
    # i32 / i32 float32 (jax 0.10.2): computed by NumPy's operator on operands cast to the
    # dtype JAX computes in, without the xnp function (the plan says which it is)
    from xforms.numpy.arrays import methods
    f32 = xnp.asarray(np.array([1.5, 2.0, -3.0], np.float32))
    i32, u64 = np.array([2, -3, 4], np.int32), np.array([1, 2, 2**63], np.uint64)
    i8, b = xnp.asarray(np.array([1, 2, 3], np.int8)), xnp.asarray(np.array([True, False, True]))
    cases = [(f32 + i32, np.float32, False, [3.5, -1.0, 1.0]),
             (i8 < u64, np.bool_, None, [False, False, True]),
             (b + 2, np.int64, True, [3, 2, 3]),
             (xnp.asarray(i32) / i32, np.float32, False, [1.0, 1.0, 1.0]),
             (i32 - f32, np.float32, False, [0.5, -5.0, 7.0]),
             (f32 * np.int32(2), np.float32, False, [3.0, 4.0, -6.0])]
    for got, dtype, weak, values in cases:
        assert type(got) is Array and got.dtype == dtype
        assert weak is None or got.weak_type is weak
        np.testing.assert_array_equal(got, values)
    plan = methods._operator_plan("__add__", np.ndarray.__add__, xnp.add, np.dtype(np.float32),
                                  np.dtype(np.int32))
    assert plan == (np.dtype(np.float32), False)


def test_float16_programs_keep_weak_outputs_compiled():
    # jax 0.10.2: jit(lambda x, t: (x * 2, lax._convert_element_type(t, float16,
    # weak_type=True)))(float16 array, 1.0) gives a strong float16 array and a weak float16;
    # the compiled tier computes float16 programs in float32 and rounds the outputs
    from xforms.core.engine_prims import convert_element_type
    f = xf.jit(lambda x, t: (x * 2, convert_element_type(t, np.float16, True)), tiered=False)
    for _ in range(2):                        # the general path, then the fast call path
        a, b = f(np.ones(3, np.float16), 1.0)
        assert (a.dtype, a.weak_type, b.dtype, b.weak_type) == (np.float16, False,
                                                                np.float16, True)


def test_weak_array_operators_evaluate_inside_a_trace():
    # two concrete operands give a concrete result even while a trace is current (as
    # NumPy's operator does for strong ones); staged, the simplifier's own comparison of a
    # weak literal with 0 became a traced bool (truncnorm's gradient under jit raised)
    from xforms.core import staging
    from xforms.core.avals import ShapedArray
    w = xnp.add(np.ones(3, np.int8), 1.5)                     # a weak float64
    seen = []

    def f(t):
        seen.append(w + np.ones(3, np.float32))
        return [t]
    staging.trace_to_jaxpr(f, [ShapedArray((), np.float64)])
    assert type(seen[0]) is Array and seen[0].dtype == np.float32
    from xforms.scipy.stats import truncnorm
    g = xf.jit(xf.grad(lambda x: truncnorm.logcdf(x, -1.0, 1.0, 0.0, 1.0).sum()))
    assert float(g(-2.0)) == 0.0
