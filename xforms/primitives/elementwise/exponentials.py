"""exp, exp2, log, expm1, log1p and logistic, with their derivatives.

>>> log1p(np.float64(1e-20))       # 1e-20
"""
import numpy as np

from ...core.facts import math_names
from ...core.eager.quiet import silenced
from ...core.engine_prims import like
from ...transforms.jvp import defjvp
from ..complex_arith import division as complex_division
from ..complex_arith import patching as complex_patch
from .arithmetic import add, div, mul, sub
from .base import bind1, define, inexact


# --- exponentials and logarithms -----------------------------------------------------------
# (complex: XLA's values, complex_arith/elementary.py, on every tier)
exp_p = define("exp", complex_patch.exp, accept=inexact, fresh=True, into=complex_patch.exp_into,
               math=math_names("exp", complex_fn="complex_exp"), vec="vm_exp",
               vec_complex="redo", ufunc=np.exp, ufunc_kinds="f")
exp = bind1(exp_p)
defjvp(exp_p, lambda t, ans, x: mul(t, ans))

exp2_p = define("exp2", complex_patch.exp2, accept=inexact, fresh=True,   # CUDA: xforms/kernels/cuda/printer/{scalar,complexes}.py
              math={"cpu": "np.exp2", "cpu_complex": "np.exp2", "cuda": None,
                    "cuda_complex": None}, cost=2.5,
                    ufunc=np.exp2, ufunc_kinds="f")
exp2 = bind1(exp2_p)
defjvp(exp2_p, lambda t, ans, x: mul(t, mul(ans, like(np.log(2.0), ans))))

log_p = define("log", complex_patch.log, accept=inexact, fresh=True, into=complex_patch.log_into,
               math=math_names("log", complex_fn="complex_log"), vec="vm_log",
               vec_complex="vector", ufunc=np.log, ufunc_kinds="f")
log = bind1(log_p)
defjvp(log_p, lambda t, ans, x: div(t, x))

expm1_p = define("expm1", complex_patch.expm1, accept=inexact, vec="vm_expm1", fresh=True,
                 into=complex_patch.expm1_into,
                 math=math_names("expm1", complex_fn="complex_expm1"),
                 ufunc=np.expm1, ufunc_kinds="f")
expm1 = bind1(expm1_p)
defjvp(expm1_p, lambda t, ans, x: mul(t, add(ans, like(1, ans))))

log1p_p = define("log1p", complex_patch.log1p, accept=inexact, vec="vm_log1p", fresh=True,
                 into=complex_patch.log1p_into,
                 math=math_names("log1p", complex_fn="complex_log1p"), vec_complex="vector",
                 ufunc=np.log1p, ufunc_kinds="f")
log1p = bind1(log1p_p)
defjvp(log1p_p, lambda t, ans, x: div(t, add(x, like(1, x))))


def _logistic(x):
    """1 / (1 + e^-x); complex x with XLA's exp and division, as jax (complex_arith:
    logistic(inf+infj) is nan+nanj, NumPy's 1+0j)."""
    if np.asarray(x).dtype.kind == "c":         # (np.iscomplexobj: a Python call, ~1 us)
        x = np.asarray(x)
        return complex_division.divide(np.ones_like(x), 1 + complex_patch.exp(-x))
    with silenced():
        t = np.negative(x)
        if type(t) is not np.ndarray:         # (a 0-d operand: a NumPy scalar)
            return 1 / (1 + np.exp(t))
        np.exp(t, out=t)                      # (in place: the same ufunc loops, no new
        t += 1                                #  arrays, no Python scalar converted twice)
        return np.reciprocal(t, out=t)


logistic_p = define("logistic", _logistic, accept=inexact, vec="vm_logistic",   # else 1/(1+exp(-x))
                  math=dict.fromkeys(("cpu", "cpu_complex", "cuda", "cuda_complex")))
logistic = bind1(logistic_p)
defjvp(logistic_p, lambda t, ans, x: mul(t, mul(ans, sub(like(1, ans), ans))))
