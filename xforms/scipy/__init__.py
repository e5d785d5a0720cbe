"""`xforms.scipy`: JAX's jax.scipy namespaces (`linalg`, `signal`, `special`, `stats`).

    >>> import xforms.scipy.special as xsp
"""
from . import linalg, signal, special, stats  # noqa: F401
