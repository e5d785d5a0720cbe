"""Eager Arrays behave as jax.Arrays where NumPy's would change in place or return a NumPy
scalar (values: JAX 0.10.2, recorded; CI has no JAX)."""
import numpy as np
import pytest

import xforms.numpy as xnp
from xforms.core.trace import Array


def test_inplace_operators_rebind_and_leave_other_names_alone():
    a = xnp.array([1.0, 2.0])
    b = a
    a += 1                      # JAX: a -> [2., 3.], b stays [1., 2.]
    assert np.array_equal(b, [1.0, 2.0]) and np.array_equal(a, [2.0, 3.0])
    i = xnp.array([1, 2])
    i *= 2.5                    # JAX: int array *= 2.5 -> [2.5, 5.] (NumPy: a casting error)
    assert i.dtype.kind == "f" and np.array_equal(i, [2.5, 5.0])
    m = xnp.ones((2, 2))
    m @= xnp.eye(2) * 2
    assert type(m) is Array and np.array_equal(m, 2 * np.ones((2, 2)))


def test_item_assignment_is_refused_with_the_at_advice():
    a = xnp.arange(3.0)
    with pytest.raises(TypeError, match=r"immutable.*x\.at\[idx\]\.set"):
        a[0] = 5.0
    assert np.array_equal(a, [0.0, 1.0, 2.0])
    with pytest.raises(AttributeError, match="immutable"):
        a.fill(0.0)


def test_sort_returns_a_sorted_copy():
    a = xnp.array([3.0, 1.0, 2.0])
    s = a.sort()                # JAX: Array([1., 2., 3.]); a unchanged
    assert np.array_equal(s, [1.0, 2.0, 3.0]) and np.array_equal(a, [3.0, 1.0, 2.0])
    assert np.array_equal(a.sort(descending=True), [3.0, 2.0, 1.0])


def test_methods_give_arrays_not_numpy_scalars():
    a = xnp.array([3.0, -1.0, 2.0])
    for out in (a.argmax(), a.argmin(), a.dot(a), a.take(1), a.searchsorted(2.5),
                xnp.eye(2).trace()):
        assert type(out) is Array and out.shape == ()
    assert int(a.argmax()) == 0 and int(a.argmin()) == 1 and float(a.dot(a)) == 14.0
    assert all(type(n) is Array for n in a.nonzero())
    assert np.isnan(a.take(7))  # JAX: a.take(7) -> nan (mode "fill")
    with pytest.raises(IndexError):
        np.take(a, 7)           # NumPy's function asks for mode="raise": NumPy's error


def test_numpy_functions_that_sort_or_assign_into_copies_work_on_arrays():
    # NumPy's np.sort/np.unique sort a copy in place, np.gradient assigns into empty_like(a):
    # on an Array those copies are plain arrays, and the results come back as Arrays
    a = xnp.array([3.0, 1.0, 2.0, 2.0])
    for got, want in ((np.sort(a), [1.0, 2.0, 2.0, 3.0]), (np.unique(a), [1.0, 2.0, 3.0]),
                      (np.gradient(a), [-2.0, -0.5, 0.5, 0.0]), (np.median(a), 2.0),
                      (np.partition(a, 1)[:2], [1.0, 2.0])):
        assert type(got) is Array and np.array_equal(got, want)
    assert [type(p) for p in np.split(a, 2)] == [Array, Array]
    assert np.array_equal(a, [3.0, 1.0, 2.0, 2.0])
