"""Lowering and execution: IR -> fusion plan -> generated Numba source -> compiled kernel.

Layers, in processing order (each a pure function of the previous one's output):
  passes.py        Jaxpr -> Jaxpr: inline custom/checkpoint calls, fold transposes into dots, DCE
  fusion.py        Jaxpr -> Plan (loops, ops, control flow); backend-neutral, with
                   plan.py (the Plan's steps), fusion_classes.py (what fuses, from facts),
                   index_maps.py (views as index maps), fusion_groups.py (legal merges,
                   schedule), stencil.py (shifted reads recomputed), storage.py (buffer reuse)
  scalar_rules.py  per-primitive scalar expressions used inside fused loops
  user_prims.py    user-defined primitives (xforms.extend): calls of their Numba functions
  emit_cpu*.py     Plan -> Python module source for Numba (loops, BLAS/indexing ops, control flow;
                   emit_cpu_module.py: parameters, header and outputs of the module)
  codecache.py     source -> content-addressed file -> module -> numba.njit(cache=True)
  cpu.py           the "cpu" backend: compile_cpu(closed, options) -> CpuExecutable
  dispatch.py      the per-signature fast call path used by `xforms.jit`
  cpu_buffers.py   workspace and large-output buffers a compiled function keeps across calls
  threads.py       all threads or one per call of a parallel kernel, by measurement
  cpu_runtime.py   helpers imported by generated modules; vecmath/: vectorisable math
                   (explog.py float64 exp/log family, trig.py sin/cos/tan, f32.py float32 in
                   float32, base.py intrinsics and the registry; __init__ the tables)
  numba_patches.py compile-time fixes for Numba (per-statement typing, SSA, liveness);
                   numba_registry.py lists every patched Numba internal (checked by
                   tests/test_numba_registry.py and tools/check_numba_upgrade.py)

`BACKENDS` lists the backends this package provides; `xforms.jit` reads it when it first
compiles (this package imports nothing from `xforms.jit`: no import cycle).
"""
from .numba_fixes import patches as numba_patches
from .loops import lower_bitwise  # noqa: F401  (scalar rules of the bit shifts)
from .cpu.backend import CpuExecutable, compile_cpu
from . import ops  # noqa: F401  (every op family's rules)

numba_patches.apply()        # faster typing and lowering of long generated kernels

from . import cuda as _cuda  # noqa: E402  (numba.cuda loads lazily)

#: name -> keyword arguments of `xforms.jit.register_backend`, read by `xforms.jit`
BACKENDS = {"cpu": {"compile_fn": compile_cpu}, "cuda": _cuda.BACKEND}

__all__ = ["BACKENDS", "compile_cpu", "CpuExecutable"]
