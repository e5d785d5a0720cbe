"""The estimated serial time of one element of a fused CPU loop, from its primitives' facts:
what decides, with the element count, whether the loop runs its chunks under prange
(xforms/kernels/cpu/numba/nest.py).  An element count alone misjudges expensive bodies: random.normal
(Threefry hash + inverse erf, ~11 ns per element) stayed serial below 2^18 elements, where
its loop already takes over a millisecond.

    element_ns(step)   # ~0.3 for `a * b + 1`, ~2 for sin, ~11 for random.normal

Per equation of the body, the first that applies:

- a declared cost (`Facts.cost`, ns per element: a scalar function the other facts do not
  describe: pow, the special functions, the Threefry hash, a user's scalar function);
- a user primitive's scalar function without one: USER_NS;
- a math function: one instruction (sqrt, floor, ...: INSTRUCTION_NS), vectorised by
  xforms/kernels/libm/vecmath/__init__.py (`Facts.vec`: VEC_NS by dtype) or a libm call (LIBM_NS; complex too);
- anything else (arithmetic, compares, selects, conversions, bit operations, a reduction's
  update): ARITH_NS, vectorised;

plus BASE_NS for the loads, stores and loop, and MAC_NS per multiply-add of each product
the loop computes in blocks (xforms/kernels/plan/products.py: k of them per element).  Serial
times measured 2026-11-25 on the
project's 2-core AMD EPYC (Zen 4, AVX-512; load 3, best of 15 thread-CPU times, 1e6
elements, float64 unless noted): a*b+1 0.23, sqrt(|x|) 0.55, exp 1.02, sin 2.12, log f32
0.40, Threefry bits 2.9, uniform 3.2, normal 11.3, pow 10.9, atan2 13.7, erf 17.4.  An
estimate only picks the code generated; xforms/kernels/runtime/threads.py still measures one thread
against all per call.
"""
import numpy as np

from .math_choice import VECMATH
from ..plan.products import contraction
from ..user_prims import is_user

BASE_NS = 0.25
ARITH_NS = 0.04
INSTRUCTION_NS = 0.3
VEC_NS = {np.dtype(np.float32): 0.3, np.dtype(np.float64): 1.2}
LIBM_NS = 12.0
USER_NS = 3.0
# one thread's BLAS on a block of a short product (32 x 512 x 32), 2026-11-28 Xeon VM
MAC_NS = 0.03

# math functions that compile to an instruction or two (LLVM intrinsics), not a libm call
_INSTRUCTIONS = frozenset({"sqrt", "fabs", "floor", "ceil", "trunc", "copysign", "isnan",
                           "isinf", "isfinite", "rint", "fmin", "fmax"})


def element_ns(step):
    """Estimated serial ns per element of fused loop `step` (its body's equations)."""
    macs = sum(contraction(e) for e, _ in step.products)
    return BASE_NS + MAC_NS * macs + sum(eqn_ns(eqn) for eqn, _ in step.body)


def eqn_ns(eqn):
    """Estimated ns per element of one equation of a loop body (module docstring)."""
    prim = eqn.prim
    facts = getattr(prim, "facts", None)
    if facts is not None and facts.cost is not None:
        return float(facts.cost)
    if is_user(prim):
        return USER_NS
    if facts is None or not facts.math:
        return ARITH_NS
    dt = np.dtype(eqn.invars[0].aval.dtype) if eqn.invars else np.dtype(np.float64)
    if dt.kind == "c":
        return LIBM_NS
    full = facts.math.get("cpu") or ""          # "math.sqrt", "np.exp2"; None: an override
    if full.rsplit(".", 1)[-1] in _INSTRUCTIONS:
        return INSTRUCTION_NS
    if prim in VECMATH and dt in VEC_NS:
        return VEC_NS[dt]
    return LIBM_NS

