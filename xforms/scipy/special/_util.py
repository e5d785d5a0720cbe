"""Helpers of xforms.scipy.special's modules: float operands, constants like an operand."""
import numpy as np

from ...numpy._util import aval, promote
from ...primitives import elementwise as ew


def float_operands(*xs, name):
    return promote(*xs, name=name, inexact=True)


def const_like(v, like):
    return ew.like(float(v), like)
