"""Everything that touches Numba's internals: the replaced passes, their registry, allocation,
the vector width.
"""
