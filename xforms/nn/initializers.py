"""`xforms.nn.initializers`: JAX's weight initializers.  Each factory returns
`init(key, shape, dtype=dtype)`; with the same key they give JAX's numbers (xforms.random is
JAX's generator).  Complex dtypes are not supported yet (NotImplementedError).

    >>> init = initializers.glorot_normal()
    >>> w = init(random.PRNGKey(0), (784, 128))
"""
import math
from typing import Protocol

import numpy as np

from .. import numpy as xnp
from .. import random

_FLOAT = np.dtype(np.float64)        # xforms' default float (JAX's with jax_enable_x64)


def _dtype(dtype):
    dt = _FLOAT if dtype is None else np.dtype(dtype)
    if dt.kind == "c":
        raise NotImplementedError("complex weights in xforms.nn.initializers")
    return dt


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def zeros(key, shape, dtype=None):
    return xnp.zeros(_shape(shape), _dtype(dtype))


def ones(key, shape, dtype=None):
    return xnp.ones(_shape(shape), _dtype(dtype))


def constant(value, dtype=None):
    def init(key, shape, dtype=dtype):
        return xnp.full(_shape(shape), value, _dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """U[0, scale)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.uniform(key, _shape(shape), dt) * xnp.asarray(scale, dt)
    return init


def normal(stddev=1e-2, dtype=None):
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.normal(key, _shape(shape), dt) * xnp.asarray(stddev, dt)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """stddev * (a standard normal truncated to [lower, upper])."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, _shape(shape), dt) * \
            xnp.asarray(stddev, dt)
    return init


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    size = lambda ax: shape[ax] if isinstance(ax, int) else math.prod(shape[i] for i in ax)
    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Samples of variance scale / n, n the fan given by `mode` (fan_in, fan_out, fan_avg,
    fan_geo_avg); `distribution` truncated_normal (at 2 sigma, rescaled), normal or uniform."""
    def init(key, shape, dtype=dtype):
        shape, dt = _shape(shape), _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        den = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
               "fan_geo_avg": (fan_in * fan_out) ** 0.5}.get(mode)
        if den is None:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = np.asarray(scale / den, dt)
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / np.asarray(.87962566103423978, dt)
            return random.truncated_normal(key, -2, 2, shape, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dt) * np.sqrt(variance)
        if distribution == "uniform":
            return random.uniform(key, shape, dt, -1) * np.sqrt(np.asarray(3, dt) * variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")
    return init


def _preset(scale, mode, distribution):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    return factory


glorot_uniform = xavier_uniform = _preset(1.0, "fan_avg", "uniform")
glorot_normal = xavier_normal = _preset(1.0, "fan_avg", "truncated_normal")
lecun_uniform = _preset(1.0, "fan_in", "uniform")
lecun_normal = _preset(1.0, "fan_in", "truncated_normal")
he_uniform = kaiming_uniform = _preset(2.0, "fan_in", "uniform")
he_normal = kaiming_normal = _preset(2.0, "fan_in", "truncated_normal")
for _n, _what in (("glorot_uniform", "uniform, variance 1 / mean(fan_in, fan_out)"),
                  ("glorot_normal", "truncated normal, variance 1 / mean(fan_in, fan_out)"),
                  ("lecun_uniform", "uniform, variance 1 / fan_in"),
                  ("lecun_normal", "truncated normal, variance 1 / fan_in"),
                  ("he_uniform", "uniform, variance 2 / fan_in"),
                  ("he_normal", "truncated normal, variance 2 / fan_in")):
    globals()[_n].__name__ = globals()[_n].__qualname__ = _n
    globals()[_n].__doc__ = (f"{_n}(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None): an "
                             f"initializer init(key, shape, dtype) drawing {_what} "
                             "(variance_scaling).")


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Weights whose columns (along `column_axis`) are orthonormal, times scale."""
    def init(key, shape, dtype=dtype):
        shape, dt = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return xnp.zeros(shape, dt)
        n_cols = shape[column_axis]
        q = random.orthogonal(key, math.prod(shape) // n_cols, (), dt, n_cols)
        q = xnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        return xnp.asarray(scale, dt) * xnp.moveaxis(q, -1, column_axis)
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Convolution kernels (3-5 D) that are an orthogonal matrix at the spatial centre."""
    def init(key, shape, dtype=dtype):
        shape, dt = _shape(shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return xnp.zeros(shape, dt).at[centre].set(ortho)
    return init


class Initializer(Protocol):
    """The type of what the factories here return (for annotations, as JAX's Protocol):
    init(key, shape, dtype=None) -> array.

        >>> def build(w_init: Initializer = glorot_normal()): ...
    """

    def __call__(self, key, shape, dtype=None, out_sharding=None):
        ...


__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]
