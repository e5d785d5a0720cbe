"""`Slerp`: spherical linear interpolation between key rotations at key times -- jax.scipy.
spatial.transform.Slerp's API (`Slerp.init(times, rotations)`, then call with times).

    >>> s = Slerp.init(xnp.array([0., 1.]), Rotation.from_euler("z", xnp.array([[0.], [90.]]),
    ...                                                        degrees=True))
    >>> s(0.5).as_euler("zyx", degrees=True)            # [45, 0, 0]

Between key times t_k <= t < t_{k+1} the rotation turns at a constant rate about one axis;
times outside the keys extrapolate the first or last interval (JAX does not check them, nor
that the key times increase: both would need concrete values, which jit does not have).
"""
import dataclasses

from .... import numpy as xnp
from ....tree_util import register_dataclass
from .rotation import Rotation


@dataclasses.dataclass(frozen=True, eq=False)
class Slerp:
    """Interpolator between N >= 2 key rotations: `times` (N,), `timedelta` (N - 1,), the
    first N - 1 key `rotations`, and `rotvecs` (N - 1, 3) from each key to the next."""
    times: object
    timedelta: object
    rotations: Rotation
    rotvecs: object

    @classmethod
    def init(cls, times, rotations):
        """The interpolator through `rotations` (a batched Rotation) at increasing `times`."""
        if not isinstance(rotations, Rotation):
            raise TypeError("Slerp.init: `rotations` must be a Rotation instance, got "
                            f"{type(rotations).__name__}")
        if rotations.single or len(rotations) == 1:
            raise ValueError("Slerp.init: `rotations` must be a sequence of at least 2 "
                             "rotations")
        times = xnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Slerp.init: expected 1-d times, got shape {tuple(times.shape)}")
        if times.shape[0] != len(rotations):
            raise ValueError(f"Slerp.init: {len(rotations)} rotations but {times.shape[0]} "
                             "times")
        starts, ends = rotations[:-1], rotations[1:]
        return cls(times=times, timedelta=xnp.diff(times), rotations=starts,
                   rotvecs=(starts.inv() * ends).as_rotvec())

    def __call__(self, times):
        """The rotations at `times` (a scalar gives one rotation, a 1-d array a batch)."""
        t = xnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError(f"Slerp: `times` must be at most 1-d, got shape {tuple(t.shape)}")
        tt = xnp.atleast_1d(t)
        k = xnp.maximum(xnp.searchsorted(self.times, tt) - 1, 0)
        alpha = (tt - self.times[k]) / self.timedelta[k]
        out = self.rotations[k] * Rotation.from_rotvec(self.rotvecs[k] * alpha[:, None])
        return out[0] if t.ndim == 0 else out


register_dataclass(Slerp, data_fields=["times", "timedelta", "rotations", "rotvecs"],
                   meta_fields=[])
