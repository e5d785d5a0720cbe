"""`Rotation`: one or a batch of 3-d rotations, stored as unit quaternions `quat` (..., 4),
scalar last -- jax.scipy.spatial.transform.Rotation's API and values. A Rotation is a pytree
(its one leaf is `quat`), so it passes through and out of jit, grad and vmap.

    >>> r = Rotation.from_euler("z", 90., degrees=True)
    >>> r.apply(xnp.array([1., 0., 0.]))                # [0, 1, 0]
    >>> (r * r).as_rotvec()                             # [0, 0, pi]
"""
import dataclasses

import numpy as np

from .... import numpy as xnp
from ....tree_util import register_dataclass
from . import euler
from . import quaternions as quat


def _float_array(x, what):
    """x as an array of a floating dtype (integers become the default float)."""
    x = xnp.asarray(x)
    if not xnp.issubdtype(x.dtype, xnp.floating):
        if xnp.issubdtype(x.dtype, xnp.complexfloating):
            raise TypeError(f"Rotation.{what}: expected real values, got {x.dtype}")
        x = x.astype(xnp.float_)
    return x


def _trailing(x, shape, what):
    """Check that x ends in `shape` (the rotation's own axes), naming the constructor."""
    if x.ndim < len(shape) or tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise ValueError(f"Rotation.{what}: expected an array of shape (..., "
                         f"{', '.join(map(str, shape))}), got {tuple(x.shape)}")
    return x


@dataclasses.dataclass(frozen=True, eq=False)
class Rotation:
    """Rotations in 3 dimensions (scipy.spatial.transform.Rotation as JAX has it): `quat`
    has shape (4,) for one rotation or (N, 4) for N (any leading axes broadcast)."""
    quat: object

    # ---- constructors --------------------------------------------------------------------
    @classmethod
    def from_quat(cls, quat_):
        """From quaternions (x, y, z, w), normalised."""
        return cls(quat.normalize(_trailing(_float_array(quat_, "from_quat"), (4,), "from_quat")))

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices (..., 3, 3)."""
        m = _trailing(_float_array(matrix, "from_matrix"), (3, 3), "from_matrix")
        return cls(quat.from_matrix(m))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """From rotation vectors (..., 3): the axis scaled by the angle."""
        v = _trailing(_float_array(rotvec, "from_rotvec"), (3,), "from_rotvec")
        return cls(quat.from_rotvec(xnp.deg2rad(v) if degrees else v))

    @classmethod
    def from_mrp(cls, mrp):
        """From modified Rodrigues parameters (..., 3)."""
        return cls(quat.from_mrp(_trailing(_float_array(mrp, "from_mrp"), (3,), "from_mrp")))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """From Euler angles (..., len(seq)) about the axes of `seq` ("xyz" extrinsic,
        "XYZ" intrinsic, 1 to 3 axes); one axis takes a scalar angle too."""
        axes, extrinsic = euler.parse(seq, "Rotation.from_euler", (1, 2, 3))
        a = xnp.atleast_1d(_float_array(angles, "from_euler"))
        if a.shape[-1] != len(axes):
            raise ValueError(f"Rotation.from_euler: {len(axes)} axes {seq!r} need angles of "
                             f"shape (..., {len(axes)}), got {tuple(a.shape)}")
        return cls(euler.from_euler(xnp.deg2rad(a) if degrees else a, axes, extrinsic))

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation, or `num` of them (JAX allows only num=None)."""
        q = xnp.asarray([0., 0., 0., 1.], dtype=dtype)
        return cls(q if num is None else xnp.tile(q, (num, 1)))

    @classmethod
    def random(cls, random_key, num=None):
        """Rotations drawn uniformly from SO(3) with an xforms PRNG key (jax 0.10.2 raises
        NotImplementedError here; scipy's method, its values differ with the generator)."""
        return cls(quat.random_unit(random_key, () if num is None else (num,), xnp.float_))

    @classmethod
    def concatenate(cls, rotations):
        """One Rotation holding the rotations of a sequence of batched ones, in order."""
        return cls(xnp.concatenate([r.quat for r in rotations]))

    # ---- representations -----------------------------------------------------------------
    def as_quat(self, canonical=False, scalar_first=False):
        """Quaternions (x, y, z, w), or (w, x, y, z) with scalar_first; canonical picks
        the sign with w > 0."""
        q = quat.canonical(self.quat) if canonical else self.quat
        return xnp.roll(q, 1, axis=-1) if scalar_first else q

    def as_matrix(self):
        """Rotation matrices (..., 3, 3)."""
        return quat.to_matrix(self.quat)

    def as_rotvec(self, degrees=False):
        """Rotation vectors (..., 3), angles in [0, pi] (or degrees)."""
        v = quat.to_rotvec(self.quat)
        return xnp.rad2deg(v) if degrees else v

    def as_mrp(self):
        """Modified Rodrigues parameters (..., 3)."""
        return quat.to_mrp(self.quat)

    def as_euler(self, seq, degrees=False):
        """Euler angles (..., 3) about the three axes of `seq`, each in [-pi, pi)."""
        axes, extrinsic = euler.parse(seq, "Rotation.as_euler", (3,))
        a = euler.to_euler(self.quat, axes, extrinsic)
        return xnp.rad2deg(a) if degrees else a

    # ---- operations ----------------------------------------------------------------------
    def __mul__(self, other):
        """self * other: other first, then self (broadcast over batches), normalised."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(quat.compose(self.quat, other.quat))

    def apply(self, vectors, inverse=False):
        """Rotate vectors (..., 3) (by the inverse rotation with inverse=True)."""
        m = self.as_matrix()
        if inverse:
            m = xnp.swapaxes(m, -1, -2)
        v = xnp.asarray(vectors)
        return xnp.matmul(m, v[..., None])[..., 0]

    def inv(self):
        """The inverse rotation(s)."""
        return Rotation(quat.conjugate(self.quat))

    def magnitude(self):
        """The rotation angle(s) in radians, in [0, pi]."""
        return quat.magnitude(self.quat)

    def mean(self, weights=None):
        """The (weighted) mean rotation of a batch: the dominant eigenvector of the weighted
        sum of q q^T (Markley et al. 2007)."""
        n = len(self)
        q = self.quat
        w = xnp.ones(n, dtype=q.dtype) if weights is None else xnp.asarray(weights, dtype=q.dtype)
        if w.ndim != 1:
            raise ValueError(f"Rotation.mean: expected 1-d weights, got shape {tuple(w.shape)}")
        if w.shape[0] != n:
            raise ValueError(f"Rotation.mean: {w.shape[0]} weights for {n} rotations")
        _, vecs = xnp.linalg.eigh((w[:, None] * q).T @ q)
        return Rotation(vecs[:, -1])

    @property
    def single(self):
        """True for one rotation (quat of shape (4,))."""
        return np.ndim(self.quat) == 1

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __getitem__(self, index):
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[index])

    def __repr__(self):
        return f"Rotation(quat={self.quat!r})"


register_dataclass(Rotation, data_fields=["quat"], meta_fields=[])
