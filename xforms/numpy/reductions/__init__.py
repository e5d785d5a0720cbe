"""Reductions of `xforms.numpy`: sum, mean, max, ... (aggregates), their NaN-ignoring forms
(nanfunctions), cumulative sums and products (cumulative), order statistics and moments
(statistics) and multi-dimensional histograms (histograms)."""
