"""`xforms.scipy`: JAX's jax.scipy namespaces (`cluster`, `fft`, `integrate`, `interpolate`,
`linalg`, `ndimage`, `optimize`, `signal`, `sparse`, `spatial`, `special`, `stats`).

    >>> import xforms.scipy.special as xsp

Each namespace is imported on first access (`xforms.scipy.stats.norm` after `import xforms`
works), as jax.scipy's are: a program that uses none of them does not pay for them.
"""
import importlib

_SUBMODULES = ("cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
               "signal", "sparse", "spatial", "special", "stats")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
