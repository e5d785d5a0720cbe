"""The names of the vectorisable math functions (xforms/kernels/libm/vecmath/) and the tables
the code generators pick them by: plain data, imported without Numba (the direct LLVM path,
xforms/kernels/cpu/llvm/, decides from them which loops call them, issue #35); the functions
themselves, written for Numba, live in the vecmath package, which re-exports these.

    VECMATH["exp"]            # 'vm_exp'
    VECMATH_F32["vm_exp"]     # 'vmf_exp'
"""

#: float64 family name -> float32 implementation (the code generator picks it for float32
#: operands).  Functions not listed compute float32 through the float64 family.
VECMATH_F32 = {
    "vm_exp": "vmf_exp",
    "vm_log": "vmf_log",
    "vm_tanh": "vmf_tanh",
    "vm_sin": "vmf_sin",
    "vm_cos": "vmf_cos",
    "vm_tan": "vmf_tan",
    "vm_sin_bounded": "vmf_sin_bounded",
    "vm_cos_bounded": "vmf_cos_bounded",
    "vm_tan_bounded": "vmf_tan_bounded",
    "vm_erfcinv": "vmf_erfcinv",
}

#: primitive name -> function name: drop-in replacements for ``math.*`` (same
#: results up to the documented ulps, same special values, all finite inputs),
#: each vectorisable and faster than libm inside a loop.  sin/cos/tan are not
#: listed: see "Trigonometric functions" in vecmath/__init__.py's docstring.
VECMATH = {
    "exp": "vm_exp",
    "expm1": "vm_expm1",
    "log": "vm_log",
    "log1p": "vm_log1p",
    "tanh": "vm_tanh",
    "logistic": "vm_logistic",
    "sinh": "vm_sinh",
    "cosh": "vm_cosh",
    "atan": "vm_atan",
    "cbrt": "vm_cbrt",
    "erfc_inv": "vm_erfcinv",
}

#: VECMATH plus the branch-free trig variants, which return nan for
#: |x| > TRIG_MAX_ARG; use with the guard-and-redo recipe of that docstring.
VECMATH_BOUNDED = dict(
    VECMATH, sin="vm_sin_bounded", cos="vm_cos_bounded", tan="vm_tan_bounded"
)

#: The exact trig functions (libm branch beyond TRIG_MAX_ARG): right for every
#: input, fast in scalar code, but no faster than ``math.*`` in vectorised loops.
VECMATH_TRIG_EXACT = {"sin": "vm_sin", "cos": "vm_cos", "tan": "vm_tan"}

#: exact trig function -> its branch-free bounded variant (float64 and float32 families),
#: for the code generator's guard-and-redo loops (xforms/kernels/cpu/numba/emit.py).
TRIG_BOUNDED = {"vm_sin": "vm_sin_bounded", "vm_cos": "vm_cos_bounded",
                "vm_tan": "vm_tan_bounded", "vmf_sin": "vmf_sin_bounded",
                "vmf_cos": "vmf_cos_bounded", "vmf_tan": "vmf_tan_bounded"}

#: every function a generated kernel may call
PUBLIC_FUNCTIONS = sorted(set(VECMATH_BOUNDED.values()) | set(VECMATH_TRIG_EXACT.values())
                          | set(VECMATH_F32.values()))
