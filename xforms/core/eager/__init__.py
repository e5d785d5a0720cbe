"""How `eval_eager` (xforms/core/trace.py) runs a jaxpr with NumPy: running its cached plan
(plans), results written into dying buffers (reuse), and the debug_nans / debug_infs checks
(float_checks).
"""
