"""xforms.numpy take, basic/advanced/boolean indexing and `.at[]` updates against NumPy, eagerly
 and staged (see numpy_check.both)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core import trace as core
from numpy_check import I64, X3, both


# ---- take and indexing ----------------------------------------------------------------------
def test_take():
    idx = np.array([2, 0, -1])
    both(lambda v: xnp.take(v, idx), X3, expected=np.take(X3, idx))
    for axis in [0, 1, 2, -1]:
        i = np.array([[1, 0], [0, 1]])
        both(lambda v: xnp.take(v, i, axis=axis), X3, expected=np.take(X3, i, axis=axis))
    both(lambda v, i: xnp.take(v, i, axis=1), X3, np.array([2, 1]),
         expected=np.take(X3, [2, 1], axis=1))


A = np.arange(60.0).reshape(3, 4, 5)
BASIC_INDICES = [
    0, -1, (1, 2), (1, 2, 3), (-1, -2, -3), slice(None), slice(1, None), slice(None, -1),
    slice(None, None, 2), slice(None, None, -1), slice(-1, 0, -2), slice(3, 1, -1),
    slice(5, 10), slice(2, 1), (slice(None), 1), (Ellipsis, 0), (0, Ellipsis),
    (Ellipsis, slice(None, None, -2)), (None,), (None, 0), (0, None, slice(1, 3)),
    (Ellipsis, None), (slice(None), None, 2, None), (1, slice(None, None, -1), -1),
    (slice(0, 3, 2), slice(None), slice(4, None, -3)), (), Ellipsis,
]


@pytest.mark.parametrize("idx", BASIC_INDICES, ids=repr)
def test_basic_indexing(idx):
    both(lambda v: v[idx], A, expected=A[idx], eager=False)
    both(lambda v: v.at[idx].get(), A, expected=A[idx])


I1 = np.array([2, 0, -1])
ADVANCED_INDICES = [
    I1, (I1,), (slice(None), np.array([1, 3])), (Ellipsis, np.array([4, 0, 0])),
    (np.array([0, 2]), np.array([1, 3])), (np.array([[0], [2]]), np.array([1, 3])),
    (np.array([0, 2]), slice(None), np.array([1, 3])), (1, np.array([0, 3])),
    (np.array([0, 2]), 1), (slice(None), np.array([0, 3]), np.array([1, 4])),
    (slice(1, None), np.array([[0, 3]])), ([0, 2],), (slice(None), [1, 1, 0]),
    (np.array([0, 1]), slice(None, None, -1), 2), (0, slice(None), np.array([1, 2])),
]


@pytest.mark.parametrize("idx", ADVANCED_INDICES, ids=repr)
def test_integer_array_indexing_concrete(idx):
    both(lambda v: v[idx], A, expected=A[idx])


@pytest.mark.parametrize("idx", ADVANCED_INDICES, ids=repr)
def test_integer_array_indexing_traced(idx):
    """The index arrays are traced arguments of the function."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    arrays = [np.asarray(p) for p in parts if isinstance(p, (np.ndarray, list))]

    def f(v, *ins):
        it = iter(ins)
        full = tuple(next(it) if isinstance(p, (np.ndarray, list)) else p for p in parts)
        return v[full]
    both(f, A, *arrays, expected=A[idx if not isinstance(idx, list) else np.asarray(idx)])


def test_boolean_mask_indexing_concrete():
    m = A > 30
    both(lambda v: v[m], A, expected=A[m])
    m1 = np.array([True, False, True])
    both(lambda v: v[m1], A, expected=A[m1])
    both(lambda v: v[:, np.array([False, True, True, False])], A,
         expected=A[:, np.array([False, True, True, False])])
    # a mask computed from concrete data inside the function is concrete too
    both(lambda v: v[xnp.asarray(m)], A, expected=A[m])
    eager = xnp.asarray(A)[xnp.asarray(A) > 30]
    np.testing.assert_array_equal(eager, A[m])


def test_out_of_bounds_reads_clamp():
    # JAX (0.10.2, checked here) clamps: A[3] and A[np.array([5])] are A[2] and A[[2]]
    # (an eager Array's v[3] stays NumPy's IndexError: iterating an Array stops on it)
    both(lambda v: v[3], A, expected=A[2], eager=False)
    both(lambda v: v[np.array([5, -4])], A, expected=A[[2, 0]])
    np.testing.assert_array_equal(xnp.asarray(A)[np.array([7])], A[[2]])
    assert [r.shape for r in xnp.asarray(A)] == [(4, 5)] * 3


def test_index_errors():
    with pytest.raises(IndexError):
        xf.make_jaxpr(lambda v: v[0, 0, 0, 0])(A)
    with pytest.raises(IndexError):
        xf.make_jaxpr(lambda v: v[..., ...])(A)
    # jax 0.10.2: TypeError "Indexer must have integer or boolean type, got indexer with type
    # float64" (NumPy's class, IndexError, until session 38)
    with pytest.raises(TypeError, match="Indexer must have integer"):
        xf.make_jaxpr(lambda v: v[np.array([0.5])])(A)
    with pytest.raises(xf.ConcretizationError, match="mask"):
        xf.make_jaxpr(lambda v: v[v > 0])(A)


def test_traced_integer_scalar_index():
    both(lambda v, i: v[i], A, 1, expected=A[1])
    both(lambda v, i: v[i], A, -1, expected=A[-1])
    both(lambda v, i: v[:, i], A, np.int64(2), expected=A[:, 2])
    both(lambda v, i, j: v[i, 1:3, j], A, 2, 0, expected=A[2, 1:3, 0])


