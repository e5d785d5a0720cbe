"""The parts of a complex number: real, imag, conj (linear) and complex(x, y) = x + i y
(the parts placed, not computed: `complex_of`).

>>> complex(np.float64(-np.inf), np.float64(-np.inf))     # -inf-infj (x + 1j*y: nan-infj)
"""
import numpy as np

from ...transforms.jvp import deflinear, Zero
from ...transforms.transpose import transpose_rules, unbroadcast, is_undefined
from .arithmetic import neg
from .base import bind1, bind2, complex_of, define, full_like_scalar, real_dtype_of


# --- complex parts ------------------------------------------------------------------------
real_p = define("real", np.real, out_dtype=real_dtype_of, cheap=True)
real = bind1(real_p)
imag_p = define("imag", np.imag, out_dtype=real_dtype_of, cheap=True)
imag = bind1(imag_p)
conj_p = define("conj", np.conj, cheap=True)
conj = bind1(conj_p)
complex_p = define("complex", complex_of, 2, cheap=True,
                 out_dtype=lambda dt: np.dtype(np.complex64) if dt == np.float32
                 else np.dtype(np.complex128), accept=lambda dt: dt.kind == "f")
complex = bind2(complex_p)
for _p in (real_p, imag_p, conj_p, complex_p):
    deflinear(_p)
transpose_rules[real_p] = lambda ct, x: [None if isinstance(ct, Zero) else
                                         complex(ct, full_like_scalar(0, ct))]
transpose_rules[imag_p] = lambda ct, x: [None if isinstance(ct, Zero) else
                                         complex(full_like_scalar(0, ct), neg(ct))]
transpose_rules[conj_p] = lambda ct, x: [None if isinstance(ct, Zero) else conj(ct)]
transpose_rules[complex_p] = lambda ct, x, y: [
    None if isinstance(ct, Zero) or not is_undefined(x) else unbroadcast(real(ct), x.aval),
    None if isinstance(ct, Zero) or not is_undefined(y) else unbroadcast(neg(imag(ct)), y.aval)]
