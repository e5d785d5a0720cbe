"""Compiled implementations of the special-function primitives (xforms/primitives/special/functions.py):
each gets its xforms/kernels/libm/special.py (or libm/bessel.py) scalar function as an elementwise Numba implementation,
the mechanism of xforms/kernels/user_prims.py, so the CPU fuses it into loops (an `njit` function
LLVM inlines) and CUDA calls it as an inlined device function, with no per-primitive tables.

    # b:f64[8] = lgamma a
    b[j] = np.float64(impl_lgamma(a[j]))
"""
from xforms.extend import NumbaImpl, numba_impls
from xforms.primitives.special.functions import SCALAR_IMPLS

from ..libm import bessel as bessel_math, special as special_math

for _prim, _name in SCALAR_IMPLS.items():
    _fn = getattr(special_math, _name, None) or getattr(bessel_math, _name)
    numba_impls[_prim] = NumbaImpl(_fn, True)
