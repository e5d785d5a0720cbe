"""The Python operators as tools/jax_sweep.py's "operators" module: each binary operator of
an eager Array (xforms) and a jax.Array, beside a Python scalar, a NumPy scalar, an array of
its own dtype or of another dtype, on either side, and the unary ones.  The value sweep's
other modules call functions (xnp.power), never the operators, whose eager path is its own
code (xforms/numpy/arrays/methods.py: NumPy's operator where it gives jax's dtype, with fixes where
its values differ); session 34 found eager complex `x ** 2j` there (NumPy's C99 power).

Each case is a function of the sweep's array operands (one, or two for `x OP y`) with the
other operand fixed, named as it reads: "x**2j", "2j**x", "x**y", "x**y:complex64"
(y cast to complex64 first), "np.float32(0.5)<x", "-x".

    python tools/jax_sweep.py --module operators                   # every case
    python tools/jax_sweep.py --module operators --names 'x**2j,2j**x' --dtypes complex128
"""
import operator

import numpy as np

BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
          "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
          ">>": operator.rshift, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
          "<=": operator.le, ">": operator.gt, ">=": operator.ge, "@": operator.matmul}
UNARY = {"-x": operator.neg, "+x": operator.pos, "~x": operator.invert, "abs(x)": abs}
# the fixed operands: Python scalars (weakly typed in jax) and NumPy scalars (strong), with
# the edges of each kind (zero, a negative, a fraction, the infinities and NaN, complex ones)
SCALARS = (True, 0, 2, -3, 0.5, -0.0, float("inf"), float("nan"), 2j, 1 + 1j,
           complex(float("-inf"), 0.0))
NUMPY_SCALARS = ("np.float32(0.5)", "np.int8(-3)", "np.uint8(200)", "np.complex64(1+1j)",
                 "np.float64(-inf)", "np.bool_(True)")
# the dtypes a second array operand is cast to (beside the swept dtype: promotion's mixes)
OTHER_DTYPES = ("complex64", "complex128", "float32", "int8", "bool")


def _numpy_scalar(text):
    return eval(text, {"np": np, "inf": np.inf})      # (the fixed texts above, no input)


def cases(asarray):
    """{name: function of the sweep's arrays} for one library, `asarray` its conversion
    (jnp.asarray, xnp.asarray): the operators are the library's arrays' own."""
    out = {name: (lambda x, f=f: f(asarray(x))) for name, f in UNARY.items()}
    for sym, op in BINARY.items():
        out[f"x{sym}y"] = lambda x, y, op=op: op(asarray(x), asarray(y))
        for dt in OTHER_DTYPES:
            out[f"x{sym}y:{dt}"] = lambda x, y, op=op, dt=dt: op(asarray(x),
                                                                 asarray(y).astype(dt))
            out[f"y:{dt}{sym}x"] = lambda x, y, op=op, dt=dt: op(asarray(y).astype(dt),
                                                                 asarray(x))
        fixed = [(repr(s), s) for s in SCALARS] + [(t, _numpy_scalar(t)) for t in NUMPY_SCALARS]
        for text, s in fixed:
            out[f"x{sym}{text}"] = lambda x, op=op, s=s: op(asarray(x), s)
            out[f"{text}{sym}x"] = lambda x, op=op, s=s: op(s, asarray(x))
    return out


def operator_names(only=None):
    """[(name, xforms function, jax function)], in alphabetical order, of the names in `only`
    when given."""
    import jax.numpy as jnp
    import xforms.numpy as xnp
    xs, js = cases(xnp.asarray), cases(jnp.asarray)
    return [(n, xs[n], js[n]) for n in sorted(xs) if not only or n in only]
