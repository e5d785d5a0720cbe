"""Where cuBLAS overtakes the tile kernel for CUDA dot_general: the measurement behind
GEMM_MIN_WORK in xforms/kernels/cuda/vendor/__init__.py.

    python -m benchmarks.gpu_gemm_sweep --out DIR [--quick]      (benchmarks/on_gpu.sh runs it)

For float32 and float64 and a sweep of square and batched products, one jitted `a @ b` is
compiled twice, once per path (XFORMS_CUDA_GEMM_MIN_WORK set past and below its size), and
each is timed per call on device-resident inputs, synchronised (what a user's call costs:
host launch sequence plus the product), both at JAX's default precision (cuBLAS: TF32 for
float32; the tile kernel: float32).  JAX's `a @ b` at its default on the same GPU is timed
beside them where JAX is installed.  Writes
DIR/gemm_sweep.json and prints, per dtype, the smallest work (batch x M x N x K) from which
cuBLAS is faster at every larger size of the sweep: the value for GEMM_MIN_WORK.  On the
simulator (a dry run) there is no cuBLAS path: only the tile kernel is timed.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

from .timing import measure

SHAPES = [(1, n, n, n) for n in (32, 64, 96, 128, 192, 256, 384, 512, 1024, 2048)] + \
    [(64, 32, 32, 32), (64, 64, 64, 64), (16, 128, 128, 128)]          # (batch, M, K, N)
QUICK = [(1, 8, 8, 8), (2, 8, 12, 8)]
NEVER, ALWAYS = str(2 ** 62), "0"


def _operands(b, m, k, n, dtype):
    rng = np.random.default_rng(0)
    lead = (b,) if b > 1 else ()
    return (rng.standard_normal(lead + (m, k)).astype(dtype),
            rng.standard_normal(lead + (k, n)).astype(dtype))


def _compiled(closed, threshold, label):
    """A fresh executable (the backend's cache is keyed by program, not by the rule)."""
    from xforms.kernels.cuda import backend
    os.environ["XFORMS_CUDA_GEMM_MIN_WORK"] = threshold
    return backend._compile(closed, {"name": label})


def _time_xforms(exe, xd, yd, sync):
    def call():
        exe(xd, yd)
        sync()
    call()
    return measure(call, repeats=5, target=0.005, budget=0.4).median


def _time_jax(x, y):
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        f = jax.jit(jnp.matmul)
        xd, yd = jax.device_put(x), jax.device_put(y)
        f(xd, yd).block_until_ready()
        return measure(lambda: f(xd, yd).block_until_ready(), repeats=5, target=0.005,
                       budget=0.4).median
    except Exception as e:            # noqa: BLE001 - no JAX, or no GPU for it
        return f"{type(e).__name__}: {e}"[:200]


def sweep(shapes, dtypes=(np.float32, np.float64), done=lambda rows: None):
    """Time both paths for each shape and dtype; `done(rows)` after each row (so that a
    run cut short by on_gpu.sh's time limit still leaves its rows)."""
    import xforms as xf
    from numba import cuda
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda import vendor
    have_blas = rt.device_spec().vendor and vendor.blas() is not None
    rows = []
    for dtype in dtypes:
        for b, m, k, n in shapes:
            x, y = _operands(b, m, k, n, dtype)
            closed = xf.make_jaxpr(lambda a, c: a @ c)(x, y)
            xd, yd = xf.device_put((x, y), backend="cuda")
            row = {"dtype": np.dtype(dtype).name, "batch": b, "m": m, "k": k, "n": n,
                   "work": b * m * k * n}
            outs = {}
            for path, threshold in (("tile", NEVER), ("cublas", ALWAYS)):
                if path == "cublas" and not have_blas:
                    row["cublas_us"] = None
                    continue
                exe = _compiled(closed, threshold, f"sweep_{path}")
                assert ("_rt.gemm(" in exe.source) == (path == "cublas"), path
                row[f"{path}_us"] = _time_xforms(exe, xd, yd, cuda.synchronize) * 1e6
                outs[path] = np.asarray(exe(xd, yd)[0])
            if len(outs) == 2:
                row["max_rel_diff"] = float(np.max(np.abs(outs["tile"] - outs["cublas"])) /
                                            max(1e-30, float(np.max(np.abs(outs["tile"])))))
            if have_blas:
                t = _time_jax(x, y)
                row["jax_us"] = t * 1e6 if isinstance(t, float) else t
            rows.append(row)
            print(json.dumps(row), flush=True)
            done(rows)
    return rows


def crossover(rows, dtype):
    """The smallest work from which cuBLAS is faster at every larger size, or None."""
    mine = sorted((r for r in rows if r["dtype"] == dtype and r.get("cublas_us")),
                  key=lambda r: r["work"])
    best = None
    for r in reversed(mine):
        if r["cublas_us"] > r["tile_us"]:
            break
        best = r["work"]
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.gpu_gemm_sweep")
    ap.add_argument("--out", default=".")
    ap.add_argument("--quick", action="store_true", help="two tiny shapes (a dry run)")
    args = ap.parse_args(argv)
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda import vendor
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)

    def write(rows):
        result = {"device": rt.device_spec().name, "simulator": rt.simulating(),
                  "load": os.getloadavg(), "rows": rows, "seconds": time.time() - t0,
                  "gemm_min_work_now": vendor.GEMM_MIN_WORK,
                  "crossover": {d: crossover(rows, d) for d in ("float32", "float64")}}
        with open(os.path.join(args.out, "gemm_sweep.json"), "w") as f:
            json.dump(result, f, indent=1)
        return result
    result = write(sweep(QUICK if args.quick else SHAPES, done=write))
    print(f"crossover (work = batch*M*N*K from which cuBLAS wins): {result['crossover']}; "
          f"GEMM_MIN_WORK now {vendor.GEMM_MIN_WORK}; {result['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
