"""`xforms.scipy.spatial`: JAX's jax.scipy.spatial, which holds one namespace, `transform`
(3-d rotations: Rotation, Slerp).

    >>> from xforms.scipy.spatial.transform import Rotation
"""
import importlib

_SUBMODULES = ("transform",)


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
