"""`xforms.example_libraries`: JAX's small reference libraries (`optimizers`, `stax`), with
the same signatures, so programs written on them run by changing imports."""
