"""sort: JAX's lax.sort primitive -- sorts several same-shape operands together along
`dimension`, ordering by the first `num_keys` of them lexicographically.

    >>> sort(np.array([3., 1., 2.]), np.arange(3), num_keys=1)   # ([1, 2, 3], [1, 2, 0])

Order as in JAX: NaNs after every number, complex numbers by (real, imag); with
`is_stable`, equal keys keep their order (our sort is always stable).  The tangent of every
operand follows the permutation (found by sorting an extra iota operand along).
"""
import numpy as np

from ..core import trace as core
from ..errors import AxisError
from ..core.avals import ShapedArray, static_index
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import jvp_rules, Zero, tangent_aval
from ..transforms.vmap import vmap_rules, bdim_to_front
from ..core.facts import declare
from ..core.registry import primitive
from .cumulative import take_along
from .structural import iota

sort_p = declare(primitive("sort", multiple_results=True), eager_work="n_log_n")


def _sort_aval(*xs, dimension, is_stable, num_keys):
    shapes = {x.shape for x in xs}
    if not xs or len(shapes) != 1:
        raise TypeError(f"sort: operands must share one shape, got "
                        f"{', '.join(x.str_short() for x in xs)}")
    nd = xs[0].ndim
    if not 0 <= dimension < max(nd, 1) or nd == 0:
        raise AxisError(f"sort: dimension {dimension} is out of range for {xs[0].str_short()}")
    if not 1 <= num_keys <= len(xs):
        raise TypeError(f"sort: num_keys={num_keys} must be in [1, {len(xs)}]")
    return [ShapedArray(x.shape, x.dtype, x.weak_type) for x in xs]


def sort_permutation(keys, axis):
    """Stable lexicographic argsort of NumPy arrays `keys` along `axis` (NaN last)."""
    cols = []
    for k in keys:
        k = np.asarray(k)
        cols += [k.real, k.imag] if k.dtype.kind == "c" else [k]
    if len(cols) == 1:
        return np.argsort(cols[0], axis=axis, kind="stable")
    return np.lexsort(tuple(reversed(cols)), axis=axis)


def _sort_impl(*xs, dimension, is_stable, num_keys):
    perm = sort_permutation(xs[:num_keys], dimension)
    return [np.take_along_axis(np.asarray(x), perm, axis=dimension) for x in xs]


abstract_eval_rules[sort_p] = lambda *xs, **params: _sort_aval(*xs, **params)
impl_rules[sort_p] = _sort_impl


def sort(*operands, dimension=-1, is_stable=True, num_keys=1):
    nd = core.get_aval(operands[0]).ndim
    # (JAX's AxisError past the rank: no wrapping around)
    dimension = static_index(dimension, "sort's dimension")
    if not -nd <= dimension < max(nd, 1):
        raise AxisError(f"sort: dimension {dimension} is out of bounds for an array of "
                        f"dimension {nd}")
    return sort_p.bind(*operands, dimension=dimension % max(nd, 1),
                       is_stable=bool(is_stable),
                       num_keys=static_index(num_keys, "sort's num_keys"))


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    shape = core.get_aval(primals[0]).shape
    *outs, perm = sort_p.bind(*primals, iota(np.int64, shape, dimension),
                              dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    t_outs = [t if isinstance(t, Zero) else take_along(t, perm, dimension) for t in tangents]
    return outs, [Zero(tangent_aval(core.get_aval(o))) if isinstance(t, Zero) else t
                  for o, t in zip(outs, t_outs)]


jvp_rules[sort_p] = _sort_jvp


def _sort_vmap(args, dims, *, dimension, is_stable, num_keys):
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    args = [bdim_to_front(a, d, size) for a, d in zip(args, dims)]
    outs = sort_p.bind(*args, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


vmap_rules[sort_p] = _sort_vmap
