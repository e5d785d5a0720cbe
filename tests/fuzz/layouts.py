"""Inputs handed to xforms in the memory layouts NumPy users have at hand: read-only,
non-contiguous (every other element of a larger buffer), negative strides (a reversed
view), Fortran order, and 0-d arrays as NumPy scalars.  The values are the same: only how
they sit in memory differs, so every tier must give the results it gives for a fresh
C-contiguous copy.

    >>> x = laid_out(np.arange(3.0), "reversed")
    >>> x.strides, x.tolist()
    ((-8,), [0.0, 1.0, 2.0])
"""
import numpy as np

LAYOUTS = ("contiguous", "read_only", "strided", "reversed", "fortran", "scalar")


def laid_out(x, how):
    """x (a NumPy array) with the same values in layout `how` (see LAYOUTS); layouts that
    do not apply to x's rank give x itself."""
    x = np.asarray(x)
    if how == "read_only":
        y = x.copy()
        y.setflags(write=False)
        return y
    if how == "strided" and x.ndim:
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    if how == "reversed" and x.ndim:
        every = (slice(None, None, -1),) * x.ndim
        return x[every].copy()[every]
    if how == "fortran" and x.ndim >= 2:
        return np.asfortranarray(x)
    if how == "scalar" and x.ndim == 0:
        return x[()]                 # a NumPy scalar (np.float64, np.int8, np.bool_ ...)
    return x


def tree_laid_out(tree, how, tmap):
    """Every leaf of `tree` laid out as `how` (`tmap` maps over the fuzzer's pytrees)."""
    return tmap(lambda x: laid_out(x, how), tree)


__all__ = ["LAYOUTS", "laid_out", "tree_laid_out"]
