"""Two programs of session 18's new-user tryout, written once for xforms and JAX: the
``gnn`` and ``conv`` models of ``python -m benchmarks.compile_time --only gnn,conv``
(issue 35: their ``jit(grad)`` compiled 7-19x slower than JAX's first call).  Not
registered workloads: models of the compile-time benchmark only.

* gnn: three message-passing layers on a random graph (200 nodes, 1,000 edges, 8 features,
  width 16, 4 classes): gathers by edge source, segment_sum and segment_max by edge
  destination, a concatenate, log_softmax and take_along_axis for the loss.
* conv: a 1-D conv net (batch 4, length 32, 3 -> 8 channels; a padded width-5 conv, gelu,
  a strided dilated SAME conv) with causal dot_product_attention, then mean(out @ w) ** 2.
"""
import numpy as np


def make_gnn(seed=0, N=200, E=1000, F=8, H=16, C=4):
    """(loss(params, X, y, jax, jnp), (params, X, y)) of the graph network."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, N, E), rng.integers(0, N, E)
    X, y = rng.normal(size=(N, F)), rng.integers(0, C, N)
    params = {"w1": rng.normal(size=(F, H)) * .3, "w2": rng.normal(size=(2 * H, H)) * .3,
              "w3": rng.normal(size=(H, C)) * .3}

    def layer(h, w, agg, jax, jnp):
        m = h[src] @ w
        if agg == "sum":
            a = jax.ops.segment_sum(m, dst, num_segments=N)
        else:
            a = jax.ops.segment_max(m, dst, num_segments=N)
            a = jnp.where(jnp.isfinite(a), a, 0.0)
        return jax.nn.relu(a + h @ w)

    def loss(p, X, y, jax, jnp):
        h = layer(X, p["w1"], "sum", jax, jnp)
        h = jnp.concatenate([layer(h, jnp.eye(H), "max", jax, jnp), h], axis=1) @ p["w2"]
        h = layer(h, jnp.eye(H) * 0.5, "sum", jax, jnp)
        lp = jax.nn.log_softmax(h @ p["w3"])
        return -jnp.mean(jnp.take_along_axis(lp, y[:, None], axis=1))
    return loss, (params, X, y)


def make_conv(seed=3, B=4, L=32, Ci=3, Co=8, K=5):
    """(net(params, x, jax, jnp), (params, x)) of the conv net with attention."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(B, L, Ci))
    params = {"k1": rng.normal(size=(K, Ci, Co)) * .3, "k2": rng.normal(size=(3, Co, Co)) * .3,
              "w": rng.normal(size=(Co, 2)) * .3}

    def net(p, x, jax, jnp):
        dn = ("NWC", "WIO", "NWC")
        h = jnp.pad(x, ((0, 0), (2, 2), (0, 0)))
        h = jax.lax.conv_general_dilated(h, p["k1"], (1,), "VALID", dimension_numbers=dn)
        h = jax.nn.gelu(h)
        h = jax.lax.conv_general_dilated(h, p["k2"], (2,), "SAME", rhs_dilation=(2,),
                                         dimension_numbers=dn)
        q = h.reshape(B, -1, 2, Co // 2)
        a = jax.nn.dot_product_attention(q, q, q, is_causal=True)
        return jnp.mean(a.reshape(B, -1, Co) @ p["w"]) ** 2
    return net, (params, x)
