"""How many distinct CUDA kernels the GPU table of benchmarks/on_gpu.sh compiles, without a
GPU: each workload's xforms CUDA functions at the GPU's sizes (or --quick's), emitted for
sm_90 as on a GPU with cuBLAS, cuFFT and cuSOLVER (tests/cuda/ptx_check.py's pretence),
kernels with the same text and signature counted once.  What the table's compile costs
(numba-cuda types, lowers and compiles each kernel), so what benchmarks/gpu_warm.py saves.

    python tools/gpu_table_kernels.py [--quick]       # NUMBA_ENABLE_CUDASIM unset

2026-12-01: 495 kernels at the GPU's sizes (mlp 98, cnn 107, cliffs 136, gp_nll 54, ...).
"""
import dataclasses
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "tests", "cuda"), ROOT]


def count(quick=False):
    """{workload: distinct kernels it adds}, printing a line per program."""
    import numba  # noqa: F401  (before xforms' background preload)
    import ptx_check
    from benchmarks.gpu_warm import PEERS
    from benchmarks.harness import Context
    from benchmarks.workloads import load
    from test_bench_rows import gpu_table
    import xforms as xf
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program

    ctx = Context(quick=quick, backend="cuda")
    ctx.xput = lambda *a: tuple(a)            # (no device here: the arrays stay on the host)
    spec = dataclasses.replace(rt.spec_for((9, 0), sms=132), vendor=True)
    ptx_check._pretend_libraries()
    ptx_check._pretend_device()
    seen, per = set(), {}
    for workload in gpu_table():
        per[workload] = 0
        for case in load(workload).cases(ctx):
            data = case.make()
            for system, setup in case.systems.items():
                if system in PEERS:
                    continue
                try:
                    fn, args = setup(data)
                except Exception:               # noqa: BLE001 (absent, skipped: not a kernel)
                    continue
                g = getattr(fn, "jitted", None)
                if g is None:
                    continue
                program = emit_program(xf.make_jaxpr(g)(*args), spec, "p")
                sigs = program.signatures()
                keys = {("\n".join(k.lines[1:]), str(sigs[k.name]))
                        for k in program.kernels if k.name in program.launched}
                print(f"{workload} {case.task} {case.params} {system}: {len(keys)} kernels, "
                      f"{len(keys - seen)} new", flush=True)
                per[workload] += len(keys - seen)
                seen |= keys
    return per


if __name__ == "__main__":
    per = count("--quick" in sys.argv)
    print(f"distinct kernels: {per}, total {sum(per.values())}")
