"""`stax`: JAX's minimal neural-network library, same signatures.  A layer is a pair
`(init_fun, apply_fun)`: `init_fun(rng, input_shape) -> (output_shape, params)` and
`apply_fun(params, inputs, **kwargs) -> outputs`; `serial` and `parallel` combine layers.

    >>> init, apply = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(10), stax.LogSoftmax)
    >>> out_shape, params = init(random.PRNGKey(0), (-1, 784))

Conv, ConvTranspose and the pooling layers build on `lax.conv_general_dilated` and
`lax.reduce_window`; where those are missing they raise NotImplementedError naming them.
"""
import functools
import math

import numpy as np

from .. import lax
from .. import nn
from .. import numpy as xnp
from .. import random
from ..nn.initializers import glorot_normal, normal, ones, zeros

# stax's own short names for its default initializers (JAX's aliases: the same functions)
glorot, randn = glorot_normal, normal


# ---- activations (xforms.nn's when it has them; JAX's formulas otherwise) ---------------------
def _elu(x, alpha=1.0):
    return xnp.where(x > 0, x, alpha * xnp.expm1(xnp.where(x > 0, 0.0, x)))


def _leaky_relu(x, negative_slope=1e-2):
    return xnp.where(x >= 0, x, negative_slope * x)


def _selu(x):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * _elu(x, alpha)


def _fn(name, fallback):
    return getattr(nn, name, fallback)


def elementwise(fun, **fun_kwargs):
    """A layer applying `fun(inputs, **fun_kwargs)`; no parameters."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


# the functions JAX's stax re-exports from jax.nn (programs call `stax.logsoftmax(logits)`)
relu, softmax, softplus, sigmoid, gelu = nn.relu, nn.softmax, nn.softplus, nn.sigmoid, nn.gelu
log_softmax = logsoftmax = nn.log_softmax
elu, leaky_relu, selu = _fn("elu", _elu), _fn("leaky_relu", _leaky_relu), _fn("selu", _selu)
standardize = nn.standardize

Tanh = elementwise(xnp.tanh)
Relu = elementwise(nn.relu)
Exp = elementwise(xnp.exp)
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
Softmax = elementwise(nn.softmax, axis=-1)
Softplus = elementwise(nn.softplus)
Sigmoid = elementwise(nn.sigmoid)
Elu = elementwise(_fn("elu", _elu))
LeakyRelu = elementwise(_fn("leaky_relu", _leaky_relu))
Selu = elementwise(_fn("selu", _selu))
Gelu = elementwise(nn.gelu)


# ---- layers with parameters -------------------------------------------------------------------
def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """inputs @ W + b."""
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return xnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _need(name):
    fn = getattr(lax, name, None)
    if fn is None:
        raise NotImplementedError(f"this stax layer needs lax.{name}, which xforms does not "
                                  "have yet")
    return fn


def _conv_out_dim(size, k, s, pad):
    if pad == "VALID":
        return (size - k) // s + 1
    if pad == "SAME":
        return -(-size // s)
    lo, hi = pad
    return (size + lo + hi - k) // s + 1


def conv_output_shape(lhs_shape, rhs_shape, strides, padding, dimension_numbers):
    """Output shape of lax.conv_general_dilated (no dilation) in the output spec's order."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    sp_l = [i for i, c in enumerate(lhs_spec) if c not in "NC"]
    sp_r = [i for i, c in enumerate(rhs_spec) if c not in "IO"]
    pads = [padding] * len(sp_l) if isinstance(padding, str) else list(padding)
    spatial = [_conv_out_dim(lhs_shape[a], rhs_shape[b], s, p)
               for a, b, s, p in zip(sp_l, sp_r, strides, pads)]
    it = iter(spatial)
    return tuple(lhs_shape[lhs_spec.index("N")] if c == "N" else
                 rhs_shape[rhs_spec.index("O")] if c == "C" else next(it) for c in out_spec)


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """Convolution with the given (lhs, rhs, out) layout strings, e.g. ('NHWC', 'HWIO', 'NHWC')."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        it = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                        else next(it) for c in rhs_spec]
        output_shape = conv_output_shape(input_shape, kernel_shape, strides, padding,
                                         dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        conv = _need("conv_general_dilated")
        return conv(inputs, W, strides, padding, one, one,
                    dimension_numbers=dimension_numbers) + b
    _need("conv_general_dilated")
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1D = functools.partial(GeneralConv, ("NHC", "HIO", "NHC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    raise NotImplementedError("stax.GeneralConvTranspose/ConvTranspose: not implemented in "
                              "xforms yet (needs lax.conv_transpose and its shape rule)")


ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))


def _standardize(x, axis=-1, epsilon=1e-5):
    mean = xnp.mean(x, axis, keepdims=True)
    var = xnp.mean(xnp.square(x), axis, keepdims=True) - xnp.square(mean)
    return (x - mean) * lax.rsqrt(var + epsilon)


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalise over `axis` with the batch's statistics, then scale and shift."""
    _beta_init = lambda rng, shape: beta_init(rng, shape) if center else ()
    _gamma_init = lambda rng, shape: gamma_init(rng, shape) if scale else ()
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        return input_shape, (_beta_init(k1, shape), _gamma_init(k2, shape))

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(np.ndim(x)))
        z = _fn("standardize", _standardize)(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z
    return init_fun, apply_fun


# ---- pooling ----------------------------------------------------------------------------------
def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial = (0, len(window_shape) + 1) if spec is None else \
            tuple(i for i, c in enumerate(spec) if c in "NC")
        for i in sorted(non_spatial):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]
        _need("reduce_window")

        def init_fun(rng, input_shape):
            pads = [padding] * len(input_shape) if isinstance(padding, str) else None
            if pads is None:
                raise NotImplementedError("stax pooling with explicit padding")
            out = tuple(_conv_out_dim(d, w, s, padding) for d, w, s in
                        zip(input_shape, window_shape, strides))
            return out, ()

        def apply_fun(params, inputs, **kwargs):
            out = _need("reduce_window")(inputs, init_val, reducer, window_shape, strides,
                                          padding)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -np.inf)
