"""The compilers: IR -> fusion plan -> a kernel (docs/DESIGN.md, "The layer map").

The CPU backend (cpu/backend.py) plans a program, then compiles it straight from LLVM IR
where the direct path takes it (cpu/llvm/: straight-line scalar programs, fused
elementwise loops and reductions over float arrays) or emits Python source that Numba
compiles (cpu/numba/module.py, build/codecache.py); the CUDA backend (cuda/) always goes through
Numba (its `emit_program` loads the Numba side).  Importing this package imports no Numba: the Numba side (Numba
and xforms' patches to it, the emitters and every op family's rules) is imported by the
first program that needs it (`codegen.numba_side`), so a program of the direct path
never pays for it.

`BACKENDS` lists the backends this package provides; `xforms.jit` reads it when it first
compiles (this package imports nothing from `xforms.jit`: no import cycle).
"""
from .runtime import threads  # noqa: F401  (its spin settings, before any library loads)
from .loops import lower_bitwise  # noqa: F401  (scalar rules of the bit shifts)
from .cpu import backend as _cpu
from .cpu.backend import CpuExecutable, compile_cpu
from .cpu.llvm import eager as _eager
from . import cuda as _cuda  # (numba.cuda loads lazily)
from .codegen import NUMBA_SETUP


def _op_rules():
    from . import ops  # noqa: F401  (every op family's rules; their emitters import Numba)


NUMBA_SETUP.append(_op_rules)   # (after the CPU backend's step, which imports Numba)


#: name -> keyword arguments of `xforms.jit.register_backend`, read by `xforms.jit`
BACKENDS = {"cpu": {"compile_fn": compile_cpu, "eager_kernel": _eager.build},
            "cuda": _cuda.BACKEND}

__all__ = ["BACKENDS", "compile_cpu", "CpuExecutable"]
