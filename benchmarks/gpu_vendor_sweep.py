"""Where NVIDIA's libraries overtake the CUDA backend's own kernels: the measurement behind
GEMM_MIN_WORK, FFT_MIN_POINTS, SOLVER_MIN_N and SPECTRAL_MIN_N in
xforms/kernels/cuda/vendor/__init__.py;
likewise where the long-line kernels overtake the short-line ones, behind
sorting.RANK_SORT_MAX_N (the bitonic network against the rank sort) and
cumulative.PARALLEL_SCAN_MIN_N (the parallel scan against a thread per line, along an axis
that is not the last: the last axis always scans in parallel), whose "library" column is the
long-line kernel.

    python -m benchmarks.gpu_vendor_sweep --out DIR [--quick]     (benchmarks/on_gpu.sh runs it)
    python -m benchmarks.gpu_vendor_sweep --out DIR --families eig   (those families' cases only)

Each case (a product `a @ b` in float32 and float64, square and batched; an FFT over the last
axis in complex64 and complex128, batched; a Cholesky in float64, its "work" the matrix's
order: cuSOLVER's potrf against the one-block-per-matrix kernel; last, an eig of a batch of
complex128 matrices, cusolverDnXgeev a matrix at a time against ops/linalg/eig.py's one thread per
matrix -- on_gpu.sh's 60 s may end the sweep before them: `--families eig`; a convolution
of the CNN's kind (NHWC/HWIO 3 x 3) and the data- and weight-gradient convolutions its
gradient makes, im2col + cuBLAS against the direct kernel, each row with the inputs and the
two estimates of vendor.conv_times and the figures they imply: `--families conv`) is compiled twice,
once per path (the size override XFORMS_CUDA_GEMM_MIN_WORK / _FFT_MIN_POINTS / _SOLVER_MIN_N /
_SPECTRAL_MIN_N set past and below it), and
each is timed per call on device-resident inputs, synchronised (what a user's call costs:
host launch sequence plus the work), both at JAX's default precision (cuBLAS: TF32 for
float32; the tile kernel: float32).  JAX on the same GPU is timed beside them where it is
installed.  Writes DIR/vendor_sweep.json after every case (a run cut short keeps its rows)
and prints, per family and dtype, the smallest work from which the library is faster at
every larger size of the sweep: the values for the thresholds.  On the simulator (a dry
run) there is no library path: only the backend's own kernels are timed.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

from .timing import measure

NEVER, ALWAYS = str(2 ** 62), "0"
# (family, dtype, case): a product (batch, M, K, N) or a transform (batch, n)
GEMMS = [(1, n, n, n) for n in (32, 64, 96, 128, 192, 256, 384, 512, 1024, 2048)] + \
    [(64, 32, 32, 32), (64, 64, 64, 64), (16, 128, 128, 128)]
FFTS = [(1, 256), (1, 1024), (1, 4096), (64, 64), (64, 256), (16, 1024)]
CHOLESKYS = [(1, n) for n in (32, 64, 128, 256, 512)]
# (lines, n): a sort of float32 keys (the rank sort is n^2: no longer lines); a cumsum
SORTS = [(1, n) for n in (256, 4096, 65536)] + [(64, 4096)]
SCANS = [(2, n) for n in (2048, 65536, 2 ** 22)] + [(16, 65536)]    # (lines, n): x (n, lines)
EIGS = [(1, 8), (1, 32), (64, 8), (256, 16)]          # (batch, n): eig with vectors
# (batch, side, in-features, out-features, which): a 3 x 3 VALID NHWC/HWIO convolution
# ("fwd") or one its gradient makes ("data", "weight"): the CNN's two layers and a wider one
# (the first four before the GEMMs: on_gpu.sh's 60 s may not reach the rest)
CONVS = [(1, 28, 1, 32, "fwd"), (32, 28, 1, 32, "weight"), (32, 13, 32, 64, "fwd"),
         (32, 13, 32, 64, "weight"), (32, 13, 32, 64, "data"), (8, 56, 64, 64, "fwd")]
CASES = [("conv", "float32", c) for c in CONVS[:4]] + [("gemm", "float32", c) for c in GEMMS] + \
    [("conv", "float32", c) for c in CONVS[4:]] + \
    [("gemm", "float64", c) for c in GEMMS] + \
    [("fft", dt, c) for dt in ("complex64", "complex128") for c in FFTS] + \
    [("cholesky", "float64", c) for c in CHOLESKYS] + \
    [("sort", "float32", c) for c in SORTS] + [("cumsum", "float32", c) for c in SCANS] + \
    [("eig", "complex128", c) for c in EIGS]
QUICK = [("gemm", "float32", (1, 8, 8, 8)), ("gemm", "float64", (2, 8, 12, 8)),
         ("fft", "complex64", (2, 16)), ("cholesky", "float64", (1, 6)),
         ("sort", "float32", (2, 40)), ("cumsum", "float32", (2, 300)),
         ("eig", "complex128", (2, 4)), ("conv", "float32", (2, 6, 2, 3, "weight"))]
OVERRIDE = {"gemm": "XFORMS_CUDA_GEMM_MIN_WORK", "fft": "XFORMS_CUDA_FFT_MIN_POINTS",
            "cholesky": "XFORMS_CUDA_SOLVER_MIN_N", "eig": "XFORMS_CUDA_SPECTRAL_MIN_N",
            "conv": "XFORMS_CUDA_CONV_PATH"}
# the kernels' switches: (module, threshold) set past and below the case's length
SWITCH = {"sort": ("xforms.kernels.ops.sorting", "RANK_SORT_MAX_N"),
          "cumsum": ("xforms.kernels.ops.cumulative", "PARALLEL_SCAN_MIN_N")}
CALL = {"gemm": "_rt.gemm(", "fft": "_rt.fft(", "cholesky": "_rt.solve(", "sort": "bitonic",
        "cumsum": "parallel scan", "eig": "_rt.solve(", "conv": "# cuBLAS: conv as"}


def _program(family, dtype, case):
    """(function, operands, work) of one case."""
    import xforms.numpy as xnp
    from xforms import lax
    rng = np.random.default_rng(0)
    if family == "conv":
        xs, ws, os_, p = conv_of_case(case)
        f = _conv_fn(p)
        return f, (rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)), \
            int(np.prod(os_)) * int(np.prod(ws)) // os_[p["dimension_numbers"][2][1]]
    if family in SWITCH:
        b, n = case
        if family == "cumsum":      # columns: the lines of the switch (axis 0 of (n, b))
            return lax.cumsum, (rng.standard_normal((n, b)).astype(dtype),), b * n
        x = rng.standard_normal((b, n) if b > 1 else (n,)).astype(dtype)
        return xnp.sort, (x,), b * n
    if family == "eig":              # work: the matrices' order, as the threshold's
        b, n = case
        z = rng.standard_normal((b, n, n)) + 1j * rng.standard_normal((b, n, n))
        return xnp.linalg.eig, (z.astype(dtype) if b > 1 else z[0].astype(dtype),), n
    if family == "cholesky":
        b, n = case
        x = rng.standard_normal((b, n, n)).astype(dtype)
        spd = x @ np.swapaxes(x, -1, -2) + n * np.eye(n, dtype=dtype)
        return xnp.linalg.cholesky, (spd if b > 1 else spd[0],), n
    if family == "gemm":
        b, m, k, n = case
        lead = (b,) if b > 1 else ()
        args = (rng.standard_normal(lead + (m, k)).astype(dtype),
                rng.standard_normal(lead + (k, n)).astype(dtype))
        return (lambda a, c: a @ c), args, b * m * k * n
    b, n = case
    z = (rng.standard_normal((b, n)) + 1j * rng.standard_normal((b, n))).astype(dtype)
    return xnp.fft.fft, (z,), b * n


def conv_of_case(case):
    """(lhs, rhs, out shapes, params) of a CONVS case: the convolution, or the one its
    gradient makes for the data or the weights (traced, as the backend receives it)."""
    import xforms as xf
    b, side, cin, cout, which = case
    dn = ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    x, w = np.ones((b, side, side, cin), np.float32), np.ones((3, 3, cin, cout), np.float32)
    conv = _conv_fn({"window_strides": (1, 1), "padding": ((0, 0), (0, 0)),
                     "lhs_dilation": (1, 1), "rhs_dilation": (1, 1), "dimension_numbers": dn,
                     "feature_group_count": 1, "batch_group_count": 1})
    grad = xf.grad(lambda x, w: (conv(x, w) ** 2).sum(), argnums=(0, 1))
    found = [e for e in xf.make_jaxpr(grad)(x, w).jaxpr.eqns
             if e.prim.name == "conv_general_dilated"]
    shapes = [tuple(tuple(v.aval.shape) for v in (*e.invars, e.outvars[0])) + (e.params,)
              for e in found]
    want = {"fwd": lambda s: s[:2] == (x.shape, w.shape), "data": lambda s: s[2] == x.shape,
            "weight": lambda s: s[2] == w.shape}[which]
    return next(s for s in shapes if want(s))


def _conv_fn(p):
    from xforms import lax
    return lambda x, w: lax.conv_general_dilated(
        x, w, p["window_strides"], p["padding"], p["lhs_dilation"], p["rhs_dilation"],
        p["dimension_numbers"], p["feature_group_count"], p["batch_group_count"])


def conv_rule_fields(case, row):
    """What vendor.conv_times reads of a conv row's convolution, its two estimates, and the
    figures the measured times imply (to set CONV_THREAD_TAP_S, CONV_DIRECT_RATE and
    CONV_GEMM_RATE from): the direct kernel's seconds per tap of its longest thread, its
    multiply-adds/s, the library path's."""
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda import vendor
    from xforms.kernels.cuda.vendor.conv_map import conv_gemm
    xs, ws, os_, p = conv_of_case(case)
    plan = conv_gemm(xs, ws, os_, p["dimension_numbers"], 1, 1)
    spec = rt.device_spec()
    outputs = plan.groups * plan.r * plan.og
    threads = max(1, min(outputs, spec.max_blocks * spec.block))
    direct, library = vendor.conv_times(spec, plan, 4)
    out = {"outputs": outputs, "kc": plan.kc, "serial_taps": -(-outputs // threads) * plan.kc,
           "weight_copy": plan.weight_copy, "out_direct": plan.out_direct,
           "est_own_us": direct * 1e6, "est_library_us": library * 1e6,
           "rule": "library" if library < direct else "own"}
    if row.get("own_us"):
        out["own_tap_s"] = row["own_us"] * 1e-6 / out["serial_taps"]
        out["own_rate"] = row["work"] / (row["own_us"] * 1e-6)
    if row.get("library_us"):
        out["library_rate"] = row["work"] / (row["library_us"] * 1e-6)
        out["rule_right"] = (row["library_us"] < row["own_us"]) == (out["rule"] == "library")
    return out


def conv_summary(rows):
    """The conv rows' verdict on vendor.conv_times: in how many the rule picked the faster
    path, and the median of each figure the rows imply (vendor's CONV_* constants)."""
    conv = [r for r in rows if r["family"] == "conv" and "rule_right" in r]
    if not conv:
        return None
    med = {k: float(np.median([r[k] for r in conv])) for k in ("own_tap_s", "own_rate",
                                                                "library_rate")}
    return {"rows": len(conv), "rule_right": sum(r["rule_right"] for r in conv), **med}


def _timed(call, sync):
    def once():
        call()
        sync()
    once()
    return measure(once, repeats=5, target=0.005, budget=0.4).median * 1e6


def _jax_us(family, args, fn=None):
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        f = jax.jit(fn or {"gemm": jnp.matmul, "fft": jnp.fft.fft, "cholesky": jnp.linalg.cholesky,
                     "sort": jnp.sort, "cumsum": lambda x: jnp.cumsum(x, -1),
                     "eig": jnp.linalg.eig}[family])
        dev = [jax.device_put(a) for a in args]
        jax.block_until_ready(f(*dev))
        return measure(lambda: jax.block_until_ready(f(*dev)), repeats=5, target=0.005,
                       budget=0.4).median * 1e6
    except Exception as e:            # noqa: BLE001 - no JAX, or no GPU for it
        return f"{type(e).__name__}: {e}"[:200]


def run_case(family, dtype, case, have_library):
    import xforms as xf
    from numba import cuda
    from xforms.kernels.cuda import backend
    f, args, work = _program(family, dtype, case)
    closed = xf.make_jaxpr(f)(*args)
    dev = xf.device_put(args, backend="cuda")
    row = {"family": family, "dtype": dtype, "case": list(case), "work": work}
    outs = {}
    for path, threshold in (("own", NEVER), ("library", ALWAYS)):
        if path == "library" and not have_library:
            row["library_us"] = None
            continue
        _switch(family, path, threshold)
        exe = backend._compile(closed, {"name": f"sweep_{path}"})  # fresh: cache is by program
        assert (CALL[family] in exe.source) == (path == "library"), path
        row[f"{path}_us"] = _timed(lambda: exe(*dev), cuda.synchronize)
        outs[path] = np.asarray(exe(*dev)[0])
        if family == "eig":          # (each path's order of the values: compare them sorted)
            outs[path] = np.sort_complex(outs[path])
    if len(outs) == 2:
        row["max_rel_diff"] = float(np.max(np.abs(outs["own"] - outs["library"])) /
                                    max(1e-30, float(np.max(np.abs(outs["own"])))))
        row["jax_us"] = _jax_us(family, args, _jax_conv(case) if family == "conv" else None)
    if family == "conv":
        row.update(conv_rule_fields(case, row))
    return row


def _jax_conv(case):
    import jax
    p = conv_of_case(case)[3]
    dn = jax.lax.ConvDimensionNumbers(*p["dimension_numbers"])
    return lambda x, w: jax.lax.conv_general_dilated(
        x, w, p["window_strides"], p["padding"], p["lhs_dilation"], p["rhs_dilation"], dn,
        feature_group_count=p["feature_group_count"], batch_group_count=p["batch_group_count"])


def _switch(family, path, threshold):
    """Send the case to one path: a library's size override, or a kernel's threshold."""
    if family == "conv":
        os.environ[OVERRIDE[family]] = "own" if path == "own" else "library"
        return
    if family not in SWITCH:
        os.environ[OVERRIDE[family]] = threshold
        return
    import importlib
    module, name = SWITCH[family]
    # the long-line kernel from length 1 ("library"), or never
    setattr(importlib.import_module(module), name, 1 if path == "library" else 2 ** 62)


def crossover(rows, family, dtype):
    """The smallest work from which the library is faster at every larger size, or None."""
    mine = sorted((r for r in rows if (r["family"], r["dtype"]) == (family, dtype)
                   and r.get("library_us")), key=lambda r: r["work"])
    best = None
    for r in reversed(mine):
        if r["library_us"] > r["own_us"]:
            break
        best = r["work"]
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.gpu_vendor_sweep")
    ap.add_argument("--out", default=".")
    ap.add_argument("--quick", action="store_true", help="three tiny cases (a dry run)")
    ap.add_argument("--families", default="", help="comma-separated: only these families")
    args = ap.parse_args(argv)
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda import vendor
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    spec = rt.device_spec()
    have = {"gemm": spec.vendor and vendor.blas() is not None,
            "fft": spec.vendor and vendor.fft() is not None,
            "cholesky": spec.vendor and vendor.solver() is not None, "sort": True,
            "cumsum": True}
    have["eig"], have["conv"] = have["cholesky"], have["gemm"]
    from xforms.kernels.ops import cumulative, sorting
    now = {"gemm": vendor.GEMM_MIN_WORK, "fft": vendor.FFT_MIN_POINTS,
           "cholesky": vendor.SOLVER_MIN_N, "sort": sorting.RANK_SORT_MAX_N,
           "cumsum": cumulative.PARALLEL_SCAN_MIN_N, "eig": vendor.SPECTRAL_MIN_N,
           "conv": {k: getattr(vendor, k) for k in ("CONV_THREAD_TAP_S", "CONV_DIRECT_RATE",
                                                    "CONV_GEMM_RATE", "CONV_COPY_BW",
                                                    "LAUNCH_S")}}
    rows, result = [], {}
    only = set(filter(None, args.families.split(",")))
    for family, dtype, case in QUICK if args.quick else CASES:
        if only and family not in only:
            continue
        rows.append(run_case(family, dtype, case, have[family]))
        print(json.dumps(rows[-1]), flush=True)
        result = {"device": spec.name, "simulator": rt.simulating(), "load": os.getloadavg(),
                  "seconds": time.time() - t0, "rows": rows,
                  "thresholds_now": now,
                  "crossover": {f"{f}/{d}": crossover(rows, f, d) for f, d in
                                sorted({(r["family"], r["dtype"]) for r in rows}) if f != "conv"},
                  "conv_rule": conv_summary(rows)}
        with open(os.path.join(args.out, "vendor_sweep.json"), "w") as fh:
            json.dump(result, fh, indent=1)
    print(f"crossover (work from which the library wins): {result['crossover']}; now "
          f"{result['thresholds_now']}; {result['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
