"""The IR and what it is built from: abstract values, the IR, primitives and bind, the registry
and facts, named axes, caches.
"""