UPDATE_INDICES = [0, (1, 2), (1, 2, 3), slice(1, None), (slice(None), 1), (Ellipsis, 0),
                  (Ellipsis, slice(None, None, -2)), (slice(3, 0, -2), None),
                  np.array([2, 0]), (slice(None), np.array([1, 3])),
                  (np.array([0, 2]), np.array([1, 3])), A > 40, np.array([1, 1, 0]),
                  (np.array([0, 0]), 1, np.array([2, 2]))]


def _np_update(x, idx, op, v):
    out = np.array(x, copy=True)
    if op == "set":
        out[idx] = v
    else:
        ufunc = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[op]
        if isinstance(idx, np.ndarray) and idx.dtype == bool:
            idx = np.nonzero(idx)
        ufunc.at(out, idx, v)
    return out


@pytest.mark.parametrize("op", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("idx", UPDATE_INDICES, ids=repr)
def test_at_updates(op, idx):
    dup = isinstance(idx, tuple) and any(isinstance(i, np.ndarray) and len(set(i.tolist()))
                                         < len(i) for i in idx) or (
        isinstance(idx, np.ndarray) and idx.dtype != bool and len(set(idx.tolist())) < len(idx))
    if dup and op == "set":
        pytest.skip("duplicate indices with set: which value wins is unspecified (as in JAX)")
    shape = np.shape(A[idx])
    v = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) * 7.0
    want = _np_update(A, idx, op, v)
    both(lambda x, u: getattr(x.at[idx], op)(u), A, v, expected=want)
    # scalar update values broadcast
    both(lambda x: getattr(x.at[idx], op)(2.0), A, expected=_np_update(A, idx, op, 2.0))


TRACED_UPDATE_INDICES = [i for i in UPDATE_INDICES if not (isinstance(i, np.ndarray) and
                                                           i.dtype == bool)]


@pytest.mark.parametrize("op", ["set", "add", "mul", "min", "max", "get"])
@pytest.mark.parametrize("idx", [i for i in TRACED_UPDATE_INDICES if any(
    isinstance(p, np.ndarray) for p in (i if isinstance(i, tuple) else (i,)))], ids=repr)
def test_at_updates_with_traced_index_arrays(op, idx):
    parts = idx if isinstance(idx, tuple) else (idx,)
    arrays = [p for p in parts if isinstance(p, np.ndarray)]
    shape = np.shape(A[idx])
    v = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) * 7.0

    def f(x, u, *ins):
        it = iter(ins)
        full = tuple(next(it) if isinstance(p, np.ndarray) else p for p in parts)
        ref = x.at[full if isinstance(idx, tuple) else full[0]]
        return ref.get() if op == "get" else getattr(ref, op)(u)
    want = A[idx] if op == "get" else _np_update(A, idx, op, v)
    if op == "set" and any(len(set(a.tolist())) < len(a) for a in arrays):
        pytest.skip("duplicate indices with set: which value wins is unspecified (as in JAX)")
    both(f, A, v, *arrays, expected=want)


def test_at_updates_traced_indices_and_dtypes():
    i = np.array([2, 0])
    both(lambda x, j, u: x.at[j].add(u), A, i, np.ones((2, 4, 5)),
         expected=_np_update(A, i, "add", 1.0))
    both(lambda x, j: x.at[j, 1].set(-1.0), A, 2, expected=_np_update(A, (2, 1), "set", -1.0))
    x32 = A.astype(np.float32)
    out = both(lambda x: x.at[0].set(5.0), x32, expected=_np_update(x32, 0, "set", 5.0))
    assert out.dtype == np.float32
    both(lambda x: x.at[1].add(2), I64, expected=_np_update(I64, 1, "add", 2))
    eager = xnp.zeros(4).at[1:3].set(1.0).at[0].add(2.0)
    assert isinstance(eager, core.Array)
    np.testing.assert_array_equal(eager, [2.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(xnp.zeros(3).at[1].get(), 0.0)
    with pytest.raises((TypeError, ValueError)):
        xnp.zeros((2, 3)).at[0].set(np.ones(4))


@pytest.mark.parametrize("op", ["mul", "min", "max", "add"])
def test_at_updates_with_duplicate_traced_indices(op):
    x = np.array([[2.0, -1.0, 3.0], [0.5, 4.0, -2.0]])
    i = np.array([1, 0, 1, 1])
    u = np.array([[3.0, -2.0, 0.5], [2.0, 2.0, 2.0], [-1.0, 5.0, -3.0], [0.5, 1.0, 7.0]])
    both(lambda a, j, w: getattr(a.at[j], op)(w), x, i, u, expected=_np_update(x, i, op, u))
    both(lambda a, j: getattr(a.at[j, 2], op)(3.0), I64, np.array([0, 0, 1]),
         expected=_np_update(I64, (np.array([0, 0, 1]), 2), op, 3))


def test_an_element_of_an_eager_array_is_a_0d_array_with_jax_operators():
    # JAX 0.10.2: jnp.array([-4., 3.])[0] % 2.0 -> -0.0 (NumPy's scalar gives +0.0);
    # jnp.array([7, 0], int32): i[0] // i[1] -> -2 (NumPy's scalar: 0 and a warning)
    a = xnp.array([-4.0, 3.0])
    i = xnp.array([7, 0], dtype=xnp.int32)
    e = a[0]
    assert type(e) is core.Array and e.shape == () and e.dtype == a.dtype
    assert not np.shares_memory(e, a)           # its own buffer: `a` may be collected
    assert np.signbit(e % 2.0)
    assert int(i[0] // i[1]) == -2 and (i[0] // i[1]).dtype == np.int32
    assert [type(v) for v in a] == [core.Array, core.Array]   # iteration, as in JAX
    assert float(a[1]) == 3.0 and f"{a[1]:.1f}" == "3.0" and list(range(i[0]))[-1] == 6
