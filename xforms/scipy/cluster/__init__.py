"""`xforms.scipy.cluster`: JAX's jax.scipy.cluster, which holds one namespace, `vq`
(vector quantisation: assign observations to the nearest code).

    >>> from xforms.scipy.cluster.vq import vq
"""
import importlib

_SUBMODULES = ("vq",)


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
