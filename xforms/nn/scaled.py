"""jax.nn's block-scaled products, `scaled_matmul` and `scaled_dot_general`, as their
definitions compute them (jax 0.10.2 runs them through cuDNN only: on CPU scaled_matmul
raises there and scaled_dot_general takes no `configs`).

    >>> scaled_matmul(a, b, a_scales, b_scales)      # a: (B, M, K), a_scales: (B, M, K // s)

Each scale multiplies a block of consecutive entries along the contracting axis K (block
size K // K_a); the product accumulates in `preferred_element_type` (float32 by default,
as in JAX, whatever the operands' dtype).
"""
import numpy as np

from .. import numpy as xnp
from .. import lax


def _expand_scales(x, scales, what):
    """x * scales, each scale repeated over its block of x's last axis."""
    if x.ndim != 3 or scales.ndim != 3 or x.shape[:2] != scales.shape[:2]:
        raise ValueError(f"scaled_matmul: {what} of shape {tuple(x.shape)} and its scales of "
                         f"shape {tuple(scales.shape)}: expected (B, M, K) and (B, M, K_s)")
    if scales.shape[2] == 0 or x.shape[2] % scales.shape[2]:
        raise ValueError(f"scaled_matmul: {what}'s contracting size {x.shape[2]} is not a "
                         f"multiple of its scales' {scales.shape[2]}")
    return xnp.repeat(scales, x.shape[2] // scales.shape[2], axis=2)


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """(B, M, K) x (B, N, K) -> (B, M, N): einsum('BMK,BNK->BMN') of the operands times their
    block scales, in `preferred_element_type`.

        >>> scaled_matmul(xnp.ones((1, 1, 4)), xnp.ones((1, 2, 4)),
        ...               xnp.full((1, 1, 2), 0.5), xnp.ones((1, 2, 1)))   # [[[2., 2.]]]
    """
    a, b = xnp.asarray(lhs), xnp.asarray(rhs)
    sa, sb = xnp.asarray(lhs_scales), xnp.asarray(rhs_scales)
    if a.ndim == 3 and b.ndim == 3 and (a.shape[0], a.shape[2]) != (b.shape[0], b.shape[2]):
        raise ValueError(f"scaled_matmul: lhs {tuple(a.shape)} and rhs {tuple(b.shape)} need "
                         "the same batch (B) and contracting (K) sizes")
    out = xnp.dtype(preferred_element_type)
    a = a.astype(out) * _expand_scales(a, sa, "lhs").astype(out)
    b = b.astype(out) * _expand_scales(b, sb, "rhs").astype(out)
    return lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,))), preferred_element_type=out)


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
    """lax.dot_general in `preferred_element_type` (float32 by default) -- JAX's answer
    without `configs`; quantising the operands by block-scale configs is not supported.

        >>> scaled_dot_general(x, w, (((1,), (1,)), ((), ())))       # x @ w.T in float32
    """
    if configs is not None:
        raise NotImplementedError(
            "nn.scaled_dot_general(configs=...): quantising to float8/float4 block-scaled "
            "operands needs those dtypes, which xforms lacks (jax runs it through cuDNN)")
    del implementation                            # (JAX ignores it too, with a warning)
    return lax.dot_general(lhs, rhs, dimension_numbers,
                           preferred_element_type=preferred_element_type)
