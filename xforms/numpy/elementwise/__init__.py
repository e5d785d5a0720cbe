"""Elementwise functions of `xforms.numpy` (NumPy's "mathematical functions"): the ufuncs
(ufuncs), more functions composed from primitives (mathfuncs), bit operations (bitwise_ops),
floating-point parts (float_parts), XLA's complex atan2 (complex_atan2), and JAX's ufunc
objects, xnp.add.reduce and the like (ufunc_api)."""
