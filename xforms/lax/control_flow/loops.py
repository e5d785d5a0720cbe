"""`lax.while_loop`, `lax.fori_loop`, `lax.scan` and `lax.map`: a body traced once into
one `while`, `for_loop` or `scan` primitive."""
import builtins

import numpy as np

from ...core import trace as core
from ...core.avals import ShapedArray, static_index
from ...core.source_info import describe_function
from ...core.trace import Tracer
from ...primitives.control import control_flow as cf
from ...primitives.control.loops import for_loop_p, while_p
from ...primitives.control.scan import scan_p
from ...primitives.elementwise import add, convert_element_type, max, sub
from ...primitives.structural import concatenate, reshape
from ...transforms.vmap import vmap_jaxpr
from ...tree_util import tree_map, tree_unflatten
from ..slicing.slices import collapse, slice_in_dim
from .common import flatten, promote_leaves, trace_fun, trace_carry, call_site

_i64 = ShapedArray((), np.int64)


def while_loop(cond_fun, body_fun, init_val):
    """`while cond_fun(val): val = body_fun(val)` as one loop in the IR.

    Differentiable in both modes (reverse mode records the trip count and recomputes what
    the backward sweep needs; see xforms/primitives/control/control_flow.py).

    >>> lax.while_loop(lambda x: x < 10.0, lambda x: x * 2.0, 1.0)
    Array(16.)
    """
    leaves, tree = flatten(init_val)
    avals = [core.get_aval(x) for x in leaves]
    bj, bc, avals, _ = trace_carry("while_loop", body_fun, tree, avals,
                                    lambda a: body_fun(tree_unflatten(tree, a)))
    leaves = promote_leaves(leaves, avals)
    cj, cc, ctree = trace_fun(cond_fun, avals, lambda a: cond_fun(tree_unflatten(tree, a)))
    out = cj.out_avals
    if ctree.num_leaves != 1 or out[0].shape != () or out[0].dtype != np.bool_:
        raise TypeError(f"while_loop: {describe_function(cond_fun)} must return a boolean "
                        f"scalar, but it returns {[a.str_short() for a in out]}{call_site()}")
    outs = while_p.bind(*cc, *bc, *leaves, cond_jaxpr=cj, body_jaxpr=bj,
                        cond_nconsts=len(cc), body_nconsts=len(bc))
    return tree_unflatten(tree, outs)


