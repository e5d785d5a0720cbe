"""`xforms.custom_derivatives`, as `jax.custom_derivatives`: the custom differentiation
rules in one namespace.

    >>> from xforms.custom_derivatives import custom_jvp, custom_vjp, custom_gradient
"""
from .api_extras import closure_convert, custom_gradient  # noqa: F401
from .custom import custom_jvp, custom_vjp  # noqa: F401
from .primitives.custom import custom_jvp_call_p, custom_vjp_call_p  # noqa: F401

__all__ = ["closure_convert", "custom_gradient", "custom_jvp", "custom_vjp",
           "custom_jvp_call_p", "custom_vjp_call_p"]
