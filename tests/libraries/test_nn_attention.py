"""xforms.nn.dot_product_attention and logmeanexp against jax.nn (values recorded here as
literals with jax 0.10.2, jax_enable_x64, since CI has no jax) and against a NumPy
reference; gradients (check_grads and JAX's), jit on the compiled tier, vmap."""
import numpy as np
import pytest

import xforms as xf
import xforms.nn as nn
from xforms.test_util import check_grads


def _data(shape, c):
    n = int(np.prod(shape))
    return np.round(2 * np.sin(np.arange(n) * 1.7 + c), 2).reshape(shape)


B, T, S, N, K, H = 2, 3, 4, 4, 2, 3          # grouped: two query heads per key/value head
Q, KEY, V = _data((B, T, N, H), 0.0), _data((B, S, K, H), 1.0), _data((B, S, K, H), 2.0)
BIAS = _data((1, N, T, S), 3.0) / 2
MASK = _data((B, 1, T, S), 4.0) > -1.0
QL, KL = np.array([2, 3], np.int32), np.array([4, 1], np.int32)
W = np.arange(B * T * N * H).reshape(B, T, N, H) % 7 - 3.0

CASES = {
    "plain": {},
    "bias_mask_scale": dict(bias=BIAS, mask=MASK, scale=0.7),
    "causal_lengths": dict(is_causal=True, query_seq_lengths=QL, key_value_seq_lengths=KL),
    "window": dict(local_window_size=(1, 0)),
    "window_int_bias_full": dict(local_window_size=1, bias=np.concatenate([BIAS, BIAS + 1])),
}
# JAX 0.10.2: (out.ravel()[:6], out.sum(), (out * W).sum())
JAX = {
    "plain": ([1.6339647053182125, 0.17333493042737247, -1.67857955429703, -0.6810925381979904,
               1.913591883922927, 0.18791400945396164], 2.0016329722666684, 0.8084449113743872),
    "bias_mask_scale": ([1.8437308734282851, 0.5047244715783745, -1.9723824199754745,
                         1.550500187277794, 0.2579681289196014, -1.616079484820366],
                        -1.3049969866983138, -48.302297596293485),
    "causal_lengths": ([1.82, -1.06, -1.55, 1.82, -1.06, -1.55], -1.423841122221201,
                       4.748635203768497),
    "window": ([1.82, -1.06, -1.55, 1.82, -1.06, -1.55], -5.6512191475211875,
               -5.596077527008603),
    "window_int_bias_full": ([1.619179962873459, -0.8228109472990037, -1.4100584864616394,
                              -0.7192537114763399, 1.9391185919666893, 0.21947993947163924],
                             1.6222549476997674, -8.35800216323507),
}