def _is_static_int(x):
    return not isinstance(x, Tracer) and (isinstance(x, (int, np.integer)) or (
        isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu"))


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`for i in range(lower, upper): val = body_fun(i, val)`.

    With static (Python/NumPy integer) bounds it is a `scan`; with traced bounds a loop over a
    dynamic trip count.  Both are reverse-differentiable.  `unroll` is JAX's hint, accepted
    with static bounds (as `scan`'s: the compiled loop stays rolled, the values are the same)
    and refused with traced ones, as JAX refuses it.

    >>> lax.fori_loop(0, 5, lambda i, x: x + i, 0)
    Array(10)
    """
    leaves, tree = flatten(init_val)
    avals = [core.get_aval(x) for x in leaves]
    if _is_static_int(lower) and _is_static_int(upper):
        dt = np.result_type(*[x if isinstance(x, (np.ndarray, np.integer)) else np.int64
                              for x in (lower, upper)])
        lo, length = dt.type(lower), builtins.max(int(upper) - int(lower), 0)
        ia = ShapedArray((), dt)

        def step(a):
            return [a[0] + dt.type(1), body_fun(a[0], tree_unflatten(tree, a[1:]))]
        j, consts, avals, _ = trace_carry("fori_loop", body_fun, tree, avals, step,
                                           lambda a: [ia] + a, 1, lambda t: t.children[1])
        outs = scan_p.bind(*consts, lo, *promote_leaves(leaves, avals), jaxpr=j,
                           length=length, reverse=False, num_consts=len(consts),
                           num_carry=1 + len(leaves))
        return tree_unflatten(tree, outs[1:])
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         f"statically known.{call_site()}")
    from ...primitives.operands import promote
    lo, hi = promote(lower, upper, name="fori_loop")
    la = core.get_aval(lo)
    if la.shape != () or la.dtype.kind not in "iu":
        raise TypeError(f"fori_loop: bounds must be integer scalars, got {la.str_short()}"
                        f"{call_site()}")
    la = la.strip_weak()
    n = max(convert_element_type(sub(hi, lo), np.int64), np.int64(0))

    def step(a):
        i = add(a[1], convert_element_type(a[0], la.dtype))
        return body_fun(i, tree_unflatten(tree, a[2:]))
    j, consts, avals, _ = trace_carry("fori_loop", body_fun, tree, avals, step,
                                       lambda a: [_i64, la] + a)
    k = len(consts)
    j = cf.permute_invars(j, [k] + list(range(k)) + list(range(k + 1, len(j.jaxpr.invars))))
    outs = for_loop_p.bind(n, *consts, lo, *promote_leaves(leaves, avals), body_jaxpr=j,
                           num_consts=k + 1, reverse=False)
    return tree_unflatten(tree, outs)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop `carry, y = f(carry, x)` over the leading axis of xs; -> (carry, stacked ys).

    >>> lax.scan(lambda c, x: (c + x, c * x), 0.0, xnp.arange(4.0))
    """
    c_leaves, c_tree = flatten(init)
    x_leaves, x_tree = flatten(xs)
    x_avals = [core.get_aval(x) for x in x_leaves]
    lengths = {a.shape[0] if a.ndim else None for a in x_avals}
    if None in lengths:
        raise ValueError(f"scan: xs leaves must be arrays with a leading axis to scan over, got "
                         f"{[a.str_short() for a in x_avals]}{call_site()}")
    if length is not None:
        length = static_index(length, "scan's length")
        if lengths - {length}:
            raise ValueError(f"scan: length={length} but xs have leading axes {sorted(lengths)}"
                             f"{call_site()}")
    elif len(lengths) == 1:
        length = lengths.pop()
    else:
        raise ValueError("scan: xs must all have the same leading axis length, got "
                         f"{sorted(lengths)}{call_site()}" if lengths else
                         f"scan: give length= when xs is None{call_site()}")
    s_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in x_avals]
    nc = len(c_leaves)

    def step(a):
        out = f(tree_unflatten(c_tree, a[:nc]), tree_unflatten(x_tree, a[nc:]))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"scan: {describe_function(f)} must return a pair (carry, y), got "
                            f"{type(out).__name__}")
        return tuple(out)
    avals = [core.get_aval(x) for x in c_leaves]
    j, consts, avals, out_tree = trace_carry("scan", f, c_tree, avals, step,
                                              lambda a: a + s_avals, 0, lambda t: t.children[0])
    outs = scan_p.bind(*consts, *promote_leaves(c_leaves, avals), *x_leaves, jaxpr=j,
                       length=length, reverse=bool(reverse), num_consts=len(consts),
                       num_carry=nc)
    y_tree = out_tree.children[1]
    return tree_unflatten(c_tree, outs[:nc]), tree_unflatten(y_tree, outs[nc:])


def map(f, xs, *, batch_size=None):
    """`f` applied to each slice of xs along the leading axis (a scan): stacked results.
    With `batch_size`, the scan runs over batches of that many slices, each batch
    vectorised (vmap) as in JAX; a remainder batch runs after it.

    >>> lax.map(lambda x: x ** 2, xnp.arange(3.0))
    Array([0., 1., 4.])
    """
    leaves, tree = flatten(xs)
    n = core.get_aval(leaves[0]).shape[0] if leaves else 0
    if batch_size is None or n == 0:      # (an empty xs: the scan gives empty results)
        if batch_size is not None and static_index(batch_size, "map's batch_size") < 1:
            raise ValueError(f"map: batch_size must be a positive integer, got {batch_size}")
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    b = static_index(batch_size, "map's batch_size")
    if b < 1:
        raise ValueError(f"map: batch_size must be a positive integer, got {batch_size}")
    full_n = n - n % b
    parts = []
    if full_n:
        batches = [reshape(slice_in_dim(x, 0, full_n), (full_n // b, b) +
                           core.get_aval(x).shape[1:]) for x in leaves]
        ys = scan(lambda c, x: (c, _vmapped(f, x)), (), tree_unflatten(tree, batches))[1]
        parts.append(tree_map(lambda y: collapse(y, 0, 2), ys))
    if n % b:
        rest = tree_unflatten(tree, [slice_in_dim(x, full_n, n) for x in leaves])
        parts.append(_vmapped(f, rest))
    if len(parts) == 1:
        return parts[0]
    return tree_map(lambda y, z: concatenate([y, z], 0), *parts)


def _vmapped(f, xs):
    """vmap(f)(xs) over the leading axis, built from vmap's IR transform (the `vmap` API
    sits above lax)."""
    leaves, tree = flatten(xs)
    avals = [core.get_aval(x) for x in leaves]
    size = avals[0].shape[0]
    per = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in avals]
    j, consts, out_tree = trace_fun(f, per, lambda a: f(tree_unflatten(tree, a)))
    jb = vmap_jaxpr(j, [None] * len(consts) + [0] * len(leaves), size)
    return tree_unflatten(out_tree, cf.call(jb, *consts, *leaves))
