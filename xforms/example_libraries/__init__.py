"""JAX's example libraries (`jax.example_libraries`), for programs written on them."""
