"""`xforms.scipy`: SciPy-compatible functions on traced arrays (JAX's `jax.scipy`)."""
from . import signal  # noqa: F401
