"""int64/int32 values on the direct LLVM path (session 23): int scalar arguments, a
fori_loop of a traced trip count, integer carries and outputs, a counter read as a float,
against the Numba kernel of the same program bit for bit (tests/kernels/llvm/test_llvm_control.py's
`_both`)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import llvm

from test_llvm_control import _both, _taken
from test_llvm_loops import _same


def _counted(x, n):
    """A fori_loop of a traced bound: an array carry, an int carry, the counter as a float."""
    def body(i, c):
        h, k = c
        return xnp.sin(h) * 0.5 + i * 0.01, k + i * 2 - 1
    return lax.fori_loop(0, n, body, (x, 0 * n))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_fori_loop_of_a_traced_bound_matches_numba(dt):
    x = np.linspace(0.0, 1.0, 7).astype(dt)
    taken, plan = _taken(_counted, x, 5)
    assert taken, llvm.refusals(plan)
    ours, numba = _both(_counted, x, 5)
    for n in (0, -3, 1, 5, 37, np.int64(4)):
        got, want = ours(x, n), numba(x, n)
        _same(got[0], want[0])
        k = max(int(n), 0)
        assert got[1] == want[1] == k * k - 2 * k       # (sum of 2i - 1, i < n)


def test_jit_of_a_traced_bound_runs_on_the_direct_path():
    out = xf.jit(_counted)(np.ones(3), 10)
    assert int(out[1]) == sum(2 * i - 1 for i in range(10))
    assert llvm.may_take(xf.make_jaxpr(_counted)(np.ones(3), 10))


def test_a_float_trip_count_is_not_an_int_argument():
    """A float where the kernel reads an int: TypeError (the executable converts, as for
    Numba's dispatcher), not a silent truncation."""
    x = np.ones(3)
    ours, _ = _both(_counted, x, 5)
    with pytest.raises(TypeError):
        ours(x, 2.5)


def _switch(x, k):
    return lax.switch(k, [lambda x: xnp.sin(x), lambda x: x * 2.0,
                          lambda x: xnp.cos(x) + 1.0], x)


def test_switch_of_a_traced_index_matches_numba():
    """lax.switch: its index clamped in int32 arithmetic, then the cond's `switch`."""
    x = np.linspace(0.0, 1.0, 5)
    taken, plan = _taken(_switch, x, 1)
    assert taken, llvm.refusals(plan)
    ours, numba = _both(_switch, x, 1)
    for k in (-5, 0, 1, 2, 3, 99):
        _same(ours(x, k), numba(x, k))
    np.testing.assert_array_equal(ours(x, 7), np.cos(x) + 1.0)


def test_a_row_by_the_loop_counter_matches_numba():
    """`c[i]` in a fori_loop: a gather by a scalar int (the scan's counter carry)."""
    f = lambda x: lax.fori_loop(0, 3, lambda i, c: c[i] * c + 0.5, x)     # noqa: E731
    x = np.linspace(-1.0, 1.0, 120).reshape(3, 40)
    assert llvm.may_take(xf.make_jaxpr(f)(x))
    taken, plan = _taken(f, x)
    assert taken, llvm.refusals(plan)
    ours, numba = _both(f, x)
    _same(ours(x), numba(x))


def test_an_equation_without_outputs_is_no_integer_step():
    """A debug print has no outputs: `may_take` said so by raising IndexError, on the tiered
    compile thread, which died and left every later `wait_compiled` waiting."""
    def f(x):
        xf.debug.print("x = {}", x[0])
        return x * 2.0
    closed = xf.make_jaxpr(f)(np.ones(3))
    assert llvm.may_take(closed) in (True, False)


def test_integer_literals_are_spelled_as_integers():
    """`i.at[2].set(1)` on an int64 array stored the literal as a double's bits (`store i64
    0x3FF0000000000000`): LLVM refused the IR and Numba compiled the program instead."""
    import warnings
    i = np.array([5, -1, -4, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)     # ("did not compile ... Numba")
        got = xf.jit(lambda i: (i.at[2].set(1), i + 7))(i)
    np.testing.assert_array_equal(np.asarray(got[0]), [5, -1, 1, 0])
    np.testing.assert_array_equal(np.asarray(got[1]), i + 7)
