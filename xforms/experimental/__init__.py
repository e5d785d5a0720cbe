"""`xforms.experimental`: JAX's `jax.experimental` names that xforms has (io_callback)."""
from ..callbacks import io_callback

__all__ = ["io_callback"]
