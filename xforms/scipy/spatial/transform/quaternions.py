"""Unit quaternions (x, y, z, w: scalar last, as scipy and JAX store them) as arrays of shape
(..., 4), and the conversions Rotation is built from. Every function broadcasts over the
leading axes, so a batch of rotations is one array, and vmap sees per-example shapes.

    >>> to_matrix(xnp.array([0., 0., xnp.sin(0.5), xnp.cos(0.5)]))   # a turn of 1 rad about z

The small-angle branches follow the Taylor series JAX and scipy use (below 1e-3 rad), so
values agree with JAX's to rounding.
"""
from .... import numpy as xnp

_SMALL_ANGLE = 1e-3


def norm(v):
    """Euclidean norm over the last axis."""
    return xnp.sqrt(xnp.sum(v * v, axis=-1))


def normalize(q):
    """q scaled to unit length (a zero quaternion gives NaNs, as in JAX)."""
    return q / norm(q)[..., None]


def _parts(q):
    return q[..., 0], q[..., 1], q[..., 2], q[..., 3]


def compose(p, q):
    """The Hamilton product p q: the rotation q followed by p."""
    px, py, pz, pw = _parts(p)
    qx, qy, qz, qw = _parts(q)
    return xnp.stack([pw * qx + qw * px + (py * qz - pz * qy),
                      pw * qy + qw * py + (pz * qx - px * qz),
                      pw * qz + qw * pz + (px * qy - py * qx),
                      pw * qw - px * qx - py * qy - pz * qz], axis=-1)


def conjugate(q):
    """The inverse rotation of a unit quaternion: the vector part negated."""
    return q * xnp.asarray([-1, -1, -1, 1], dtype=q.dtype)


def to_matrix(q):
    """(..., 4) -> (..., 3, 3) rotation matrices (q need not be normalised: JAX's formula,
    which scales by |q|^2)."""
    x, y, z, w = _parts(q)
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    rows = [[xx - yy - zz + ww, 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), -xx + yy - zz + ww, 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), -xx - yy + zz + ww]]
    return xnp.stack([xnp.stack(r, axis=-1) for r in rows], axis=-2)


def from_matrix(m):
    """(..., 3, 3) -> unit quaternions, by the largest of (m00, m11, m22, trace) so that the
    quaternion's dominant component is formed without cancellation (Shepperd's method)."""
    diag = [m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]]
    trace = diag[0] + diag[1] + diag[2]
    choice = xnp.argmax(xnp.stack(diag + [trace], axis=-1), axis=-1)
    q = xnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                   m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1)
    for i in (2, 1, 0):                             # (ties pick the first, as argmax does)
        j, k = (i + 1) % 3, (i + 2) % 3
        comp = [None] * 4
        comp[i] = 1 - trace + 2 * m[..., i, i]
        comp[j] = m[..., j, i] + m[..., i, j]
        comp[k] = m[..., k, i] + m[..., i, k]
        comp[3] = m[..., k, j] - m[..., j, k]
        q = xnp.where((choice == i)[..., None], xnp.stack(comp, axis=-1), q)
    return normalize(q)


def _half_angle_sin_over_angle(angle):
    """sin(angle / 2) / angle, by its series near 0."""
    a2 = angle * angle
    small = angle <= _SMALL_ANGLE
    safe = xnp.where(small, 1.0, angle)     # (the unused branch must not divide 0 by 0)
    return xnp.where(small, 0.5 - a2 / 48 + a2 * a2 / 3840, xnp.sin(safe / 2) / safe)


def from_rotvec(v):
    """Rotation vectors (axis times angle in radians, (..., 3)) -> unit quaternions."""
    angle = norm(v)
    scale = _half_angle_sin_over_angle(angle)
    return xnp.concatenate([scale[..., None] * v, xnp.cos(angle / 2)[..., None]], axis=-1)


def to_rotvec(q):
    """Unit quaternions -> rotation vectors with angles in [0, pi] (w made >= 0 first)."""
    q = xnp.where((q[..., 3] < 0)[..., None], -q, q)
    angle = 2 * xnp.arctan2(norm(q[..., :3]), q[..., 3])
    a2 = angle * angle
    small = angle <= _SMALL_ANGLE
    safe = xnp.where(small, 1.0, angle)     # (as in _half_angle_sin_over_angle)
    scale = xnp.where(small, 2 + a2 / 12 + 7 * a2 * a2 / 2880, safe / xnp.sin(safe / 2))
    return scale[..., None] * q[..., :3]


def from_mrp(p):
    """Modified Rodrigues parameters (..., 3) -> unit quaternions."""
    s = xnp.sum(p * p, axis=-1)[..., None] + 1
    return xnp.concatenate([2 * p, 2 - s], axis=-1) / s


def to_mrp(q):
    """Unit quaternions -> modified Rodrigues parameters of the rotation by at most pi."""
    sign = xnp.where(q[..., 3] < 0, -1.0, 1.0)[..., None]
    return sign * q[..., :3] / (1 + sign * q[..., 3:])


def magnitude(q):
    """The rotation angle in [0, pi]."""
    return 2 * xnp.arctan2(norm(q[..., :3]), xnp.abs(q[..., 3]))


def canonical(q):
    """q or -q, whichever has w > 0 (or, where w == 0, the first nonzero component > 0)."""
    neg, zero = q < 0, q == 0
    flip = neg[..., 3]
    ahead_zero = zero[..., 3]
    for i in range(3):
        flip = flip | (ahead_zero & neg[..., i])
        ahead_zero = ahead_zero & zero[..., i]
    return xnp.where(flip[..., None], -q, q)


def elementary(axis, angle):
    """The rotation by `angle` (...) about basis axis 0, 1 or 2 (a Python int)."""
    half = angle / 2
    comp = [xnp.zeros_like(half)] * 3 + [xnp.cos(half)]
    comp[axis] = xnp.sin(half)
    return xnp.stack(comp, axis=-1)


def random_unit(key, shape, dtype):
    """Uniformly distributed rotations: a normalised 4-d standard normal is uniform on the
    3-sphere, and the 3-sphere double-covers SO(3) evenly."""
    from .... import random as xrandom
    return normalize(xrandom.normal(key, tuple(shape) + (4,), dtype=dtype))

