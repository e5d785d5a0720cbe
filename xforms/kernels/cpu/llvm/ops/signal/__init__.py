"""Signal processing on the direct LLVM path: convolutions as im2col blocks and BLAS
(`convolutions`, conv_run's methods) and the FFT through rocket-fft's `rf_execute` (`fft`).

    >>> from xforms.kernels.cpu.llvm.ops.signal import convolutions, fft
"""
