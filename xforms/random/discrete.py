"""Sampling with sorts: permutation, shuffle, choice and categorical, with JAX's algorithms
(shuffles sort by random 32-bit keys, stably; sampling without replacement takes the top k
of Gumbel-perturbed log-weights), so the same key gives JAX's results.

The stable sorts are `lax.sort_key_val` and `lax.top_k`.

    >>> random.permutation(random.PRNGKey(0), 5)
"""
import math

import numpy as np

from .. import lax
from .. import numpy as xnp
from ..primitives import operands
from .keys import check_key, own
from .programs import program
from .samplers import (canonical_shape, raw_gumbel, raw_uniform, split2, randint)
from .threefry import random_bits


def _sort_by_keys(sort_keys, x):
    """x reordered along its last axis by a stable sort of uint32 `sort_keys`."""
    keys = sort_keys.astype(np.int64)                 # the same order, a signed dtype
    return lax.sort_key_val(keys, x, dimension=x.ndim - 1)[1]


def _top_k_indices(x, k):
    """Indices of the k largest entries along the last axis, largest first (ties: lower
    index first, as lax.top_k)."""
    return lax.top_k(x, k)[1].astype(np.int64)


@program(static_argnums=(2,))
def _shuffle(key, x, axis):
    """x shuffled along `axis` by JAX's rounds of stable sorts by random keys: one
    program (its ~25 equations otherwise ~25 eager binds a call)."""
    n = x.size
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    x = xnp.moveaxis(x, axis, -1)
    for _ in range(rounds):
        key, sub = split2(key)
        x = _sort_by_keys(random_bits(sub, 32, x.shape), x)
    return xnp.moveaxis(x, -1, axis)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of arange(x) (an int) or of x along `axis`."""
    key, _ = check_key("permutation", key)
    if isinstance(x, (int, np.integer)) or np.ndim(x) == 0:
        if np.ndim(x) == 0 and not isinstance(x, (int, np.integer)):
            x = int(x)
        return _shuffle(key, xnp.arange(x), 0)
    x = operands.asarray_operand(x)
    axis = axis % x.ndim
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, xnp.arange(x.shape[axis]), 0)
    return xnp.take(x, ind, axis=axis)


def shuffle(key, x, axis=0):
    """Deprecated in JAX in favour of permutation(..., independent=True); same numbers."""
    key, _ = check_key("shuffle", key)
    x = operands.asarray_operand(x)
    return _shuffle(key, x, axis % max(x.ndim, 1))


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples of arange(a) (an int) or of a's entries along `axis`, with or without
    replacement, uniformly or with probabilities p."""
    key, _ = check_key("choice", key)
    shape = canonical_shape(shape, "choice")
    arr = operands.asarray_operand(a) if np.ndim(a) else None
    if arr is None:
        n_inputs = int(a)
    else:
        axis = axis % arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return xnp.zeros(shape, np.int64 if arr is None else arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(own(key), shape, 0, n_inputs)
            result = ind if arr is None else xnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(own(key), n_inputs if arr is None else arr, axis)
            ax = 0 if arr is None else axis
            result = perm[(slice(None),) * ax + (slice(n_draws),)]
    else:
        p = operands.asarray_operand(p)
        if p.dtype.kind not in "fc":
            p = p.astype(np.float64)
        if p.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {p.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = _cumsum(p)
            r = p_cuml[-1] * (1 - raw_uniform(key, shape, p.dtype))
            ind = xnp.sum(p_cuml < r[..., None], axis=-1)      # searchsorted, side='left'
        else:
            g = raw_gumbel(key, (n_inputs,), p.dtype, mode or "low") + xnp.log(p)
            ind = _top_k_indices(g, n_draws)
        result = ind if arr is None else xnp.take(arr, ind, axis=axis)
    if arr is None:
        return xnp.reshape(result, shape)
    return xnp.reshape(result, arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:])


def _cumsum(p):
    """Running sum in order (a scan: the same additions as a sequential cumsum)."""
    _, out = lax.scan(lambda c, x: (c + x, c + x), xnp.zeros((), p.dtype), p)
    return out


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices with probabilities softmax(logits) along `axis` (Gumbel-max)."""
    key, _ = check_key("categorical", key)
    logits = operands.asarray_operand(logits)
    axis = axis % logits.ndim
    batch_shape = logits.shape[:axis] + logits.shape[axis + 1:]
    shape = canonical_shape(shape, "categorical")
    shape = batch_shape if shape is None else shape
    if tuple(shape[len(shape) - len(batch_shape):]) != tuple(batch_shape):
        raise ValueError(f"categorical: shape {shape} must end with the batch shape "
                         f"{batch_shape} of logits")
    return _categorical(key, logits, axis, tuple(shape), bool(replace), mode)


@program(static_argnums=(2, 3, 4, 5))
def _categorical(key, logits, axis, shape, replace, mode):
    batch_shape = logits.shape[:axis] + logits.shape[axis + 1:]
    prefix = tuple(shape[:len(shape) - len(batch_shape)])
    dt = logits.dtype if logits.dtype.kind == "f" else np.dtype(np.float64)
    if replace:
        g_shape = prefix + logits.shape
        g = raw_gumbel(key, g_shape, dt, mode or "low")
        return xnp.argmax(g + logits, axis=len(prefix) + axis)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    z = xnp.moveaxis(logits + raw_gumbel(key, logits.shape, dt, mode or "low"), axis, -1)
    idx = _top_k_indices(z, k)                                          # batch + (k,)
    return xnp.reshape(xnp.moveaxis(idx, -1, 0), shape)
