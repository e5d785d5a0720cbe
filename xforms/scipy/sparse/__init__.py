"""`xforms.scipy.sparse` (jax.scipy.sparse): the iterative solvers of `sparse.linalg`."""
from . import linalg  # noqa: F401

__all__ = ["linalg"]
