"""Child process of the ``compile`` workload: import, build, first call, exit.

Run as ``python -m benchmarks.workloads.compile_child '<json spec>'`` with the
cache directories in the environment.  Prints one JSON line with
``setup_s`` (imports and inputs), ``first_s`` (trace + compile + first call) and
``steady_s`` (a later call), then leaves at once with ``os._exit`` so that
interpreter teardown does not count.
"""
import time

T0 = time.perf_counter()

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
        jit = lambda f: tf.jit(f, backend=spec["backend"])  # noqa: E731
        log_softmax, block = nn.log_softmax, (lambda r: r)
        hvp = tf.hvp
    else:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as tnp
        tf, jit, log_softmax, block = jax, jax.jit, jax.nn.log_softmax, jax.block_until_ready
        hvp = lambda f, p, t: jax.jvp(jax.grad(f), p, t)[1]  # noqa: E731
    if model == "chain":
        f, args, tangents = (lambda x: chain(x, tnp, spec["ops"])), (0.3,), (1.0,)
    else:
        f = lambda P: loss(P, xb, yb, tnp, log_softmax)  # noqa: E731
        args, tangents = (params,), (v,)
    fn = {"f": f, "grad": tf.grad(f), "hvp": lambda *a: hvp(f, a, tangents)}[transform]
    return jit(fn), args, block


def main():
    spec = json.loads(sys.argv[1])
    fn, args, block = build(spec)
    t_setup = time.perf_counter() - T0
    t1 = time.perf_counter()
    block(fn(*args))
    t_first = time.perf_counter() - t1
    steady = []
    for _ in range(3):
        t2 = time.perf_counter()
        block(fn(*args))
        steady.append(time.perf_counter() - t2)
    print(json.dumps({"setup_s": t_setup, "first_s": t_first, "steady_s": sorted(steady)[1]}),
          flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
