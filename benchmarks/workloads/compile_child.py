"""Child process of the ``compile`` workload: import, build, first call, exit.

Run as ``python -m benchmarks.workloads.compile_child '<json spec>'`` with the
cache directories in the environment.  Prints one JSON line with
``setup_s`` (imports and inputs), ``first_s`` (trace + compile + first call) and
``steady_s`` (a later call), with the CPU time of the first two
(``setup_cpu_s``, ``first_cpu_s``), then leaves at once with ``os._exit`` so
that interpreter teardown does not count.

With ``"detail": true`` in the spec the first call is also split into phases
(``phases``: name -> [wall s, CPU s]) without changing what it does: for
xforms, importing the compiler package (Numba included), planning, emitting,
loading the module and the Numba compile (the rest is tracing and
transforming); for JAX, ``lower`` (trace to StableHLO) and ``compile`` (XLA),
run through the AOT API.  ``numba`` also holds Numba's own split from the
kernel's metadata: ``numba_llvm_s`` (wall time inside LLVM) and
``numba_helpers_s`` (compiling the runtime helpers the kernel calls).
"""
import time

T0 = time.perf_counter()
C0 = time.process_time()

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402


def chain(x, np_, ops):
    """A scalar chain of `ops` primitive operations (sin, mul, add repeated)."""
    for i in range(ops // 3):
        x = np_.sin(x) * (0.5 + 0.01 * (i % 7)) + x
    return x


def numba_chain_source(ops):
    """Hand-written (generated) Numba source for the chain and its derivative."""
    body_f, body_g = [], []
    for i in range(ops // 3):
        c = 0.5 + 0.01 * (i % 7)
        body_f.append(f"    x = math.sin(x) * {c!r} + x")
        body_g.append(f"    d = (math.cos(x) * {c!r} + 1.0) * d")
        body_g.append(f"    x = math.sin(x) * {c!r} + x")
    return ("import math\nimport numba\n\n@numba.njit(cache=True)\ndef f(x):\n"
            + "\n".join(body_f) + "\n    return x\n\n@numba.njit(cache=True)\ndef grad(x):\n    d = 1.0\n"
            + "\n".join(body_g) + "\n    return d\n")


def build(spec):
    """(function, args, block) for the spec, importing what it needs."""
    system, model, transform = spec["system"], spec["model"], spec["transform"]
    if model == "mlp":
        from benchmarks.workloads.mlp import loss, make_data
        params, xb, yb = make_data(spec["batch"], spec["hidden"], "float32")
        v = {k: np.ones_like(a) for k, a in params.items()}
    if model == "block":
        from benchmarks.workloads import transformer_block
        params, xb = transformer_block.make_data(spec["batch"], spec["seq"], spec["width"])
        v = {k: np.ones_like(a) for k, a in params.items()}
    if model in ("gnn", "conv"):
        from benchmarks.workloads import tryout_nets
        net, data = getattr(tryout_nets, "make_" + model)()
        v = {k: np.ones_like(a) for k, a in data[0].items()}
    if model in OUTSIDE:            # issue #35's programs outside the suite
        return _outside(spec)
    if system == "numba":
        if model != "chain" or transform == "hvp":
            raise SystemExit("numba: only f and grad of the chain are hand-written")
        path = os.path.join(os.environ["NUMBA_CACHE_DIR"], f"chain{spec['ops']}.py")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):   # rewriting would change the mtime and void Numba's cache
            with open(path, "w") as fh:
                fh.write(numba_chain_source(spec["ops"]))
        sys.path.insert(0, os.path.dirname(path))
        mod = __import__(f"chain{spec['ops']}")
        return getattr(mod, transform), (0.3,), lambda r: r
    if system == "xforms":
        import xforms as tf
        import xforms.numpy as tnp
        from xforms import nn
        # the synchronous compile (tiered execution: workloads/ttfr_child.py)
        jit = lambda f: tf.jit(f, backend=spec["backend"], tiered=False)  # noqa: E731
        log_softmax, block, nn_ = nn.log_softmax, (lambda r: r), nn
        hvp = tf.hvp
    else:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as tnp
        tf, jit, log_softmax, block = jax, jax.jit, jax.nn.log_softmax, jax.block_until_ready
        nn_ = jax.nn
        hvp = lambda f, p, t: jax.jvp(jax.grad(f), p, t)[1]  # noqa: E731
    if model == "chain":
        f, args, tangents = (lambda x: chain(x, tnp, spec["ops"])), (0.3,), (1.0,)
    elif model in ("gnn", "conv"):      # tryout_nets: the parameters are differentiated
        f = lambda P, *rest: net(P, *rest, tf, tnp)  # noqa: E731
        args, tangents = data, (v,)
    elif model == "block":        # (jit(value_and_grad), as a training step takes it)
        f = lambda P: transformer_block.loss(P, xb, spec["heads"], tnp, nn_)  # noqa: E731
        args, tangents = (params,), (v,)
    else:
        f = lambda P: loss(P, xb, yb, tnp, log_softmax)  # noqa: E731
        args, tangents = (params,), (v,)
    grad = tf.value_and_grad(f) if model == "block" else tf.grad(f)
    # hvp: along the first argument (the parameters), the others held
    fn = {"f": f, "grad": grad, "hvp": lambda p, *rest: hvp(lambda q: f(q, *rest), (p,),
                                                           tangents)}[transform]
    return jit(fn), args, block


# issue #35's programs outside the suite, each as its benchmark workload writes it: model ->
# (workload module, program of a namespace `ns`, data of a seed).  `transform` "grad" is the
# program's own derivative (the LSTM's, CNN's and RK4's gradient); "f" the forward (heat).
OUTSIDE = {
    "lstm": ("cliffs", lambda w, ns: ns.grad(lambda p, xs: w.lstm_loss(ns, p, xs)),
             lambda w: w.lstm_data(0)),
    "cnn": ("cnn", lambda w, ns: ns.grad(lambda P, x, y: w.loss(P, x, y, ns.np, ns.lax,
                                                                ns.log_softmax)),
            lambda w: w.make_data(32, "float32")),
    "heat": ("cliffs", lambda w, ns: w.heat(ns), lambda w: w.heat_data(0)),
    "rk4": ("rk4", lambda w, ns: ns.grad(lambda s, q: w.loss(s, q, 1000, ns.lax.fori_loop),
                                         argnums=(0, 1)), lambda w: (w.S0, w.P0)),
}


def _namespace(system):
    """(numpy, lax, grad, value_and_grad, log_softmax, jit, block) of `system`."""
    import types
    if system == "xforms":
        import xforms as tf
        import xforms.numpy as tnp
        from xforms import lax, nn
        return types.SimpleNamespace(np=tnp, lax=lax, grad=tf.grad, log_softmax=nn.log_softmax,
                                     value_and_grad=tf.value_and_grad, block=lambda r: r,
                                     jit=lambda f, backend: tf.jit(f, backend=backend,
                                                                   tiered=False))
    import jax
    jax.config.update("jax_enable_x64", True)
    return types.SimpleNamespace(np=jax.numpy, lax=jax.lax, grad=jax.grad,
                                 log_softmax=jax.nn.log_softmax,
                                 value_and_grad=jax.value_and_grad,
                                 block=jax.block_until_ready, jit=lambda f, backend: jax.jit(f))


def _outside(spec):
    """(jitted function, args, block) of an OUTSIDE program."""
    import importlib
    name, program, data = OUTSIDE[spec["model"]]
    w = importlib.import_module(f"benchmarks.workloads.{name}")
    if spec["system"] not in ("xforms", "jax"):
        raise SystemExit(f"{spec['system']}: {spec['model']} is run by xforms and JAX only")
    ns = _namespace(spec["system"])
    args = data(w)
    args = args if isinstance(args, tuple) else (args,)
    return ns.jit(program(w, ns), spec["backend"]), args, ns.block


class _Phases:
    """Accumulates [wall, CPU] seconds per phase name."""

    def __init__(self):
        self.times = {}

    def timed(self, name, fn):
        def wrapper(*a, **k):
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:
                acc = self.times.setdefault(name, [0.0, 0.0])
                acc[0] += time.perf_counter() - t
                acc[1] += time.process_time() - c
        return wrapper


def _xforms_detail(phases, extra):
    """Import the compiler package (timed) and wrap its phases; Numba's own split of the
    kernel compile goes to `extra`.  Numba is imported (and timed as "import kernels") only
    when a program needs it (xforms/kernels/cpu/backend.py `numba_side`): the direct LLVM
    path's programs never import it."""
    phases.timed("import kernels", lambda: __import__("xforms.kernels.cpu.backend"))()
    import xforms.kernels.cpu.backend as kc
    kc.plan_program = phases.timed("plan", kc.plan_program)
    kc._llvm_kernel = phases.timed("llvmlite", kc._llvm_kernel)   # scalar programs' direct path
    numba_side = phases.timed("import kernels", kc.numba_side)

    def numba_side_wrapped():
        first = kc.AdaptiveThreads is None
        numba_side()
        if first:
            _wrap_numba_side(kc, phases, extra)
    kc.numba_side = numba_side_wrapped


def _wrap_numba_side(kc, phases, extra):
    """Time the Numba side's phases, once `numba_side` has bound them."""
    from numba.core import event
    kc.emit_module = phases.timed("emit", kc.emit_module)
    kc.codecache.load_module = phases.timed("load", kc.codecache.load_module)
    compile_kernel = phases.timed("numba", kc.codecache.compile_kernel)

    class Nested(event.Listener):          # time compiling dispatchers the kernel calls
        depth, start = 0, 0.0

        def on_start(self, ev):
            self.depth += 1
            if self.depth == 2:
                self.start = time.perf_counter()

        def on_end(self, ev):
            if self.depth == 2:
                extra["numba_helpers_s"] = (extra.get("numba_helpers_s", 0.0)
                                            + time.perf_counter() - self.start)
            self.depth -= 1

    event.register("numba:compile", Nested())

    def compile_and_record(*a, **k):
        disp = compile_kernel(*a, **k)
        for sig in disp.signatures:
            timers = (disp.get_metadata(sig) or {}).get("timers", {})   # None: from disk
            extra["numba_llvm_s"] = extra.get("numba_llvm_s", 0.0) + timers.get("llvm_lock", 0.0)
        return disp
    kc.codecache.compile_kernel = compile_and_record


def _jax_first_call(phases, fn, args):
    """jax.jit's first call through the AOT API, so that tracing and XLA compile are timed
    apart; returns the compiled callable (used for the steady calls too)."""
    lowered = phases.timed("lower", fn.lower)(*args)
    return phases.timed("compile", lowered.compile)()


def main():
    spec = json.loads(sys.argv[1])
    fn, args, block = build(spec)
    t_setup, c_setup = time.perf_counter() - T0, time.process_time() - C0
    phases, extra = _Phases(), {}
    t1, c1 = time.perf_counter(), time.process_time()
    if spec.get("detail") and spec["system"] == "xforms":
        _xforms_detail(phases, extra)
    elif spec.get("detail") and spec["system"] == "jax":
        fn = _jax_first_call(phases, fn, args)
    block(fn(*args))
    t_first, c_first = time.perf_counter() - t1, time.process_time() - c1
    steady = []
    for _ in range(3):
        t2 = time.perf_counter()
        block(fn(*args))
        steady.append(time.perf_counter() - t2)
    print(json.dumps({"setup_s": t_setup, "first_s": t_first, "steady_s": sorted(steady)[1],
                      "setup_cpu_s": c_setup, "first_cpu_s": c_first, "phases": phases.times,
                      **extra}), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
