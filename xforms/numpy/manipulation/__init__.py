"""Array manipulation of `xforms.numpy`: shape functions (shapes: reshape, transpose,
concatenate, ...), joining, splitting and inserting (joining) and padding (padding)."""
