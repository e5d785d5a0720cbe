"""Survey of eager (un-jitted) per-operation cost, xforms beside JAX (issues #31, #35).

What an un-jitted user pays per call on small arrays (8 float64 elements, 4x4 matrices):
~75 of the most used entry points (xnp ufuncs, reductions with and without axis/keepdims,
products, where/select, indexing and `.at[]`, shapes, creation, astype, comparisons,
random.normal, lax, nn, linalg.norm).  CPU microseconds per call (time.process_time, so a
loaded machine's waits do not count), the median of 5 rounds; a JAX call is timed with its
`block_until_ready`.

    python -m benchmarks.eager_per_op            # xforms only
    python -m benchmarks.eager_per_op --jax      # and JAX (x64, one XLA thread), if importable
    python -m benchmarks.eager_per_op --json out.json --only sum

The numbers to trust are ratios within one run or medians over alternated fresh processes:
the machine is shared (write `uptime`'s load beside them).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

# each case: (name, expression); names `x`, `y`, `m`, `n`, `i`, `b`, `k`, `z` are the
# operands below, `xnp`, `lax`, `nn`, `random` the system's namespaces
CASES = [
    ("x + y", "x + y"), ("x * 2.0", "x * 2.0"), ("x / 2.0", "x / 2.0"), ("x > 0.5", "x > 0.5"),
    ("x == y", "x == y"), ("-x", "-x"), ("x ** 2", "x ** 2"),
    ("xnp.add", "xnp.add(x, y)"), ("xnp.multiply", "xnp.multiply(x, y)"),
    ("xnp.maximum", "xnp.maximum(x, 0.0)"), ("xnp.sin", "xnp.sin(x)"), ("xnp.exp", "xnp.exp(x)"),
    ("xnp.exp(x) * y", "xnp.exp(x) * y"),
    ("xnp.log", "xnp.log(x)"), ("xnp.sqrt", "xnp.sqrt(x)"), ("xnp.tanh", "xnp.tanh(x)"),
    ("xnp.abs", "xnp.abs(x)"), ("xnp.square", "xnp.square(x)"), ("xnp.power", "xnp.power(x, 3)"),
    ("xnp.clip", "xnp.clip(x, 0.2, 0.8)"), ("xnp.less", "xnp.less(x, y)"),
    ("xnp.isnan", "xnp.isnan(x)"), ("xnp.floor", "xnp.floor(x)"),
    ("xnp.sum", "xnp.sum(x)"), ("xnp.sum axis=0", "xnp.sum(m, axis=0)"),
    ("xnp.sum keepdims", "xnp.sum(m, axis=1, keepdims=True)"), ("xnp.mean", "xnp.mean(x)"),
    ("xnp.mean axis=1", "xnp.mean(m, axis=1)"), ("xnp.max", "xnp.max(x)"),
    ("xnp.min axis=0", "xnp.min(m, axis=0)"), ("xnp.prod", "xnp.prod(x)"),
    ("xnp.argmax", "xnp.argmax(x)"), ("xnp.std", "xnp.std(x)"), ("xnp.var axis=0", "xnp.var(m, axis=0)"),
    ("xnp.any", "xnp.any(b)"), ("xnp.all", "xnp.all(b)"), ("xnp.cumsum", "xnp.cumsum(x)"),
    ("x.sum()", "x.sum()"), ("x.mean()", "x.mean()"), ("m.max(axis=1)", "m.max(axis=1)"),
    ("xnp.dot vv", "xnp.dot(x, y)"), ("xnp.dot mm", "xnp.dot(m, n)"), ("m @ n", "m @ n"),
    ("xnp.matmul mv", "xnp.matmul(m, x[:4])"), ("xnp.vdot", "xnp.vdot(x, y)"),
    ("xnp.outer", "xnp.outer(x, y)"), ("xnp.einsum ij,jk", "xnp.einsum('ij,jk->ik', m, n)"),
    ("xnp.tensordot", "xnp.tensordot(m, n, axes=1)"),
    ("xnp.where", "xnp.where(x > 0.5, x, y)"), ("xnp.where(b)", "xnp.where(b, x, y)"),
    ("xnp.select", "xnp.select([b, ~b], [x, y])"),
    ("x[2:5]", "x[2:5]"), ("x[2]", "x[2]"), ("m[1, 2]", "m[1, 2]"), ("m[:, 1]", "m[:, 1]"),
    ("x[i]", "x[i]"), ("x[b]", "x[b]"),
    ("x.at[2].set", "x.at[2].set(1.0)"), ("x.at[i].add", "x.at[i].add(1.0)"),
    ("xnp.take", "xnp.take(x, i)"),
    ("x.reshape", "x.reshape(2, 4)"), ("xnp.reshape", "xnp.reshape(x, (2, 4))"),
    ("m.T", "m.T"), ("xnp.transpose", "xnp.transpose(m)"),
    ("xnp.concatenate", "xnp.concatenate([x, y])"), ("xnp.stack", "xnp.stack([x, y])"),
    ("xnp.expand_dims", "xnp.expand_dims(x, 0)"), ("xnp.squeeze", "xnp.squeeze(z)"),
    ("xnp.broadcast_to", "xnp.broadcast_to(x, (2, 8))"),
    ("xnp.zeros", "xnp.zeros(8)"), ("xnp.ones", "xnp.ones((2, 4))"), ("xnp.arange", "xnp.arange(8)"),
    ("xnp.asarray", "xnp.asarray(a)"), ("xnp.array", "xnp.array(a)"),
    ("xnp.zeros_like", "xnp.zeros_like(x)"), ("xnp.full", "xnp.full((8,), 2.0)"),
    ("x.astype(f32)", "x.astype(xnp.float32)"), ("xnp.astype i32", "xnp.astype(x, xnp.int32)"),
    ("random.normal", "random.normal(k, (8,))"), ("random.split", "random.split(k)"),
    ("random.uniform", "random.uniform(k, (8,))"),
    ("random.bernoulli", "random.bernoulli(k, 0.5, (8,))"),
    ("random.randint", "random.randint(k, (8,), 0, 10)"),
    ("random.categorical", "random.categorical(k, x)"),
    ("random.permutation", "random.permutation(k, 8)"),
    ("random.fold_in", "random.fold_in(k, 3)"), ("random.PRNGKey", "random.PRNGKey(3)"),
    ("random.key_data", "random.key_data(k)"),
    ("lax.add", "lax.add(x, y)"), ("lax.exp", "lax.exp(x)"),
    ("lax.dot_general", "lax.dot_general(m, n, (((1,), (0,)), ((), ())))"),
    ("lax.reduce_sum", "lax.reduce_sum(m, (0,))"), ("lax.select", "lax.select(b, x, y)"),
    ("nn.relu", "nn.relu(x)"), ("nn.softmax", "nn.softmax(x)"), ("nn.sigmoid", "nn.sigmoid(x)"),
    ("linalg.norm", "xnp.linalg.norm(x)"),
]


def namespaces(system):
    """The operands and namespaces of the cases, for "xforms" or "jax"."""
    if system == "jax":
        os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                           "intra_op_parallelism_threads=1")
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as xnp
        from jax import lax, nn, random
        ready = jax.block_until_ready
    else:
        import xforms.numpy as xnp
        from xforms import lax, nn, random
        ready = None
    a = np.linspace(0.1, 1, 8)
    x, y = xnp.asarray(a), xnp.asarray(np.linspace(1, 2, 8))
    m = xnp.asarray(np.arange(16.0).reshape(4, 4) / 16)
    env = dict(xnp=xnp, lax=lax, nn=nn, random=random, a=a, x=x, y=y, m=m, n=m + 1.0,
               i=xnp.asarray(np.array([0, 3, 5])), b=x > 0.5, k=random.PRNGKey(0),
               z=xnp.asarray(a.reshape(1, 8)))
    return env, ready


def time_case(fn, ready, rounds=5, target=0.02, settle=None):
    """CPU us per call of `fn` (median of `rounds` rounds of about `target` s each), after
    100 calls and `settle()` (xforms: waits for the compiles those calls started -- the
    random programs', the Threefry kernel's -- so the steady state is timed)."""
    call = fn if ready is None else (lambda: ready(fn()))
    for _ in range(100):
        call()
    if settle is not None:
        settle()
    t = time.process_time()
    for _ in range(200):
        call()
    per = max((time.process_time() - t) / 200, 1e-7)
    n = max(20, int(target / per))
    got = []
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(n):
            call()
        got.append((time.process_time() - t) / n * 1e6)
    return sorted(got)[rounds // 2]


def _settle():
    """Wait for xforms' background compiles (an older xforms without them: nothing)."""
    from xforms.core.eager import kernels
    getattr(kernels, "wait_built", lambda: None)()
    from xforms.random import programs
    getattr(programs, "wait_compiled", lambda: None)()


