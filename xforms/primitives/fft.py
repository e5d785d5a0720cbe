"""fft: discrete Fourier transforms over the trailing axes (one primitive, four kinds).

`fft(x, fft_type, fft_lengths)` transforms the last `len(fft_lengths)` axes of x:

    FFT    complex -> complex, y[k] = sum_j x[j] exp(-2 pi i j.k / n)     (unnormalised)
    IFFT   complex -> complex, the inverse, including the 1/prod(n)
    RFFT   real -> complex, the FFT's first n[-1]//2 + 1 bins along the last axis
    IRFFT  complex -> real of trailing shape fft_lengths (Hermitian input, 1/prod(n));
           as in NumPy, the imaginary parts of the DC and (even n) Nyquist bins are ignored

`xforms.numpy.fft` builds every NumPy name on it (axes moved to the end, n/s by pad or crop,
norm by a scale).  All four are linear (real-linear for RFFT/IRFFT), so the jvp applies the
same transform to the tangent.  Transposes, with JAX's pairing <a, b> = Re(sum(a * b))
(no conjugation; the one under which `real` and `complex(x, 0)` transpose each other):

    FFT, IFFT  the matrices are symmetric: the transpose is the same transform;
    RFFT       y = FFT(x)[..., :m], x real: T(ct) = Re(FFT(zero-pad(ct, n))), which is the
               IRFFT below of conj(ct_k) / c_k times N (half the work of the full FFT);
    IRFFT      x[j] = (1/N) Re(sum_k c_k y_k w^{j.k}) with c = 1 for the DC and Nyquist bins
               of the last axis and 2 for the others (each stands for itself and its mirror),
               so T(ct)_k = (c_k / N) conj(RFFT(ct)_k).

Both are checked by the dot-product test (tests/numpy/test_fft.py).  On the CPU the transform runs
inside the compiled kernel (xforms/kernels/ops/fft.py, through rocket-fft's nopython np.fft); on
CUDA it is a direct DFT (xforms/kernels/ops/fft.py: small transforms).

    >>> fft(x, "RFFT", (8,))          # x: f64[3, 8] -> c128[3, 5]
"""
import numpy as np

from ..core import trace as core
from ..core.avals import ShapedArray
from ..core.engine_prims import ints
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import deflinear, Zero
from ..transforms.transpose import transpose_rules
from ..transforms.vmap import moveaxis, vmap_rules
from . import elementwise as ew
from ..core.facts import declare
from ..core.registry import primitive
from . import structural as st

# (eager_scale: NumPy's pocketfft against the sort the n_log_n price was measured on, one
# thread, 2^20 float64 elements: rfft 26, irfft 28, complex fft 51 ms; sort 169 ms)
# (compiled_scale: rocket-fft's pocketfft in compiled code against numpy.fft's, 1.2-4x
# faster (xforms/kernels/runtime/fft.py); the FFT convolution gradient at n = 4096 ran 4.95x
# slower eagerly, CPU, load 20, estimated 1.16x without it, and went on eagerly)
fft_p = declare(primitive("fft"), eager_work="n_log_n", eager_scale=0.25, compiled_scale=0.3)
FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}


def _fft_aval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if fft_type not in FFT_TYPES:
        raise TypeError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    if k < 1 or x.ndim < k:
        raise TypeError(f"fft: fft_lengths {fft_lengths} need at least {k} axes, "
                        f"got {x.str_short()}")
    lead, tail = tuple(x.shape[:-k]), tuple(x.shape[-k:])
    lengths = tuple(fft_lengths)
    if fft_type == "RFFT":
        if x.dtype not in _COMPLEX_OF:
            raise TypeError(f"fft: RFFT needs a real floating operand, got {x.str_short()}")
        want, out_shape = lengths, lead + lengths[:-1] + (lengths[-1] // 2 + 1,)
        out_dtype = _COMPLEX_OF[x.dtype]
    else:
        if x.dtype not in _REAL_OF:
            raise TypeError(f"fft: {fft_type} needs a complex operand, got {x.str_short()}")
        if fft_type == "IRFFT":
            want, out_shape = lengths[:-1] + (lengths[-1] // 2 + 1,), lead + lengths
            out_dtype = _REAL_OF[x.dtype]
        else:
            want, out_shape, out_dtype = lengths, x.shape, x.dtype
    if tail != want:
        raise TypeError(f"fft: {fft_type} with fft_lengths {lengths} needs trailing axes "
                        f"{want}, got {x.str_short()}")
    return [ShapedArray(out_shape, out_dtype, x.weak_type)]


def numpy_fft(x, fft_type, fft_lengths):
    """The transform by numpy.fft (also the reference the tests use)."""
    k = len(fft_lengths)
    axes = tuple(range(x.ndim - k, x.ndim))
    x = np.asarray(x)
    if fft_type == "FFT":
        out, dt = np.fft.fftn(x, axes=axes), x.dtype
    elif fft_type == "IFFT":
        out, dt = np.fft.ifftn(x, axes=axes), x.dtype
    elif fft_type == "RFFT":
        out, dt = np.fft.rfftn(x, axes=axes), _COMPLEX_OF[x.dtype]
    else:
        out, dt = np.fft.irfftn(x, s=fft_lengths, axes=axes), _REAL_OF[x.dtype]
    return np.asarray(out, dtype=dt)


abstract_eval_rules[fft_p] = _fft_aval
impl_rules[fft_p] = lambda x, *, fft_type, fft_lengths: [numpy_fft(x, fft_type, fft_lengths)]


def fft(x, fft_type, fft_lengths):
    """Bind the primitive (`fft_lengths` a tuple of ints, `fft_type` a name in FFT_TYPES)."""
    return fft_p.bind(x, fft_type=str(fft_type),
                      fft_lengths=ints(fft_lengths, "fft's fft_lengths"))


deflinear(fft_p)


def _rfft_transpose(ct, fft_lengths):
    """Re(FFT(zero-pad(ct))) = N IRFFT(conj(ct) / c): the IRFFT formula above with
    y_k = conj(ct_k) / c_k, one half-size transform instead of a full complex one."""
    a = core.get_aval(ct)
    w = (1 / _irfft_weights(fft_lengths, np.float64)).astype(a.dtype)      # N / c_k
    wb = st.broadcast_in_dim(w, a.shape, (a.ndim - 1,))
    return fft(ew.mul(wb, ew.conj(ct)), "IRFFT", fft_lengths)


def _irfft_weights(fft_lengths, dtype):
    """c_k / N along the last axis (see the module docstring), as a complex array."""
    n = fft_lengths[-1]
    c = np.full(n // 2 + 1, 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    return (c / float(np.prod(fft_lengths))).astype(dtype)


def _irfft_transpose(ct, fft_lengths):
    y = fft(ct, "RFFT", fft_lengths)
    a = core.get_aval(y)
    w = st.broadcast_in_dim(_irfft_weights(fft_lengths, a.dtype), a.shape, (a.ndim - 1,))
    return ew.conj(ew.mul(w, y))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if isinstance(ct, Zero):
        return [None]
    if fft_type == "RFFT":
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == "IRFFT":
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft(ct, fft_type, fft_lengths)]


transpose_rules[fft_p] = _fft_transpose


def _fft_vmap(args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    x = moveaxis(x, d, 0)          # the transform acts on trailing axes: batch in front
    return [fft(x, fft_type, fft_lengths)], [0]


vmap_rules[fft_p] = _fft_vmap
