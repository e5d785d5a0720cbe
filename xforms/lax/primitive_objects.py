"""JAX's primitive objects under their `jax.lax` names (`lax.add_p`, `lax.sort_p`, ...), for
code that binds primitives directly, as extension authors do with `jax.extend`:

    >>> lax.add_p.bind(xnp.ones(2), xnp.ones(2))
    Array([2., 2.])

Only the primitives whose `bind` takes JAX's operands and JAX's parameter names, with JAX's
meaning, are here; each was checked against jax 0.10.2's `bind`
(tests/lax/test_lax_primitive_objects.py).
The others are left out on purpose rather than exposed with a different signature: the
transcendental ones (`exp_p`, `sin_p`, `sqrt_p`, ...: JAX's take `accuracy`), `mul_p`
(`out_dtype`), `conj_p` (`input_dtype`), `reduce_sum_p` (`out_sharding`), `argmax_p`/`argmin_p`
(JAX's take `axes`, ours `axis`), `broadcast_in_dim_p`, `reshape_p`, `iota_p`,
`convert_element_type_p` (`sharding`), `dot_general_p` (`precision`,
`preferred_element_type`, `out_sharding`), `round_p` (`rounding_method`), and the primitives
whose parameters are programs or dimension-number objects of another form (`cond_p`,
`gather_p`, `scatter_p`, `scatter_add_p`, `conv_general_dilated_p`, `fft_p`, the collectives).

Those are exported too (`_XFORMS_PARAMS`), as the same objects xforms' programs hold, so that
an interpreter of `make_jaxpr` output written for JAX works: `eqn.primitive is lax.exp_p`
identifies an equation, and `eqn.primitive.bind(*values, **eqn.params)` runs it.  Their
`bind` takes the parameters xforms' equations carry (`eqn.params`), not JAX's: a JAX-only
parameter (`accuracy=`, `out_sharding=`, ...) is a TypeError.
"""
from ..core.registry import lookup

# the primitives named as JAX names them, whose bind matches jax 0.10.2 (names without "_p")
_SAME_BIND = (
    "abs", "acos", "acosh", "add", "and", "asin", "asinh", "atan", "atan2", "atanh",
    "bessel_i0e", "bessel_i1e", "bitcast_convert_type", "ceil", "complex", "concatenate",
    "cosh", "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "digamma", "div",
    "dynamic_slice", "dynamic_update_slice", "eq", "erf", "erf_inv", "erfc", "floor", "ge",
    "gt", "igamma", "igamma_grad_a", "igammac", "imag", "integer_pow", "is_finite", "le",
    "lgamma", "lt", "max", "min", "ne", "neg", "nextafter", "not", "or", "pad", "pow", "real",
    "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_prod", "rem", "rev",
    "select_n", "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sinh",
    "slice", "sort", "squeeze", "stop_gradient", "sub", "transpose", "xor", "zeta",
)
# the primitives JAX has under these names whose bind takes xforms' own parameters
# ({JAX's name: xforms' name})
_XFORMS_PARAMS = {n + "_p": n for n in (
    "all_gather", "all_to_all", "argmax", "argmin", "axis_index", "broadcast_in_dim", "cbrt",
    "cond", "conj", "conv_general_dilated", "convert_element_type", "cos", "dot_general",
    "exp", "exp2", "expm1", "fft", "gather", "iota", "log", "log1p", "logistic", "mul",
    "pmax", "pmin", "ppermute", "psum", "reduce_sum", "reshape", "round", "rsqrt", "scan",
    "scatter", "scatter_add", "scatter_max", "scatter_min", "scatter_mul", "sin", "sqrt",
    "tan", "tanh", "while")}
_XFORMS_PARAMS["linear_solve_p"] = "custom_linear_solve"
PRIMITIVES = {name + "_p": lookup(name) for name in _SAME_BIND}
PRIMITIVES.update({jax_name: lookup(name) for jax_name, name in _XFORMS_PARAMS.items()})
globals().update(PRIMITIVES)
__all__ = sorted(PRIMITIVES)
