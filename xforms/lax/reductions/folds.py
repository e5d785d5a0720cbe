"""A user's combining function over axes: `associative_scan` (a parallel prefix scan of
any associative function) and `reduce` (a fold with a user computation and init values).

    >>> lax.associative_scan(lax.add, xnp.arange(4.0))        # [0., 1., 3., 6.]
"""
import math

import numpy as np

from ...errors import AxisError
from ...primitives.control import control_flow as cf
from ...primitives import elementwise as ew
from ...primitives.cumulative import cumlogsumexp as _cumlogsumexp, prefix_scan
from ...primitives import reductions
from ...primitives import structural as st
from ...transforms.vmap import vmap_jaxpr
from ...tree_util import tree_flatten, tree_unflatten

from ...core.trace import get_aval as aval_of
from ..slicing.slices import canonical_axis, slice_in_dim


# ---- associative_scan -----------------------------------------------------------------------
def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix combinations of `elems` (a pytree of arrays of one length along `axis`)
    under the associative `fn`: out[k] = fn(...fn(fn(e[0], e[1]), e[2])..., e[k]).  `fn`
    takes and returns pytrees like `elems` of slices along `axis` of any common length.

    Work-efficient parallel prefix (combine neighbouring pairs, recurse on the half, fill
    in the rest) made of slices, pads and concatenations, so it differentiates and vmaps.
    With reverse=True the prefixes run from the end: out[k] combines e[k:] (as JAX).

    >>> lax.associative_scan(lax.add, xnp.arange(5.0))       # [0, 1, 3, 6, 10]
    """
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    ndims = {aval_of(x).ndim for x in leaves}
    axis = canonical_axis(axis, min(ndims), "associative_scan")
    lengths = {aval_of(x).shape[axis] for x in leaves}
    if len(lengths) != 1:
        raise ValueError(f"associative_scan: the elems must have one length along axis "
                         f"{axis}, got {sorted(lengths)}")

    def combine(a, b):
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return a pytree like elems "
                            f"({tree}), got {out_tree}")
        return out

    if reverse:
        leaves = [st.rev(x, (axis,)) for x in leaves]
    out = prefix_scan(combine, leaves, axis)
    if reverse:
        out = [st.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


# ---- reduce with a user computation ---------------------------------------------------------
_MONOIDS = {"add": "reduce_sum", "mul": "reduce_prod", "max": "reduce_max",
            "min": "reduce_min", "and": "reduce_and", "or": "reduce_or"}


# ---- cumlogsumexp ---------------------------------------------------------------------------
def cumlogsumexp(operand, axis=0, reverse=False):
    """log(cumsum(exp(x))) along `axis` (lax.cumlogsumexp).  Real operands: the primitive.
    Complex ones as JAX's, which folds jnp.logaddexp's complex branch over each output's
    window in index order from the init -inf (XLA's reduce_window): out[k] = (((-inf + x[0])
    + x[1]) ... + x[k]) forward, ((-inf + x[k]) + x[k+1]) ... + x[-1] reversed, `+` that
    logaddexp.  The window folds are prefix combinations by `associative_scan` (equal to
    rounding; the one step from -inf, whose complex arithmetic can make a NaN of an
    infinite part, is applied where JAX applies it).

        >>> lax.cumlogsumexp(xnp.array([0j, 1j]))      # [0j, (0.6931+0.5j)]
    """
    a = aval_of(operand)
    if np.dtype(a.dtype).kind != "c":
        return _cumlogsumexp(operand, axis, reverse)
    axis = int(axis)
    if not 0 <= axis < a.ndim:       # (the primitive's check: no negative axis, as JAX's)
        raise AxisError(f"cumlogsumexp: axis {axis} is out of range for {a.str_short()}")
    from ...numpy.elementwise.ufuncs import complex_logaddexp as lae   # (the one spelling of JAX's)
    n = a.shape[axis]
    if n == 0:
        return operand
    started = lae(st.full(a.shape, -np.inf, a.dtype), operand)     # -inf + x[k], each k
    if not reverse:
        x = st.concatenate([slice_in_dim(started, 0, 1, axis=axis),
                            slice_in_dim(operand, 1, n, axis=axis)], axis)
        return associative_scan(lae, x, axis=axis)
    if n == 1:
        return started
    tails = associative_scan(lae, slice_in_dim(operand, 1, n, axis=axis), reverse=True,
                             axis=axis)                           # x[k+1] + ... + x[-1]
    head = lae(slice_in_dim(started, 0, n - 1, axis=axis), tails)
    return st.concatenate([head, slice_in_dim(started, n - 1, n, axis=axis)], axis)

def reduce(operands, init_values, computation, dimensions):
    """Reduce the operands (a pytree of arrays of one shape) over `dimensions` with the
    associative, commutative `computation(x, y)` on pytrees of scalars like init_values;
    -> computation(init, reduction).  A computation that is one add, mul, max, min (or
    and/or on booleans) is that reduction primitive; any other is folded in halves.

    >>> lax.reduce(xnp.arange(6.0).reshape(2, 3), 0.0, lax.add, (1,))      # [3, 12]
    """
    leaves, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise TypeError(f"reduce: operands {tree} and init_values {init_tree} must have the "
                        "same structure")
    shapes = {aval_of(x).shape for x in leaves}
    if len(shapes) != 1:
        raise TypeError(f"reduce: the operands must have one shape, got {sorted(shapes)}")
    shape = shapes.pop()
    dims = tuple(sorted({canonical_axis(d, len(shape), "reduce") for d in dimensions}))
    avals = [aval_of(x).update(shape=(), weak_type=False) for x in leaves]
    inits = [ew.convert_element_type(i, a.dtype) for i, a in zip(inits, avals)]
    j, consts = cf.trace(lambda *xs: tree_flatten(computation(
        tree_unflatten(tree, xs[:len(xs) // 2]), tree_unflatten(tree, xs[len(xs) // 2:])))[0],
        avals + avals)
    monoid = _monoid(j, avals) if not consts else None
    if monoid is not None:
        folded = [getattr(reductions, monoid)(leaves[0], dims)]
    else:
        folded = _fold(lambda a, b: _apply(j, consts, a + b), leaves, dims, inits)
    out_shape = tuple(n for k, n in enumerate(shape) if k not in dims)
    full_inits = [st.broadcast_in_dim(i, out_shape, ()) for i in inits]
    return tree_unflatten(tree, _apply(j, consts, full_inits + folded))


def _monoid(closed, avals):
    """The reduction primitive's name if the computation is one monoid operation."""
    jx = closed.jaxpr
    if len(jx.eqns) != 1 or len(avals) != 1:
        return None
    e = jx.eqns[0]
    name = _MONOIDS.get(e.prim.name)
    if name is None or set(e.invars) != set(jx.invars) or len(set(e.invars)) != 2 or \
            list(jx.outvars) != list(e.outvars):
        return None
    if e.prim.name in ("and", "or") and avals[0].dtype != np.bool_:
        return None                   # reduce_and/or are logical: only booleans
    return name


