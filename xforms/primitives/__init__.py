"""Primitive families.  Each primitive registers all its rules in one block in its family file:
abstract evaluation, NumPy implementation, jvp, transpose where linear, batching, and its
lowering facts (`xforms/core/facts.py`, which also says how to add a primitive).

The registry (`ALL_PRIMITIVES`, `EXEMPT`, `primitive`, `exempt`) lives in xforms/core/registry.py
and is re-exported here for the family modules and older code.
"""
from ..core.registry import ALL_PRIMITIVES, EXEMPT, exempt, lookup, primitive  # noqa: F401

from . import elementwise, structural, reductions, contraction, indexing  # noqa: E402,F401
from . import conversion  # noqa: E402,F401  (convert_element_type's rules)
from . import fft  # noqa: E402,F401  (Fourier transforms; lgamma, erf, igamma, ...)
from .special import (functions as special)  # noqa: E402,F401  (Fourier transforms; lgamma, erf, igamma, ...)
from .bits import shifts as bitwise  # noqa: E402,F401  (bit shifts: the PRNG hash)
from .control import cond  # noqa: E402,F401  (control flow; helpers in control_flow.py)
from . import custom_vmap  # noqa: E402,F401  (custom_batching's call, beside custom.py's)
from .control import loops, scan, solves  # noqa: E402,F401
from . import collectives  # noqa: E402,F401  (named-axis collectives: vmap axes, MPI)
from .linalg import (factor as linalg, spectral as linalg_spectral, sqrtm as linalg_sqrtm)  # noqa: E402,F401  (factorisations)
from .linalg import (cholesky_ad as linalg_cholesky_ad)  # noqa: E402,F401  (cholesky's derivative maps)
from . import conv  # noqa: E402,F401
from . import cumulative, sorting  # noqa: E402,F401
from . import names  # noqa: E402,F401  (checkpoint_name's label)
from .bits import float_bits  # noqa: E402,F401  (nextafter)
from . import callbacks  # noqa: E402,F401  (debug.print, pure_callback, io_callback)
