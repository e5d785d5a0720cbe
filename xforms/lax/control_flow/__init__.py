"""lax's structured control flow (JAX's lax/control_flow): conditionals (cond, switch),
loops (while_loop, fori_loop, scan, map), solves (custom_root, custom_linear_solve: JAX
keeps them here too) and what they share (common)."""
from .conditionals import cond, platform_dependent, switch  # noqa: F401
from .loops import fori_loop, map, scan, while_loop  # noqa: F401
