"""Checks run on 2 MPI ranks by tests/test_mpi.py (`mpiexec -n 2 python tests/mpi_programs.py
CASE`); each case prints "ok CASE" on every rank that passed.  Expected values are what the
same program gives under vmap(axis_name=...) in one process (tests/test_collectives.py
checks those against JAX), so pmap and vmap agree."""
import sys

import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms import lax, mpi

R, N = mpi.rank(), mpi.size()
assert N == 2, "run with mpiexec -n 2"


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


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
    for jit in (True, False):
        got = xf.pmap(program, axis_name="i", jit=jit)(xs[R])
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


def case_mismatch():
    f = xf.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    try:
        f(np.ones(3 + R))
    except ValueError as e:
        assert "rank 0" in str(e) and "rank 1" in str(e), e
    else:
        raise AssertionError("no error for mismatched shapes")


def case_abort():
    def bad(v):
        if R == 1:
            raise RuntimeError("deliberate failure on rank 1")
        return lax.psum(v, "i")
    xf.pmap(bad, axis_name="i", jit=False)(np.ones(2))
    raise AssertionError("should have aborted")


if __name__ == "__main__":
    name = sys.argv[1]
    globals()[f"case_{name}"]()
    print(f"ok {name} rank {R}", flush=True)
