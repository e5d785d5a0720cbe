"""Control flow: the higher-order primitives that carry sub-programs -- cond, while, for_loop,
scan, and custom_vmap_call (a function with its own batching rule) -- and their shared
machinery (control_flow).
"""
