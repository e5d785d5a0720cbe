"""Array creation in `xforms.numpy`: array, zeros, eye, ... (constructors), ranges
(linspace, logspace, ...), matrices built or taken from others (diag, tril, vander, ...) and
window functions (windows)."""
