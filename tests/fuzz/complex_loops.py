"""What a complex loop program (complex128 or complex64) draws from: the ops of programs.py
whose xforms and NumPy renderings agree on complex values and whose values stay
well-conditioned near the inputs (entire functions, a division by 2 + |b|^2, linear maps,
contractions, shapes, indexing, additive and multiplicative scatters, cumulative sums,
FFTs, convolutions), and no comparison, floor, sort or integer conversion of a complex
value: the control scalars (a predicate, a trip count, a branch index, a while loop's
threshold) are computed from the real part (the `_c` templates of program_ast.py).

    >>> complex_kind("trip_count", "complex128")
    'trip_count_c'
"""
UNARY = ["sin", "cos", "square", "neg", "affine", "pow3", "conj", "rot", "exp_h", "gauss"]
BINARY = ["add", "mul", "sub", "mul_f", "div_c"]
REDUCE = ["sum", "mean"]
SCATTER = ["at_add", "at_set", "at_mul"]
ALONG = ["cumsum", "convolve", "fft_cc"]
MIX = ["add", "mul", "div_c", "sub"]        # coerce's mixes (programs.py `coerce`)
LEFT_OUT = ("convert",)                     # families with no complex form
CONTROL_SCALARS = ("pred", "branch_index", "trip_count", "trip_count_int", "limit", "tstep")


def is_complex(dtype):
    return str(dtype).startswith("complex")


def complex_kind(kind, dtype):
    """The control scalar `kind` for a program of `dtype`: through the real part for a
    complex one."""
    return kind + "_c" if is_complex(dtype) and kind in CONTROL_SCALARS else kind
