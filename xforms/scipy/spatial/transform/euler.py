"""Euler angles <-> quaternions. A sequence names three (or, going in, one to three) basis
axes: lower case ("xyz") for extrinsic rotations about the fixed frame, upper case ("XYZ")
for intrinsic ones about the rotating frame.

    >>> axes, extrinsic = parse("zxy", "example", (3,))            # [2, 0, 1], True
    >>> to_euler(from_euler(xnp.array([0.5, 0.2, 0.]), axes, extrinsic), axes, extrinsic)
    Array([0.5, 0.2, 0. ])

to_euler is the quaternion method of Bernardes and Viollet (2022), as scipy and JAX compute
it, including JAX's choices at gimbal lock (the third angle 0) and its final wrap of every
angle into [-pi, pi).
"""
import numpy as np

from .... import numpy as xnp
from . import quaternions as quat

_EPS = 1e-7                 # within this of 0 or pi the middle angle is a gimbal lock


def parse(seq, what, lengths):
    """-> (axes as ints, extrinsic?) for an axis sequence, or a ValueError saying why not."""
    if not isinstance(seq, str) or len(seq) not in lengths:
        raise ValueError(f"{what}: expected an axis sequence of {' or '.join(map(str, lengths))}"
                         f" characters, got {seq!r}")
    if not (set(seq) <= set("xyz") or set(seq) <= set("XYZ")):
        raise ValueError(f"{what}: expected axes from ['x', 'y', 'z'] (extrinsic) or "
                         f"['X', 'Y', 'Z'] (intrinsic), got {seq!r}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"{what}: expected consecutive axes to be different, got {seq!r}")
    return ["xyz".index(a) for a in seq.lower()], seq.islower()


def from_euler(angles, axes, extrinsic):
    """angles (..., len(axes)) in radians -> unit quaternions (...)."""
    result = quat.elementary(axes[0], angles[..., 0])
    for n, axis in enumerate(axes[1:], 1):
        step = quat.elementary(axis, angles[..., n])
        result = quat.compose(step, result) if extrinsic else quat.compose(result, step)
    return result


def to_euler(q, axes, extrinsic):
    """Unit quaternions (..., 4) -> angles (..., 3) in radians about `axes` (in order)."""
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k                      # a "proper" sequence such as zxz
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2  # +1 for an even permutation of xyz, else -1
    w, qi, qj, qk = q[..., 3], q[..., i], q[..., j], q[..., k] * sign
    if symmetric:
        a, b, c, d = w, qi, qj, qk
    else:
        a, b, c, d = w - qj, qi + qk, qj + w, qk - qi
    middle = 2 * xnp.arctan2(xnp.hypot(c, d), xnp.hypot(a, b))
    at_zero = xnp.abs(middle) <= _EPS
    locked = at_zero | (xnp.abs(middle - np.pi) <= _EPS)
    half_sum, half_diff = xnp.arctan2(b, a), xnp.arctan2(d, c)
    # at gimbal lock only the sum (at 0) or difference (at pi) is defined: it goes into the
    # first angle, the third is 0
    locked_first = xnp.where(at_zero, 2 * half_sum, (-2 if extrinsic else 2) * half_diff)
    first = xnp.where(locked, locked_first, half_sum - half_diff)
    third = xnp.where(locked, xnp.zeros_like(middle), half_sum + half_diff)
    if not extrinsic:                       # computed for the reversed sequence
        first, third = xnp.where(locked, first, third), xnp.where(locked, third, first)
    if not symmetric:
        middle = middle - np.pi / 2
        if extrinsic:
            third = third * sign
        else:
            first = first * sign
    angles = xnp.stack([first, middle, third], axis=-1)
    return (angles + np.pi) % (2 * np.pi) - np.pi
