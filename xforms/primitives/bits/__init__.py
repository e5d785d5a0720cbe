"""Bit-level primitives: the shifts (lax.shift_left, shift_right_logical,
shift_right_arithmetic) and the float-bit primitives (nextafter, bitcast_convert_type).
"""
