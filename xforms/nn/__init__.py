"""`xforms.nn`: JAX's `jax.nn` activation functions (functions.py: relu, sigmoid, softplus,
softmax, log_softmax, logsumexp, gelu; activations.py: the others; attention.py:
dot_product_attention, logmeanexp).

    >>> import xforms.nn as nn
    >>> nn.relu(xnp.array([-1.0, 2.0]))
"""
from .functions import (gelu, log_softmax, logsumexp, relu, sigmoid, softmax,  # noqa: F401
                        softplus)
from .activations import (celu, elu, glu, hard_sigmoid, hard_silu, hard_swish,  # noqa: F401
                          hard_tanh, identity, leaky_relu, log1mexp, log_sigmoid, mish,
                          one_hot, relu6, selu, silu, soft_sign, sparse_plus, sparse_sigmoid,
                          squareplus, standardize, swish, tanh)
from .attention import dot_product_attention, logmeanexp  # noqa: F401

from . import initializers  # noqa: E402,F401  (xforms.nn.initializers)
