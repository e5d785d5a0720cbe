"""Child process of ``python -m benchmarks.compile_time --section ttfr``: time to first result.

``python -m benchmarks.workloads.ttfr_child '<json spec>'`` with spec keys ``system``
(xforms | jax), ``program`` (see PROGRAMS) and, for xforms, ``tiered`` (bool).  Imports and
inputs come first (``setup_s``), then the first call is timed (trace + compile or, tiered,
trace + the fast tier's evaluation: ``first_s``).  Tiered xforms then times a few more calls
on the fast tier (``fast_call_s``, median) and the moment the compiled tier is ready
(``swap_s``, from the start of the first call); every system then times a steady call
(``steady_s``).  For ``readme_batches`` the first calls at batch sizes 100, 101, 57, 3, 1,
8 and 64 follow (1: a size-1 axis; 8 and 64: equal to the inner sizes of w), each after
the previous one is compiled (``batches``: size -> first-call seconds, ``batches_cpu`` the
same in CPU seconds, steadier on a loaded machine; ``batch_compiles``: the kernels xforms
compiled for them, 0 when the sizes reuse the first size's kernel,
xforms/kernels/prepare/shape_symbols.py; ``batch_compiles_each``: the same per size).
One JSON line on stdout; the process leaves with ``os._exit``.
"""
import time

T0 = time.perf_counter()

import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NEW_BATCHES = (100, 101, 57, 3, 1, 8, 64)