def _apply(closed, consts, args):
    """The scalar computation applied elementwise to arrays of one shape."""
    shape = aval_of(args[0]).shape
    if not shape:
        return cf.call(closed, *consts, *args)
    n = math.prod(shape)
    flat = [st.reshape(a, (n,)) for a in args]
    jb = vmap_jaxpr(closed, [None] * len(consts) + [0] * len(args), n)
    return [st.reshape(o, shape) for o in cf.call(jb, *consts, *flat)]


def _fold(combine, xs, dims, inits):
    """Reduce each of `dims` of the arrays xs by combining halves (log2 n steps)."""
    for ax in reversed(dims):
        n = aval_of(xs[0]).shape[ax]
        if n == 0:        # nothing to combine: the identity of an empty reduction is init
            shape = aval_of(xs[0]).shape
            xs = [st.broadcast_in_dim(i, shape[:ax] + (1,) + shape[ax + 1:], ())
                  for i in inits]
        while n > 1:
            half = n // 2
            head = combine([slice_in_dim(x, 0, half, 1, ax) for x in xs],
                           [slice_in_dim(x, half, 2 * half, 1, ax) for x in xs])
            if n % 2:     # the odd one out joins the first entry
                first = combine([slice_in_dim(h, 0, 1, 1, ax) for h in head],
                                [slice_in_dim(x, n - 1, n, 1, ax) for x in xs])
                head = [st.concatenate([f, slice_in_dim(h, 1, None, 1, ax)], ax)
                        for f, h in zip(first, head)]
            xs, n = head, half
        xs = [st.squeeze(x, (ax,)) for x in xs]
    return xs
