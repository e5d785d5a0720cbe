"""Matrix products written into their concatenate's slot on the direct LLVM path
(xforms/kernels/cpu/llvm/slots.py `product`, issue #35): the gradient of
`q, k, v = split(h @ w)` joins dq, dk and dv, products the plan places in their slots of the
join (plan/placement.py).  Each program against the Numba kernel of the same program, bit
for bit (the same BLAS and nest calls through the same leading dimensions), and against
JAX; and a check that the direct path takes it (`llvm.refusals(plan) == []`)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.cpu import backend, llvm
from test_llvm_loops import _both, _same
from test_llvm_products import _finite

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)


def _placed_products(f, *args):
    """The plan of `f` at `args`, checked to place a product's output in a slot."""
    plan = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"}).plan
    assert any(st.kind == "op" and st.eqn.prim.name == "dot_general"
               and st.eqn.outvars[0] in plan.placed for st in plan.steps), \
        "the plan should place a product in a concatenate's slot"
    return plan


def _check(f, jf, args, dt):
    assert llvm.refusals(_placed_products(f, *args)) == []
    fn, kernel = _both(f, *args)
    got = fn(*args)
    _same(got, kernel(*args))
    tol = 2e-4 if dt == np.float32 else 1e-11
    want = jf(*args)
    for g, w in zip(xf.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


# (m, k, n): by loops (< 512 multiply-adds), the nest, gemm (k past the nest's depth, odd
# sizes), one column, and the nest split over OpenMP's team (100 x 256 x 256)
SIZES = [(3, 4, 5), (16, 64, 48), (33, 17, 48), (7, 1100, 33), (9, 64, 1), (100, 256, 256)]
LAYOUTS = {"nn": (lambda x, a: x @ a, lambda m, k, n: ((m, k), (k, n))),
           "nt": (lambda x, a: x @ a.T, lambda m, k, n: ((m, k), (n, k))),
           "tn": (lambda x, a: x.T @ a, lambda m, k, n: ((k, m), (k, n))),
           "tt": (lambda x, a: x.T @ a.T, lambda m, k, n: ((k, m), (n, k)))}


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("m, k, n", SIZES)
def test_a_product_writes_its_rows_of_the_join(m, k, n, layout, dt):
    """`concatenate([x @ a, sin(y)], 1) @ w`: the product's rows land n + 3 apart (a
    join only loops read is read in place, never stored: hence the product after it)."""
    prod, shapes = LAYOUTS[layout]

    def f(x, a, y, w, np_=xnp):
        return np_.concatenate([prod(x, a), np_.sin(y)], axis=1) @ w
    rng = np.random.default_rng(m * k + n)
    xs, ys = shapes(m, k, n)
    args = (_finite(rng, xs, dt) * 0.1, _finite(rng, ys, dt) * 0.1,
            rng.standard_normal((m, 3)).astype(dt), rng.standard_normal((n + 3, 4)).astype(dt))
    _check(f, lambda *a: f(*a, np_=jax.numpy), args, dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("B, m, k, n", [(3, 16, 64, 48), (2, 7, 300, 33)])
def test_a_batch_of_products_writes_its_matrices_of_the_join(B, m, k, n, dt):
    """A batched product joined along its last axis: each matrix's rows in the join, the
    matrices a join's matrix apart."""
    def f(x, a, y, w, np_=xnp):
        return np_.concatenate([np_.sin(y), np_.einsum("bij,bjk->bik", x, a)], axis=2) @ w
    rng = np.random.default_rng(B + m)
    args = (_finite(rng, (B, m, k), dt), _finite(rng, (B, k, n), dt),
            rng.standard_normal((B, m, 5)).astype(dt), rng.standard_normal((5 + n, 4)).astype(dt))
    _check(f, lambda *a: f(*a, np_=jax.numpy), args, dt)


def test_attention_heads_written_transposed_into_the_join():
    """Products written transposed (`out_permutation`: a head's rows strided in the
    output) whose output is a view of the join: the rows 2 * heads * dim apart."""
    def f(a, v, u, w, np_=xnp):
        o = [np_.einsum("bhqk,bkhd->bqhd", a, t) for t in (v, u)]
        return np_.concatenate(o, axis=3).reshape(2, 16, 48) @ w
    rng = np.random.default_rng(3)
    args = (_finite(rng, (2, 3, 16, 16), np.float64), _finite(rng, (2, 16, 3, 8), np.float64),
            _finite(rng, (2, 16, 3, 8), np.float64), _finite(rng, (48, 5), np.float64))
    _check(f, lambda *a: f(*a, np_=jax.numpy), args, np.float64)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_transformer_block_value_and_grad_takes_the_direct_path(dt, monkeypatch):
    """benchmarks/workloads/cliffs.py's block: its value_and_grad's dq and dk (products
    written transposed into the join of dq, dk, dv) were the direct path's only refusals
    (session 25).  Both paths' executables, bit for bit, and JAX's values."""
    from benchmarks.workloads import cliffs
    P, x = cliffs.block_data(0, batch=2, seq=16, width=32, dtype=np.dtype(dt).name)
    leaves, tree = jax.tree_util.tree_flatten(P)

    def flat(ns):                   # (the executables take flat arguments)
        g = cliffs._PROGRAMS["block value_and_grad"](ns)
        return lambda *a: g(jax.tree_util.tree_unflatten(tree, a[:-1]), a[-1])
    args = (*leaves, x)
    program = flat(cliffs._namespace("xforms"))
    assert llvm.refusals(_placed_products(program, *args)) == []
    with monkeypatch.context() as env:      # (a program of its own: executables are kept)
        env.setenv("XFORMS_LLVM_KERNELS", "0")
        numba = backend.compile_cpu(xf.make_jaxpr(program)(*args), {"name": "t"})
    ours = backend.compile_cpu(xf.make_jaxpr(program)(*args), {"name": "t"})
    assert (ours.compiler, numba.compiler) == ("llvm", "numba")
    got = ours(*args)
    _same(tuple(xf.tree_util.tree_leaves(got)), tuple(xf.tree_util.tree_leaves(numba(*args))))
    want = flat(cliffs._namespace("jax"))(*args)
    tol = 2e-4 if dt == np.float32 else 1e-11
    for g, w in zip(xf.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)
