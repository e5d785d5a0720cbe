"""The special-function primitives (lgamma, digamma, zeta, erf, igamma, betainc, Bessel
functions, ...) and the derivative of the incomplete gamma function in its shape parameter.
"""