SumPool = _pooling_layer(lax.add, 0.)


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        if spec is None:
            non_spatial = (0, inputs.ndim - 1)
        else:
            non_spatial = tuple(i for i, c in enumerate(spec) if c in "NC")
        one = xnp.ones([d for i, d in enumerate(inputs.shape) if i not in non_spatial],
                       inputs.dtype)
        window = tuple(dims)
        st = tuple(strides)
        sizes = _need("reduce_window")(one, 0., lax.add, window, st, padding)
        for i in sorted(non_spatial):
            sizes = xnp.expand_dims(sizes, i)
        return outputs / sizes
    return rescale


AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)
for _n, _what in (("MaxPool", "maximum"), ("SumPool", "sum"), ("AvgPool", "mean")):
    globals()[_n].__name__ = globals()[_n].__qualname__ = _n
    globals()[_n].__doc__ = (f"{_n}(window_shape, strides=None, padding='VALID', spec=None): "
                             f"a layer (init_fun, apply_fun) taking the {_what} over each "
                             "window of the spatial axes (NHWC unless `spec` says otherwise).")


# ---- shape and combinators ------------------------------------------------------------------
def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params, inputs, **kwargs):
    return xnp.reshape(inputs, (inputs.shape[0], -1))


Flatten = (_flatten_init, _flatten_apply)
Identity = (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


def FanOut(num):
    """One input to `num` copies."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs[1:], inputs[0]))


def FanInConcat(axis=-1):
    """Concatenate a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return xnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Keeps each input with probability `rate` (JAX's convention), scaled by 1/rate; needs
    `rng=` at apply time in 'train' mode."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument. That is, instead of `apply_fun(params, inputs)`, call "
                             "it like `apply_fun(params, inputs, rng)` where `rng` is a PRNG "
                             "key (e.g. from `xforms.random.key`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return xnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


def serial(*layers):
    """Layers in sequence."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layers side by side: a list of inputs to a list of outputs."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape: `make_layer(shape) -> (init_fun, apply_fun)`."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
