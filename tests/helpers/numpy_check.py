"""Shared inputs and the `both` checker for the xforms.numpy tests (test_numpy*.py)."""
import numpy as np

import xforms as xf
from xforms.core import trace as core
from xforms.core.trace import check_jaxpr
from xforms.tree_util import tree_leaves, tree_map

R = np.random.default_rng(0)
F64 = R.standard_normal((2, 3))
F32 = R.standard_normal((2, 3)).astype(np.float32)
I64 = R.integers(-5, 6, (2, 3))
I32 = R.integers(-5, 6, (2, 3)).astype(np.int32)
B = R.random((2, 3)) > 0.5
C128 = R.standard_normal((2, 3)) + 1j * R.standard_normal((2, 3))
POS = R.random((2, 3)) + 0.5                      # in (0.5, 1.5)
UNIT = R.random((2, 3)) * 1.8 - 0.9               # in (-0.9, 0.9)
X3 = R.standard_normal((2, 3, 4))


def both(f, *args, expected=None, rtol=1e-12, atol=1e-12, dtype=None, eager=True):
    """Run `f` eagerly and via make_jaxpr -> check_jaxpr -> eval_jaxpr; compare both to
    `expected` (values and dtypes).  Eagerly, array arguments are `xforms.Array`s (as xnp
    returns them), so Python operators on them are NumPy's; `eager=False` checks only the
    staged path (for NumPy's own methods and indexing of Arrays).  Returns the eager result."""
    closed = xf.make_jaxpr(f)(*args)
    check_jaxpr(closed.jaxpr)
    staged = core.eval_jaxpr(closed, *tree_leaves(args))
    if not eager:
        staged = tree_leaves(staged)
        eager = [core.as_array(s) for s in staged]
    else:
        eager = f(*tree_map(lambda a: a.view(core.Array) if isinstance(a, np.ndarray) else a,
                            args))
    e_leaves = tree_leaves(eager)
    assert len(e_leaves) == len(staged)
    for e in e_leaves:
        assert isinstance(e, core.Array), type(e)
    if expected is not None:
        exp_leaves = tree_leaves(expected)
        assert len(exp_leaves) == len(e_leaves)
        for e, s, x in zip(e_leaves, staged, exp_leaves):
            x = np.asarray(x)
            want = np.dtype(dtype) if dtype is not None else x.dtype
            assert e.dtype == want, (e.dtype, want)
            assert np.asarray(s).dtype == want, (np.asarray(s).dtype, want)
            assert e.shape == x.shape and np.shape(s) == x.shape, (e.shape, np.shape(s), x.shape)
            if x.dtype.kind in "biu":
                np.testing.assert_array_equal(e, x)
                np.testing.assert_array_equal(s, x)
            else:
                np.testing.assert_allclose(e, x, rtol=rtol, atol=atol)
                np.testing.assert_allclose(s, x, rtol=rtol, atol=atol)
    return eager
