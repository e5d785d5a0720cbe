"""`xforms.scipy`: JAX's jax.scipy namespaces (`linalg`, `special`, `stats`, ...).

    >>> import xforms.scipy.special as xsp
"""
from . import linalg, special, stats  # noqa: F401
