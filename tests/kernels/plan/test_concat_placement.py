"""A concatenate's operands computed in their slot of its result (xforms/kernels/plan/
placement.py): a fused loop or a matrix product writes a strided view of the result, and
the concatenate copies nothing.  Values against NumPy; the copies are counted in the
generated CPU source."""
import os
import sys

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.cpu import backend as cpu

from source_dump import cpu_source

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
from benchmarks.workloads import cliffs      # noqa: E402

rng = np.random.default_rng(11)
X, A = rng.standard_normal((16, 12)), rng.standard_normal((12, 10))
Y, W = rng.standard_normal((16, 6)), rng.standard_normal((5, 24))
Q = rng.standard_normal((2, 3, 16, 8))

CASES = {
    # a product and a loop side by side; the result read by a product (no loop reads it in
    # place), so it is stored
    "product and loop, axis 1": (
        lambda x, a, y, w: xnp.concatenate([x @ a, xnp.sin(y)], axis=1) @ w[:, :16].T,
        lambda x, a, y, w: np.concatenate([x @ a, np.sin(y)], axis=1) @ w[:, :16].T, (X, A, Y, W)),
    # operands reshaped on their way in, joined along the leading axis
    "reshaped operands, axis 0": (
        lambda x, a, y, w: xnp.concatenate([(x @ a).reshape(8, 20), xnp.exp(y[:4]).reshape(
            2, 12)[:, :10].reshape(1, 20)], axis=0) @ w[:, :20].T,
        lambda x, a, y, w: np.concatenate([(x @ a).reshape(8, 20), np.exp(y[:4]).reshape(
            2, 12)[:, :10].reshape(1, 20)], axis=0) @ w[:, :20].T, (X, A, Y, W)),
    # batched products (attention's heads) joined along the last axis, then a product
    "batched products, last axis": (
        lambda q, w: xnp.concatenate([xnp.einsum("bhqd,bhkd->bhqk", q, q),
                                      xnp.tanh(q)], axis=3).reshape(6, -1) @ xnp.ones(24 * 16),
        lambda q, w: np.concatenate([np.einsum("bhqd,bhkd->bhqk", q, q),
                                     np.tanh(q)], axis=3).reshape(6, -1) @ np.ones(24 * 16),
        (Q, W)),
}


def _copies(src):
    return src.count("copy_into(")


@pytest.mark.parametrize("name", sorted(CASES))
def test_operands_are_written_in_their_slots(name):
    f, ref, args = CASES[name]
    np.testing.assert_allclose(xf.jit(f, tiered=False)(*args), ref(*args), rtol=1e-12,
                               atol=1e-12)
    src = cpu_source(f, args)
    assert "strided_view(" in src and _copies(src) == 0, src


def test_a_loop_storing_more_than_its_slot_keeps_its_buffer():
    """sin(y) is joined, cos(y) returned, both stored by one loop: that loop writes its own
    buffers and the join copies sin(y) (stores through a runtime-strided view beside other
    stores ran slower: the LSTM gradient's reverse sweep); the product still writes its
    slot."""
    f = lambda x, a, y, w: (xnp.concatenate([x @ a, xnp.sin(y)], axis=1) @ w[:, :16].T,  # noqa
                            xnp.cos(y))
    g, c = xf.jit(f, tiered=False)(X, A, Y, W)
    np.testing.assert_allclose(g, np.concatenate([X @ A, np.sin(Y)], axis=1) @ W[:, :16].T,
                               rtol=1e-12)
    np.testing.assert_allclose(c, np.cos(Y), rtol=1e-12)
    src = cpu_source(f, (X, A, Y, W))
    assert _copies(src) == 1 and src.count("strided_view(") == 1, src


def test_an_operand_read_elsewhere_is_still_copied():
    """x @ a is also returned: it keeps its own buffer and the concatenate copies it."""
    f = lambda x, a, y, w: (x @ a, xnp.concatenate([x @ a, y], axis=1) @ w[:, :16].T)  # noqa: E731
    p, g = xf.jit(f, tiered=False)(X, A, Y, W)
    np.testing.assert_allclose(g, np.concatenate([X @ A, Y], axis=1) @ W[:, :16].T, rtol=1e-12)
    np.testing.assert_allclose(p, X @ A, rtol=1e-12)
    assert _copies(cpu_source(f, (X, A, Y, W))) >= 1


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_transformer_block_gradient_joins_dq_dk_dv_without_copies(dtype):
    """The gradient of `q, k, v = split(h @ wqkv)` joins dq, dk, dv: each is written in its
    columns of the join by the loop that computes it (it copied all three before)."""
    ns = cliffs._namespace("xforms")
    P, x = cliffs.block_data(0, batch=2, seq=16, width=32, dtype=dtype)
    f = cliffs._PROGRAMS["block value_and_grad"](ns)
    got, want = xf.jit(f, tiered=False)(P, x), xf.jit(f, backend="interpret")(P, x)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)
    assert _copies(cpu_source(f, (P, x))) == 0


def test_two_products_transposed_in_one_loop_write_their_slots():
    """Two attention-style products, each read transposed, whose transposes fused into one
    loop of copies (plan/products.py `write_transposed`): each product writes its transpose
    by BLAS, straight into its slot of the join; no loop, no copy is left."""
    a = rng.standard_normal((2, 3, 5, 6))
    v, u = rng.standard_normal((2, 6, 3, 4)), rng.standard_normal((2, 6, 3, 4))
    w = rng.standard_normal((24, 3))

    def f(a, v, u, w):
        o = [xnp.einsum("bhqk,bkhd->bqhd", a, t) for t in (v, u)]
        return xnp.concatenate(o, axis=3).reshape(2, 5, 24) @ w
    want = np.concatenate([np.einsum("bhqk,bkhd->bqhd", a, t) for t in (v, u)],
                          axis=3).reshape(2, 5, 24) @ w
    np.testing.assert_allclose(xf.jit(f, tiered=False)(a, v, u, w), want, rtol=1e-12)
    closed = xf.jit(f)._trace((a, v, u, w), {})[0]
    plan = cpu._prepare(closed, {}, symbolic=False).plan
    assert not [st for st in plan.steps if st.kind == "loop"], plan.dump()
    assert sum("out_permutation" in st.eqn.params for st in plan.steps if st.kind == "op") == 2
    assert _copies(cpu_source(f, (a, v, u, w))) == 0
