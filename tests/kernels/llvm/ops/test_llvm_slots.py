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
from xforms.kernels.cpu.llvm.ops.linalg import products, views
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
    _both_executables(flat(cliffs._namespace("xforms")), flat(cliffs._namespace("jax")),
                      (*leaves, x), dt, monkeypatch)


def _both_executables(program, jax_program, args, dt, monkeypatch):
    """`program`'s executables on both paths, bit for bit, and JAX's values."""
    assert llvm.refusals(backend._prepare(xf.make_jaxpr(program)(*args), {}).plan) == []
    with monkeypatch.context() as env:      # (a program of its own: executables are kept)
        env.setenv("XFORMS_LLVM_KERNELS", "0")
        numba = backend.compile_cpu(xf.make_jaxpr(program)(*args), {"name": "t"})
    ours = backend.compile_cpu(xf.make_jaxpr(program)(*args), {"name": "t"})
    assert (ours.compiler, numba.compiler) == ("llvm", "numba")
    got = ours(*args)
    _same(tuple(xf.tree_util.tree_leaves(got)), tuple(xf.tree_util.tree_leaves(numba(*args))))
    want = jax_program(*args)
    tol = 2e-4 if dt == np.float32 else 1e-11
    for g, w in zip(xf.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


# ---- operands the Numba kernel copies into a transposed layout ------------------------------
COPIED = {   # (x copied: free dims around the contracted one; y copied; both; batched)
    "ijk,jl->ikl": ((6, 40, 5), (40, 24)),
    "ij,kjl->ikl": ((12, 40), (3, 40, 8)),
    "ijk,ljm->iklm": ((4, 40, 3), (2, 40, 8)),
    "ibjm,bjk->bimk": ((3, 2, 40, 4), (2, 40, 16)),
}


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("spec", sorted(COPIED))
def test_products_of_copied_operands_match_numba(spec, dt):
    """A product whose operand is no matrix in any order of its axes (nor a batch of matrix
    views): copied into the Numba kernel's transposed layout (`products._copies`), then its
    calls on the copy."""
    def f(x, y, np_=xnp):
        return np_.tanh(np_.einsum(spec, x, y))
    rng = np.random.default_rng(len(spec))
    xs, ys = COPIED[spec]
    args = (_finite(rng, xs, dt), _finite(rng, ys, dt))
    plan = backend._prepare(xf.make_jaxpr(f)(*args), {"name": "t"}).plan
    assert any(st.kind == "op" and not views.takes(st.eqn)
               and products.accepts(st.eqn, "float", copied=True).perms != (None, None)
               for st in plan.steps), "the plan should copy an operand"
    assert llvm.refusals(plan) == []
    fn, kernel = _both(f, *args)
    _same(fn(*args), kernel(*args))
    tol = 1e-4 if dt == np.float32 else 1e-12        # (tanh's values: within [-1, 1])
    np.testing.assert_allclose(fn(*args), f(*args, np_=jax.numpy), rtol=tol, atol=tol)


def test_tryout_conv_net_gradient_takes_the_direct_path():
    """compile_time's tryout `conv` model (benchmarks/workloads/tryout_nets.py): its causal
    dot_product_attention's products of (B, T, 2, 1, D) operands, copied into transposed
    layouts, were its gradient's only refusals (35.8 CPU s cold on Numba, session 25).
    Against the interpreter and JAX, not the Numba kernel: the convolutions' gradients are
    its values within rounding, not its bits (llvm/ops/signal/convolutions.py), and its cold
    compile is the cost this removes; the products' bits are the tests above."""
    from benchmarks.workloads import tryout_nets
    net, (params, x) = tryout_nets.make_conv()
    leaves, tree = jax.tree_util.tree_flatten(params)

    def program(grad, mod, np_):
        g = grad(lambda p, x: net(p, x, mod, np_))
        return lambda *a: g(jax.tree_util.tree_unflatten(tree, a[:-1]), a[-1])
    args = (*leaves, x)
    closed = xf.make_jaxpr(program(xf.grad, xf, xnp))(*args)
    assert llvm.refusals(backend._prepare(closed, {}).plan) == []
    ours = backend.compile_cpu(closed, {"name": "t"})
    assert ours.compiler == "llvm"
    got = xf.tree_util.tree_leaves(ours(*args))
    # (dot_product_attention's softmax is float32's, as JAX's, whatever the dtype: a last
    # bit of the float64 logits moves the gradients ~1e-4 relative)
    for other in (xf.jit(program(xf.grad, xf, xnp), backend="interpret")(*args),
                  program(jax.grad, jax, jax.numpy)(*args)):
        for g, w in zip(got, jax.tree_util.tree_leaves(other)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=1e-9)
