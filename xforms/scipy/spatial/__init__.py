"""`xforms.scipy.spatial`: JAX's jax.scipy.spatial, which holds one namespace, `transform`
(3-d rotations: Rotation, Slerp).

    >>> from xforms.scipy.spatial.transform import Rotation
"""
from xforms.scipy import lazy_namespaces

__getattr__, __dir__ = lazy_namespaces(__name__, ("transform",))
