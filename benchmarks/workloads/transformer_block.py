"""A pre-norm transformer block (layernorm, causal softmax attention over `heads` heads, a
gelu MLP of 4x the width, residuals) and its loss, mean(out ** 2), written once for xforms
and JAX: the larger program of `python -m benchmarks.compile_time --only block` (issue 35:
batch 4, sequence 64, width 128, 4 heads).  Not a registered workload: a model of the
compile-time benchmark only."""
import numpy as np


def make_data(batch, seq, width, dtype="float32", seed=0):
    """(params, x): random weights of one block and an input of (batch, seq, width)."""
    rng = np.random.default_rng(seed)
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(dtype)  # noqa: E731
    params = {"wq": w(width, width), "wk": w(width, width), "wv": w(width, width),
              "wo": w(width, width), "w1": w(width, 4 * width), "w2": w(4 * width, width)}
    for name, n in (("g1", width), ("g2", width)):
        params[name] = np.ones(n, dtype)
    for name, n in (("b1", width), ("b2", width), ("c1", 4 * width), ("c2", width)):
        params[name] = np.zeros(n, dtype)
    return params, rng.standard_normal((batch, seq, width)).astype(dtype)


def loss(params, x, heads, np_, nn):
    """mean(block(x) ** 2); `np_` and `nn`: xforms.numpy and xforms.nn, or JAX's."""
    B, T, D = x.shape
    h = _layernorm(x, params["g1"], params["b1"], np_)

    def split(w):                                 # (B, T, D) -> (B, heads, T, D / heads)
        return (h @ w).reshape(B, T, heads, D // heads).transpose(0, 2, 1, 3)
    q, k, v = split(params["wq"]), split(params["wk"]), split(params["wv"])
    s = q @ k.transpose(0, 1, 3, 2) / float(np.sqrt(D // heads))
    s = np_.where(np.tril(np.ones((T, T), bool)), s, -1e9)
    a = (nn.softmax(s, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    h2 = x + a @ params["wo"]
    m = _layernorm(h2, params["g2"], params["b2"], np_) @ params["w1"] + params["c1"]
    out = h2 + nn.gelu(m) @ params["w2"] + params["c2"]
    return np_.mean(out ** 2)


def _layernorm(h, g, b, np_):
    m = np_.mean(h, axis=-1, keepdims=True)
    v = np_.mean((h - m) ** 2, axis=-1, keepdims=True)
    return (h - m) / np_.sqrt(v + 1e-5) * g + b
