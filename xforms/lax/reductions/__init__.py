"""lax's reductions with a user's computation: folds (associative_scan, reduce,
cumlogsumexp) and reduce_window (windowed).  The namespace is `xforms.lax`."""
