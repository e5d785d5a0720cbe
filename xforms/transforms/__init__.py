"""IR-to-IR transforms: jvp, partial evaluation (linearize), transpose, vmap, simplification.

Each is an interpreter over a jaxpr that runs under a `staging.Builder`, so its output is a
new jaxpr.  Each owns one rule table, filled by the primitive families in `primitives/`.
"""
