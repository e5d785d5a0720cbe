"""Child process of ``python -m benchmarks.compile_time --section size``: compile time
against program size.

``python -m benchmarks.workloads.size_child '{"eqns": 1000, "transform": "f"}'`` builds a
scalar chain of exactly ``eqns`` primitive operations (``y = sin(x)``, ``y = y * c``,
``x = y + x`` in turn), jits it (``"transform": "grad"``: its gradient) and runs the
synchronous compile phase by phase, each timed in wall and CPU seconds:

* ``trace``: tracing and transforming to the simplified IR (``Jitted._trace``);
* ``plan``: the compiler's own Python passes -- prepare, scalarise, fusion planning,
  emitting source and loading the module (``xforms.kernels.cpu.backend._prepare``);
* ``numba``: the Numba compile of the kernel (``xforms.kernels.cpu.backend._finish``), after Numba's
  once-per-process set-up, which is timed apart first (``numba_setup``); with
  ``"numba": false`` it is skipped (a quick run of a large program).

The three phases run with the cyclic GC paused, as a jit call's first trace and compile do
(xforms/exec/gc_pause.py; ``XFORMS_GC_PAUSE=0`` to measure them with it running).

One JSON line on stdout: the phases, ``eqns`` (equations of the IR handed to the compiler)
and ``statements`` (Python statements in the generated module); then ``os._exit``.
"""
import ast
import json
import os
import sys
import time


def chain(x, np_, eqns):
    """Exactly `eqns` scalar primitive operations."""
    y = x
    for i in range(eqns):
        k = i % 3
        if k == 0:
            y = np_.sin(x)
        elif k == 1:
            y = y * (0.5 + 0.01 * (i % 7))
        else:
            x = y + x
    return x if eqns % 3 == 0 else y


def statements(source):
    """Python statements in the generated module (its docstring, the program, not counted)."""
    tree = ast.parse(source)
    return sum(isinstance(node, ast.stmt) for node in ast.walk(tree)) - 1


def _timed(out, name, fn, *args):
    t, c = time.perf_counter(), time.process_time()
    result = fn(*args)
    out[name] = [time.perf_counter() - t, time.process_time() - c]
    return result


def main():
    spec = json.loads(sys.argv[1])
    import xforms as xf
    import xforms.numpy as xnp
    import xforms.kernels.cpu.backend as kc
    from xforms.exec import gc_pause

    n = spec["eqns"]
    f = lambda x: chain(x, xnp, n)  # noqa: E731
    jf = xf.jit(xf.grad(f) if spec.get("transform") == "grad" else f, tiered=False)
    phases = {}
    if spec.get("numba", True):
        _timed(phases, "numba_setup", kc.prewarm)
    with gc_pause.paused():                 # as a jit call's first trace and compile
        closed = _timed(phases, "trace", lambda: jf._trace((0.3,), {})[0])
        prep = _timed(phases, "plan", kc._prepare, closed, {"name": "chain"})
        if spec.get("numba", True):
            exe = _timed(phases, "numba", kc._finish, prep)
    if spec.get("numba", True):
        exe(0.3)
    print(json.dumps({"eqns": len(closed.jaxpr.eqns), "statements": statements(prep.source),
                      "phases": phases}), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
