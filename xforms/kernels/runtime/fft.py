"""FFT helpers imported by generated CPU modules (re-exported by xforms/kernels/runtime/cpu_runtime.py;
below it, in the kernel_base layer).

They call rocket-fft's low-level nopython interface (pocketfft, the C++ library behind
numpy.fft and scipy.fft), which writes into the kernel's own output buffer: no temporary,
no copy.  Each is compiled once (cached on disk) and only called from the kernels.  The
transform runs over the last `k` axes; `fct` scales the result (1/N for the inverses).

Why rocket-fft (measured on this machine under heavy load, 1-D, microseconds, best of
5-20; rocket-fft / numpy.fft / scipy.fft):

    n = 2^10  c2c 3.4 / 10.4 / 8.2         r2c 3.2 / 7.6 / 6.7
    n = 2^16  c2c 321 / 1451 / 1040        r2c 206 / 332 / 319
    n = 2^20  c2c 14377 / 37902 / 20237    r2c 6354 / 7889 / 7914
    n = 10007 (prime)  c2c 158 / 507 / 334;  n = 3^9  c2c 152 / 189 / 163

and a first compile of 0.4 s (c2c and r2c); the alternative, leaving nopython code for
numpy.fft through objmode, costs a Python round trip per call and a copy.
"""
import numba
import numpy as np
from rocket_fft import c2c, c2r, r2c



from .helper_cache import CACHE as _CACHE  # noqa: E402

_THREADS = 1      # the kernels' own parallelism is over the batch, not inside one transform


@numba.njit(cache=_CACHE, nogil=True)
def fft_c2c(x, out, k, forward, fct):
    if out.size:
        c2c(x, out, np.arange(x.ndim - k, x.ndim), forward, fct, _THREADS)


@numba.njit(cache=_CACHE, nogil=True)
def fft_r2c(x, out, k):
    if out.size:
        r2c(x, out, np.arange(x.ndim - k, x.ndim), True, 1.0, _THREADS)


@numba.njit(cache=_CACHE, nogil=True)
def fft_c2r(x, out, k, fct):
    if out.size:
        c2r(x, out, np.arange(x.ndim - k, x.ndim), False, fct, _THREADS)
