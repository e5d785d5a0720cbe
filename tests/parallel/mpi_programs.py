"""Checks run on 2 MPI ranks by tests/parallel/test_mpi.py (`mpiexec -n 2 python
tests/parallel/mpi_programs.py CASE [CASE ...]`: several in one launch, in order, so the ranks
import xforms and Numba once); each case prints "ok CASE" on every rank that passed.  A
`static_*` case is tests/parallel/mpi_static.py's.  Expected values are what the same program
gives under vmap(axis_name=...) in one process (tests/parallel/test_collectives.py checks those
against JAX), so pmap and vmap agree."""
import sys

import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms import lax, mpi

R, N = mpi.rank(), mpi.size()


def close(a, b, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=atol)


def program(v):
    """Every collective once; the same function is vmapped in one process for reference."""
    return (lax.psum(v, "i"), lax.pmean(v * 2.0, "i"), lax.pmax(v, "i"), lax.pmin(v, "i"),
            lax.axis_index("i"), lax.all_gather(v, "i"), lax.all_gather(v, "i", tiled=True),
            lax.ppermute(v, "i", [(0, 1)]), lax.psum_scatter(xnp.outer(v[:2], v), "i"),
            lax.psum((v, v[0] * 3.0), "i"), lax.all_to_all(xnp.outer(v[:2], v), "i", 0, 1))


def shards():
    return np.arange(6.0).reshape(2, 3) ** 1.5 + 1.0


def case_collectives():
    xs = shards()
    want = xf.vmap(program, axis_name="i")(xs)
    from mpi4py import MPI
    other = MPI.COMM_WORLD.Dup()             # another communicator: runs eagerly (mpi4py)
    for f in (xf.pmap(program, axis_name="i"), xf.pmap(program, axis_name="i", jit=False),
              xf.pmap(program, axis_name="i", comm=other)):
        got = f(xs[R])
        for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
            close(g, np.asarray(w)[R])       # vmap stacks every member's result


def loss(w, x):
    return lax.psum(xnp.sum(xnp.tanh(x * w) ** 2), "i")


def case_grads():
    xs = shards()
    want_g = xf.vmap(xf.grad(loss), in_axes=(None, 0), axis_name="i")(1.3, xs)
    want_h = xf.vmap(lambda w, x: xf.hvp(lambda u: loss(u, x), (w,), (1.0,))[0],
                     in_axes=(None, 0), axis_name="i")(1.3, xs)
    g = xf.pmap(xf.grad(loss), axis_name="i")(1.3, xs[R])
    h = xf.pmap(lambda w, x: xf.hvp(lambda u: loss(u, x), (w,), (1.0,))[0], axis_name="i")(
        1.3, xs[R])
    close(g, want_g[R])
    close(h, want_h[R])
    # every linear collective's transpose on MPI ranks: all_gather <-> psum_scatter,
    # ppermute <-> its inverse, all_to_all <-> itself
    want_g = xf.vmap(xf.grad(loss_linear), in_axes=(None, 0), axis_name="i")(1.3, xs)
    want_h = xf.vmap(lambda w, x: xf.hvp(lambda u: loss_linear(u, x), (w,), (1.0,))[0],
                     in_axes=(None, 0), axis_name="i")(1.3, xs)
    close(xf.pmap(xf.grad(loss_linear), axis_name="i")(1.3, xs[R]), want_g[R])
    close(xf.pmap(xf.grad(loss_linear), axis_name="i", jit=False)(1.3, xs[R]), want_g[R])
    close(xf.pmap(lambda w, x: xf.hvp(lambda u: loss_linear(u, x), (w,), (1.0,))[0],
                  axis_name="i")(1.3, xs[R]), want_h[R], atol=1e-10)   # sums cancel: ~1e-3


def loss_linear(w, x):
    v = xnp.tanh(x * w)
    m = xnp.outer(v[:2], v)
    terms = (xnp.sum(lax.all_gather(v, "i") ** 2)
             + xnp.sum(lax.ppermute(v, "i", [(0, 1)]) * v)
             + xnp.sum(xnp.sin(lax.psum_scatter(m, "i")))
             + xnp.sum(lax.all_to_all(m, "i", 0, 1) ** 3))
    return lax.psum(terms, "i")