def survey(system, only=None):
    """{case name: CPU us per call} for `system` ("xforms" or "jax"); a case that raises
    is recorded as None (and its error printed)."""
    env, ready = namespaces(system)
    settle = None if system == "jax" else _settle
    out = {}
    for name, expr in CASES:
        if only and not any(o in name for o in only):
            continue
        fn = eval("lambda: " + expr, env)
        try:
            out[name] = time_case(fn, ready, settle=settle)
        except Exception as e:         # (one case's failure does not end the survey)
            print(f"{system} {name}: {type(e).__name__}: {e}", file=sys.stderr)
            out[name] = None
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jax", action="store_true", help="time JAX too (if importable)")
    ap.add_argument("--json", help="write the figures there")
    ap.add_argument("--only", nargs="*", help="cases whose names contain one of these")
    ap.add_argument("--jax-only", action="store_true", help="time JAX alone (alternating "
                    "fresh processes of each system)")
    args = ap.parse_args(argv)
    results = {} if args.jax_only else {"xforms": survey("xforms", args.only)}
    if args.jax or args.jax_only:
        try:
            results["jax"] = survey("jax", args.only)
        except ImportError as e:
            print(f"(no JAX: {e})", file=sys.stderr)
    results["load"] = os.getloadavg()[0]
    systems = [s for s in ("xforms", "jax") if s in results]
    print(f"{'case':22s}" + "".join(f"{s:>10s}" for s in systems) + f"   (CPU us/call, load "
          f"{results['load']:.1f})")
    for name in results[systems[0]]:
        row = [results[s].get(name) for s in systems]
        print(f"{name:22s}" + "".join(f"{v:10.2f}" if v is not None else f"{'-':>10s}"
                                       for v in row))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
