"""lax's slicing and indexing (JAX's lax/slicing): static slices along an axis (slices, which
lax's control flow and xforms.numpy build on, and which imports nothing of xforms.numpy), one
index along an axis (indices: index_in_dim, dynamic_index_in_dim, index_take, ...), pieces
along an axis (stacking: split, stack, unstack), and gather and the scatters
(gather_scatter).  The namespace is `xforms.lax`."""