def case_explicit():
    x = xnp.arange(3.0) + R
    f = xf.jit(lambda v: (mpi.allreduce(v), mpi.allreduce(v, "max"), mpi.bcast(v, 1),
                          mpi.sendrecv(v, 1 - R, 1 - R), mpi.allgather(v)))
    eager = lambda v: (mpi.allreduce(v), mpi.allreduce(v, "max"), mpi.bcast(v, 1),  # noqa: E731
                       mpi.sendrecv(v, 1 - R, 1 - R), mpi.allgather(v))
    for out in (f(x), eager(x)):
        close(out[0], np.arange(3.0) * 2 + 1)
        close(out[1], np.arange(3.0) + 1)
        close(out[2], np.arange(3.0) + 1)
        close(out[3], np.arange(3.0) + 1 - R)
        close(out[4], np.stack([np.arange(3.0), np.arange(3.0) + 1]))
    g = xf.grad(lambda v: xnp.sum(mpi.allreduce(v) * (R + 1.0)))(x)
    close(g, np.full(3, 3.0))            # d/dv_r sum_s (s+1) * sum_t v_t = 1 + 2
    row = mpi.scatter(xnp.arange(4.0).reshape(2, 2) if R == 0 else xnp.zeros(2), 0)
    close(row, np.arange(2.0) + 2 * R)
    both = np.stack([np.arange(3.0), np.arange(3.0) + 1])
    for out in (mpi.gather(x, 0), xf.jit(lambda v: mpi.gather(v, 0))(x)):
        close(out, both if R == 0 else x)
    # derivatives: sendrecv's transpose sends the cotangent back, allgather's reduce-scatters
    close(xf.grad(lambda v: xnp.sum(mpi.sendrecv(v, 1 - R, 1 - R) * (R + 1.0)))(x),
          np.full(3, 2.0 - R))
    close(xf.jit(xf.grad(lambda v: xnp.sum(mpi.allgather(v) * (R + 1.0))))(x), np.full(3, 3.0))
    if R == 0:
        mpi.send(x * 10.0, 1, tag=7)
    else:
        close(mpi.recv(xnp.zeros(3), 0, tag=7), np.arange(3.0) * 10.0)
    mpi.barrier()
    try:
        xf.jit(lambda v: mpi.send(v, 1 - R))(x)
    except NotImplementedError as e:
        assert "xforms.mpi.send inside jit" in str(e), e
    else:
        raise AssertionError("send inside jit did not raise")


BIG = (1 << 16) + 8           # above kernels/lower_mpi.PACK_MAX_ELEMENTS: never packed


def in_place(f, *args):
    """Does f's compiled code reduce in place (MPI_IN_PLACE)?"""
    return "mc_allreduce_inplace" in xf.jit(f).lower(*args).as_text()


def case_inplace():
    """A large operand the kernel made and nothing else reads is reduced in place; an input
    or a value still live is not, and never changes."""
    x = np.linspace(-1.0, 1.0, BIG) + R
    x0 = x.copy()
    other = np.linspace(-1.0, 1.0, BIG) + (1 - R)
    total = x0 + other
    dead = lambda v: mpi.allreduce(v * 2.0) + 1.0                     # noqa: E731
    live = lambda v: (mpi.allreduce(v * 2.0), v * 2.0)               # noqa: E731
    direct = lambda v: mpi.allreduce(v)                              # noqa: E731
    loop = lambda v: lax.fori_loop(0, 3, lambda i, c: mpi.allreduce(c, "max"), v)  # noqa
    assert in_place(dead, x) and in_place(loop, x)
    # small arrays of one dtype travel in one message: one allreduce call for three arrays
    packed = xf.pmap(lambda v: lax.psum((v[:5], v[:7] * 2.0, v[0]), "i"), axis_name="i")
    assert packed._call.lower(x).as_text().count("nm_allreduce_0(") == 1
    for g, w in zip(packed(x), (total[:5], 2.0 * total[:7], total[0])):
        close(g, w)
    assert not in_place(live, x) and not in_place(direct, x)
    close(xf.jit(dead)(x), 2.0 * total + 1.0)
    s, w = xf.jit(live)(x)
    close(s, 2.0 * total)
    close(w, 2.0 * x0)
    close(xf.jit(direct)(x), total)
    close(xf.jit(loop)(x), np.maximum(x0, other))
    np.testing.assert_array_equal(x, x0)          # the caller's array is untouched
    # the same buffer twice (an operand and a view of it): in place would corrupt the second
    shared = xf.pmap(lambda v: lax.psum((v * 2.0, (v * 2.0).reshape(8, -1)), "i"),
                     axis_name="i")
    a, b = shared(x)
    close(a, 2.0 * total)
    close(b, 2.0 * total.reshape(8, -1))
    # a large gradient is reduced in place, as data-parallel training does
    loss = lambda w, d: xnp.sum(xnp.tanh(w * d) ** 2)               # noqa: E731
    step = lambda w, d: lax.pmean(xf.grad(loss)(w, d), "i")         # noqa: E731
    w = np.linspace(0.5, -0.5, BIG)                 # the same parameters on every rank
    g = xf.pmap(step, axis_name="i")(w, x)
    want = xf.vmap(step, in_axes=(None, 0), axis_name="i")(w, np.stack(
        [x0, other] if R == 0 else [other, x0]))
    close(g, want[R])
    assert "mc_allreduce_inplace" in xf.pmap(step, axis_name="i")._call.lower(w, x).as_text()


