"""`xforms.custom_derivatives`, as `jax.custom_derivatives`: the custom differentiation
rules in one namespace.

    >>> from xforms.custom_derivatives import custom_jvp, custom_vjp, custom_gradient
"""
from .api_extras import closure_convert, custom_gradient  # noqa: F401
from .custom import custom_jvp, custom_vjp  # noqa: F401
from .primitives.custom import custom_jvp_call_p, custom_vjp_call_p  # noqa: F401

__all__ = ["closure_convert", "custom_gradient", "custom_jvp", "custom_vjp",
           "custom_jvp_call_p", "custom_vjp_call_p"]

_SYMBOLIC = ("belongs to custom_jvp/custom_vjp's symbolic_zeros=True mode, which xforms does "
             "not support (defjvp/defvjp raise NotImplementedError for it): zero tangents "
             "reach the rules as zero arrays")
_ABSENT = {
    "SymbolicZero": _SYMBOLIC, "zero_from_primal": _SYMBOLIC, "CustomVJPPrimal": _SYMBOLIC,
    "custom_vjp_primal_tree_values": _SYMBOLIC,
    "linear_call": "not implemented (a primitive with a user transpose rule): use custom_vjp "
                   "with the transpose as its backward rule",
    "remat_opt_p": "JAX's internal primitive of checkpointed custom rules; xforms has none",
}


def __getattr__(name):
    """JAX's names xforms lacks: absent to hasattr, and the AttributeError says why."""
    if name in _ABSENT:
        raise AttributeError(f"xforms.custom_derivatives.{name}: {_ABSENT[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
