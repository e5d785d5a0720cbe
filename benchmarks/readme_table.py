"""The top-level README's benchmark table, rendered from a run's JSON.

    python -m benchmarks.readme_table RUN.json          # the table's lines, to paste

Each row names its cases (workload, task, params) in the order its cells list them; a cell
shows the xforms and JAX figures, their ratio and the hand-written limit's ratio, as
`report.add_ratios` computed them.  A row whose cases the run lacks is left out (and
reported on stderr), so a partial run renders the rows it measured.

>>> _fmt(0.7436), _fmt(6.5), _fmt(1081.0)
('0.744', '6.50', '1.08e+03')
"""
from __future__ import annotations

import json
import sys

_UNITS = {"ms/call": "ms", "ms/step": "ms", "µs/call": "µs", "ns/elem": "ns", "ns/iter": "ns",
          "s": "s"}
_LIMITS = {"numba": "Numba", "numpy": "NumPy", "autograd": "autograd"}


def _k(workload, task, **params):
    return workload, task, json.dumps(params, sort_keys=True)


def _mlp(batch, dt):
    return _k("mlp", "jit(grad)", batch=batch, dtype=dt, hidden=512)


def _eager(op, dt):
    return _k("eager", f"{op} {dt}, no jit", n=10 ** 6)


def _vec(f, dt):
    return _k("vecmath", f"{f}_{dt}", n=10 ** 6, threads=2)


def _compile(task, **params):
    return _k("compile", task, **params)


MLP32 = dict(batch=32, hidden=512, model="mlp")
# (label, cases, which figure: "value" or "first_call_s")
ROWS = [
    ("dispatch: `jit(grad(f))` on a float", [_k("dispatch", "jit(grad)", x="float")], "value"),
    ("`pow` loop gradient, n = 10⁶ (per iteration)", [_k("pow_loop", "grad", n=10 ** 6)], "value"),
    ("MLP 784-512-512-10 `jit(grad)`, batch 1, f32 / f64 †",
     [_mlp(1, "float32"), _mlp(1, "float64")], "value"),
    ("MLP, batch 32, f32 / f64 †", [_mlp(32, "float32"), _mlp(32, "float64")], "value"),
    ("MLP, batch 256, f32 / f64 †", [_mlp(256, "float32"), _mlp(256, "float64")], "value"),
    ("MLP, batch 1024, f32 / f64 †", [_mlp(1024, "float32"), _mlp(1024, "float64")], "value"),
    ("elementwise `sum(sin·cos + exp(-x²))` grad, n = 10⁵ / 10⁶ / 10⁷",
     [_k("elementwise", "grad", n=10 ** e, threads=2) for e in (5, 6, 7)], "value"),
    ("float32 tanh / exp / log / sin, 10⁶ (per element)",
     [_vec(f, "float32") for f in ("tanh", "exp", "log", "sin")], "value"),
    ("float64 tanh / exp / log / sin, 10⁶ (per element)",
     [_vec(f, "float64") for f in ("tanh", "exp", "log", "sin")], "value"),
    ("Rosenbrock with strided slices (`x[::2]`), grad, n = 10⁵ / 10⁶ (per element)",
     [_k("rosenbrock_hvp", "grad_strided", n=10 ** e) for e in (5, 6)], "value"),
    ("Rosenbrock `hvp`, n = 10³ / 10⁵ / 10⁶ (per element)",
     [_k("rosenbrock_hvp", "hvp", n=10 ** e) for e in (3, 5, 6)], "value"),
    ("`jacfwd` / `jacrev` of tanh(W x), W 1000 × 10",
     [_k("jacobians", t, m=1000, n=10) for t in ("jacfwd", "jacrev")], "value"),
    ("`jacfwd` / `jacrev`, 300 × 300",
     [_k("jacobians", t, size=300) for t in ("jacfwd", "jacrev")], "value"),
    ("`jacfwd`, 300 × 300, another process spinning on one of the 2 cores",
     [_k("jacobians", "jacfwd", busy=1, m=300, n=300)], "value"),
    ("RK4 Lorenz, 1000 steps, array state: f / gradient",
     [_k("rk4", "f_array", steps=1000), _k("rk4", "grad_array", steps=1000)], "value"),
    ("RK4 Lorenz gradient, tuple state, 1000 steps", [_k("rk4", "grad", steps=1000)], "value"),
    ("FFT convolution loss `jit(grad)`, n = 2¹⁰ / 2¹⁶ / 2²⁰",
     [_k("fft_conv", "jit(grad)", dtype="float64", n=2 ** e) for e in (10, 16, 20)], "value"),
    ("Gaussian-process NLL `jit(grad)`, n = 100 / 500 / 2000",
     [_k("gp_nll", "jit(grad)", dtype="float64", n=n) for n in (100, 500, 2000)], "value"),
    ("`random.normal` 10⁵ / 10⁶ / 10⁷ float64 (per element)",
     [_k("random", "normal", n=10 ** e) for e in (5, 6, 7)], "value"),
    ("`random.uniform`, 10⁷ float64 (per element)", [_k("random", "uniform", n=10 ** 7)],
     "value"),
    ("small CNN `jit(grad)`, f32, batch 1 / 32 / 128",
     [_k("cnn", "jit(grad)", batch=b, dtype="float32") for b in (1, 32, 128)], "value"),
    ("first call of that CNN at batch 128 (cold: fast tier while compiling)",
     [_k("cnn", "jit(grad)", batch=128, dtype="float32")], "first_call_s"),
    ("JAX's MNIST-from-scratch `update` (784-1024-1024-10, batch 128, f64) †",
     [_k("real_programs", "mnist update", batch=128, dtype="float64")], "value"),
    ("JAX's MNIST VAE example, training step (f64) †",
     [_k("real_programs", "vae train step", batch=32, dtype="float64")], "value"),
    ("LSTM over 100 steps by `lax.scan` (batch 32, hidden 128, f32): `jit(grad)` / forward",
     [_k("cliffs", "lstm grad", dtype="float32"), _k("cliffs", "lstm forward", dtype="float32")],
     "value"),
    ("transformer block (batch 8, seq 128, width 256): forward f32 / f64",
     [_k("cliffs", "block forward", dtype=d) for d in ("float32", "float64")], "value"),
    ("same block, `value_and_grad` f32 / f64",
     [_k("cliffs", "block value_and_grad", dtype=d) for d in ("float32", "float64")], "value"),
    ("Newton-CG step: 10 CG iterations in `fori_loop`, each an `hvp` (10⁴ × 100) †",
     [_k("cliffs", "newton_cg step", dtype="float64")], "value"),
    ("`odeint` (Dormand-Prince) Lotka-Volterra to t = 50, `jit(grad)`",
     [_k("ode", "grad", t_end=50.0)], "value"),
    ("`grad` without `jit` (the user's Python each call): RNN / LSTM / black-box SVI / MLP",
     [_k("eager", "grad, no jit", program=p) for p in ("rnn", "lstm", "bbsvi", "mlp")], "value"),
    ("one complex op without `jit`, 10⁶ elements: complex64 divide / log / exp / sqrt",
     [_eager(op, "complex64") for op in ("divide", "log", "exp", "sqrt")], "value"),
    ("cold compile 300-op chain `jit(f)` / `jit(grad)` / `jit(hvp)`",
     [_compile(f"cold jit({t})", model="chain", ops=300) for t in ("f", "grad", "hvp")], "value"),
    ("cold compile MLP `jit(f)` / `jit(grad)` / `jit(hvp)`",
     [_compile(f"cold jit({t})", **MLP32) for t in ("f", "grad", "hvp")], "value"),
    ("time to compiled code, cold: transformer block (4 × 64 × 128) `grad` / LSTM `grad` / "
     "CNN `grad` (batch 32) / heat / RK4 `grad`",
     [_compile("cold jit(grad)", batch=4, heads=4, model="block", seq=64, width=128),
      _compile("cold jit(grad)", model="lstm"), _compile("cold jit(grad)", model="cnn"),
      _compile("cold jit(f)", model="heat"), _compile("cold jit(grad)", model="rk4")], "value"),
    ("second process to first MLP gradient (disk cache)", [_compile("ttfg warm", **MLP32)],
     "value"),
]


