"""The array types' own behaviour: Tracer's operators and methods and the eager Array's
(methods), NumPy's ufuncs applied to either (numpy_ufuncs), an eager Array's methods that
differ from ndarray's (array_methods), its immutability (immutable), and eager masked
products at NumPy's speed (mask_select).  Importing `xforms.numpy` installs them."""
