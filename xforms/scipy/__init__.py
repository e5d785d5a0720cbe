"""`xforms.scipy`: JAX's jax.scipy namespaces (`linalg`, ...).

    >>> import xforms.scipy.linalg as xsl
"""
from . import linalg  # noqa: F401
