"""Audit of the CUDA backend's complex elementwise functions at their edges (issues #31, #34):
each function on a grid of complex values whose parts are +-inf, NaN, +-0, 1, 2, -7.5, 1e300,
3e38, 1e-30, 1e-40 (144 values; binary ones on all 20736 pairs), computed

    cuda   by the CUDA backend on Numba's simulator (NUMBA_ENABLE_CUDASIM=1; else skipped):
           Python runs the kernel, so `cmath.*` are Python's (which raise on some special
           values: the count is then "-")
    gpu    by the CUDA printer's scalar expressions compiled by Numba on the CPU: what a GPU
           runs, since numba-cuda's cmath is Numba's code and its math functions libdevice's
           (rounding apart)
    cpu    by jit's compiled CPU tier (XFORMS_LLVM_KERNELS=0/1 choose its path)
    eager  by calling the function on NumPy arrays (the eager tier; the fast tier runs the
           same impls)
    jax    by jax.jit (CPU, x64)

and prints, per function and dtype, how many results differ bit for bit / materially (a NaN
or infinity pattern, or finite parts further apart than 2e-6 (complex64) / 1e-13 relative):

    NUMBA_ENABLE_CUDASIM=1 python tools/cuda_complex_audit.py [names|all] [dtypes]
    NUMBA_ENABLE_CUDASIM=1 SHOW=5 python tools/cuda_complex_audit.py tanh,div complex128

Needs jax (run by hand, as tools/jax_sweep.py; tests carry jax's values as literals).
"""
import cmath
import math
import os
import sys
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numba  # noqa: E402

import xforms as xf  # noqa: E402
import xforms.numpy as xnp  # noqa: E402
from xforms import lax  # noqa: E402
from xforms.core.ir import Literal  # noqa: E402
from xforms.kernels.cuda.printer import complexes  # noqa: E402
from xforms.primitives.complex_arith import compiled  # noqa: E402
from xforms.kernels.cuda.printer.emit import scalar_expr  # noqa: E402

PARTS = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, 2.0, -7.5, 1e300, 3e38, 1e-30, 1e-40]


def grid(dtype):
    with np.errstate(over="ignore"):
        return np.array([complex(a, b) for a in PARTS for b in PARTS]).astype(dtype)


def bitwise(a, b):
    """Elementwise: equal parts with equal signs, or NaN both."""
    if a.dtype == bool or b.dtype == bool:
        return a == b
    def eq(u, v):
        return ((u == v) & (np.signbit(u) == np.signbit(v))) | (np.isnan(u) & np.isnan(v))
    return eq(a.real, b.real) & eq(a.imag, b.imag)


def close(a, b, dtype):
    """Elementwise: the same NaN/inf pattern and finite parts to the dtype's tolerance."""
    if a.dtype == bool or b.dtype == bool:
        return a == b
    tol = 2e-6 if dtype == np.complex64 else 1e-13

    def eq(u, v):
        with np.errstate(all="ignore"):
            near = np.abs(u - v) <= tol * np.maximum(np.abs(u), np.abs(v))
        return (np.isnan(u) & np.isnan(v)) | (u == v) | (np.isfinite(u) & np.isfinite(v) & near)
    return eq(a.real, b.real) & eq(a.imag, b.imag)


