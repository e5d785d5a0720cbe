"""lax's slicing and indexing (JAX's lax/slicing): static slices along an axis (slices, which
lax's control flow and xforms.numpy build on, and which imports nothing of xforms.numpy), and
gather and the scatters.  The namespace is `xforms.lax`."""
