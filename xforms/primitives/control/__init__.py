"""Control flow: the higher-order primitives that carry sub-programs -- cond, while, for_loop,
scan -- and their shared machinery (control_flow).
"""
