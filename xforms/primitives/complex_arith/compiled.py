"""The scalar functions of complex_arith with their helpers, for a compiler: each module's
functions cloned into one namespace and decorated there, so that a compiled function calls
compiled helpers (Numba cannot call a plain Python `_max`).

    >>> fns = build(numba.njit(error_model="numpy")); fns["exp_scalar"](1j)
"""
import types

from . import division, elementary, inverse, multiply, power, tangent, trigonometric

MODULES = (division, elementary, inverse, multiply, power, tangent, trigonometric)
# the name generated kernels call each by (ScalarCtx.complex_call; the primitives' math facts)
KERNEL_NAMES = {"complex_div": "divide_scalar", "complex_mul": "multiply_scalar",
                "complex_abs": "abs_scalar", "complex_exp": "exp_scalar",
                "complex_log": "log_scalar", "complex_sqrt": "sqrt_scalar",
                "complex_expm1": "expm1_scalar", "complex_log1p": "log1p_scalar",
                "complex_sin": "sin_scalar", "complex_cos": "cos_scalar",
                "complex_sinh": "sinh_scalar", "complex_cosh": "cosh_scalar",
                "complex_rsqrt": "rsqrt_scalar", "complex_tanh": "tanh_scalar",
                "complex_tan": "tan_scalar", "complex_asin": "asin_scalar",
                "complex_acos": "acos_scalar", "complex_asinh": "asinh_scalar",
                "complex_acosh": "acosh_scalar", "complex_atan": "atan_scalar",
                "complex_atanh": "atanh_scalar",
                "complex_pow": "power_scalar"}
# a kernel name's fast form, where it has one: its value wherever no part is NaN, NaN
# wherever the full function must decide (the eager tier's kernels compute it over the
# array and redo those elements with the full function: xforms/kernels/cpu/llvm/eager.py)
FAST_NAMES = {"complex_div": "divide_fast", "complex_sqrt": "sqrt_fast",
              "complex_pow": "power_fast"}
# the fast forms that are the full function's value bit for bit wherever no part is NaN, so
# that a loop may compute them and redo only where one gave a NaN part (`jit`'s loops,
# xforms/kernels/cpu/llvm/ops/complexes.py `fast_blocks`); power_fast is not (vecmath's
# polynomials, e^(c log r)): a loop redoing a block keeps its non-NaN values
# (complexes.`either`), as the eager tier's kernel does
EXACT_FAST = ("complex_div", "complex_sqrt")


def build(decorator, fused=True):
    """{name: decorator(clone)} for every function of MODULES, helpers included; `fused`:
    multiply.py's `fma` is LLVM's fma (CPU and CUDA compile it; not the CUDA simulator,
    which runs Python: it keeps the emulation)."""
    ns, fns = namespace(), {}
    for m in MODULES:
        for name, fn in vars(m).items():
            if isinstance(fn, types.FunctionType) and fn.__module__ == m.__name__:
                fns[name] = types.FunctionType(fn.__code__, ns, name, fn.__defaults__,
                                               fn.__closure__)
    for name, clone in fns.items():
        ns[name] = fns[name] = decorator(clone)
    if fused:
        ns["fma"] = fma_intrinsic()
    return fns


def namespace():
    """Every module's names in one dict: build's functions see their helpers there, so two
    modules' private names must differ (a second `_max` would replace the first for all).

        >>> namespace()["exp_scalar"]       # elementary.exp_scalar
    """
    ns = {}
    for m in MODULES:
        for k, v in vars(m).items():
            if k in ns and ns[k] is not v and not k.startswith("__") and not (
                    isinstance(v, float) and ns[k] == v):
                raise ValueError(f"complex_arith: {m.__name__}.{k} would replace another "
                                 f"module's {k} in compiled.build's namespace: rename it")
            ns[k] = v
    return ns


def by_kernel_name(fns):
    """{kernel name: function} of build()'s result (KERNEL_NAMES)."""
    return {k: fns[v] for k, v in KERNEL_NAMES.items()}


def fma_intrinsic():
    """fma(a, b, c): a * b + c rounded once, LLVM's llvm.fma (a Numba intrinsic, any target)."""
    from numba.extending import intrinsic

    @intrinsic
    def fma(typingctx, a, b, c):
        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return a(a, a, a), codegen
    return fma
