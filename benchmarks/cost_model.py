"""The fast tier's cost model against measurement: does `jit` pick the faster first path?

``python -m benchmarks.cost_model [--programs readme,rk4,...] [--json F]``

For each program (those of ``workloads/ttfr_child.py``: the README loss, RK4 Lorenz, the
scalar chain and MLP ``grad``/``hvp``, the training example, the Gaussian-mixture gradient,
the real JAX programs, and the suite rows whose first calls issue #35 weighs: the ODE
gradient (to t = 50, and the quick suite's t = 5: ``ode_5``), the GP likelihood gradient at n = 500 and 2000, the FFT convolution gradient at
2^20, pow_loop at 10^4), a fresh child process with an empty xforms cache and one BLAS
thread (as the model's figures were measured) traces the jitted function and then
measures, one after the other, in CPU seconds of the process (``time.process_time``: the
load of other processes does not count; wall-clock times under load put the eager
estimates off by up to x8.5 in session 31):

* **eager**: one evaluation of the traced program by the fast tier (``core.eval_jaxpr``;
  the best of two when it is short);
* **compile**: the synchronous compile (``tiered=False``), Numba's once-per-process set-up
  included, as the model assumes (xforms/exec/eager_cost.py);
* **steady**: one compiled call (median of three).

beside the model's predictions (xforms/exec/eager_cost.py): eager seconds (equation
executions x EQN_NS), the compile budget it weighs them against (``compile_limit``, or ``direct_compile_limit``
for a program the direct LLVM path compiles), and
the fast tier's slowdown over compiled code (``fast_tier_slowdown``, which decides whether
a second call waits for the compile).  A row is **right** when the tier the model picks for
the first call gives the first result no later than the other would have: the fast tier
when eager <= compile + steady, else the synchronous compile.  A program that races
(xforms/exec/first_tier.py: an estimate just above the compile's) is costed as on a machine
without a spare core: its eager time if within its deadline, else the deadline plus the
compile and a call; "lost" is what that costs over the better of the two.  The error
columns are predicted / measured.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

PROGRAMS = ("readme", "rk4", "chain_grad", "chain_hvp", "mlp_grad", "mlp_hvp", "mlp_training",
            "gmm", "mnist", "vae_evaluate", "ode", "ode_5", "gp_500", "gp_2000", "fft_conv_2e20",
            "pow_loop_1e4")


def child(program):
    """Measure one program in this (fresh) process; print one JSON line."""
    cache = tempfile.mkdtemp(prefix="xf_costmodel_")
    os.environ["XFORMS_CACHE_DIR"] = cache
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")     # (before NumPy loads BLAS)
    os.environ.setdefault("XFORMS_BLAS_THREADS", "1")
    clock = time.process_time
    from benchmarks.workloads import ttfr_child
    from xforms.core import trace as core
    from xforms.exec import eager_cost as ec
    from xforms.jit.backends import in_process
    fn, args = ttfr_child.build({"system": "xforms", "program": program, "tiered": False})
    closed, _, flat, _ = fn._trace(args, {})
    executed, size = ec.eager_cost(closed)
    out = {"program": program, "eqns": size,
           "pred_eager_s": executed * ec.EQN_NS / 1e9,
           "direct": in_process(closed),
           "pred_compile_s": (ec.direct_compile_limit(closed) if in_process(closed)
                              else ec.compile_limit(size)) * ec.EQN_NS / 1e9,
           "pred_slowdown": ec.fast_tier_slowdown(closed)}
    from xforms.exec.first_tier import first_call_tier
    out["tier"], out["deadline_s"] = first_call_tier(closed, in_process)
    times = []
    for _ in range(2):
        t = clock()
        core.eval_jaxpr(closed, *flat)
        times.append(clock() - t)
        if times[0] > 2.0:
            break
    out["eager_s"] = min(times)
    t = clock()
    exe = fn._executable(closed)
    out["compile_s"] = clock() - t
    steady = []
    for _ in range(3):
        t = clock()
        exe(*flat)
        steady.append(clock() - t)
    out["steady_s"] = sorted(steady)[1]
    print(json.dumps(out), flush=True)
    shutil.rmtree(cache, ignore_errors=True)
    os._exit(0)


def judge(row):
    """Add the model's choice, the right choice and the errors to a measured row."""
    fast = row["pred_eager_s"] <= row["pred_compile_s"]
    fast_right = row["eager_s"] <= row["compile_s"] + row["steady_s"]
    row["choice"] = "fast tier" if fast else "compile"
    row["right"] = fast == fast_right
    first = row["eager_s"] if fast else row["compile_s"] + row["steady_s"]
    best = min(row["eager_s"], row["compile_s"] + row["steady_s"])
    if row.get("tier") == "race":         # (without a spare core: its deadline, then compile)
        row["choice"] = f"race ({row['deadline_s']:.2g} s)"
        first = (row["eager_s"] if row["eager_s"] <= row["deadline_s"]
                 else row["deadline_s"] + row["compile_s"] + row["steady_s"])
        row["right"] = first == best
    row["lost_s"] = first - best
    row["eager_err"] = row["pred_eager_s"] / row["eager_s"]
    row["compile_err"] = row["pred_compile_s"] / row["compile_s"]
    row["slowdown"] = row["eager_s"] / row["steady_s"]
    row["slowdown_err"] = row["pred_slowdown"] / row["slowdown"]
    return row


def table(rows):
    head = ("| program | eqns | eager pred / meas (s) | compile budget / meas (s) | "
            "slowdown pred / meas | first call | right | lost (s) |\n|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r['program']} | {r['eqns']} | {r['pred_eager_s']:.3g} / {r['eager_s']:.3g} | "
            f"{r['pred_compile_s']:.3g} / {r['compile_s']:.3g} | {r['pred_slowdown']:.3g} / "
            f"{r['slowdown']:.3g} | {r['choice']} | {'yes' if r['right'] else 'NO'} | "
            f"{r['lost_s']:.2f} |")
    logs = [abs(math.log(r["eager_err"])) for r in rows]
    lines.append(f"\neager estimate: median |log error| {sorted(logs)[len(logs) // 2]:.2f} "
                 f"(x{math.exp(sorted(logs)[len(logs) // 2]):.2f}), worst "
                 f"x{math.exp(max(logs)):.1f}; wrong first-call choices: "
                 f"{sum(not r['right'] for r in rows)} of {len(rows)}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rows = []
    for p in a.programs.split(","):
        r = subprocess.run([sys.executable, "-m", "benchmarks.cost_model", "--child", p],
                           cwd=root, capture_output=True, text=True, timeout=900)
        line = next((x for x in r.stdout.splitlines()[::-1] if x.startswith("{")), None)
        if line is None:
            print(f"{p}: failed\n{r.stderr[-2000:]}", file=sys.stderr)
            continue
        rows.append(judge(json.loads(line)))
        print(f"{p}: done", file=sys.stderr, flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (times: CPU s of each child)")
    print(table(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
