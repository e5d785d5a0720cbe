"""`xforms.scipy`: JAX's jax.scipy namespaces (`cluster`, `fft`, `integrate`, `interpolate`,
`linalg`, `ndimage`, `optimize`, `signal`, `sparse`, `spatial`, `special`, `stats`).

    >>> import xforms.scipy.special as xsp

Each namespace is imported on first access (`xforms.scipy.stats.norm` after `import xforms`
works), as jax.scipy's are: a program that uses none of them does not pay for them.
"""
import importlib
import sys


def lazy_namespaces(module, names):
    """`(__getattr__, __dir__)` for the package `module` (a name) whose `names` are submodules
    imported on first access.

        >>> __getattr__, __dir__ = lazy_namespaces(__name__, ("vq",))
    """
    def __getattr__(name):
        if name in names:
            return importlib.import_module(f"{module}.{name}")
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(sys.modules[module])) | set(names))
    return __getattr__, __dir__


__getattr__, __dir__ = lazy_namespaces(__name__, (
    "cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
    "sparse", "spatial", "special", "stats"))
