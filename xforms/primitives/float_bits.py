"""`nextafter`: the neighbouring float of x1 toward x2 (jax.lax.nextafter).

nextafter(x1, x2) -> the float next to x1 in the direction of x2 (x2 when they are equal,
    NaN when either is).  Operands of one float dtype.  Not differentiable (as in JAX).
    LOWER: CPU `np.nextafter` per element (Numba's, exact, subnormals included); CUDA:
    exempt (a LoweringError names it).
"""
import numpy as np

from ..facts import math_names
from ..registry import exempt
from ..transforms.jvp import defjvp
from .elementwise import _def, _like

def _numpy_nextafter(x1, x2):
    with np.errstate(over="ignore"):          # max -> inf is the answer, not an error
        return np.nextafter(x1, x2)


nextafter_p = _def("nextafter", _numpy_nextafter, 2, accept=lambda dt: dt.kind == "f",
                   math=dict(math_names("nextafter", module="np", cmath=None), cuda=None))
exempt(nextafter_p, "cuda", "no CUDA spelling yet: use backend='cpu'")


def _not_differentiable(*args, **params):
    raise NotImplementedError("Differentiation rule for 'nextafter' not implemented (as in "
                              "JAX): its result is piecewise constant; wrap its operands in "
                              "stop_gradient")


defjvp(nextafter_p, _not_differentiable, _not_differentiable)


def nextafter(x1, x2):
    x1, x2 = _like(x1, x2), _like(x2, x1)
    return nextafter_p.bind(x1, x2)
