"""Differential fuzzing of xforms with Hypothesis (see test_fuzz.py)."""
