"""`dot_product_attention` and `logmeanexp` with jax.nn's signatures and semantics.

    >>> out = xf.nn.dot_product_attention(q, k, v, is_causal=True)   # q: (B, T, N, H)

Attention follows JAX's "xla" implementation step for step, including its precision
choices: logits in the query's dtype (at least float32), the softmax in float32 (also for
float64 inputs), masked logits set to -0.7 times the largest float32 (not -inf, so a fully
masked row averages the values), and grouped-query attention when the key/value heads K
divide the query heads N (query head n uses key/value head n // (N / K)).
"""
import numpy as np

from .. import numpy as xnp
from ..api import stop_gradient
from ..primitives.operands import asarray_operand, float_of
from .functions import logsumexp, softmax


def _to_4d(t):
    t = xnp.asarray(asarray_operand(t))
    return xnp.reshape(t, (1,) * (4 - t.ndim) + t.shape) if t.ndim < 4 else t


def _check(t, shape, dtype, name):
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"dot_product_attention: {name} ndim should be {len(shape)}, but "
                         f"got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"dot_product_attention: {name} dtype should be {dtype}, but got "
                         f"{t.dtype}")
    if any(want not in (-1, got) for want, got in zip(shape, t.shape)):
        raise ValueError(f"dot_product_attention: {name} shape should be {tuple(shape)} "
                         f"(-1: any), but got {t.shape}")


def _grouped(t, K, G, name):
    """A (b, n, T, S) bias or mask, n in {1, N}, as (b, K | 1, G | 1, T, S)."""
    b, n, T, S = t.shape
    if n not in (1, K * G):
        raise ValueError(f"dot_product_attention: {name} has {n} heads; it must have 1 or "
                         f"the query's {K * G}")
    return xnp.reshape(t, (b, 1, 1, T, S) if n == 1 else (b, K, G, T, S))


def _combined_mask(mask, is_causal, window, q_len, kv_len, T, S, K, G):
    """The positions that may attend, broadcastable to (B, K, G, T, S), or None."""
    parts = [] if mask is None else [_grouped(mask, K, G, "mask")]
    t, s = np.arange(T)[:, None], np.arange(S)[None, :]
    if is_causal:
        parts.append(t >= s)                          # JAX: tril of a (T, S) block
    if window is not None:
        left, right = window
        parts.append((t <= s + left) & (t >= s - right))
    if q_len is not None:
        parts.append((xnp.arange(T)[None, :, None] < q_len[:, None, None])[:, None, None])
    if kv_len is not None:
        parts.append((xnp.arange(S)[None, None, :] < kv_len[:, None, None])[:, None, None])
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = xnp.logical_and(out, p)
    return out


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """softmax(scale * q k^T + bias, masked) v per head, as jax.nn.dot_product_attention.

    query (B, T, N, H) or (T, N, H); key, value (B, S, K, H) with K dividing N; bias and
    mask (bool, True = attend) broadcastable to (B, N, T, S); scale defaults to
    1/sqrt(H); is_causal keeps key s <= query t; query_seq_lengths and
    key_value_seq_lengths (int32, (B,)) mask padding (padded query rows give zeros);
    local_window_size (left, right) or one int for both.  implementation: None or "xla"
    ("cudnn" is not available).  return_residual=True also returns the float32-softmax
    logsumexp per (B, T, N), without gradient.

    >>> xf.nn.dot_product_attention(q, k, v, mask=m, scale=0.5).shape == q.shape
    """
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise NotImplementedError("dot_product_attention: implementation='cudnn' is not "
                                      "available in xforms; use implementation='xla' (or None)")
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out_shape = xnp.shape(query)
    q, k, v = _to_4d(query), _to_4d(key), _to_4d(value)
    bias = None if bias is None else _to_4d(bias)
    mask = None if mask is None else _to_4d(mask)
    q_len = None if query_seq_lengths is None else xnp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else xnp.asarray(key_value_seq_lengths)
    window = ((local_window_size, local_window_size) if isinstance(local_window_size, int)
              else local_window_size)
    B, S, K, H = k.shape
    _check(v, (B, S, K, H), k.dtype, "value")
    _check(q, (B, -1, -1, H), k.dtype, "query")
    _check(mask, (-1,) * 4, np.dtype(bool), "mask")
    _check(bias, (-1,) * 4, None, "bias")
    _check(q_len, (B,), np.dtype(np.int32), "query_seq_lengths")
    _check(kv_len, (B,), np.dtype(np.int32), "key_value_seq_lengths")
    T, N = q.shape[1], q.shape[2]
    if N % K:
        raise ValueError(f"dot_product_attention: the number of query heads must be a "
                         f"multiple of key/value heads, but got {N} vs {K}")
    G = N // K
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    logits_dtype = np.promote_types(q.dtype, np.float32)
    qg = xnp.reshape(q, (B, T, K, G, H)).astype(logits_dtype)
    logits = xnp.einsum("btkgh,bskh->bkgts", qg, k.astype(logits_dtype))
    logits = logits * xnp.asarray(scale, logits_dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, K, G, "bias")).astype(logits_dtype)
    keep = _combined_mask(mask, is_causal, window, q_len, kv_len, T, S, K, G)
    if keep is not None:
        big = min(np.finfo(logits_dtype).max, np.finfo(np.float32).max)
        logits = xnp.where(keep, logits, xnp.asarray(-0.7 * big, logits_dtype))
    logits = logits.astype(np.float32)                 # JAX's softmax is always float32
    probs = softmax(logits, axis=-1).astype(k.dtype)
    encoded = xnp.einsum("bkgts,bskh->btkgh", probs, v)
    if q_len is not None:
        valid = xnp.arange(T)[None, :] < q_len[:, None]
        encoded = encoded * valid[:, :, None, None, None].astype(encoded.dtype)
    out = xnp.reshape(encoded, out_shape)
    if not return_residual:
        return out
    lse = logsumexp(logits, axis=-1).astype(k.dtype)            # (B, K, G, T)
    lse = xnp.reshape(xnp.transpose(lse, (0, 3, 1, 2)), out_shape[:-1])
    return out, stop_gradient(lse)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) over `axis` (entries outside `where` left out), computed stably:
    logsumexp(x) - log(count).

    >>> xf.nn.logmeanexp(xnp.array([0.0, xnp.log(3.0)]))      # log(2)
    """
    x = float_of(x)           # jax's logsumexp's dtype: int32 and bool give float32
    if where is None:
        lse = logsumexp(x, axis=axis, keepdims=keepdims)
        axes = range(x.ndim) if axis is None else np.atleast_1d(axis)
        count = int(np.prod([x.shape[a] for a in axes]))
        return lse - np.log(count).astype(lse.dtype)
    where = xnp.broadcast_to(xnp.asarray(where), x.shape)
    lse = logsumexp(xnp.where(where, x, -np.inf), axis=axis, keepdims=keepdims)
    count = xnp.sum(where, axis=axis, keepdims=keepdims).astype(lse.dtype)
    return lse - xnp.log(count)
