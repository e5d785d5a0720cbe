"""The workload registry: name -> module, imported only when selected.

Each module defines ``NAME``, a docstring saying what it measures, and
``cases(ctx) -> list[Case]``; optionally ``SWEEP`` (the parameter plotted on
the x axis) and ``PLOT_TOGETHER`` (all tasks in one panel).
"""
import importlib

REGISTRY = {
    "dispatch": "dispatch",
    "pow_loop": "pow_loop",
    "mlp": "mlp",
    "fft_conv": "fft_conv",
    "elementwise": "elementwise",
    "vecmath": "vecmath",
    "rosenbrock_hvp": "rosenbrock_hvp",
    "jacobians": "jacobians",
    "rk4": "rk4",
    "compile": "compile",
    "gp_nll": "gp_nll",
    "random": "random",
    "cnn": "cnn",
    "real_programs": "real_programs",
    "eager": "eager",
    "cliffs": "cliffs",
    "ode": "ode",
    "cuda_graphs": "cuda_graphs",
}


def load(name: str):
    """The workload module registered under ``name``."""
    return importlib.import_module(f"{__name__}.{REGISTRY[name]}")
