"""`xforms.random`: JAX's functional PRNG API with JAX's Threefry-2x32 generator, so that a
seed gives JAX's numbers: key, PRNGKey, split, fold_in, bits and uniform bit for bit, normal
and the other samplers to within a few ulp (same algorithms).  Called outside any trace,
split, fold_in, bits and the samplers run as one jitted program each, shape, dtype and mode
static, as JAX jits them (random/programs.py: evaluated by NumPy, never compiled, so they
keep NumPy's bits and never wait for a compile); under a trace they run inline.

    >>> from xforms import random
    >>> key = random.PRNGKey(0)
    >>> key, sub = random.split(key)
    >>> random.normal(sub, (3,))
"""
import numpy as np

from .. import config
from ..primitives import operands
from . import threefry
from .keys import KEY_DTYPE, KeyArray, check_key, wrap
from .programs import program
from .samplers import (bernoulli, cauchy, exponential, gumbel, laplace, logistic, normal,
                       rademacher, randint, truncated_normal, uniform)
from .samplers import canonical_shape
from .discrete import categorical, choice, permutation, shuffle
from .matrices import multivariate_normal, orthogonal
from .derived import (ball, double_sided_maxwell, f, generalized_normal, geometric, lognormal,
                      maxwell, pareto, rayleigh, triangular, wald, weibull_min)
from .binomial import binomial, multinomial
from .gamma import beta, chisquare, dirichlet, gamma, loggamma, poisson, t


def key(seed, *, impl=None):
    """A typed PRNG key (a scalar `KeyArray`) from an integer seed."""
    _check_impl(impl)
    return KeyArray(_seed(seed, "key"))


def PRNGKey(seed, *, impl=None):
    """A legacy raw key: a uint32 array [seed >> 32, seed & 0xFFFFFFFF] (a typed key under
    xf.enable_custom_prng(True), as in JAX)."""
    _check_impl(impl)
    if config.enable_custom_prng.value:
        return key(seed)
    return operands.returns_arrays(lambda: _seed(seed, "PRNGKey"))()


def _check_impl(impl):
    if impl not in (None, "threefry2x32"):
        raise NotImplementedError(f"PRNG implementation {impl!r}: xforms has threefry2x32 only")


def _seed(seed, name):
    if isinstance(seed, KeyArray):
        raise TypeError(f"random.{name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"random.{name} accepts a scalar seed, but was given an array of "
                        f"shape {np.shape(seed)} != (). Use xforms.vmap for batching")
    return threefry.seed_words(seed)


def split(key, num=2):
    """`num` new keys (an int or a shape tuple), stacked along new leading axes."""
    data, typed = check_key("split", key)
    shape = tuple(num) if isinstance(num, (tuple, list)) else (int(num),)
    return wrap(_split(data, shape), typed)


_split = program(static_argnums=(1,))(operands.returns_arrays(threefry.split))


def fold_in(key, data):
    """A new key from `key` and a 32-bit integer `data`."""
    raw, typed = check_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of "
                        f"shape {np.shape(data)} != (). Use xforms.vmap for batching.")
    return wrap(_fold_in(raw, threefry.as_u32(data)), typed)


_fold_in = program()(operands.returns_arrays(threefry.fold_in))


def bits(key, shape=(), dtype=None):
    """Uniform random bits: unsigned integers (default uint64, as JAX in 64-bit mode)."""
    raw, _ = check_key("bits", key)
    dtype = np.dtype(np.uint64 if dtype is None else dtype)
    if dtype.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    shape = canonical_shape(shape, "bits")
    return _bits(raw, dtype.itemsize * 8, shape)


_bits = program(static_argnums=(1, 2))(threefry.random_bits)


def key_data(keys):
    """The uint32 data (..., 2) of typed keys (raw keys pass through)."""
    data, _ = check_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None):
    """Typed keys from uint32 data (..., 2)."""
    _check_impl(impl)
    if isinstance(key_bits_array, KeyArray):
        raise TypeError("wrap_key_data: the argument is already a typed key array")
    data, _ = check_key("wrap_key_data", key_bits_array, allow_batched=True)
    return KeyArray(data)


def key_impl(keys):
    check_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def key_dtype(impl=None):
    _check_impl(impl)
    return KEY_DTYPE


def clone(key):
    """`key` itself; a typed key as a new, unconsumed one (xf.debug_key_reuse)."""
    return KeyArray(key._data) if isinstance(key, KeyArray) else key


__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "key_data", "wrap_key_data",
           "key_impl", "uniform", "normal", "truncated_normal", "bernoulli", "rademacher",
           "randint", "exponential", "laplace", "logistic", "cauchy", "gumbel", "KeyArray",
           "multivariate_normal", "orthogonal", "categorical", "choice", "permutation",
           "shuffle", "gamma", "loggamma", "beta", "dirichlet", "chisquare", "t", "poisson",
           "pareto", "lognormal", "weibull_min", "rayleigh", "maxwell", "double_sided_maxwell",
           "wald", "geometric", "triangular", "f", "binomial", "multinomial", "ball",
           "generalized_normal"]



def __getattr__(name):
    """jax.random's primitive object xforms has no primitive for: absent, saying why."""
    if name == "random_gamma_p":
        raise AttributeError("xforms.random.random_gamma_p: xforms has no random_gamma "
                             "primitive (random.gamma is built from other primitives, its "
                             "derivative from lax.random_gamma_grad)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
