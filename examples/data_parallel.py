"""Data-parallel training of an MLP over MPI ranks with `xf.pmap` and `lax.pmean`.

    mpiexec -n 4 python examples/data_parallel.py [--steps 200] [--check] [--shard-map]

Every rank holds the same parameters and its own shard of each batch.  One jitted step
computes the shard's gradient, averages it over the ranks with `lax.pmean` (an MPI
allreduce called from inside the compiled Numba code, all gradient arrays in one message)
and updates the parameters, so the parameters stay identical on every rank (`--check`
compares them bit for bit across the ranks after every step).  With equal
shards the averaged gradient is the whole batch's gradient, so training equals one process
training on the whole batch; `--check` verifies that on rank 0 (to 1e-12 in float64).

`--shard-map` writes the same step the way JAX 0.10 writes data parallelism: `xf.shard_map`
over a mesh of the ranks, every rank passing the whole batch and `in_specs` splitting it.
"""
import argparse
import time

import numpy as np

import xforms as xf
from xforms import lax, mpi
from xforms.sharding import P
from xforms.tree_util import tree_leaves, tree_map

from mlp_training import init_params, loss  # the same MLP as the single-process demo


def sgd(params, grads, lr):
    return tree_map(lambda p, g: p - lr * g, params, grads)


def parallel_step(params, x, y, lr):
    grads = lax.pmean(xf.grad(loss)(params, x, y), "batch")
    return sgd(params, grads, lr)


def serial_step(params, x, y, lr):
    return sgd(params, xf.grad(loss)(params, x, y), lr)


def identical_on_all_ranks(params):
    """Are the parameters bit-for-bit the same on every rank?  (The elementwise max and
    min over the ranks agree.)"""
    flat = np.concatenate([np.asarray(a).ravel() for a in tree_leaves(params)])
    return bool(np.array_equal(mpi.allreduce(flat, "max"), mpi.allreduce(flat, "min")))


def make_batches(seed, steps, batch, d_in=8, classes=4):
    """The same batch sequence on every rank (each rank then takes its shard)."""
    rng = np.random.default_rng(seed)
    w_true = rng.normal(size=(d_in, classes))
    for _ in range(steps):
        x = rng.normal(size=(batch, d_in))
        k = np.argmax(x @ w_true + 0.3 * rng.normal(size=(batch, classes)), axis=1)
        yield x, np.eye(classes)[k]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--shard-map", action="store_true", help="the step as xf.shard_map")
    args = ap.parse_args(argv)
    rank, size = mpi.rank(), mpi.size()
    if args.batch % size:
        raise SystemExit(f"--batch {args.batch} must be divisible by the {size} ranks")
    shard = args.batch // size
    params = init_params(np.random.default_rng(0), [8, 32, 32, 4])
    serial = params
    if args.shard_map:
        # params and lr replicated, the batch split over the ranks; check_vma=False: the
        # gradient is differentiated inside the body (see xf.shard_map)
        step = xf.shard_map(parallel_step, mesh=mpi.make_mesh("batch"),
                            in_specs=(P(), P("batch"), P("batch"), P()), out_specs=P(),
                            check_vma=False)
    else:
        step = xf.pmap(parallel_step, axis_name="batch")
    serial_jit = xf.jit(serial_step)
    same_each = True
    t0 = time.perf_counter()
    for k, (x, y) in enumerate(make_batches(1, args.steps, args.batch)):
        lo = rank * shard
        params = (step(params, x, y, 0.1) if args.shard_map else
                  step(params, x[lo:lo + shard], y[lo:lo + shard], 0.1))
        if args.check:
            same_each = same_each and identical_on_all_ranks(params)
            if rank == 0:
                serial = serial_jit(serial, x, y, 0.1)
        if k == 0:
            t_first = time.perf_counter() - t0
    elapsed = time.perf_counter() - t0
    x, y = next(make_batches(2, 1, args.batch))
    final = float(loss(params, x, y))
    same = identical_on_all_ranks(params) and same_each
    if rank == 0:
        per_step = (elapsed - t_first) / max(args.steps - 1, 1) * 1e3
        print(f"{size} rank(s), {args.steps} steps of batch {args.batch} ({shard} per rank): "
              f"first step {t_first:.2f} s, then {per_step:.3f} ms/step; held-out loss "
              f"{final:.4f}; parameters identical on all ranks: {same}"
              + (" (checked after every step)" if args.check else ""))
        if args.check:
            diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                       for pa, pb in zip(params, serial) for a, b in zip(pa, pb))
            print(f"max |parallel - serial| over all parameters: {diff:.2e}")
            if diff > 1e-12 or not same:
                raise SystemExit("data-parallel training differs from serial training")


if __name__ == "__main__":
    main()
