"""Measure xforms.kernels.libm.vecmath against math.* and NumPy, and check vectorisation.

Plain script (not a test):

    python benchmarks/bench_vecmath.py [--n 1000000] [--reps 15] [--only exp,sin]

For every function and dtype (float64, float32) it times, over ``--n``
elements (best of ``--reps`` runs of the thread's CPU time, or wall time with
``--wall``; ns/element):

* ``vm``    an ``@njit`` loop ``out[i] = vm_f(a[i])``
* ``math``  the same loop with the ``math.*`` expression (scalar libm call)
* ``numpy`` the NumPy ufunc expression with ``out=`` where possible
* ``vmf``   float32 only: the float32 family (``vmf_*``, computed in float32) where it
  has the function (what generated code uses for float32 operands)

and reports whether the ``vm`` loop was vectorised: the loop's assembly must
contain packed double/single arithmetic on ymm/zmm registers
(``vmulpd %ymm..``, ``vfmadd...pd`` ...) and its LLVM IR a ``<N x double>``
or ``<N x float>`` vector type.
"""

import argparse
import math
import os
import platform
import re
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from xforms.kernels.libm import vecmath as vm


def _logistic_np(a, out):
    np.negative(a, out=out)
    np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)
    return out


# name: (vm function, math expression, numpy implementation, input sampler)
CASES = {
    "exp": (vm.vm_exp, lambda x: math.exp(x), lambda a, o: np.exp(a, out=o),
            lambda r, n: r.uniform(-50, 50, n)),
    "expm1": (vm.vm_expm1, lambda x: math.expm1(x), lambda a, o: np.expm1(a, out=o),
              lambda r, n: r.uniform(-5, 5, n)),
    "log": (vm.vm_log, lambda x: math.log(x), lambda a, o: np.log(a, out=o),
            lambda r, n: r.uniform(1e-3, 1e3, n)),
    "log1p": (vm.vm_log1p, lambda x: math.log1p(x), lambda a, o: np.log1p(a, out=o),
              lambda r, n: r.uniform(-0.9, 10, n)),
    "sin": (vm.vm_sin, lambda x: math.sin(x), lambda a, o: np.sin(a, out=o),
            lambda r, n: r.uniform(-100, 100, n)),
    "cos": (vm.vm_cos, lambda x: math.cos(x), lambda a, o: np.cos(a, out=o),
            lambda r, n: r.uniform(-100, 100, n)),
    "tan": (vm.vm_tan, lambda x: math.tan(x), lambda a, o: np.tan(a, out=o),
            lambda r, n: r.uniform(-100, 100, n)),
    "sin_bounded": (vm.vm_sin_bounded, lambda x: math.sin(x), lambda a, o: np.sin(a, out=o),
                    lambda r, n: r.uniform(-100, 100, n)),
    "cos_bounded": (vm.vm_cos_bounded, lambda x: math.cos(x), lambda a, o: np.cos(a, out=o),
                    lambda r, n: r.uniform(-100, 100, n)),
    "tan_bounded": (vm.vm_tan_bounded, lambda x: math.tan(x), lambda a, o: np.tan(a, out=o),
                    lambda r, n: r.uniform(-100, 100, n)),
    "tanh": (vm.vm_tanh, lambda x: math.tanh(x), lambda a, o: np.tanh(a, out=o),
             lambda r, n: r.uniform(-5, 5, n)),
    "logistic": (vm.vm_logistic, lambda x: 1.0 / (1.0 + math.exp(-x)), _logistic_np,
                 lambda r, n: r.uniform(-20, 20, n)),
    "sinh": (vm.vm_sinh, lambda x: math.sinh(x), lambda a, o: np.sinh(a, out=o),
             lambda r, n: r.uniform(-5, 5, n)),
    "cosh": (vm.vm_cosh, lambda x: math.cosh(x), lambda a, o: np.cosh(a, out=o),
             lambda r, n: r.uniform(-5, 5, n)),
    "atan": (vm.vm_atan, lambda x: math.atan(x), lambda a, o: np.arctan(a, out=o),
             lambda r, n: r.uniform(-10, 10, n)),
}

_PACKED_ASM = re.compile(r"\bv(?:mul|add|sub|div|fmadd\w*|fnmadd\w*|fmsub\w*)p[sd]\s+[^\n]*%[yz]mm")
_VECTOR_IR = re.compile(r"<\d+ x (?:double|float)>")


def _make_loop(f):
    @numba.njit
    def loop(a, out):
        for i in range(a.size):
            out[i] = f(a[i])

    return loop


def _best(fn, a, out, reps, clock):
    fn(a, out)  # warm-up / compile
    best = math.inf
    for _ in range(reps):
        t0 = clock()
        fn(a, out)
        best = min(best, clock() - t0)
    return best / a.size * 1e9


def _vectorised(loop):
    sig = loop.signatures[0]
    asm = loop.inspect_asm(sig)
    ir = loop.inspect_llvm(sig)
    # the loop vectoriser tags the loops it vectorised with llvm.loop.isvectorized
    return ("llvm.loop.isvectorized" in ir and bool(_PACKED_ASM.search(asm))
            and bool(_VECTOR_IR.search(ir)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--only", default="", help="comma-separated subset of names")
    p.add_argument("--wall", action="store_true",
                   help="time with perf_counter instead of the thread's CPU time "
                        "(CPU time is robust against other processes on a busy machine)")
    args = p.parse_args(argv)
    clock = time.perf_counter if args.wall else time.thread_time
    names = [s for s in args.only.split(",") if s] or list(CASES)

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"# {cpu}, {os.cpu_count()} cores, numba {numba.__version__}, numpy {np.__version__}, "
          f"n={args.n}, best of {args.reps} ({'wall' if args.wall else 'thread CPU'} time)")
    print(f"{'function':12s} {'dtype':8s} {'vm':>7s} {'math':>7s} {'numpy':>7s} {'vmf':>7s}"
          "  vectorised")
    rng = np.random.default_rng(0)
    novec = []
    for name in names:
        vmf, mathf, npf, sample = CASES[name]
        vm_loop = _make_loop(vmf)
        math_loop = _make_loop(numba.njit(inline="always")(mathf))
        for dt in (np.float64, np.float32):
            a = sample(rng, args.n).astype(dt)
            out = np.empty_like(a)
            t_vm = _best(vm_loop, a, out, args.reps, clock)
            t_math = _best(math_loop, a, out, args.reps, clock)
            t_np = _best(npf, a, out, args.reps, clock)
            vec = _vectorised(vm_loop)
            f32 = vm.VECMATH_F32.get(vmf.__name__ if hasattr(vmf, "__name__") else "")
            t_f32 = "-"
            if dt is np.float32 and f32:
                f32_loop = _make_loop(getattr(vm, f32))
                t_f32 = f"{_best(f32_loop, a, out, args.reps, clock):.2f}"
                vec = vec and _vectorised(f32_loop)
            if not vec:
                novec.append(f"{name}/{dt.__name__}")
            print(f"{name:12s} {dt.__name__:8s} {t_vm:7.2f} {t_math:7.2f} {t_np:7.2f} "
                  f"{t_f32:>7s}  {'yes' if vec else 'NO'}")
    if novec:
        print("not vectorised:", ", ".join(novec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
