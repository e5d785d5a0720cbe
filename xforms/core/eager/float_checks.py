"""xf.debug_nans / debug_infs: whether eager results hold a NaN or an inf the flags ask to
catch, and JAX's FloatingPointError (the eager evaluator checks every primitive's results;
jit checks its outputs).

    check_floats(outs, prim.name)       # FloatingPointError: invalid value (nan) in ...
"""
import numpy as np

from ... import config


def float_problem(values):
    """"nan" or "inf" if debug_nans / debug_infs (in this thread) finds one among the
    inexact arrays `values`, else None."""
    nans, infs = config.debug_nans.value, config.debug_infs.value
    for v in values if nans or infs else ():
        a = np.asarray(v)
        if a.dtype.kind in "fc":
            if nans and np.isnan(a).any():
                return "nan"
            if infs and np.isinf(a).any():
                return "inf"
    return None


def check_floats(values, where, source=None):
    """FloatingPointError, JAX's message, if `float_problem(values)`; `where` names the
    primitive (and `source` the user's line) that produced them."""
    kind = float_problem(values)
    if kind is not None:
        at = f" (at {source})" if source is not None else ""
        raise FloatingPointError(f"invalid value ({kind}) encountered in {where}{at}")
