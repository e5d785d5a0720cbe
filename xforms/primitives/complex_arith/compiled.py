"""The scalar functions of complex_arith with their helpers, for a compiler: each module's
functions cloned into one namespace and decorated there, so that a compiled function calls
compiled helpers (Numba cannot call a plain Python `_max`).

    >>> fns = build(numba.njit(error_model="numpy")); fns["exp_scalar"](1j)
"""
import types

from . import division, elementary, hyperbolic, multiply

MODULES = (division, elementary, hyperbolic, multiply)


def build(decorator, fused=True):
    """{name: decorator(clone)} for every function of MODULES, helpers included; `fused`:
    multiply.py's `_fma` is LLVM's fma (CPU and CUDA compile it; not the CUDA simulator,
    which runs Python: it keeps the emulation)."""
    ns, fns = {}, {}
    for m in MODULES:
        ns.update(vars(m))
    for m in MODULES:
        for name, fn in vars(m).items():
            if isinstance(fn, types.FunctionType) and fn.__module__ == m.__name__:
                fns[name] = types.FunctionType(fn.__code__, ns, name, fn.__defaults__,
                                               fn.__closure__)
    for name, clone in fns.items():
        ns[name] = fns[name] = decorator(clone)
    if fused:
        ns["_fma"] = fma_intrinsic()
    return fns


def fma_intrinsic():
    """fma(a, b, c): a * b + c rounded once, LLVM's llvm.fma (a Numba intrinsic, any target)."""
    from numba.extending import intrinsic

    @intrinsic
    def fma(typingctx, a, b, c):
        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return a(a, a, a), codegen
    return fma
