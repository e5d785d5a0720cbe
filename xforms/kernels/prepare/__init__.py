"""Jaxpr -> Jaxpr before planning, backend-neutral: clean-up passes, small arrays as scalars,
symbolic sizes.
"""
