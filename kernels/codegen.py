"""Source-text helpers shared by the CPU and CUDA emitters (the bottom of the code
generator: imports nothing else of kernels/).

>>> lit(0.5, np.float32), dtype_str(np.bool_), shape_str((3,))
('np.float32(0.5)', 'np.bool_', '(3,)')
"""
import math
from contextlib import contextmanager

import numpy as np


def shape_str(shape):
    shape = tuple(int(s) for s in shape)
    return f"({shape[0]},)" if len(shape) == 1 else str(shape)


def dtype_str(dt):
    dt = np.dtype(dt)
    return "np.bool_" if dt.kind == "b" else f"np.{dt.name}"


def float_lit(v):
    """A float as Python source (nan and inf through NumPy)."""
    v = float(v)
    if math.isnan(v):
        return "np.nan"
    if math.isinf(v):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def lit(val, dtype):
    """A literal that Numba types exactly as `dtype`."""
    dt = np.dtype(dtype)
    val = np.asarray(val).astype(dt)[()]
    if dt.kind == "b":
        return "True" if val else "False"
    if dt.kind in "iu":
        return str(int(val)) if dt == np.int64 else f"np.{dt.name}({int(val)})"
    if dt.kind == "f":
        s = float_lit(val)
        return s if dt == np.float64 else f"np.{dt.name}({s})"
    return f"np.{dt.name}(complex({float_lit(val.real)}, {float_lit(val.imag)}))"


class SourceBuilder:
    """Lines with an indentation level; `block(header)` opens an indented block."""

    def __init__(self):
        self.lines, self.depth = [], 0

    def line(self, s=""):
        self.lines.append(("    " * self.depth + s) if s else "")

    @contextmanager
    def block(self, header):
        self.line(header)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
