"""Cold compile time of ``jit(f)``, ``jit(grad(f))`` and ``jit(hvp)``, phase by phase.

``python -m benchmarks.compile_time [--section phases|ttfr|size|all] [--repeats N] [--ops 300]
[--only chain,mlp,block] [--transforms f,grad,hvp] [--sizes 10,100,1000,10000] [--numba-max-eqns N] [--json F]``

Section ``ttfr`` (time to first result, ``workloads/ttfr_child.py``): for the programs of
issue 17 (the README loss ``jit(grad(mean((tanh(x@w)-y)**2)))``, that function at new batch
sizes, RK4 Lorenz ``jit(grad)``, the chain and MLP ``jit(grad)``/``jit(hvp)``, the training
example's first step, and the real JAX programs of ``workloads/real_programs.py``: MNIST
``update``, the VAE's first epoch and first ``evaluate``, DP-SGD's ``private_update``), the first call's wall time in a fresh process with an empty xforms
cache (Numba's own cache, which holds the runtime helpers, left warm), for xforms tiered
(the default: the fast tier answers while the worker compiles), xforms with
``tiered=False`` and JAX; with the fast tier's per-call cost and when the compiled tier was
swapped in (seconds after the first call began).

Section ``phases`` (below) splits the synchronous compile into its phases.

Section ``size`` (``workloads/size_child.py``): compile time against program size, for
scalar chains of 10, 100, 1,000 and 10,000 equations, jitted as they are (``f``) and
differentiated (``grad``, about 2.3x the equations), each in a fresh process with an empty
xforms cache: the equations the compiler receives, the Python statements it emits, and
seconds (CPU: steadier than wall time on a shared machine) for tracing and transforming,
for our compiler passes (prepare, fusion, emit, load) and for Numba (its once-per-process
set-up apart), with microseconds per equation so that a super-linear phase stands out.
``--numba-max-eqns`` skips the Numba compile of larger programs (the other phases still run:
a quick look at a 10,000-equation program).

For the 300-operation scalar chain and the MLP of the ``mlp`` workload (784-512-512-10,
batch 32, float32) -- the models of the ``compile`` workload -- and, with ``--only block``,
a transformer block (``workloads/transformer_block.py``: batch 4, sequence 64, width 128,
4 heads; its ``grad`` is ``value_and_grad``), each figure comes from a fresh child process (``workloads/compile_child.py`` with ``"detail": true``):

* cold: ``XFORMS_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` on an empty temporary directory, so
  nothing compiled before is reused (the runtime helpers of ``xforms/kernels/runtime/cpu_runtime.py``
  are compiled too: what the very first program after installing pays);
* new: ``XFORMS_CACHE_DIR`` empty but Numba's own cache left where it is, so the runtime
  helpers come from disk as they do once any program has run (after one warm-up
  process): what compiling a new program costs;
* warm: a second process reusing the cold run's directory (what the next run of the same
  script pays).

Columns: ``import`` (numpy, the framework and the inputs), ``compile`` (first call minus
a steady call: what ``jit`` adds), ``cpu`` (CPU time of the first call), then the phases
of the first call: xforms -- ``trace`` (tracing and transforms, the remainder), ``kernels``
(importing the compiler package and Numba), ``plan+emit`` (fusion, source, module load),
``numba`` (the Numba compile; ``llvm`` and ``helpers`` are parts of it), ``llvmlite``
(a straight-line scalar program's kernel compiled from LLVM IR instead,
``xforms/kernels/cpu/llvm/``); JAX -- ``trace``
(``lower``) and ``xla`` (``compile``).  ``total`` is the whole process up to the first result.
Times are medians over the repeats; the machine's load is printed since wall time on a
shared machine is noisy (CPU time is steadier).  Threads are pinned to one, as in
``python -m benchmarks``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRANSFORMS = ("f", "grad", "hvp")


def child(spec: dict, cache_dir: str, numba_cache=True) -> dict:
    """One fresh process running ``spec``; its JSON line.  ``numba_cache``: Numba's cache
    goes under ``cache_dir`` too (else it stays where Numba puts it)."""
    env = {**os.environ, "XFORMS_CACHE_DIR": cache_dir, "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    env.pop("NUMBA_CACHE_DIR", None)
    if numba_cache:
        env["NUMBA_CACHE_DIR"] = os.path.join(cache_dir, "numba")
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # bytecode as an installed package has
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = "1"
    env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    cmd = [sys.executable, "-m", "benchmarks.workloads.compile_child", json.dumps(spec)]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{spec}: {proc.stderr.strip()[-2000:]}")
    return json.loads(lines[-1])


def summarize(r: dict) -> dict:
    """Flat figures (seconds) of one child run."""
    ph = r.get("phases", {})
    get = lambda k, i=0: ph.get(k, [0.0, 0.0])[i]  # noqa: E731
    out = {"import": r["setup_s"], "compile": r["first_s"] - r["steady_s"],
           "compile_cpu": r["first_cpu_s"], "total": r["setup_s"] + r["first_s"],
           "total_cpu": r["setup_cpu_s"] + r["first_cpu_s"]}
    if "numba" in ph or "llvmlite" in ph:
        known = sum(get(k) for k in ("import kernels", "plan", "emit", "load", "numba",
                                     "llvmlite"))
        out.update({"trace": r["first_s"] - r["steady_s"] - known, "kernels": get("import kernels"),
                    "plan+emit": get("plan") + get("emit") + get("load"), "numba": get("numba"),
                    "numba_cpu": get("numba", 1), "llvm": r.get("numba_llvm_s", 0.0),
                    "helpers": r.get("numba_helpers_s", 0.0), "llvmlite": get("llvmlite")})
    elif "lower" in ph:
        out.update({"trace": get("lower"), "xla": get("compile")})
    return out


def median(runs: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def measure(models, repeats, systems=("xforms", "jax"), log=print, transforms=TRANSFORMS):
    """{(model name, transform, system): {"cold"|"new"|"warm": figures}}."""
    runs, dirs = {}, {}
    tmp = tempfile.mkdtemp(prefix="compile-time-")
    spec = lambda name, tr, system: {"system": system, "transform": tr,  # noqa: E731
                                     "backend": "cpu", "detail": True, **dict(models)[name]}
    keys = [(name, tr, system) for name, _ in models for tr in transforms for system in systems]
    try:
        for key in keys:                      # the runtime helpers every program uses, to disk
            if key[2] == "xforms":
                child(spec(*key), tempfile.mkdtemp(dir=tmp), numba_cache=False)
        for rep in range(repeats):            # interleaved, so that load drifts hit all alike
            for key in keys:
                for mode in ("cold", "new"):
                    d = tempfile.mkdtemp(dir=tmp)
                    r = summarize(child(spec(*key), d, numba_cache=mode == "cold"))
                    runs.setdefault((key, mode), []).append(r)
                    if mode == "cold":
                        dirs[key] = d
                    log(f"  {mode} {' '.join(key)} #{rep + 1}: compile {r['compile']:.2f} s")
            for key in keys:                  # the same program again, everything on disk
                runs.setdefault((key, "warm"), []).append(summarize(child(spec(*key), dirs[key])))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {key: {mode: median(runs[(key, mode)]) for mode in ("cold", "new", "warm")}
            for key in keys}


def table(results) -> str:
    cols = ["import", "compile", "compile_cpu", "trace", "kernels", "plan+emit", "numba", "llvm",
            "helpers", "llvmlite", "xla", "total"]
    head = (f"{'model':<7}{'jit of':<7}{'system':<8}{'cache':<6}"
            + "".join(f"{c.replace('compile_cpu', 'cpu'):>9}" for c in cols) + f"{'×JAX':>7}")
    lines = [head, "-" * len(head)]
    for (name, tr, system), r in results.items():
        jax = results.get((name, tr, "jax"))
        for mode in ("cold", "new", "warm"):
            c = r[mode]
            ratio = (f"{c['compile'] / jax['cold']['compile']:.1f}"
                     if jax and system != "jax" and mode != "warm" else "")
            cells = "".join(f"{c[k]:9.2f}" if k in c else f"{'':>9}" for k in cols)
            lines.append(f"{name:<7}{tr:<7}{system:<8}{mode:<6}{cells}{ratio:>7}")
    return "\n".join(lines)


TTFR_PROGRAMS = ("readme", "readme_batches", "rk4", "chain_grad", "chain_hvp", "mlp_grad",
                 "mlp_hvp", "mlp_training", "mnist", "vae", "vae_evaluate", "dpsgd")
TTFR_SYSTEMS = (("xforms", True), ("xforms", False), ("jax", None))


def ttfr_child(spec: dict, cache_dir: str) -> dict:
    env = {**os.environ, "XFORMS_CACHE_DIR": cache_dir, "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    for var in ("XFORMS_TIERED", "NUMBA_CACHE_DIR"):
        env.pop(var, None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # bytecode as an installed package has
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = "1"
    env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    cmd = [sys.executable, "-m", "benchmarks.workloads.ttfr_child", json.dumps(spec)]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{spec}: {proc.stderr.strip()[-2000:]}")
    return json.loads(lines[-1])


def ttfr_systems(labels: str):
    """``"xforms,xforms-sync,jax"`` -> entries of TTFR_SYSTEMS."""
    by_label = {s if t is None else f"{s}{'' if t else '-sync'}": (s, t) for s, t in TTFR_SYSTEMS}
    return tuple(by_label[x.strip()] for x in labels.split(",") if x.strip())


def measure_ttfr(programs, repeats, systems=TTFR_SYSTEMS, log=print, first_only=False):
    """{(program, system label): median figures}; each run a fresh process and cache.

    ``first_only``: stop each run at its first result (no swap or steady-state
    figures), for programs whose background compile takes minutes."""
    runs = {}
    tmp = tempfile.mkdtemp(prefix="ttfr-")
    try:
        for rep in range(repeats):
            for prog in programs:
                for system, tiered in systems:
                    if prog == "mlp_training" and system == "jax":
                        continue
                    label = system if tiered is None else f"{system}{'' if tiered else '-sync'}"
                    spec = {"system": system, "program": prog, "tiered": tiered,
                            "first_only": first_only}
                    r = ttfr_child(spec, tempfile.mkdtemp(dir=tmp))
                    runs.setdefault((prog, label), []).append(r)
                    log(f"  {prog} {label} #{rep + 1}: first {r['first_s']:.3f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = {}
    for key, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]
               if isinstance(rs[0][k], (int, float))}
        for k in ("batches", "batches_cpu"):
            if k in rs[0]:
                med[k] = {n: statistics.median(r[k][n] for r in rs) for n in rs[0][k]}
        if "batch_compiles" in rs[0]:
            med["batch_compiles"] = max(r["batch_compiles"] for r in rs)
        if "batch_compiles_each" in rs[0]:
            med["batch_compiles_each"] = {n: max(r["batch_compiles_each"][n] for r in rs)
                                          for n in rs[0]["batch_compiles_each"]}
        out[key] = med
    return out


def ttfr_table(results) -> str:
    head = (f"{'program':<15}{'system':<13}{'first':>9}{'×JAX':>7}{'fast/call':>11}"
            f"{'swap at':>9}{'steady':>10}  new batch sizes 100/101/57/3/1/8/64")
    lines = [head, "-" * len(head)]
    fmt = lambda v, w=9, p=3: f"{v:{w}.{p}f}" if v is not None else " " * w  # noqa: E731
    for (prog, label), r in results.items():
        jax = results.get((prog, "jax"))
        ratio = f"{r['first_s'] / jax['first_s']:7.2f}" if jax and label != "jax" else " " * 7
        bat = " ".join(f"{v:.3f}" for v in r.get("batches", {}).values())
        if "batches_cpu" in r:
            bat += " (cpu " + " ".join(f"{v:.3f}" for v in r["batches_cpu"].values()) + ")"
        if "batch_compiles" in r:
            each = r.get("batch_compiles_each")
            bat += f" {r['batch_compiles']} compiles" + (
                " (" + " ".join(f"{v:g}" for v in each.values()) + ")" if each else "")
        lines.append(f"{prog:<15}{label:<13}{fmt(r['first_s'])}{ratio}"
                     f"{fmt(r.get('fast_call_s'), 11, 5)}{fmt(r.get('swap_s'))}"
                     f"{fmt(r.get('steady_s'), 10, 5)}  {bat}")
    return "\n".join(lines)


SIZES = (10, 100, 1000, 10000)


def size_child(spec: dict, cache_dir: str) -> dict:
    env = {**os.environ, "XFORMS_CACHE_DIR": cache_dir,
           "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # bytecode as an installed package has
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = "1"
    cmd = [sys.executable, "-m", "benchmarks.workloads.size_child", json.dumps(spec)]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{spec}: {proc.stderr.strip()[-2000:]}")
    return json.loads(lines[-1])


def measure_size(sizes, repeats, transforms=("f", "grad"), numba_max=None, log=print):
    """{(equations asked, transform): figures}: medians of CPU seconds per phase."""
    out = {}
    tmp = tempfile.mkdtemp(prefix="size-")
    try:
        for n in sizes:
            for tr in transforms:
                runs = []
                for rep in range(repeats):
                    spec = {"eqns": n, "transform": tr}
                    if numba_max is not None and n * (1 if tr == "f" else 2.4) > numba_max:
                        spec["numba"] = False
                    r = size_child(spec, tempfile.mkdtemp(dir=tmp))
                    runs.append(r)
                    log(f"  size {n} {tr} #{rep + 1}: {r['eqns']} equations, "
                        f"{r['statements']} statements")
                ph = [r["phases"] for r in runs]
                fig = {"eqns": runs[0]["eqns"], "statements": runs[0]["statements"]}
                for k in ("trace", "plan", "numba_setup", "numba"):
                    if k in ph[0]:
                        fig[k] = statistics.median(p[k][1] for p in ph)
                        fig[k + "_wall"] = statistics.median(p[k][0] for p in ph)
                out[(n, tr)] = fig
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def size_table(results) -> str:
    head = (f"{'size':>6} {'jit of':<7}{'eqns':>7}{'stmts':>7}{'trace s':>9}{'plan s':>9}"
            f"{'numba s':>9}{'setup s':>9}  per equation, µs: {'trace':>6}{'plan':>7}{'numba':>7}")
    lines = [head, "-" * len(head)]
    for (n, tr), r in results.items():
        per = lambda k: f"{1e6 * r[k] / r['eqns']:>7.0f}" if k in r else f"{'-':>7}"  # noqa: E731
        sec = lambda k: f"{r[k]:9.3f}" if k in r else f"{'-':>9}"  # noqa: E731
        lines.append(f"{n:>6} {tr:<7}{r['eqns']:>7}{r['statements']:>7}{sec('trace')}"
                     f"{sec('plan')}{sec('numba')}{sec('numba_setup')}  {'':>17} "
                     f"{per('trace')[1:]}{per('plan')}{per('numba')}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.compile_time",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--section", default="all", choices=("phases", "ttfr", "size", "all"))
    ap.add_argument("--programs", default=",".join(TTFR_PROGRAMS),
                    help="ttfr programs: " + ", ".join(TTFR_PROGRAMS))
    ap.add_argument("--ttfr-systems", default="xforms,xforms-sync,jax",
                    help="ttfr systems: xforms (tiered), xforms-sync, jax")
    ap.add_argument("--first-only", action="store_true",
                    help="ttfr: stop at the first result (no swap / steady-state figures)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ops", type=int, default=300, help="operations in the scalar chain")
    ap.add_argument("--only", default="chain,mlp,gnn,conv", help="models: chain, mlp, block "
                    "(a transformer block: workloads/transformer_block.py), gnn, conv (the "
                    "tryout's graph network and conv net: workloads/tryout_nets.py)")
    ap.add_argument("--transforms", default=",".join(TRANSFORMS),
                    help="phases section: of f, grad (block: value_and_grad), hvp")
    ap.add_argument("--systems", default="xforms,jax")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)),
                    help="size section: equations of the scalar chains")
    ap.add_argument("--numba-max-eqns", type=int, default=None,
                    help="size section: no Numba compile for programs with more equations")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    models = {"chain": ("chain", {"model": "chain", "ops": args.ops}),
              "mlp": ("mlp", {"model": "mlp", "batch": 32, "hidden": 512}),
              "block": ("block", {"model": "block", "batch": 4, "seq": 64, "width": 128,
                                  "heads": 4}),
              "gnn": ("gnn", {"model": "gnn"}), "conv": ("conv", {"model": "conv"})}
    chosen = [models[m.strip()] for m in args.only.split(",") if m.strip()]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    results, ttfr, sized = {}, {}, {}
    if args.section in ("ttfr", "all"):
        progs = [p.strip() for p in args.programs.split(",") if p.strip()]
        ttfr = measure_ttfr(progs, args.repeats, ttfr_systems(args.ttfr_systems), log=log,
                            first_only=args.first_only)
        print("time to first result (s; fresh process, empty xforms cache; fast/call: the "
              "fast tier's cost per call; swap at: compiled tier ready, from the first call)")
        print(ttfr_table(ttfr))
    if args.section in ("phases", "all"):
        results = measure(chosen, args.repeats, tuple(args.systems.split(",")), log=log,
                          transforms=tuple(args.transforms.split(",")))
        print(table(results))
    if args.section in ("size", "all"):
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        sized = measure_size(sizes, args.repeats, numba_max=args.numba_max_eqns, log=log)
        print("compile time against program size (CPU s, median; fresh process, empty xforms "
              "cache; plan: prepare + fusion + emit + load; setup: Numba's once per process)")
        print(size_table(sized))
    load2 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"seconds, median of {args.repeats}; load average {load:.2f} before, {load2:.2f} after, "
          f"{os.cpu_count()} cores")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({**{"/".join(k): r for k, r in results.items()},
                       **{"ttfr/" + "/".join(k): r for k, r in ttfr.items()},
                       **{f"size/{n}/{tr}": r for (n, tr), r in sized.items()}}, fh, indent=1)


if __name__ == "__main__":
    main()
