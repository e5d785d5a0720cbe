"""Loops calling libm/vecmath's polynomials: the direct LLVM path (xforms/kernels/cpu/llvm/)
against the Numba kernel of the same program (issue #35).

    python benchmarks/llvm_vecmath.py loops     # compile s and steady us per call, both paths
    python benchmarks/llvm_vecmath.py first     # first-call CPU s of gelu, XFORMS_LLVM_KERNELS 0/1

`loops`: one process, no disk cache; Numba's vecmath helpers are compiled by a first kernel
before timing.  Steady state: the best of 5 rounds of
`number` calls, the two kernels alternated.  `first`: a fresh process per run (empty
XFORMS_CACHE_DIR), the two settings alternated, `jit(f, tiered=False)` of gelu.
"""
import os
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np


def _loops():
    os.environ.update(XFORMS_CACHE_DIR=tempfile.mkdtemp(), XFORMS_DISABLE_CACHE="1")
    import llvmlite.binding as llvm

    import xforms as xf
    import xforms.numpy as xnp
    from xforms.kernels.build import codecache
    from xforms.kernels.cpu import backend
    from xforms.kernels.cpu.llvm import engine, scalar

    def kernels(f, x):
        prep = backend._prepare(xf.make_jaxpr(f)(x), {"name": "t"})
        if prep.llvm_ir is None:
            return None
        t0 = time.process_time()
        direct = engine.compile_ir(prep.llvm_ir, scalar.WRAPPER)
        t1 = time.process_time()
        numba_k = codecache.compile_kernel(prep.mod, prep.h, codecache.signature_of(prep.sig_spec))
        t2 = time.process_time()
        return direct, numba_k, t1 - t0, t2 - t1, prep.llvm_ir

    def widths(text):
        tm = engine._target_machine()
        mod = llvm.parse_assembly(text)
        mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
        engine._optimise(mod, tm)
        asm = tm.emit_assembly(mod)
        return {r: asm.count(r) for r in ("zmm", "ymm")}

    def numba_widths(kernel):
        asm = "".join(kernel.inspect_asm().values())
        return {r: asm.count(r) for r in ("zmm", "ymm")}

    kernels(lambda x: xnp.tanh(x) * xnp.exp(x) + 0.123, np.ones(100, np.float64))   # warm-up
    kernels(lambda x: xnp.tanh(x) * xnp.exp(x) + 0.123, np.ones(100, np.float32))
    rng = np.random.default_rng(0)
    for name, fn in (("tanh", xnp.tanh), ("exp", xnp.exp), ("sin", xnp.sin)):
        for dt in (np.float32, np.float64):
            for n in (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6):
                c = float(rng.uniform(1, 2))
                x = rng.uniform(-3, 3, n).astype(dt)
                got = kernels(lambda x: fn(x) * c, x)
                if got is None:
                    print(f"{name} {dt.__name__} {n}: refused (Numba threads it)", flush=True)
                    continue
                direct, numba_k, cd, cn, text = got
                assert np.array_equal(direct(x), numba_k(x))
                number = max(1, 2 * 10 ** 5 // n)
                best = {"direct": [], "numba": []}
                for _ in range(5):
                    for k, f in (("direct", direct), ("numba", numba_k)):
                        best[k].append(timeit.timeit(lambda: f(x), number=number) / number)
                sd, sn = min(best["direct"]) * 1e6, min(best["numba"]) * 1e6
                print(f"{name} {dt.__name__} {n}: compile direct {cd:.3f} s, Numba {cn:.3f} s; "
                      f"steady direct {sd:.2f} us, Numba {sn:.2f} us ({sd / sn:.2f}x); "
                      f"registers named in the asm: direct {widths(text)}, Numba "
                      f"{numba_widths(numba_k)}", flush=True)


_FIRST = """
import time, numpy as np, xforms as xf, xforms.numpy as xnp
def gelu(x):
    return 0.5 * x * (1.0 + xnp.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.DT)
g = xf.jit(gelu, tiered=False)
t0 = time.process_time(); y = g(x); np.asarray(y); t1 = time.process_time()
import timeit
steady = min(timeit.repeat(lambda: g(x), number=50, repeat=5)) / 50
print(f"{t1 - t0:.3f} {steady * 1e6:.1f}")
"""


def _first():
    for dt, shape in (("float32", (256, 512)), ("float64", (64, 512))):
        for rnd in range(2):
            for flag in ("0", "1"):
                with tempfile.TemporaryDirectory() as cache:
                    env = dict(os.environ, XFORMS_LLVM_KERNELS=flag, XFORMS_CACHE_DIR=cache)
                    code = _FIRST.replace("SHAPE", repr(shape)).replace("DT", dt)
                    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                         capture_output=True, text=True).stdout.split()
                load = os.getloadavg()[0]
                print(f"gelu {dt} {shape} round {rnd} XFORMS_LLVM_KERNELS={flag}: first call "
                      f"{out[0]} CPU s, steady {out[1]} us (load {load:.1f})", flush=True)


if __name__ == "__main__":
    print("load", os.getloadavg())
    {"loops": _loops, "first": _first}[sys.argv[1]]()
