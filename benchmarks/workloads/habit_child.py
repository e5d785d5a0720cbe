"""Child process of ``python -m benchmarks --habit``: one xforms row timed as a JAX user does.

``python -m benchmarks.workloads.habit_child '<json spec>'`` with spec keys ``workload``,
``task`` and ``params`` (the row), ``quick``, ``backend``, ``sim`` and ``seed`` (the run's
context, so that the workload builds the same cases) and ``repeats``, ``target``,
``budget`` (the run's timing settings).  Builds the row's input and its xforms function,
then `benchmarks.habit.measure`: first call, timing at once, time to compiled code,
steady state.  One JSON line on stdout; the process leaves with ``os._exit``.  The cache
directory is the parent's choice (an empty one: `habit.of_row`).
"""
import json
import os
import shutil
import sys


def build(spec):
    """(xforms function, args, the case) of the spec's row, built as the harness builds it;
    SystemExit where the row has no such function (a setup that measured itself)."""
    from benchmarks.harness import Context, Measured
    from benchmarks.workloads import load
    ctx = Context(quick=spec["quick"], backend=spec["backend"], sim=spec["sim"],
                  seed=spec["seed"])
    want = json.dumps(spec["params"], sort_keys=True)
    try:
        case = next(c for c in load(spec["workload"]).cases(ctx) if c.task == spec["task"]
                    and json.dumps(c.params, sort_keys=True, default=str) == want)
    except StopIteration:
        raise SystemExit(f"no case {spec['task']!r} {want} in {spec['workload']}") from None
    prepared = case.systems["xforms"](case.make())
    if isinstance(prepared, Measured):
        raise SystemExit("the row measures itself (its own processes)")
    fn, args = prepared if isinstance(prepared, tuple) else (prepared, ())
    return fn, args, case, ctx


def main():
    spec = json.loads(sys.argv[1])
    fn, args, case, ctx = build(spec)
    from benchmarks import habit
    import contextlib
    with (case.background() if case.background else contextlib.nullcontext()):
        out = habit.measure(fn, args, spec["repeats"], spec["target"], spec["budget"])
    shutil.rmtree(ctx.tmpdir, ignore_errors=True)
    print(json.dumps(out), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
