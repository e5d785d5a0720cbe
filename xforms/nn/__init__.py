"""`xforms.nn`: JAX's `jax.nn` activation functions (functions.py: relu, sigmoid, softplus,
softmax, log_softmax, logsumexp, gelu; activations.py: the others; attention.py:
dot_product_attention, logmeanexp; scaled.py: scaled_matmul, scaled_dot_general).

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
from .scaled import scaled_dot_general, scaled_matmul  # noqa: F401

from . import initializers  # noqa: E402,F401  (xforms.nn.initializers)
from ..primitives.operands import returns_arrays as _returns_arrays  # noqa: E402

# a list or tuple where an array belongs is JAX's TypeError naming the function (one_hot
# takes lists, as jax.nn.one_hot does); eager results are Arrays
for _name in [n for n, v in list(globals().items()) if callable(v) and not isinstance(v, type)
              and not n.startswith("_") and n != "one_hot"
              and getattr(v, "__module__", "").startswith(__name__ + ".")]:
    globals()[_name] = _returns_arrays(globals()[_name])
# eager calls: one cached program per signature (xforms/numpy/eager_programs.py)
from ..numpy.eager_programs import as_program as _as_program  # noqa: E402
for _name in ("relu", "sigmoid", "softplus", "softmax", "log_softmax", "logsumexp", "gelu",
              "silu", "swish", "elu", "leaky_relu", "tanh", "log_sigmoid", "relu6", "selu",
              "celu", "mish", "standardize", "glu", "hard_tanh", "soft_sign"):
    globals()[_name] = _as_program(globals()[_name])
del _name


def __getattr__(name):
    if name == "get_scaled_dot_general_config":     # absent to hasattr, with the reason
        raise AttributeError(
            "xforms.nn.get_scaled_dot_general_config: its configs name float8/float4 storage "
            "types (mxfp8, nvfp4), which xforms lacks; scaled_dot_general without configs and "
            "scaled_matmul on float operands work")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
