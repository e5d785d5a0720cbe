"""Control flow: the higher-order primitives that carry sub-programs -- cond, while, for_loop,
scan, custom_vmap_call (a function with its own batching rule) and custom_linear_solve
(solves) -- and their shared machinery (control_flow).
"""
