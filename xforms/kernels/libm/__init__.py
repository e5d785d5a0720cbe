"""Scalar math for generated loops: vectorisable elementary functions and special functions.
"""
