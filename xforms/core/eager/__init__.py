"""How `eval_eager` (xforms/core/trace.py) runs a jaxpr with NumPy: running its cached plan
(plans), results written into dying buffers (reuse), the debug_nans / debug_infs checks
(float_checks), results nothing can write (frozen) and NumPy's warnings off (quiet).
"""
