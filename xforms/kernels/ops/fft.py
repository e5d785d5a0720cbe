"""CPU lowering of the `fft` primitive (xforms/primitives/fft.py): one call of a
xforms/kernels/runtime/fft.py helper that transforms the operand into the freshly bound output
buffer.  (CUDA: xforms/kernels/ops/fft.py.)

    # b:c128[4,8] = fft[fft_lengths=(8,), fft_type='FFT'] a
    b = np.empty((4, 8), np.complex128)
    fft_c2c(a, b, 1, True, 1.0)

CUDA rule for the `fft` primitive (xforms/primitives/fft.py): a direct discrete Fourier
transform, one thread per output element summing over the whole transformed block.

All four kinds are one sum (n = fft_lengths, N = prod(n), w = exp(2 pi i / n) per axis):

    FFT    y[k] = sum_j x[j] w^(-j.k)            IFFT   x[j] = (1/N) sum_k y[k] w^(j.k)
    RFFT   the FFT of real x, last axis' first n//2 + 1 bins
    IRFFT  x[j] = (1/N) sum_k c_k Re(y[k] w^(j.k)), c_k = 1 for the last axis' DC and
           (even n) Nyquist bins, 2 for the others -- each stands for itself and its mirror;
           w^(j.k) is real (+-1) on those two bins, so their imaginary parts drop out, as in
           NumPy's irfft

The phase is kept exact: ((j_a * k_a) mod n_a) / n_a per axis, summed in float64, so the
twiddle factors are as accurate as the library's.  The cost is N^2 multiply-adds per
transform (no butterflies): right for small transforms; larger ones go to cuFFT where it is
installed (xforms/kernels/cuda/vendor/: one plan per transform, FFT_MIN_POINTS), which
computes the unnormalised transform, followed here by a scaling kernel for IFFT and IRFFT.

    # b:c128[3,8] = fft[FFT, (8,)] a, abridged:
    for _t in range(cuda.grid(1), 24, cuda.gridsize(1)):
        o0 = _t // 8; o1 = _t % 8
        for _j0 in range(8):
            _f = ((_j0 * o1) % 8) / 8.0
            _ang = -6.283185307179586 * _f
            _v = X[o0 * 8 + _j0]
            _re += _v.real * math.cos(_ang) - _v.imag * math.sin(_ang)
"""
import numpy as np

from ..cpu.numba.emit import OP_RULES as CPU_RULES
from ..cuda.printer.emit import OP_RULES as CUDA_RULES, KernelBuilder
from ..cuda.printer.ops import OutLoop
from ..cuda.printer.kernel_builder import c_strides
from ..cuda.vendor import fft_call
from ..codegen import lit
from xforms.primitives.fft import fft_p


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


CPU_RULES[fft_p] = _fft


# ---- CUDA ------------------------------------------------------------------------------------

_TWO_PI = "6.283185307179586"


def _fft_cuda(em, eqn):
    em.check_dtypes(eqn)
    x, out = eqn.invars[0], eqn.outvars[0]
    kind, lengths = eqn.params["fft_type"], tuple(eqn.params["fft_lengths"])
    K = len(lengths)
    xshape, oshape = tuple(x.aval.shape), tuple(out.aval.shape)
    em.alloc(out)
    if 0 in oshape:
        return
    plan = fft_call(em.spec, kind, xshape, x.aval.dtype, lengths)
    if plan is not None:
        _fft_library(em, eqn, plan)
        return
    x_st = c_strides(xshape)
    in_sizes = xshape[-K:]
    N = int(np.prod(lengths))
    sign = "-" if kind in ("FFT", "RFFT") else ""
    scale = 1.0 if kind in ("FFT", "RFFT") or N == 0 else 1.0 / N
    real_in = np.dtype(x.aval.dtype).kind != "c"
    kb = KernelBuilder(em, f"{kind.lower()} over the last {K} axes of {x.aval.str_short()} "
                           f"(direct DFT)")
    kb.comment(eqn)
    X, O = kb.arr(x), kb.arr(out)
    loop = OutLoop(em, kb, oshape)
    with loop as o:
        lead = o[:len(oshape) - K]
        kb.line("_base = " + (" + ".join(f"{i} * {s}" for i, s in zip(lead, x_st)) or "0"))
        kb.line("_re = 0.0")
        kb.line("_im = 0.0")
        blocks, phases, offs = [], [], []
        for a in range(K):
            j, k, n = f"_j{a}", o[len(lead) + a], lengths[a]
            cm = kb.block(f"for {j} in range({in_sizes[a]}):")
            cm.__enter__()
            blocks.append(cm)
            phases.append(f"(({j} * {k}) % {n}) / {float(n)!r}")
            offs.append(f"{j} * {x_st[len(lead) + a]}")
        kb.line(f"_ang = {sign}{_TWO_PI} * ({' + '.join(phases)})")
        kb.line("_c = math.cos(_ang)")
        kb.line("_s = math.sin(_ang)")
        kb.line(f"_v = {X}[_base + {' + '.join(offs)}]")
        if kind == "IRFFT":
            n = lengths[-1]
            last = f"_j{K - 1}"
            nyq = f" or {last} == {n // 2}" if n % 2 == 0 else ""
            kb.line(f"_w = 1.0 if ({last} == 0{nyq}) else 2.0")
            kb.line("_re += _w * (_v.real * _c - _v.imag * _s)")
        elif real_in:
            kb.line("_re += _v * _c")
            kb.line("_im += _v * _s")
        else:
            kb.line("_re += _v.real * _c - _v.imag * _s")
            kb.line("_im += _v.real * _s + _v.imag * _c")
        for cm in reversed(blocks):
            cm.__exit__(None, None, None)
        dst = " + ".join(f"{i} * {s}" for i, s in zip(o, c_strides(oshape)))
        if kind == "IRFFT":
            kb.line(f"{O}[{dst}] = _re * {scale!r}")
        else:
            kb.line(f"{O}[{dst}] = complex(_re * {scale!r}, _im * {scale!r})")
    loop.launch()


def _fft_library(em, eqn, plan):
    """One cuFFT execution in the host code, then the 1/N of an inverse transform."""
    x, out = eqn.invars[0], eqn.outvars[0]
    kind = eqn.params["fft_type"]
    src = em.A(x)
    if plan.copy_input:      # cuFFT's complex-to-real transforms may overwrite their input
        tmp = em.temp(x.aval.size, x.aval.dtype)
        em.line(f"_rt.copy_into({tmp}, {src})")
        src = tmp
    em.line(f"_rt.fft({tuple(plan)}, {src}, {em.A(out)})  # cuFFT: {kind} over the last "
            f"{plan.rank} axes of {x.aval.str_short()}")
    if plan.scale == 1.0:
        return
    dt = np.dtype(out.aval.dtype)
    kb = KernelBuilder(em, f"scale the cuFFT {kind} of {x.aval.str_short()} by 1/N")
    O = kb.arr(out)
    loop = OutLoop(em, kb, (out.aval.size,))
    with loop:
        kb.line(f"{O}[_t] = {O}[_t] * {lit(plan.scale, np.empty(0, dt).real.dtype)}")
    loop.launch()


CUDA_RULES[fft_p] = _fft_cuda
