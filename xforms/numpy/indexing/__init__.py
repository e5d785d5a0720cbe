"""Indexing routines of `xforms.numpy`: `x[idx]` and `x.at[idx]` (subscripts), take/put along
an axis (along_axis), functional writers (filling: put, place, fill_diagonal), positions of
true elements (searching), conditional choice (selection) and index tricks (r_, mgrid, ix_)."""