ALONE, ONE = ((0,), (1,)), ((1, 0),)    # each rank its own group; one group, reversed
GROUPED = {
    "psum_alone": lambda v: lax.psum(v, "i", axis_index_groups=ALONE),
    "psum_one": lambda v: lax.psum((v, v[0] * 3.0), "i", axis_index_groups=ONE),
    "pmean": lambda v: lax.pmean(v * 2.0, "i", axis_index_groups=ONE),
    "pmax_alone": lambda v: lax.pmax(v, "i", axis_index_groups=ALONE),
    "pmin": lambda v: lax.pmin(v, "i", axis_index_groups=ONE),
    "all_gather": lambda v: lax.all_gather(v, "i", axis_index_groups=ONE),
    "all_gather_alone": lambda v: lax.all_gather(v, "i", axis_index_groups=ALONE, tiled=True),
    "psum_scatter": lambda v: lax.psum_scatter(xnp.stack([v, 2.0 * v]), "i",
                                               axis_index_groups=ONE),
}
# jax.pmap(f, axis_name="i") of the programs above on 2 host devices (JAX 0.10.2, x64)
GROUPED_JAX = {'psum_alone': [[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]], 'psum_one': ([[2.0, 2.0, 1.75], [2.0, 2.0, 1.75]], [6.0, 6.0]), 'pmean': [[2.0, 2.0, 1.75], [2.0, 2.0, 1.75]], 'pmax_alone': [[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]], 'pmin': [[0.5, -1.0, -0.25], [0.5, -1.0, -0.25]], 'all_gather': [[[1.5, 3.0, -0.25], [0.5, -1.0, 2.0]], [[1.5, 3.0, -0.25], [0.5, -1.0, 2.0]]], 'all_gather_alone': [[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]], 'psum_scatter': [[4.0, 4.0, 3.5], [2.0, 2.0, 1.75]]}  # noqa: E501
GROUPED_JAX_GRAD = [[3.6708769299341895, 6.803725012177456, 0.956977346811869], [18.107604579794028, 39.89796917350737, 3.980259979413915]]  # noqa: E501
X2 = np.array([[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]])


def grouped_loss(v):
    return (xnp.sum(xnp.sin(v) * lax.psum(v ** 2, "i", axis_index_groups=ONE))
            + xnp.sum(lax.all_gather(v, "i", axis_index_groups=ONE)[0] ** 3))


def case_groups():
    """axis_index_groups: each group reduces / gathers over its own sub-communicator, in
    compiled code and eagerly; values and a gradient from JAX's pmap."""
    for jit in (True, False):
        for name, f in GROUPED.items():
            got, want = xf.pmap(f, axis_name="i", jit=jit)(X2[R]), GROUPED_JAX[name]
            for g, w in (zip(got, want) if isinstance(want, tuple) else [(got, want)]):
                close(g, np.asarray(w)[R])
        close(xf.pmap(xf.grad(grouped_loss), axis_name="i", jit=jit)(X2[R]),
              GROUPED_JAX_GRAD[R])
    # a large operand reduced in place over the group's communicator
    x = np.linspace(-1.0, 1.0, BIG) + R
    f = xf.pmap(lambda v: lax.psum(v * 2.0, "i", axis_index_groups=ONE), axis_name="i")
    close(f(x), 2.0 * (2.0 * np.linspace(-1.0, 1.0, BIG) + 1.0))
    assert "mc_allreduce_inplace" in f._call.lower(x).as_text()
    try:
        xf.pmap(lambda v: lax.psum(v, "i", axis_index_groups=((0,),)), axis_name="i",
                abort_on_error=False)(x)
    except ValueError as e:
        assert "cover all indices exactly once" in str(e), e
    else:
        raise AssertionError("no error for groups that miss a rank")


