"""`xforms.scipy`: JAX's jax.scipy namespaces (`special`, `stats`, ...).

    >>> import xforms.scipy.special as xsp
"""
from . import special, stats  # noqa: F401
