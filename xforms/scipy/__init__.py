"""`xforms.scipy`: SciPy namespaces as in jax.scipy (import the submodules:
`import xforms.scipy.special`, `xforms.scipy.stats`)."""
