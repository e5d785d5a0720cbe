"""lax's operators (JAX's lax reference, "Operators"), a module per kind: bits, the special
functions, sorting, the grouped products (ragged).  The namespace is `xforms.lax`."""
