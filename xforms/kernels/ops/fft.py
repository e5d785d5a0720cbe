"""CPU lowering of the `fft` primitive (xforms/primitives/fft.py): one call of a
xforms/kernels/runtime/fft.py helper that transforms the operand into the freshly bound output
buffer.  (CUDA: xforms/kernels/cuda/lower_fft_cuda.py.)

    # b:c128[4,8] = fft[fft_lengths=(8,), fft_type='FFT'] a
    b = np.empty((4, 8), np.complex128)
    fft_c2c(a, b, 1, True, 1.0)
"""
import numpy as np

from ..cpu.emit import OP_RULES


def _fft(em, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    kind, lengths = eqn.params["fft_type"], eqn.params["fft_lengths"]
    k = len(lengths)
    inv = repr(1.0 / float(np.prod(lengths))) if int(np.prod(lengths)) else "1.0"
    em.alloc(out)
    X, O = em.atom(x), em.A(out)
    if kind in ("FFT", "IFFT"):
        fn, args = "fft_c2c", f"{k}, {kind == 'FFT'}, {'1.0' if kind == 'FFT' else inv}"
    elif kind == "RFFT":
        fn, args = "fft_r2c", f"{k}"
    else:
        fn, args = "fft_c2r", f"{k}, {inv}"
    em.runtime_used.add(fn)
    em.line(f"{fn}({X}, {O}, {args})")


OP_RULES["fft"] = _fft
