"""lax's convolutions (JAX's lax/convolution and lax/other): conv_general_dilated and its
wrappers (dilated, which xforms.numpy's convolve builds on and which imports nothing of
xforms.numpy), and the shape helpers, patches and local convolution (shapes).  The namespace
is `xforms.lax`."""
