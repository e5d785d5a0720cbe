"""Elementwise primitives, one module per family.  Operands have equal shapes, or are rank-0
(scalars broadcast implicitly), and equal dtypes; `xforms.numpy` inserts broadcasts and
conversions first.

`div` and `rem` have lax's C semantics (integer division truncates, the remainder takes the
dividend's sign, as C's `/`, `%` and `fmod`); `xforms.numpy` builds NumPy's floor `//` and `%`
from them as jax.numpy does.  Their edge cases and those of float -> int conversion are
defined once (`int_div_by_zero` in arithmetic.py, `int_saturation` in ../conversion.py) and
printed by the compiled tier's scalar rules (xforms/kernels/loops/scalar_rules.py), so that
the two tiers cannot drift.

The families, bottom to top: base (how one is declared: `define`, `bind1`, `bind2`),
arithmetic (neg, add, sub, mul, div), logic (comparisons, and/or/xor/not, is_finite,
select_n), complex_parts, minmax, rounding (abs, sign, floor, ceil, round, rem),
exponentials, powers, trigonometric, stop_gradient.

>>> from xforms.primitives.elementwise import add, sin
>>> add(sin(np.float64(0.0)), 1.0)
"""
# (re-exported: the public names of the one module this package was)
from ...core.engine_prims import convert_element_type, like  # noqa: F401
from .base import define  # noqa: F401  (a family module elsewhere declares with it)
from .arithmetic import (add, add_p, div, div_p, int_div_by_zero, mul, mul_p,  # noqa: F401
                         neg, neg_p, sub, sub_p)
from .logic import (and_, and_p, eq, eq_p, ge, ge_p, gt, gt_p, is_finite,  # noqa: F401
                    is_finite_p, le, le_p, lt, lt_p, ne, ne_p, not_, not_p, or_, or_p,
                    select_n, select_n_p, xor, xor_p)
from .complex_parts import (complex, complex_p, conj, conj_p, imag, imag_p,  # noqa: F401
                            real, real_p)
from .minmax import fix_zero_ties, max, max_p, min, min_p, minmax_weight  # noqa: F401
from .rounding import (abs, abs_p, ceil, ceil_p, floor, floor_p, rem, rem_p,  # noqa: F401
                       round, round_p, sign, sign_p)
from .exponentials import (exp, exp2, exp2_p, exp_p, expm1, expm1_p, log,  # noqa: F401
                           log1p, log1p_p, log_p, logistic, logistic_p)
from .powers import (cbrt, cbrt_p, integer_pow, integer_pow_p, pow, pow_p,  # noqa: F401
                     rsqrt, rsqrt_p, sqrt, sqrt_p)
from .trigonometric import (acos, acos_p, acosh, acosh_p, asin, asin_p,  # noqa: F401
                            asinh, asinh_p, atan, atan2, atan2_p, atan_p, atanh, atanh_p,
                            cos, cos_p, cosh, cosh_p, sin, sin_p, sinh, sinh_p, tan, tan_p,
                            tanh, tanh_p)
from .stop_gradient import stop_gradient, stop_gradient_p  # noqa: F401
