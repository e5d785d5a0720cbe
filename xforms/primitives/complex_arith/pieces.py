"""The eager tier's vectorised complex forms run over pieces of CHUNK elements: each form is
tens of NumPy passes, and over 10^6 elements every pass's temporary (8 MB of float64) leaves
the caches and is page-faulted afresh, where a piece's stay in L2 (1 MB a core here).  The
forms are elementwise, so the values are the same; complex64 division of 10^6 elements took
43 ms whole, 15 in pieces of 2^16 (2026-11-30, load 23; 10^5 elements: no difference).

    >>> in_pieces(np.negative, np.arange(3.0))     # [-0., -1., -2.] (small: one call)
"""
import numpy as np

CHUNK = 1 << 16


def in_pieces(fn, *operands):
    """fn(*operands) for an elementwise fn of arrays (broadcasting), CHUNK elements at a time
    where the operands hold more than two pieces: a new C-ordered array of fn's dtype."""
    ops = np.broadcast_arrays(*[np.asarray(a) for a in operands])
    n = ops[0].size
    if n <= 2 * CHUNK:
        return fn(*operands)
    flat = [a.reshape(-1) for a in ops]             # (a copy where broadcast or strided)
    first = np.asarray(fn(*(a[:CHUNK] for a in flat)))
    out = np.empty(n, first.dtype)
    out[:CHUNK] = first
    for i in range(CHUNK, n, CHUNK):
        out[i:i + CHUNK] = fn(*(a[i:i + CHUNK] for a in flat))
    return out.reshape(ops[0].shape)