def _chain(x, np_, ops=300):
    for i in range(ops // 3):
        x = np_.sin(x) * (0.5 + 0.01 * (i % 7)) + x
    return x


def _rk4_loss(np_, fori_loop, steps=1000, dt=0.01):
    """|state after `steps` RK4 steps of the Lorenz system|**2; state and parameters are
    arrays of 3."""
    def field(s, p):
        x, y, z = s[0], s[1], s[2]
        return np_.stack([p[0] * (y - x), x * (p[1] - z) - y, x * y - p[2] * z])

    def step(i, s, p):
        k1 = field(s, p)
        k2 = field(s + dt / 2 * k1, p)
        k3 = field(s + dt / 2 * k2, p)
        k4 = field(s + dt * k3, p)
        return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def loss(s0, p):
        s = fori_loop(0, steps, lambda i, s: step(i, s, p), s0)
        return np_.sum(s * s)
    return loss


REAL = ("mnist", "vae", "vae_evaluate", "dpsgd")     # workloads/real_programs.py


def build(spec):
    """(jitted function, args) after importing what the system needs."""
    system, prog = spec["system"], spec["program"]
    if prog in REAL:
        from benchmarks.workloads import real_programs
        kw = {} if system == "jax" else {"tiered": spec.get("tiered", True)}
        fn, args, _ = real_programs.build(prog, real_programs.namespace(system, **kw))
        return fn, args
    if system == "xforms":
        import xforms as tf
        import xforms.numpy as tnp
        from xforms import lax, nn
        jit = lambda f: tf.jit(f, tiered=spec.get("tiered", True))  # noqa: E731
        fori, log_softmax = lax.fori_loop, nn.log_softmax
        hvp = tf.hvp
    else:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as tnp
        import jax.scipy.special  # noqa: F401  (tf.scipy.special for gmm)
        tf, jit, fori, log_softmax = jax, jax.jit, jax.lax.fori_loop, jax.nn.log_softmax
        hvp = lambda f, p, t: jax.jvp(jax.grad(f), p, t)[1]  # noqa: E731
    rng = np.random.default_rng(0)
    if prog in ("readme", "readme_batches"):
        w, x, y = rng.normal(size=(64, 8)), rng.normal(size=(128, 64)), rng.normal(size=(128, 8))
        return jit(tf.grad(lambda w, x, y: tnp.mean((tnp.tanh(x @ w) - y) ** 2))), (w, x, y)
    if prog == "rk4":
        loss = _rk4_loss(tnp, fori)
        return jit(tf.grad(loss, argnums=(0, 1))), (np.ones(3), np.array([10.0, 28.0, 8 / 3]))
    if prog in ("chain_grad", "chain_hvp"):
        f = lambda x: _chain(x, tnp)  # noqa: E731
        fn = tf.grad(f) if prog == "chain_grad" else (lambda x: hvp(f, (x,), (1.0,)))
        return jit(fn), (0.3,)
    if prog in ("mlp_grad", "mlp_hvp"):
        from benchmarks.workloads.mlp import loss, make_data
        params, xb, yb = make_data(32, 512, "float32")
        v = {k: np.ones_like(a) for k, a in params.items()}
        f = lambda P: loss(P, xb, yb, tnp, log_softmax)  # noqa: E731
        fn = tf.grad(f) if prog == "mlp_grad" else (lambda P: hvp(f, (P,), (v,)))
        return jit(fn), (params,)
    if prog == "gmm":
        # a Gaussian mixture's negative log-likelihood gradient, n = 10^5, k = 16, d = 8
        # (issue #35: 5.3-7 s on its fast-tier first call against JAX's 1.9 s)
        lse = tf.scipy.special.logsumexp if system == "jax" else _xforms_logsumexp()
        n, k, d = 10 ** 5, 16, 8

        def nll(params, x):
            mu, logs, logw = params
            z = (x[:, None, :] - mu[None]) / tnp.exp(logs)[None]
            lp = -0.5 * tnp.sum(z ** 2, -1) - tnp.sum(logs, -1) - 0.5 * d * np.log(2 * np.pi)
            return -tnp.mean(lse(lp + log_softmax(logw), axis=1))
        params = (rng.normal(size=(k, d)), np.zeros((k, d)), np.zeros(k))
        return jit(tf.grad(nll)), (params, rng.normal(size=(n, d)))
    if prog in SUITE:
        return _suite_program(prog, spec, tf, tnp, jit)
    if prog == "mlp_training":
        if system != "xforms":
            raise SystemExit("mlp_training: the example is written for xforms")
        sys.path.insert(0, os.path.join(ROOT, "examples"))
        import mlp_training as ex
        x, y, _ = ex.make_data(rng)
        params = ex.init_params(rng, [2, 64, 64, 3])
        return jit(tf.value_and_grad(ex.loss)), (params, x[:100], y[:100])
    raise SystemExit(f"unknown program {prog!r}")


# the suite's rows whose first call issue #35 weighs (session 32): program -> (workload, size)
SUITE = {"ode": 50.0, "ode_5": 5.0, "gp_500": 500, "gp_2000": 2000, "fft_conv_2e20": 2 ** 20,
         "pow_loop_1e4": 10 ** 4}


def _suite_program(prog, spec, tf, tnp, jit):
    """(jitted function, args) of a benchmark row: its workload's own loss."""
    size = SUITE[prog]
    jax = spec["system"] == "jax"
    if prog in ("ode", "ode_5"):             # (the full and the quick suite's t_end)
        from benchmarks.peers import load
        from benchmarks.workloads import ode
        return jit(ode.loss_grad(size, load(spec["system"]))), (ode.Y0, ode.P0)
    if prog.startswith("gp_"):
        from benchmarks.workloads import gp_nll
        if jax:
            import jax.scipy.linalg as sl
        else:
            import xforms.scipy.linalg as sl
        g = tf.grad(lambda t, d2, y: gp_nll.loss(t, d2, y, tnp, sl.solve_triangular))
        return jit(g), gp_nll.make_data(size)
    if prog.startswith("fft_conv"):
        from benchmarks.workloads import fft_conv
        x, k, y = fft_conv.make_data(size, np.float64)
        return jit(tf.grad(lambda x, k: fft_conv.loss(x, k, y, tnp), (0, 1))), (x, k)
    lax = tf.lax
    return jit(lambda x: lax.fori_loop(0, size, lambda i, acc: acc * x, 1.0)), (1.0 + 0.5 / size,)


def _xforms_logsumexp():
    from xforms.scipy.special import logsumexp
    return logsumexp


def _block(r):
    try:
        import jax
        return jax.block_until_ready(r)
    except ImportError:
        return r


def _tiered_exe(fn):
    from xforms.exec.tiered import TieredExecutable
    exes = [e for e, _, _ in fn._fast.values() if type(e) is TieredExecutable]
    return exes[-1] if exes else None


def _until_compiled(fn, args, t_start, out):
    """Fast-tier per-call cost (up to 5 calls before the swap), then the swap time."""
    exe = _tiered_exe(fn)
    if exe is None:
        return
    fast = []
    while not exe.done and len(fast) < 5:
        t = time.perf_counter()
        fn(*args)
        if not exe.done:                      # (else it may have run compiled code)
            fast.append(time.perf_counter() - t)
    while not exe.done:
        time.sleep(0.002)
    out["swap_s"] = time.perf_counter() - t_start
    out["fast_call_s"] = statistics.median(fast) if fast else None
    out["fast_calls_before_swap"] = exe.fast_calls
    fn.wait_compiled()


def _kernels_made(spec):
    if spec["system"] != "xforms":
        return None
    from xforms.kernels.build import codecache
    return codecache.stats["made"]


def main():
    spec = json.loads(sys.argv[1])
    fn, args = build(spec)
    block = _block if spec["system"] == "jax" else (lambda r: r)
    out = {"setup_s": time.perf_counter() - T0}
    t1 = time.perf_counter()
    block(fn(*args))
    out["first_s"] = time.perf_counter() - t1
    if spec.get("first_only"):
        out["steady_s"] = None
        print(json.dumps(out), flush=True)
        os._exit(0)
    if spec["system"] == "xforms":
        _until_compiled(fn, args, t1, out)
    steady = []
    for _ in range(3):
        t = time.perf_counter()
        block(fn(*args))
        steady.append(time.perf_counter() - t)
    out["steady_s"] = sorted(steady)[1]
    if spec["program"] == "readme_batches":
        out["batches"], out["batches_cpu"] = {}, {}
        w, x, y = args
        made = _kernels_made(spec)
        if made is not None:
            out["batch_compiles_each"] = {}
        for n in NEW_BATCHES:
            before = _kernels_made(spec)
            a = (w, x[:n], y[:n])
            t, c = time.perf_counter(), time.process_time()
            block(fn(*a))
            out["batches"][str(n)] = time.perf_counter() - t
            out["batches_cpu"][str(n)] = time.process_time() - c
            if spec["system"] == "xforms":
                fn.wait_compiled()
                out["batch_compiles_each"][str(n)] = _kernels_made(spec) - before
        if made is not None:       # kernels Numba compiled (or loaded) for the new sizes
            out["batch_compiles"] = _kernels_made(spec) - made
    print(json.dumps(out), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