X4 = np.array([[0.5, -1.0, 2.0], [1.5, 3.0, -0.25], [2.0, 0.0, 1.0], [-1.0, 1.0, 0.5]])
PAIRS, CROSSED = ((0, 1), (2, 3)), ((0, 2), (3, 1))
GROUPED4 = {
    "psum": lambda v: lax.psum(v, "i", axis_index_groups=PAIRS),
    "psum_crossed": lambda v: lax.psum(v, "i", axis_index_groups=CROSSED),
    "pmean": lambda v: lax.pmean(v, "i", axis_index_groups=CROSSED),
    "pmax": lambda v: lax.pmax(v, "i", axis_index_groups=CROSSED),
    "pmin": lambda v: lax.pmin(v, "i", axis_index_groups=PAIRS),
    "all_gather": lambda v: lax.all_gather(v, "i", axis_index_groups=CROSSED),
    "all_gather_tiled": lambda v: lax.all_gather(v, "i", axis_index_groups=CROSSED,
                                                 tiled=True),
    "psum_scatter": lambda v: lax.psum_scatter(xnp.stack([v, 2 * v]), "i",
                                               axis_index_groups=PAIRS),
    "psum_uneven": lambda v: lax.psum(v, "i", axis_index_groups=((0, 1, 2), (3,))),
}
# jax.pmap of the programs above on 4 host devices (JAX 0.10.2, x64)
GROUPED4_JAX = {'psum': [[2.0, 2.0, 1.75], [2.0, 2.0, 1.75], [1.0, 1.0, 1.5], [1.0, 1.0, 1.5]], 'psum_crossed': [[2.5, -1.0, 3.0], [0.5, 4.0, 0.25], [2.5, -1.0, 3.0], [0.5, 4.0, 0.25]], 'pmean': [[1.25, -0.5, 1.5], [0.25, 2.0, 0.125], [1.25, -0.5, 1.5], [0.25, 2.0, 0.125]], 'pmax': [[2.0, 0.0, 2.0], [1.5, 3.0, 0.5], [2.0, 0.0, 2.0], [1.5, 3.0, 0.5]], 'pmin': [[0.5, -1.0, -0.25], [0.5, -1.0, -0.25], [-1.0, 0.0, 0.5], [-1.0, 0.0, 0.5]], 'all_gather': [[[0.5, -1.0, 2.0], [2.0, 0.0, 1.0]], [[-1.0, 1.0, 0.5], [1.5, 3.0, -0.25]], [[0.5, -1.0, 2.0], [2.0, 0.0, 1.0]], [[-1.0, 1.0, 0.5], [1.5, 3.0, -0.25]]], 'all_gather_tiled': [[0.5, -1.0, 2.0, 2.0, 0.0, 1.0], [-1.0, 1.0, 0.5, 1.5, 3.0, -0.25], [0.5, -1.0, 2.0, 2.0, 0.0, 1.0], [-1.0, 1.0, 0.5, 1.5, 3.0, -0.25]], 'psum_scatter': [[2.0, 2.0, 1.75], [4.0, 4.0, 3.5], [1.0, 1.0, 1.5], [2.0, 2.0, 3.0]], 'psum_uneven': [[4.0, 2.0, 2.75], [4.0, 2.0, 2.75], [4.0, 2.0, 2.75], [-1.0, 1.0, 0.5]]}  # noqa: E501


def case_groups4():
    """4 ranks: pairs, crossed pairs (listed out of order) and uneven groups, as JAX."""
    assert N == 4, "run with mpiexec -n 4"
    for name, f in GROUPED4.items():
        close(xf.pmap(f, axis_name="i")(X4[R]), np.asarray(GROUPED4_JAX[name])[R])
    try:
        xf.pmap(lambda v: lax.pmean(v, "i", axis_index_groups=((0, 1, 2), (3,))),
                axis_name="i", abort_on_error=False)(X4[R])
    except ValueError as e:
        assert "first group's size" in str(e), e
    else:
        raise AssertionError("pmean over groups of different sizes did not raise")


def case_mismatch():
    f = xf.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    try:
        f(np.ones(3 + R))
    except ValueError as e:
        assert "rank 0" in str(e) and "rank 1" in str(e), e
    else:
        raise AssertionError("no error for mismatched shapes")


