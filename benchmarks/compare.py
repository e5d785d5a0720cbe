"""Compare two benchmark runs row by row, or lay later runs over an earlier one.

The published table is assembled from a full run and reruns of some workloads; a rerun is read
against the previous one row by row before it is published, so that a regression in any row
(not only the ones a change meant to move) is seen and bisected.

    python -m benchmarks.compare rows NEW.json OLD.json        # every xforms row, old -> new
    python -m benchmarks.compare rows NEW.json OLD.json --only-changed 1.15
    python -m benchmarks.compare merge BASE.json OVER1.json ... --out MERGED.json
    python -m benchmarks.compare show RUN.json [--only mlp,cliffs]   # the table's figures
    python -m benchmarks.compare habit RUN.json     # a --habit run's figures, Markdown

``rows`` prints one line per case measured in both: the xforms time, its ratio to JAX in
each run, and the per-process ratios where the run had several processes; ``!`` marks a
case whose xforms time moved by more than the threshold (default 1.15x either way).
``merge`` keeps BASE's rows except where a later file measured the same case (workload,
task, params, system): the later row wins; the output's ``meta.sources`` lists the files.

>>> _key({"workload": "mlp", "task": "jit(grad)", "params": {"batch": 1}, "system": "jax"})
('mlp', 'jit(grad)', '{"batch": 1}', 'jax')
"""
from __future__ import annotations

import argparse
import json
import sys

from .report import habit_note


def _key(row: dict) -> tuple:
    return row["workload"], row["task"], json.dumps(row["params"], sort_keys=True), row["system"]


def load_rows(path: str) -> dict:
    """The ok rows of a run's JSON by case key."""
    with open(path) as f:
        data = json.load(f)
    return {_key(r): r for r in data["rows"] if r.get("status") == "ok"}


def _g(v, spec=".4g") -> str:
    """`v` formatted, or '-' where the run recorded none."""
    return "-" if v is None else format(v, spec)


def _fmt_each(row: dict) -> str:
    each = row.get("ratio_jax_each")
    return "/".join(f"{r:.2f}" for r in each) if each else ""


def compare_rows(new: dict, old: dict, threshold: float = 1.15, only_changed: bool = False):
    """Lines comparing the xforms rows measured in both runs; the moved ones marked ``!``."""
    lines = []
    for key in sorted(k for k in new if k in old and k[3] == "xforms"):
        a, b = old[key], new[key]
        change = b["median_s"] / a["median_s"]
        moved = change > threshold or change < 1 / threshold
        if only_changed and not moved:
            continue
        ratios = f"{_g(a.get('ratio_jax'), '.2f')} -> {_g(b.get('ratio_jax'), '.2f')}"
        lines.append(f"{'!' if moved else ' '} {key[0]:14s} {key[1]:26s} {key[2]:48s} "
                     f"{_g(a['value']):>10s} -> {_g(b['value']):>10s} {a['unit']:9s} x{change:5.2f} "
                     f" jax {ratios}  {_fmt_each(b)}")
    return lines


def show_rows(rows: dict, only=()):
    """One line per xforms case of a run: its time, JAX's, the ratio and the limit's ratio
    (the README table's columns), and its first call beside JAX's."""
    lines = []
    for key in sorted(k for k in rows if k[3] == "xforms" and (not only or k[0] in only)):
        r = rows[key]
        jax = rows.get(key[:3] + ("jax",))
        jv = _g(jax["value"]) if jax else "-"
        first = f"first {_g(r.get('first_call_s'), '.3g')}/" \
                f"{_g(jax.get('first_call_s') if jax else None, '.3g')} s"
        habit = f"  {habit_note(r['habit'])}" if r.get("habit") else ""
        lines.append(f"{key[0]:14s} {key[1]:26s} {key[2]:48s} {_g(r['value']):>10s} {jv:>10s} "
                     f"{r['unit']:9s} x{_g(r.get('ratio_jax'), '5.2f')} "
                     f"lim {_g(r.get('ratio_limit'), '5.2f')}  {first}{habit}  {_fmt_each(r)}")
    return lines


def habit_rows(rows: dict, only=()):
    """A Markdown table of the xforms rows a --habit run measured (benchmarks/habit.py):
    the habit's ratio to the steady state, the time to compiled code (wall, CPU) against
    JAX's first call, what the later calls did, how many calls the fast tier answered (1:
    only the first; the timing measured compiled code), and the load."""
    lines = ["| workload | task | params | habit x | to compiled s (cpu) | JAX first s (cpu) "
             "| ×JAX first (cpu) | later calls | fast-tier calls | load |", "|" + "---|" * 10]
    for key in sorted(k for k in rows if k[3] == "xforms" and rows[k].get("habit")
                      and (not only or k[0] in only)):
        h = rows[key]["habit"]
        if "error" in h:
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {h['error']} ||||||| ")
            continue
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {h['ratio']:.2f} | {_g(h.get('ttc_s'), '.3g')} "
            f"({_g(h.get('ttc_cpu_s'), '.3g')}) | {_g(h.get('jax_first_call_s'), '.3g')} "
            f"({_g(h.get('jax_first_call_cpu_s'), '.3g')}) | {_g(h.get('ttc_x_jax_first'), '.2f')}"
            f" ({_g(h.get('ttc_cpu_x_jax_first'), '.2f')}) | {'; '.join(h['tiers'])} "
            f"| {h.get('fast_calls')} | {_g(h.get('load'), '.1f')} |")
    return lines


def merge_runs(paths: list[str]) -> dict:
    """BASE's run with every later file's rows laid over it, case by case."""
    with open(paths[0]) as f:
        merged = json.load(f)
    rows = {_key(r): r for r in merged["rows"]}
    for path in paths[1:]:
        with open(path) as f:
            for row in json.load(f)["rows"]:
                rows[_key(row)] = row
    merged["rows"] = list(rows.values())
    merged["meta"]["sources"] = list(paths)
    return merged


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.compare")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rows", help="compare NEW with OLD row by row")
    r.add_argument("new")
    r.add_argument("old")
    r.add_argument("--threshold", type=float, default=1.15)
    r.add_argument("--only-changed", action="store_true")
    sh = sub.add_parser("show", help="the xforms rows of one run beside JAX's")
    sh.add_argument("run")
    sh.add_argument("--only", default="")
    hb = sub.add_parser("habit", help="the --habit figures of one run, a Markdown table")
    hb.add_argument("run")
    hb.add_argument("--only", default="")
    m = sub.add_parser("merge", help="lay later runs over BASE")
    m.add_argument("paths", nargs="+")
    m.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if args.cmd == "show":
        only = tuple(w for w in args.only.split(",") if w)
        print("\n".join(show_rows(load_rows(args.run), only)))
        return 0
    if args.cmd == "habit":
        only = tuple(w for w in args.only.split(",") if w)
        print("\n".join(habit_rows(load_rows(args.run), only)))
        return 0
    if args.cmd == "rows":
        lines = compare_rows(load_rows(args.new), load_rows(args.old), args.threshold,
                             args.only_changed)
        print("\n".join(lines) if lines else "no case measured in both runs")
        return 0
    with open(args.out, "w") as f:
        json.dump(merge_runs(args.paths), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
