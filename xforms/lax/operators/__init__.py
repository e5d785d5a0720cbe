"""lax's operators (JAX's lax reference, "Operators"), a module per kind: broadcasting,
constructors (full_like, empty), products (dot_general's keywords, batch_matmul), ragged
(grouped products), fourier (fft), rounding, bits, special (the special functions),
sorting (sort, top_k, approx_max_k), hints (optimization_barrier, composite, pcast) and
static_types (dtype, shape_as_value).  lax's elementwise operators themselves are the
primitives, bound in `xforms.lax` with lax's strict dtype checks.  The namespace is
`xforms.lax`."""