def case_shard_map():
    """shard_map over a mesh of the 2 ranks equals the same shard_map over a mesh of 2
    members of this process (each rank computes one member's block)."""
    from xforms.sharding import P

    def loss(w, x):
        return xnp.mean(xnp.tanh(x @ w) ** 2)

    def body(w, x):
        return (lax.pmean(xf.grad(loss)(w, x), "b"), x * lax.axis_index("b"),
                lax.psum(x.sum(), "b"))
    w = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
    x = np.arange(12.0).reshape(4, 3) / 7.0
    # check_vma=False: grad inside the body (JAX's check_vma=True numbers differ: see
    # tests/parallel/test_shard_map.py)
    specs = dict(in_specs=(P(), P("b")), out_specs=(P(), P("b"), P()), check_vma=False)
    got = xf.shard_map(body, mesh=mpi.make_mesh("b"), **specs)(w, x)
    want = xf.shard_map(body, mesh=xf.make_mesh((2,), ("b",)), **specs)(w, x)
    for g, e in zip(got, want):
        close(g, e)
    close(got[0], xf.grad(loss)(w, x))      # equal blocks: the mean gradient is the whole's


def case_signed_zeros():
    """pmax/pmin order -0.0 < +0.0 and propagate NaN as JAX's (the vmap below: jax 0.10.2
    gives pmax [0., 0., nan, nan, -0., 2.] and pmin [-0., -0., nan, nan, -0., 1.] of these two
    members), compiled, eagerly, over another communicator, packed with another operand,
    float32 too, and through xforms.mpi.allreduce."""
    from mpi4py import MPI
    xs = np.array([[-0.0, 0.0, np.nan, 1.0, -0.0, 1.0], [0.0, -0.0, 1.0, np.nan, -0.0, 2.0]])
    want_max = [0.0, 0.0, np.nan, np.nan, -0.0, 2.0]
    want_min = [-0.0, -0.0, np.nan, np.nan, -0.0, 1.0]

    def same(got, want, dtype):
        got = np.asarray(got)
        assert got.dtype == dtype, got.dtype
        np.testing.assert_array_equal(got, np.asarray(want, dtype))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.asarray(want, dtype)))

    f = lambda v: (lax.pmax(v, "i"), lax.pmin(v, "i"), lax.pmax((v, v * 2.0), "i"))  # noqa: E731
    other = MPI.COMM_WORLD.Dup()
    for dtype in (np.float64, np.float32):
        x = xs[R].astype(dtype)
        for g in (xf.pmap(f, axis_name="i"), xf.pmap(f, axis_name="i", jit=False),
                  xf.pmap(f, axis_name="i", comm=other)):
            mx, mn, (p1, p2) = g(x)
            same(mx, want_max, dtype)
            same(mn, want_min, dtype)
            same(p1, want_max, dtype)
            same(p2, np.asarray(want_max) * 2.0, dtype)
        same(mpi.allreduce(x, "max"), want_max, dtype)
        same(mpi.allreduce(x, "min"), want_min, dtype)
        # a large operand the kernel made: reduced in place, through an integer view
        big, reps = np.tile(x, 11000), 11000                      # (> BIG elements)
        for op, want in (("max", want_max), ("min", want_min)):
            g = lambda v: mpi.allreduce(v * 2.0, op)                  # noqa: E731
            assert in_place(g, big)
            same(xf.jit(g)(big), np.tile(np.asarray(want, dtype) * 2, reps), dtype)


def case_abort():
    def bad(v):
        if R == 1:
            raise RuntimeError("deliberate failure on rank 1")
        return lax.psum(v, "i")
    xf.pmap(bad, axis_name="i", jit=False)(np.ones(2))
    raise AssertionError("should have aborted")


def case_abort_jit():
    """Rank 1 fails while tracing; rank 0 already waits inside the compiled allreduce."""
    def bad(v):
        if R == 1:
            raise RuntimeError("deliberate failure on rank 1")
        return lax.psum(v, "i")
    xf.pmap(bad, axis_name="i")(np.ones(2))
    raise AssertionError("should have aborted")


def _case(name):
    if name.startswith("static_"):
        import mpi_static
        return getattr(mpi_static, f"case_{name}")
    return globals()[f"case_{name}"]


if __name__ == "__main__":
    for name in sys.argv[1:]:
        assert N == (4 if name == "groups4" else 2), f"run {name} with mpiexec -n {N}"
        _case(name)()
        print(f"ok {name} rank {R}", flush=True)