def gpu_emulated(f, args):
    """f's CUDA scalar expressions (one elementwise loop) compiled by Numba on the CPU."""
    jaxpr = xf.make_jaxpr(f)(*[a[:1] for a in args]).jaxpr
    g = {"np": np, "math": math, "cmath": cmath, "nbt": numba.types}
    fns = compiled.build(numba.njit(error_model="numpy"))
    g.update({k: fns[v] for k, v in complexes.DEVICE_FUNCTIONS.items()})
    env = {v: f"x{i}" for i, v in enumerate(jaxpr.invars)}
    body = []
    for k, e in enumerate(jaxpr.eqns):
        ins = []
        for i, v in enumerate(e.invars):
            if isinstance(v, Literal):
                g[f"c{k}_{i}"] = np.asarray(v.val, v.aval.dtype)[()]
                ins.append(f"c{k}_{i}")
            else:
                ins.append(env[v])
        env[e.outvars[0]] = f"t{k}"
        body.append(f"        t{k} = {scalar_expr(e, ins, ())}")
    names = list(env.values())[:len(args)]
    src = (f"def kern({', '.join(n.upper() for n in names)}, OUT):\n"
           "    for i in range(OUT.size):\n"
           + "".join(f"        {n} = {n.upper()}[i]\n" for n in names)
           + "\n".join(body) + f"\n        OUT[i] = {env[jaxpr.outvars[0]]}\n")
    exec(src, g)
    out = np.empty(args[0].shape, jaxpr.outvars[0].aval.dtype)
    numba.njit(error_model="numpy")(g["kern"])(*args, out)
    return out


def functions(jax, jnp):
    """name -> (xforms function, jax function, arity)."""
    unary = ["log", "exp", "sqrt", "abs", "sign", "tanh", "tan", "sin", "cos", "sinh", "cosh",
             "arctan", "arcsin", "arccos", "arcsinh", "arccosh", "arctanh", "expm1", "log1p",
             "exp2", "reciprocal", "square", "isfinite", "log10", "log2"]
    fns = {n: (getattr(xnp, n), getattr(jnp, n), 1) for n in unary}
    fns.update({
        "div": (lax.div, jax.lax.div, 2),
        "mul": (lax.mul, jax.lax.mul, 2),
        "pow": (lax.pow, jax.lax.pow, 2),
        "rsqrt": (lax.rsqrt, jax.lax.rsqrt, 1),
        "logistic": (lax.logistic, jax.lax.logistic, 1),
        "pow2": (lambda a: lax.integer_pow(a, 2), lambda a: jax.lax.integer_pow(a, 2), 1),
        "pow_m2": (lambda a: lax.integer_pow(a, -2), lambda a: jax.lax.integer_pow(a, -2), 1)})
    return fns


def main(argv):
    warnings.simplefilter("ignore")
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    from xforms.kernels.cuda.runtime import simulating
    fns = functions(jax, jnp)
    names = list(fns) if len(argv) < 2 or argv[1] == "all" else argv[1].split(",")
    dtypes = [np.dtype(d) for d in
              (argv[2] if len(argv) > 2 else "complex128,complex64").split(",")]
    show = int(os.environ.get("SHOW", "0"))
    for name in names:
        f, jf, arity = fns[name]
        for dt in dtypes:
            v = grid(dt)
            args = (np.repeat(v, v.size), np.tile(v, v.size)) if arity == 2 else (v,)
            res = {"cpu": np.asarray(xf.jit(f, backend="cpu", tiered=False)(*args)),
                   "eager": np.asarray(f(*args)),
                   "jax": np.asarray(jax.jit(jf)(*args)), "gpu": gpu_emulated(f, args),
                   "cuda": None}
            if simulating():
                try:
                    res["cuda"] = np.asarray(xf.jit(f, backend="cuda")(*args))
                except Exception:           # Python's cmath/math raise on the simulator
                    pass

            def count(a, b):
                a, b = res[a], res[b]
                if a is None:
                    return "-"
                return f"{(~bitwise(a, b)).sum()}/{(~close(a, b, dt)).sum()}"
            print(f"{name:10s} {dt.name:10s} cuda-cpu {count('cuda', 'cpu'):>9s}  gpu-cpu "
                  f"{count('gpu', 'cpu'):>9s}  cpu-jax {count('cpu', 'jax'):>9s}  gpu-jax "
                  f"{count('gpu', 'jax'):>9s}  eager-jax {count('eager', 'jax'):>9s}", flush=True)
            for i in np.flatnonzero(~close(res["gpu"], res["jax"], dt))[:show]:
                print("    ", *[a[i] for a in args], {k: r[i] for k, r in res.items()
                                                      if r is not None})


if __name__ == "__main__":
    main(sys.argv)
