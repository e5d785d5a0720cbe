"""`xforms.experimental`: JAX's `jax.experimental` names that xforms has (io_callback, ode)."""
from ..callbacks import io_callback
from . import ode

__all__ = ["io_callback", "ode"]