def _reference(q, k, v, bias=None, mask=None, scale=None, is_causal=False,
               query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None):
    """Attention written out per head in NumPy (softmax in float64)."""
    g = N // K
    scale = 1 / np.sqrt(H) if scale is None else scale
    win = (local_window_size,) * 2 if isinstance(local_window_size, int) else local_window_size
    out = np.zeros_like(q)
    for b in range(B):
        for n in range(N):
            logits = scale * q[b, :, n] @ k[b, :, n // g].T
            if bias is not None:
                logits = logits + bias[min(b, len(bias) - 1), n]
            keep = np.ones((T, S), bool) if mask is None else mask[b, 0].copy()
            t, s = np.arange(T)[:, None], np.arange(S)[None, :]
            if is_causal:
                keep &= t >= s
            if win is not None:
                keep &= (t <= s + win[0]) & (t >= s - win[1])
            if key_value_seq_lengths is not None:
                keep &= s < key_value_seq_lengths[b]
            if query_seq_lengths is not None:
                keep &= t < query_seq_lengths[b]
            logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
            p = np.exp(logits - logits.max(-1, keepdims=True))
            out[b, :, n] = (p / p.sum(-1, keepdims=True)) @ v[b, :, n // g]
            if query_seq_lengths is not None:
                out[b, query_seq_lengths[b]:, n] = 0
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_attention_matches_jax_and_numpy(case):
    kw = CASES[case]
    out = np.asarray(nn.dot_product_attention(Q, KEY, V, **kw))
    first, total, weighted = JAX[case]
    # JAX computes the softmax in float32, also for float64 inputs: its values carry
    # float32 rounding, ours too (the same steps)
    np.testing.assert_allclose(out.ravel()[:6], first, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose([out.sum(), (out * W).sum()], [total, weighted], rtol=1e-6)
    np.testing.assert_allclose(out, _reference(Q, KEY, V, **kw), rtol=1e-6, atol=1e-6)


def test_attention_3d_residual_float32_and_errors():
    o3 = nn.dot_product_attention(Q[0], KEY[0], V[0], is_causal=True)
    assert o3.shape == (T, N, H)
    np.testing.assert_allclose(float(o3.sum()), -2.615943427369931, rtol=1e-6)     # JAX
    o, r = nn.dot_product_attention(Q, KEY, V, bias=BIAS, return_residual=True)
    assert r.shape == (B, T, N) and r.dtype == np.float64
    np.testing.assert_allclose(np.asarray(r).ravel()[:6],                           # JAX
                               [3.5771501064300537, 4.098582744598389, 4.496614456176758,
                                1.4026544094085693, 4.091586589813232, 2.7314343452453613],
                               rtol=1e-6)
    np.testing.assert_allclose(float(r.sum()), 81.8616795539856, rtol=1e-6)
    o32 = nn.dot_product_attention(*(a.astype(np.float32) for a in (Q, KEY, V)),
                                   is_causal=True)
    assert o32.dtype == np.float32
    np.testing.assert_allclose(float(np.asarray(o32, np.float64).sum()), -4.09330409578979,
                               rtol=1e-5)
    with pytest.raises(NotImplementedError, match="'cudnn' is not available"):
        nn.dot_product_attention(Q, KEY, V, implementation="cudnn")
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        nn.dot_product_attention(Q[:, :, :3], KEY, V)
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        nn.dot_product_attention(Q, KEY, V, mask=MASK.astype(np.float64))
    with pytest.raises(ValueError, match="bias has 2 heads; it must have 1 or the query's 4"):
        nn.dot_product_attention(Q, KEY, V, bias=BIAS[:, :2])
    with pytest.raises(ValueError, match="query_seq_lengths dtype should be int32"):
        nn.dot_product_attention(Q, KEY, V, query_seq_lengths=QL.astype(np.int64))


def test_attention_gradients_jit_vmap():
    loss = lambda q, k, v: ((nn.dot_product_attention(q, k, v, bias=BIAS, mask=MASK)  # noqa
                             * W) ** 2).sum()
    grads = xf.grad(loss, argnums=(0, 1, 2))(Q, KEY, V)
    # JAX 0.10.2: the sums and the sums of squares of the three gradients
    np.testing.assert_allclose([float(g.sum()) for g in grads],
                               [14.224194589825316, 3.778428797396316e-06, 29.244661375997726],
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose([float((np.asarray(g) ** 2).sum()) for g in grads],
                               [2073.5620236905233, 2002.7639431692446, 15915.890257760335],
                               rtol=1e-5)
    jitted = xf.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True,
                                                             key_value_seq_lengths=KL),
                    tiered=False)
    # (compiled float32 exp vs NumPy's: float32 rounding apart)
    np.testing.assert_allclose(jitted(Q, KEY, V), nn.dot_product_attention(
        Q, KEY, V, is_causal=True, key_value_seq_lengths=KL), rtol=1e-6, atol=1e-6)
    per_example = xf.vmap(lambda q, k, v: nn.dot_product_attention(q, k, v, scale=0.3))
    np.testing.assert_allclose(per_example(Q, KEY, V),
                               nn.dot_product_attention(Q, KEY, V, scale=0.3), rtol=1e-12)
    # float32 inputs: the float32 softmax is then no loss; second order in both modes
    q32, k32, v32 = (a[:1, :2].astype(np.float32) for a in (Q, KEY, V))
    check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True),
                (q32, k32, v32), order=2, atol=5e-2, rtol=5e-2)


def test_logmeanexp():
    x = np.array([[0.1, 2.0, -1.0], [3.0, 0.5, 0.2]])
    # JAX 0.10.2
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1), [1.0831721969210035,
                                                          2.0349522819989927], rtol=1e-14)
    np.testing.assert_allclose(nn.logmeanexp(x), 1.668265388122168, rtol=1e-14)
    where = np.array([[True, False, True], [True, True, True]])
    out = nn.logmeanexp(x, axis=1, where=where, keepdims=True)
    assert out.shape == (2, 1)
    np.testing.assert_allclose(out, [[-0.3058118554445145], [2.0349522819989927]], rtol=1e-14)
    np.testing.assert_allclose(nn.logmeanexp(np.array([1000.0, 1000.0])), 1000.0)
    check_grads(lambda x: nn.logmeanexp(x, axis=0), (x,), order=2)
    np.testing.assert_allclose(xf.jit(lambda x: nn.logmeanexp(x, axis=1), tiered=False)(x),
                               [1.0831721969210035, 2.0349522819989927], rtol=1e-14)
