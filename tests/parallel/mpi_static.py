"""pmap's cross-rank check of static arguments, run on 2 ranks by tests/parallel/test_mpi.py with
the other two-rank checks (`mpiexec -n 2 python tests/parallel/mpi_programs.py ... static_differs
static_same`), or alone: `mpiexec -n 2 python tests/parallel/mpi_static.py <case>`."""
import sys

import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

R = xf.mpi.rank()


def case_static_differs():
    """Rank r passes n = 2 + r: the ranks would reduce arrays of different sizes."""
    f = xf.pmap(lambda v, n: lax.psum(v[:n], "i"), axis_name="i",
                static_broadcasted_argnums=1)
    try:
        f(np.ones(4), 2 + R)
    except ValueError as e:
        msg = str(e)
        assert ("rank 1 passed static argument 1 = 3 where rank 0 passed static argument "
                "1 = 2") in msg, msg
        assert "rank 0: " in msg and "rank 1: " in msg, msg
    else:
        raise AssertionError("no error for static arguments that differ across ranks")


class Config:
    """A static argument with the default repr (its address differs between ranks)."""

    def __init__(self, scale):
        self.scale = scale

    def __hash__(self):
        return hash(self.scale)

    def __eq__(self, other):
        return isinstance(other, Config) and other.scale == self.scale


def case_static_same():
    """Equal static values whose reprs hold addresses (functions, objects) pass the check."""
    f = xf.pmap(lambda v, act, cfg: lax.psum(act(v) * cfg.scale, "i"), axis_name="i",
                static_broadcasted_argnums=(1, 2))
    out = f(np.full(3, 0.5), xnp.tanh, Config(2.0))
    np.testing.assert_allclose(np.asarray(out), 2 * 2.0 * np.tanh(np.full(3, 0.5)))


if __name__ == "__main__":
    globals()[f"case_{sys.argv[1]}"]()
    print(f"ok {sys.argv[1]} rank {R}", flush=True)
