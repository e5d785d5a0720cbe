"""Availability detection for each system benchmarked side by side.

Every peer is optional: :func:`load` imports it lazily and either returns a
namespace of the modules a workload needs or raises :class:`Absent` with a
one-line reason.  Nothing here is imported at package-import time.
"""
from __future__ import annotations

import functools
import importlib
import os
import types

#: Display order of systems in tables and plots.
SYSTEMS = ("xforms", "jax", "pytensor", "autograd", "numpy", "numba", "f", "bandwidth")

#: What each system is, for the README/table legend.
DESCRIPTIONS = {
    "xforms": "xforms, xf.jit of the transformed function",
    "jax": "jax.jit of the same transform (x64 on; float32 dots at 'highest' on the CPU, at "
           "JAX's default on a GPU, as xforms'), block_until_ready",
    "pytensor": "pytensor.function of pytensor.grad (default mode)",
    "autograd": "HIPS autograd (no compilation)",
    "numpy": "hand-written NumPy (gradient derived by hand)",
    "numba": "hand-written Numba loops, gradient derived by hand (the practical limit)",
    "f": "plain forward function only (hand-written), for cost ratios",
    "bandwidth": "memory-bandwidth bound: bytes moved / measured copy bandwidth",
}

#: The optional package each system needs (None: always there).
NEEDS = {"xforms": "xforms", "jax": "jax", "pytensor": "pytensor", "autograd": "autograd",
         "numpy": None, "numba": "numba", "f": None, "bandwidth": None}


class Absent(Exception):
    """The peer cannot be used in this environment (not a failure of the peer)."""


class Skip(Exception):
    """A system deliberately not run for this case (too slow, not applicable)."""


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:120]


def _dist_version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


class _Missing:
    """Stands in for a part of a peer that is not there yet; using it raises."""

    def __init__(self, name: str, reason: str):
        self._name, self._reason = name, reason

    def __getattr__(self, attr):
        raise AttributeError(f"{self._name}.{attr}: {self._name} unavailable ({self._reason})")


def _submodule(pkg, name: str):
    """Submodule ``pkg.name``, else an attribute of that name, else a :class:`_Missing`."""
    try:
        return importlib.import_module(f"{pkg.__name__}.{name}")
    except ImportError as exc:
        return getattr(pkg, name, None) or _Missing(f"{pkg.__name__}.{name}", str(exc))


@functools.lru_cache(maxsize=None)
def _load(name: str) -> types.SimpleNamespace:
    ns = types.SimpleNamespace(name=name)
    try:
        if name == "xforms":
            xf = importlib.import_module("xforms")
            if not hasattr(xf, "jit"):
                raise Absent("xforms imports but has no jit (core not built yet)")
            ns.xf = xf
            ns.xnp, ns.lax, ns.nn = (_submodule(xf, sub) for sub in ("numpy", "lax", "nn"))
            ns.version = getattr(xf, "__version__", "?")
        elif name == "jax":
            jax = importlib.import_module("jax")
            jax.config.update("jax_enable_x64", True)   # float64 workloads; f32 inputs stay f32
            # On the CPU float32 products and convolutions in full float32, as xforms
            # computes them.  On a GPU both at their defaults (issue #34's table): JAX's
            # rounds their inputs to TF32 (10-bit mantissas), and so do xforms' products and
            # convolutions on cuBLAS (vendor/gemm_map.compute_type); forcing "highest" on
            # JAX alone compared TF32 xforms with float32 JAX.  (The CPU backend's runs
            # set JAX_PLATFORMS=cpu: python -m benchmarks.)
            if os.environ.get("JAX_PLATFORMS", "").lower() == "cpu":
                jax.config.update("jax_default_matmul_precision", "highest")
            ns.jax, ns.jnp = jax, importlib.import_module("jax.numpy")
            ns.version = jax.__version__
        elif name == "pytensor":
            pytensor = importlib.import_module("pytensor")
            ns.pytensor, ns.pt = pytensor, importlib.import_module("pytensor.tensor")
            ns.version = pytensor.__version__
            ns.cxx = bool(pytensor.config.cxx)
        elif name == "autograd":
            ag = importlib.import_module("autograd")
            ns.ag, ns.anp = ag, importlib.import_module("autograd.numpy")
            ns.version = _dist_version("autograd")
        elif name == "numba":
            numba = importlib.import_module("numba")
            ns.numba, ns.njit, ns.version = numba, numba.njit, numba.__version__
        else:
            raise Absent(f"unknown peer {name!r}")
    except Absent:
        raise
    except Exception as exc:   # ImportError, or a broken install raising anything else
        raise Absent(_reason(exc)) from None
    return ns


def load(name: str) -> types.SimpleNamespace:
    """The peer's modules (cached), or raise :class:`Absent`."""
    return _load(name)


def check(system: str) -> tuple[bool, str]:
    """``(available, reason_or_version)`` for a system name from :data:`SYSTEMS`."""
    need = NEEDS.get(system)
    if need is None:
        import numpy
        return True, numpy.__version__
    try:
        return True, str(load(need).version)
    except Absent as exc:
        return False, str(exc)


def cuda_available() -> bool:
    """True when Numba sees a CUDA GPU.  Imports numba.cuda only when asked."""
    try:
        from numba import cuda   # noqa: PLC0415 - deliberately lazy
        return bool(cuda.is_available())
    except Exception:
        return False


def versions() -> dict:
    """Version (or absence reason) of every peer, for the JSON metadata."""
    out = {}
    for system in ("xforms", "jax", "pytensor", "autograd", "numba"):
        ok, info = check(system)
        out[system] = info if ok else f"absent ({info})"
    import numpy
    out["numpy"] = numpy.__version__
    return out
