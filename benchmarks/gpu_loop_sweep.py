"""Where one launch for a whole loop stops paying: the measurement behind block_loop.BLOCK_MAX
and GRID_MAX (xforms/kernels/cuda/printer/block_loop.py), which are estimates until this runs on a GPU.

    python -m benchmarks.gpu_loop_sweep --out DIR [--quick]      (benchmarks/on_gpu.sh runs it)

The heat equation of benchmarks/workloads/cliffs.py (rolls and an `.at[].set` border in a
`fori_loop` of STEPS steps) on an n x n float64 grid, compiled three times per size: as one
block (syncthreads between the body's kernels), as a cooperative grid (grid.sync()) and as
the host loop (the body's 6 kernels launched per step), chosen by the size overrides
XFORMS_CUDA_LOOP_BLOCK_MAX / _GRID_MAX.  Each is timed per call, synchronised, on a device-
resident input; JAX beside them where installed.  Writes DIR/loop_sweep.json after every
case and prints, per mode, the sizes it is fastest at: the values for the two limits.
Then cliffs' Newton-CG step (10^4 x 100, 10 CG iterations of an hvp: matrix-vector
products and dots, two-level reductions run with their blocks in turn inside a block loop,
issue #34) as a cooperative grid and as the host loop: whether one launch pays where the
body reduces (the cliffs row of the GPU table runs it in the default mode, the grid).
Then the rule for products in a loop (vendor.loop_gemm_max_work, 2026-11-30): a scan of
`h = tanh(h @ w + x)` (batch 32, STEPS_GEMM steps, float32) at hidden sizes GEMM_HIDDEN,
as one launch with its products in the tile kernel and as the host loop with cuBLAS a step
(XFORMS_CUDA_LOOP_GEMM_MAX_WORK=0): each row records the multiply-adds a step and the
microseconds a step, and the summary prints the figures behind the rule -- a launch's host
time (the heat host loop at its smallest n: 6 launches a step), the tile kernel's and
cuBLAS's multiply-adds per second in the loop, and the largest work where one launch won
(the bound).  Last, a loop whose body scans and sorts (`_scan_sort`: a parallel scan's chunks and a
bitonic sort's tiles, block-wide kernels a block loop calls as they are, 2026-11-30) in
one block and on the host: whether one block's serial share of a sort beats a dozen
launches a step.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

from .timing import measure

STEPS = 200
SIZES = (32, 64, 128, 256)       # (12 compiles: ~45 s of on_gpu.sh's budget)
MODES = {"block": ("1000000000", "0"), "grid": ("0", "1000000000"), "host": ("0", "0")}
GEMM_HIDDEN = (128, 256, 512)        # a step's product: 32 x h x h multiply-adds
STEPS_GEMM = 100


def _heat(xnp, lax, steps):
    def step(i, u):
        lap = (xnp.roll(u, 1, 0) + xnp.roll(u, -1, 0) + xnp.roll(u, 1, 1) + xnp.roll(u, -1, 1)
               - 4.0 * u)
        u = u + 0.1 * lap
        return u.at[0, :].set(0.0).at[-1, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0)
    return lambda u: lax.fori_loop(0, steps, step, u)


def _scan_sort(xnp, lax, steps):
    def step(i, u):
        return xnp.sort(lax.cumsum(u) * 1e-3 + xnp.roll(u, 1))[::-1] * 0.5 + 0.25 * u
    return lambda u: lax.fori_loop(0, steps, step, u)


def _scan_gemm(xnp, lax):
    return lambda w, h, xs: lax.scan(lambda h, x: (xnp.tanh(h @ w + x),) * 2, h, xs)[0]


def _scan_gemm_case(hidden, batch, steps, fused, budget):
    """The scan at one size: `fused` -- products in the tile kernel, one launch (the rule's
    bound lifted); else cuBLAS a step (the bound 0), a host loop."""
    import xforms.numpy as xnp
    from xforms import lax
    rng = np.random.default_rng(0)
    args = ((rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32),
            np.zeros((batch, hidden), np.float32),
            rng.standard_normal((steps, batch, hidden)).astype(np.float32))
    os.environ["XFORMS_CUDA_LOOP_GEMM_MAX_WORK"] = "1000000000000" if fused else "0"
    try:
        return _timed(_scan_gemm(xnp, lax), args, "grid", budget)
    finally:
        del os.environ["XFORMS_CUDA_LOOP_GEMM_MAX_WORK"]


def _gemm_rule(rows, launch_s):
    """The figures behind vendor.loop_gemm_max_work from the scan_gemm rows."""
    by = {}
    for r in rows:
        if r.get("program") == "scan_gemm" and "median_s" in r:
            by.setdefault(r["work"], {})[r["fused"]] = r["median_s"] / r["steps"]
    out = {"launch_s": launch_s, "steps": {}}
    won = [w for w, t in by.items() if len(t) == 2 and t[True] < t[False]]
    for w, t in sorted(by.items()):
        out["steps"][w] = {"one_launch_s": t.get(True), "cublas_step_s": t.get(False),
                           "tile_rate": w / t[True] if t.get(True) else None}
    out["largest_work_one_launch_won"] = max(won) if won else 0
    return out


def _scan_sort_case(n, mode, steps, budget):
    import xforms.numpy as xnp
    from xforms import lax
    u = np.random.default_rng(0).standard_normal(n)
    return _timed(_scan_sort(xnp, lax, steps), (u,), mode, budget)


def _xforms_case(n, mode, steps, budget):
    import xforms.numpy as xnp
    from xforms import lax
    u = np.random.default_rng(0).standard_normal((n, n))
    return _timed(_heat(xnp, lax, steps), (u,), mode, budget)


def _newton_case(n, d, iters, mode, budget):
    from .workloads import cliffs
    step = cliffs.newton_step(cliffs._namespace("xforms"), iters=iters)
    return _timed(step, cliffs.newton_data(0, n=n, d=d), mode, budget)


def _timed(f, args, mode, budget):
    import xforms as xf
    from numba import cuda
    from xforms.kernels.cuda.backend import _compile
    os.environ["XFORMS_CUDA_LOOP_BLOCK_MAX"], os.environ["XFORMS_CUDA_LOOP_GRID_MAX"] = MODES[mode]
    t0 = time.perf_counter()
    exe = _compile(xf.make_jaxpr(f)(*args), {})
    bufs = [d.buf if hasattr(d, "buf") else d for d in xf.device_put(tuple(args))]

    def call():
        exe(*bufs)
        cuda.synchronize()
    call()
    first = time.perf_counter() - t0
    t = measure(call, (), repeats=5, budget=budget)
    return {"median_s": t.median, "first_call_s": first, "launches": exe.count_launches(*bufs)}


def _jax_case(n, steps, budget):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    f = jax.jit(_heat(jnp, jax.lax, steps))
    u = jax.device_put(np.random.default_rng(0).standard_normal((n, n)))
    f(u).block_until_ready()
    return measure(lambda: f(u).block_until_ready(), (), repeats=5, budget=budget).median


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".")
    ap.add_argument("--quick", action="store_true", help="the simulator: one tiny case")
    args = ap.parse_args(argv)
    sizes, steps, budget = ((8,), 2, 0.5) if args.quick else (SIZES, STEPS, 1.0)
    rows, path = [], os.path.join(args.out, "loop_sweep.json")
    for n in sizes:
        for mode in MODES:
            try:
                row = {"n": n, "elements": n * n, "steps": steps, "mode": mode,
                       **_xforms_case(n, mode, steps, budget)}
            except Exception as e:          # (a mode that fails at a size: say so, go on)
                row = {"n": n, "mode": mode, "error": f"{type(e).__name__}: {e}"[:300]}
            rows.append(row)
            print(json.dumps(row), flush=True)
            with open(path, "w") as fh:
                json.dump(rows, fh, indent=1)
        jt = None if args.quick else _jax_case(n, steps, budget)
        if jt is not None:
            rows.append({"n": n, "mode": "jax", "median_s": jt})
            print(json.dumps(rows[-1]), flush=True)
    n, d, iters = (40, 34, 1) if args.quick else (10_000, 100, 10)
    # (10^6 elements: past one block's BLOCK_MAX; the simulator, a call ~10 s: the grid only)
    for mode in ("grid",) if args.quick else ("grid", "host"):
        try:
            row = {"program": "newton_cg", "n": n, "d": d, "iters": iters, "mode": mode,
                   **_newton_case(n, d, iters, mode, budget)}
        except Exception as e:
            row = {"program": "newton_cg", "mode": mode, "error": f"{type(e).__name__}: {e}"[:300]}
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(path, "w") as fh:
            json.dump(rows, fh, indent=1)
    best = {}
    rows_heat = [r for r in rows if "program" not in r]
    for n in sizes:
        timed = [r for r in rows_heat if r["n"] == n and "median_s" in r and r["mode"] in MODES]
        if timed:
            best[n] = min(timed, key=lambda r: r["median_s"])["mode"]
    print(f"fastest mode per n (elements n^2): {best}")
    with open(path, "w") as fh:
        json.dump(rows, fh, indent=1)
    # products in a loop: one launch with the tile kernel, or cuBLAS a step (the rule's figures)
    hiddens, steps_g = ((8,), 2) if args.quick else (GEMM_HIDDEN, STEPS_GEMM)
    batch = 2 if args.quick else 32
    for hidden in hiddens:
        for fused in (True, False):
            try:
                row = {"program": "scan_gemm", "hidden": hidden, "batch": batch,
                       "steps": steps_g, "work": batch * hidden * hidden, "fused": fused,
                       **_scan_gemm_case(hidden, batch, steps_g, fused, budget)}
            except Exception as e:
                row = {"program": "scan_gemm", "hidden": hidden, "fused": fused,
                       "error": f"{type(e).__name__}: {e}"[:300]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    host = [r for r in rows_heat if r["mode"] == "host" and "median_s" in r]
    launch_s = min(host, key=lambda r: r["n"])["median_s"] / (steps * 6) if host else None
    rule = _gemm_rule(rows, launch_s)
    rows.append({"program": "loop_gemm_rule", **rule})
    print(f"loop_gemm_max_work figures: {json.dumps(rule)}", flush=True)
    with open(path, "w") as fh:
        json.dump(rows, fh, indent=1)
    # last, so that the step's cap (on_gpu.sh) cuts nothing else
    # (4096: within one block's BLOCK_MAX, a sort of 8 tiles; the simulator: a scan and a
    # rank sort of 40, one step -- a bitonic sort there takes a minute a call)
    n, steps = (40, 1) if args.quick else (4096, 100)
    for mode in ("block",) if args.quick else ("block", "host"):     # (two compiles)
        try:
            row = {"program": "scan_sort", "n": n, "steps": steps, "mode": mode,
                   **_scan_sort_case(n, mode, steps, budget)}
        except Exception as e:
            row = {"program": "scan_sort", "mode": mode, "error": f"{type(e).__name__}: {e}"[:300]}
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(path, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
