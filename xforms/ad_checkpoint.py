"""`xforms.ad_checkpoint`, as `jax.ad_checkpoint`: `checkpoint` (alias `remat`),
`checkpoint_name`, and the checkpoint policies, including those that go by name.

    >>> from xforms.ad_checkpoint import checkpoint, checkpoint_name
    >>> policy = xf.checkpoint_policies.save_only_these_names("h")
    >>> layer = checkpoint(lambda w, x: xnp.sin(checkpoint_name(x @ w, "h")), policy=policy)
"""
from typing import NamedTuple

from .custom import checkpoint, checkpoint_policies, remat  # noqa: F401
from .primitives import names as _names
from .tree_util import tree_map


# What a policy may return (JAX's names): save the value, recompute it, or offload it to
# another memory -- which xforms, with one memory, does by saving it.
Saveable, Recompute = True, False


class Offloadable(NamedTuple):
    """A policy's answer "keep it in memory `dst`" (saved, in xforms: one memory)."""
    src: str
    dst: str

    def __bool__(self):
        return True


def checkpoint_name(x, name):
    """x (any pytree) with each leaf labelled `name`, for the policies
    `save_only_these_names`, `save_any_names_but_these` and
    `save_anything_except_these_names` of a surrounding `checkpoint`.  The identity
    everywhere else (and its derivative is the identity).

    >>> h = checkpoint_name(xnp.tanh(x @ w), "hidden")
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: the name must be a str, got {type(name).__name__}")
    return tree_map(lambda v: _names.name(v, name), x)


__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat", "Saveable",
           "Recompute", "Offloadable"]


def __getattr__(name):
    """jax.ad_checkpoint's residual report: absent, saying so."""
    if name == "print_saved_residuals":
        raise AttributeError("xforms.ad_checkpoint.print_saved_residuals: not implemented "
                             "(the report of what a checkpoint policy saves)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