def _fmt(v: float) -> str:
    """Three significant digits, trailing zeros kept (6.50, 10.0)."""
    return f"{v:#.3g}".rstrip(".").replace(".e", "e")


def _cells(rows: list[dict], jaxes: list[dict], figure: str):
    if figure == "first_call_s":
        xs, js, unit = [r["first_call_s"] for r in rows], [j["first_call_s"] for j in jaxes], "s"
    else:
        xs, js = [r["value"] for r in rows], [j["value"] for j in jaxes]
        unit = _UNITS.get(rows[0]["unit"], rows[0]["unit"])
    ratios = " / ".join(f"{x / j:.2f}" for x, j in zip(xs, js))
    limits = [r.get("ratio_limit") for r in rows]
    limit = ""
    if figure == "value" and all(v is not None for v in limits) and rows[0]["limit"] != "jax":
        limit = " / ".join(f"{v:.2f}" for v in limits) + f" ({_LIMITS.get(rows[0]['limit'], rows[0]['limit'])})"
    return (" / ".join(map(_fmt, xs)) + f" {unit}", " / ".join(map(_fmt, js)) + f" {unit}",
            ratios, limit)


def render(data: dict) -> list[str]:
    """The table's lines for run `data` (its rows measured ok)."""
    ok = {(r["workload"], r["task"], json.dumps(r["params"], sort_keys=True), r["system"]): r
          for r in data["rows"] if r.get("status") == "ok"}
    lines = ["| workload | xforms | JAX (`jax.jit`) | xforms ÷ JAX | xforms ÷ hand-written limit |",
             "|---|---|---|---|---|"]
    for label, cases, figure in ROWS:
        try:
            rows = [ok[c + ("xforms",)] for c in cases]
            jaxes = [ok[c + ("jax",)] for c in cases]
        except KeyError as e:
            print(f"left out (not in the run): {label}: {e}", file=sys.stderr)
            continue
        lines.append("| " + " | ".join((label,) + _cells(rows, jaxes, figure)) + " |")
    return lines


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print("\n".join(render(json.load(f))))
