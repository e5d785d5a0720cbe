"""Ratios, the printed table, the JSON file and the PNG plots of a run."""
from __future__ import annotations

import json
import os
import platform
import re
import socket
from collections import defaultdict

from .peers import DESCRIPTIONS, SYSTEMS


def fmt_params(params: dict) -> str:
    return " ".join(f"{k}={fmt_num(v)}" for k, v in params.items())


def fmt_num(v) -> str:
    if isinstance(v, int) and v >= 10_000 and str(v).rstrip("0") == "1":
        return f"1e{len(str(v)) - 1}"
    return str(v)


def _key(row) -> tuple:
    return row["workload"], row["task"], json.dumps(row["params"], sort_keys=True)


_PER_PROCESS = ("window", "blas_history", "parallel_calls", "parallel_sequence", "samples_ms",
                "machine")


def merge_processes(rows: list[dict]) -> list[dict]:
    """One row per (case, system) from rows measured in several processes (``process``
    0, 1, ...): the row of the median process (by ``median_s``), with ``process_median_s``,
    each process's time in order, and ``spread``, the slowest over the fastest.  Rows of
    one process pass through unchanged.  ``process_diagnostics``: each process's timing
    window, thread choices and machine probe, where the harness recorded them.

    >>> merge_processes([dict(r, process=k, median_s=t) for k, t in enumerate((1., 3., 2.))])
    [{..., 'median_s': 2.0, 'process_median_s': [1.0, 3.0, 2.0], 'spread': 3.0}]
    """
    groups = defaultdict(list)
    for row in rows:
        groups[_key(row) + (row["system"],)].append(row)
    out = []
    for group in groups.values():
        if len(group) == 1 or any(r["status"] != "ok" for r in group):
            out.append(next((r for r in group if r["status"] != "ok"), group[0]))
            continue
        group.sort(key=lambda r: r.get("process", 0))
        times = [r["median_s"] for r in group]
        mid = sorted(group, key=lambda r: r["median_s"])[len(group) // 2]
        merged = dict(mid, process_median_s=times, spread=max(times) / min(times))
        # each process's timing window, thread choices and the machine's speed beside it
        # (harness._window, _thread_history, machine_speed): what tells a row's two speeds apart
        each = [{k: r[k] for k in _PER_PROCESS if k in r} for r in group]
        if any(each):
            merged["process_diagnostics"] = each
        out.append(merged)
    return out


def add_ratios(rows: list[dict]) -> None:
    """Fill ``value`` (in the case's unit) and ``ratio_jax/limit/f`` (time ÷ that system's)."""
    by_case, peak = defaultdict(dict), {}
    for row in rows:
        if row["status"] == "ok":
            by_case[_key(row)][row["system"]] = row["median_s"]
            if "device_peak_bandwidth_GBps" in row:      # time at the GPU's peak bandwidth
                peak[_key(row)] = row["median_s"]
    for row in rows:
        if row["status"] != "ok":
            continue
        row["value"] = row["median_s"] * row["scale"]
        ref = by_case[_key(row)]
        for col, system in (("ratio_jax", "jax"), ("ratio_limit", row["limit"]), ("ratio_f", "f")):
            row[col] = row["median_s"] / ref[system] if ref.get(system) else None
        if row["system"] == "xforms" and _key(row) in peak:
            row["peak_bandwidth_fraction"] = peak[_key(row)] / row["median_s"]
    _ratios_each_process(rows)
    _habit_against_jax_first(rows)


def _habit_against_jax_first(rows):
    """An xforms row's time to compiled code (``habit``, benchmarks/habit.py) over the JAX
    row's first call, wall (``ttc_x_jax_first``) and CPU (``ttc_cpu_x_jax_first``)."""
    jax = {_key(r): r for r in rows if r["system"] == "jax" and r["status"] == "ok"}
    for row in rows:
        h, theirs = row.get("habit"), jax.get(_key(row))
        if not h or not theirs:
            continue
        for mine, first, col in (("ttc_s", "first_call_s", "ttc_x_jax_first"),
                                 ("ttc_cpu_s", "first_call_cpu_s", "ttc_cpu_x_jax_first")):
            if h.get(mine) is not None and theirs.get(first):
                h[col] = h[mine] / theirs[first]
                h["jax_" + first] = theirs[first]


def _ratios_each_process(rows):
    """``ratio_jax_each``: each process's time over JAX's in the same process."""
    jax = {_key(r): r["process_median_s"] for r in rows
           if r["system"] == "jax" and "process_median_s" in r}
    for row in rows:
        theirs = jax.get(_key(row))
        if "process_median_s" in row and theirs and len(theirs) == len(row["process_median_s"]):
            row["ratio_jax_each"] = [a / b for a, b in zip(row["process_median_s"], theirs)]


def _num(v, width=9) -> str:
    """Three significant digits without exponents where that fits, right-aligned."""
    if v is None:
        return " " * width
    a = abs(v)
    s = (f"{v:.3g}" if a < 1 else f"{v:.2f}" if a < 10 else f"{v:.1f}" if a < 100
         else f"{v:.0f}" if a < 1e6 else f"{v:.2e}")
    return s.rjust(width)


def habit_note(h: dict) -> str:
    """A row's --habit figures in a few words: 'habit x1.02, compiled after 1.3 s (x0.9
    JAX's first call)'."""
    if "error" in h:
        return f"habit: {h['error']}"
    out = f"habit x{h['ratio']:.2f}"
    if h.get("ttc_s") is not None:
        out += f", compiled after {h['ttc_s']:.3g} s"
        if h.get("ttc_x_jax_first") is not None:
            out += f" (x{h['ttc_x_jax_first']:.2f} JAX's first call)"
    return out


def table(rows: list[dict], width: int = 170) -> str:
    """A plain-text table: one line per (case, system), case headers when they change."""
    head = f"{'system':<10}{'time':>10} {'unit':<8}{'×JAX':>8}{'×limit':>8}{'×f':>8}  note"
    out, last_wl, last_case = [], None, None
    for row in rows:
        if row["workload"] != last_wl:
            last_wl = row["workload"]
            out += ["", f"== {last_wl} " + "=" * 60, head]
        if _key(row) != last_case:
            last_case = _key(row)
            out.append(f"-- {row['task']}  {fmt_params(row['params'])}  (limit: {row['limit']})")
        if row["status"] == "ok":
            note = f"first call {row['first_call_s']:.3g} s" if row.get("first_call_s", 0) > 0.5 else ""
            if row.get("kernel_launches") is not None:
                note += f"  {row['kernel_launches']} kernel launches/call"
                c = row.get("launch_counts") or {}
                extra = [f"{c[k]} {k.replace('_', ' ')}" for k in ("library", "host_waits")
                         if c.get(k)]
                note += f" ({', '.join(extra)})" if extra else ""
            if row.get("host_us") is not None:
                note += f"  {row['host_us']:.1f} µs host/call"
            if row.get("graph"):
                note += f"  graph {row['graph']}"
            if row.get("peak_bandwidth_fraction") is not None:
                note += f"  {row['peak_bandwidth_fraction']:.0%} of peak bandwidth"
            if row.get("habit"):
                note += "  " + habit_note(row["habit"])
            if row.get("spread") is not None:
                each = row.get("ratio_jax_each")
                note += (f"  {len(row['process_median_s'])} processes: spread "
                         f"{row['spread']:.2f}" + (" ×JAX " + "/".join(f"{r:.2f}" for r in each)
                                                   if each and row["system"] != "jax" else ""))
            line = (f"{row['system']:<10}{_num(row['value'], 10)} {row['unit']:<8}"
                    f"{_num(row.get('ratio_jax'), 8)}{_num(row.get('ratio_limit'), 8)}"
                    f"{_num(row.get('ratio_f'), 8)}  {note}")
        else:
            status = row["status"] + (f": {row['reason']}" if row["reason"] else "")
            line = f"{row['system']:<10}{'':>10} {'':<8}{'':>24}  {status}"
        out.append(line[:width].rstrip())
    present = [s for s in SYSTEMS if any(r["system"] == s for r in rows)]
    out += ["", "systems: " + "; ".join(f"{s} = {DESCRIPTIONS[s]}" for s in present),
            "×JAX, ×limit, ×f: this time divided by JAX's, the case's limit's, the plain forward f's"]
    return "\n".join(out)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_tag() -> str:
    """``hostname-cpu`` reduced to file-name-safe characters, e.g. ``vm-Xeon-2.50GHz``."""
    cpu = re.sub(r"\((R|TM|tm|r)\)|\bCPU\b|\bProcessor\b|\bIntel\b|\bAMD\b|\bCore\b|@", " ", cpu_model())
    cpu = "-".join(cpu.split()[:3])
    return re.sub(r"[^A-Za-z0-9.-]+", "-", f"{socket.gethostname().split('.')[0]}-{cpu}").strip("-")


def write_json(path: str, meta: dict, rows: list[dict]) -> None:
    with open(path, "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1, default=str)


def plot_workload(path: str, name: str, module, rows: list[dict]) -> bool:
    """Time vs the sweep parameter (log-log), one panel per task and fixed parameters.

    Workloads without a sweep get a bar chart per case.  Returns False if
    there was nothing to plot.
    """
    try:
        import matplotlib
    except ImportError:     # plots need the bench extra; tables and JSON do not
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if r["status"] == "ok"]
    together = getattr(module, "PLOT_TOGETHER", False)
    panels = defaultdict(lambda: defaultdict(list))   # panel -> series -> [(x, y)]
    bars = defaultdict(dict)
    sweep_key = getattr(module, "SWEEP", None)
    for r in ok:
        x = r["params"].get(sweep_key) if sweep_key else None
        fixed = {k: v for k, v in r["params"].items() if k != sweep_key} if x is not None else r["params"]
        what = " / ".join(sorted({q["task"] for q in ok})) if together else r["task"]
        panel = f"{what} {fmt_params(fixed)} [{r['unit']}]".replace("  ", " ")
        series = f"{r['system']} {r['task']}" if together else r["system"]
        if x is None:
            bars[f"{r['task']} {fmt_params(r['params'])} [{r['unit']}]"][r["system"]] = r["value"]
        else:
            panels[panel][series].append((x, r["value"]))
    items = list(panels.items()) + list(bars.items())
    if not items:
        return False
    ncol = min(3, len(items))
    nrow = -(-len(items) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol, 3.8 * nrow), squeeze=False)
    order = {s: i for i, s in enumerate(SYSTEMS)}
    tasks = sorted({r["task"] for r in ok})
    for ax, (title, content) in zip(axes.flat, items):
        if title in panels:
            for series, pts in sorted(content.items(), key=lambda kv: (order.get(kv[0].split()[0], 99), kv[0])):
                system, task = (series.split() + [""])[:2]
                if together and system in ("f", "numpy") and task != tasks[0]:
                    continue   # the hand-written curves do not depend on the mode
                pts.sort()
                style = ("-", "--", ":")[tasks.index(task) % 3] if together and system not in ("f", "numpy") \
                    else ("--" if system in ("numba", "numpy", "bandwidth", "f") else "-")
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                        color=f"C{order.get(system, 9)}", label=system if system in ("f", "numpy") else series)
            ax.set_xscale("log")
            ax.set_xlabel(getattr(module, "SWEEP", None) or "size")
        else:
            names = sorted(content, key=lambda s: order.get(s, 99))
            values = [content[s] for s in names]
            bars_ = ax.bar(names, values, color=[f"C{order.get(s, 9)}" for s in names])
            ax.bar_label(bars_, labels=[f"{v:.3g}" for v in values], fontsize=7)
            ax.tick_params(axis="x", rotation=30)
        if title in panels or max(content.values()) > 30 * min(content.values()):
            ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        if title in panels:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(items):]:
        ax.set_visible(False)
    fig.suptitle(f"{name}  ({os.path.basename(path)})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
