"""`xforms.scipy.spatial.transform`: JAX's jax.scipy.spatial.transform -- `Rotation` (3-d
rotations as unit quaternions, with conversions to and from matrices, rotation vectors,
modified Rodrigues parameters and Euler angles) and `Slerp` (interpolation between them).

    >>> from xforms.scipy.spatial.transform import Rotation, Slerp
    >>> Rotation.from_rotvec(xnp.array([0., 0., 1.])).as_matrix()

One module per idea: quaternions (the array math), euler (angle sequences), rotation
(the Rotation class), slerp.
"""
from .rotation import Rotation
from .slerp import Slerp

__all__ = ["Rotation", "Slerp"]
