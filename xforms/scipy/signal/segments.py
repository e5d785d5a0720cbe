"""What the short-time transforms of xforms.scipy.signal share: the window (by name, as a
NumPy constant, or the user's array), cutting a signal into overlapping segments, and adding
segments back together where they overlap.

    >>> frames(xnp.arange(6.0), 4, 2)                  # [[0, 1, 2, 3], [2, 3, 4, 5]]
    >>> overlap_add(xnp.ones((2, 4)), 2)               # [1, 1, 2, 2, 1, 1]
"""
import warnings

import numpy as np

from ... import numpy as xnp


def named_window(window, n):
    """A window given by name or (name, parameter) as a float64 NumPy array of length n.

    'hann' is the periodic Hann window, computed here as JAX does; every other name goes to
    scipy.signal.get_window (JAX does the same), which also checks the name.
    """
    if isinstance(window, str) and window == "hann":
        return np.ones(1) if n == 1 else np.sin(np.linspace(0, np.pi, n, endpoint=False)) ** 2
    from scipy.signal import get_window
    return np.asarray(get_window(window, n), dtype=np.float64)


def window_and_length(window, nperseg, input_length, dtype):
    """(window array, segment length) from the user's `window` and `nperseg` (JAX's rules: a
    named window without nperseg spans the whole input; an array window sets the length)."""
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else int(nperseg)
        if n > input_length:
            warnings.warn(f"nperseg={n} is greater than input_length={input_length}, "
                          f"using nperseg={input_length}")
            n = input_length
        return named_window(window, n).astype(dtype), n
    win = xnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def frames(x, nperseg, step):
    """x (..., n) -> (..., segments, nperseg): the segments starting every `step` samples
    that fit in n (one gather with a constant index)."""
    starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
    return x[..., starts[:, None] + np.arange(nperseg)]


def overlap_add(x, step):
    """x (..., frames, length) -> (..., step * (frames - 1) + length): frame i added in at
    offset i * step.

    Each frame is cut into k = ceil(length / step) blocks of `step` samples; block j of frame
    i lands on output block i + j, so the output is the sum over j of block column j shifted
    down j rows -- k pads and a sum, no scatter.
    """
    *batch, nframes, length = x.shape
    k = -(-length // step)
    nd = x.ndim
    pad_end = [(0, 0)] * (nd - 1) + [(0, k * step - length)]
    blocks = xnp.reshape(xnp.pad(x, pad_end), (*batch, nframes, k, step))
    total = 0
    for j in range(k):
        shift = [(0, 0)] * (nd - 2) + [(j, k - 1 - j), (0, 0)]
        total = total + xnp.pad(blocks[..., j, :], shift)
    out = xnp.reshape(total, (*batch, (nframes + k - 1) * step))
    return out[..., :step * (nframes - 1) + length]
