"""Named-axis collectives (JAX's `lax.psum` family) for `vmap(axis_name=...)` and `pmap`.

Each wrapper resolves its axis names in the axis environment (xforms/core/axis_env.py), moves
and reshapes axes so the primitive sees its canonical form (xforms/primitives/
collectives.py), and applies to every leaf of a pytree operand.

    >>> xf.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(xnp.array([1.0, 3.0]))
    Array([0.25, 0.75])
"""
import numpy as np

from ..core import axis_env, trace as core
from ..errors import AxisError
from ..core.engine_prims import broadcast_to_aval, full
from ..primitives import collectives as C
from ..primitives.elementwise import convert_element_type, div, eq, select_n
from ..primitives.structural import reshape
from ..transforms.vmap import moveaxis
from ..tree_util import tree_flatten, tree_unflatten


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _resolve(axis_name, what):
    """-> (names, total size, comm) for the named axes (one MPI axis at most)."""
    names = _names(axis_name)
    frames = [axis_env.lookup(n) for n in names]
    comms = {f.comm for f in frames if f.comm is not None}
    if len(comms) > 1:
        raise NotImplementedError(f"{what} over several MPI-bound axes {names}")
    size = int(np.prod([f.size for f in frames], dtype=np.int64))
    return names, size, (comms.pop() if comms else None)


def _grouped(axis_name, axis_index_groups, what, same_size=False):
    """-> (names, size, comm) of a collective among the members of this member's group
    when `axis_index_groups` is given (JAX's meaning: groups of axis indices that
    partition the axis; each reduces or gathers over its own members only, in the order
    listed).  Under pmap over MPI ranks a group is a sub-communicator; JAX 0.10.2 has no
    groups under vmap, and neither have we (the same NotImplementedError)."""
    names, size, comm = _resolve(axis_name, what)
    if axis_index_groups is None:
        return names, size, comm
    groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    if sorted(i for g in groups for i in g) != list(range(size)) or not all(groups):
        raise ValueError(f"{what}: axis_index_groups must cover all indices exactly once: "
                         f"non-empty groups partitioning range({size}) for axis "
                         f"{axis_name!r}, got {groups}")
    if same_size and len({len(g) for g in groups}) > 1:
        raise ValueError(f"{what}: axis_index_groups must all be the same size, got {groups}")
    if len(names) != 1:
        raise NotImplementedError(f"{what}: axis_index_groups over several axes {names}")
    if comm is None:
        raise NotImplementedError(f"{what}: axis_index_groups not supported in vmap "
                                  "collectives (nor in JAX 0.10.2); xforms.pmap over MPI "
                                  "ranks supports them")
    sub = comm.split_groups(groups)
    return names, sub.size, sub


def _tree_apply(x, fn):
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [fn(leaf) for leaf in leaves])


def _reducer(prim, what):
    def collective(x, axis_name, *, axis_index_groups=None):
        names, _, comm = _grouped(axis_name, axis_index_groups, what)
        leaves, tree = tree_flatten(x)
        leaves = [core.canonical_value(v) if not isinstance(v, core.Tracer) else v
                  for v in leaves]
        outs = prim.bind(*leaves, axes=names, comm=comm) if leaves else []
        return tree_unflatten(tree, outs)
    collective.__name__ = collective.__qualname__ = what
    return collective


psum = _reducer(C.psum_p, "psum")
pmax = _reducer(C.pmax_p, "pmax")
pmin = _reducer(C.pmin_p, "pmin")
psum.__doc__ = """Sum `x` (a pytree) over the members of the named axis; all leaves travel in
one collective.  >>> xf.vmap(lambda v: lax.psum(v, 'i'), axis_name='i')(xnp.ones(3)) -> [3, 3, 3]"""


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of `x` over the named axis, or over this member's group of
    `axis_index_groups` (integers give floats, as in JAX)."""
    _, size, _ = _grouped(axis_name, axis_index_groups, "pmean")
    if axis_index_groups is not None and len({len(g) for g in axis_index_groups}) > 1:
        # JAX 0.10.2 divides every group's sum by the FIRST group's size (its constant psum
        # of 1 takes len(groups[0])): a wrong mean for the other groups; refuse, not guess
        raise ValueError(f"pmean: axis_index_groups of different sizes {axis_index_groups} "
                         "(JAX divides every group by the first group's size); use psum "
                         "and divide by your group's size")
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)

    def mean(t):
        dt = core.get_aval(t).dtype
        if dt.kind not in "fc":
            t, dt = convert_element_type(t, np.float64), np.dtype(np.float64)
        return div(t, np.asarray(size, dt)[()])
    return _tree_apply(total, mean)


def axis_index(axis_name):
    """This member's index along the named axis (int32)."""
    names, _, comm = _resolve(axis_name, "axis_index")
    if len(names) != 1:
        raise NotImplementedError("axis_index over several axes")
    return C.axis_index_p.bind(axes=names, comm=comm)


def axis_size(axis_name):
    """The number of members of the named axis (a Python int, known while tracing)."""
    return _resolve(axis_name, "axis_size")[1]


def _single(axis_name, what, axis_index_groups=None, same_size=False):
    names, size, comm = _grouped(axis_name, axis_index_groups, what, same_size)
    if len(names) != 1:
        raise NotImplementedError(f"{what} over several axes {names}")
    return names, size, comm


def _merge(x, axis):
    """Merge axes `axis` and `axis + 1`."""
    s = core.get_aval(x).shape
    return reshape(x, s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2:])


def _split(x, axis, n, what):
    s = core.get_aval(x).shape
    if s[axis] % n:
        raise ValueError(f"{what}: axis {axis} of size {s[axis]} is not divisible by the "
                         f"axis size {n}")
    return reshape(x, s[:axis] + (n, s[axis] // n) + s[axis + 1:])


def _axis(axis, ndim, what):
    if not -ndim <= axis < ndim:
        raise AxisError(f"{what}: axis {axis} is out of range for rank {ndim}")
    return axis % ndim


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Stack (or, tiled, concatenate) every member's `x` along `axis` (the members of
    this member's group, in the listed order, with `axis_index_groups` of equal sizes)."""
    names, size, comm = _single(axis_name, "all_gather", axis_index_groups, same_size=True)

    def one(v):
        nd = core.get_aval(v).ndim
        ax = _axis(axis, nd + (0 if tiled else 1), "all_gather")
        y = C.all_gather_p.bind(v, axes=names, comm=comm, axis_size=size)
        y = moveaxis(y, 0, ax)
        return _merge(y, ax) if tiled else y
    return _tree_apply(x, one)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """Sum over the members and give member k the k-th slice along `scatter_dimension`
    (with `axis_index_groups` of equal sizes: over the group, k = the place in it)."""
    names, size, comm = _single(axis_name, "psum_scatter", axis_index_groups, same_size=True)

    def one(v):
        sd = _axis(scatter_dimension, core.get_aval(v).ndim, "psum_scatter")
        if tiled:
            v = _split(v, sd, size, "psum_scatter")
        v = moveaxis(v, sd, 0)
        return C.psum_scatter_p.bind(v, axes=names, comm=comm, axis_size=size)
    return _tree_apply(x, one)


def ppermute(x, axis_name, perm):
    """Member `dst` receives member `src`'s `x` for each (src, dst) in perm; members that
    receive nothing get zeros."""
    names, size, comm = _single(axis_name, "ppermute")
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts) or any(
            not 0 <= i < size for i in srcs + dsts):
        raise ValueError(f"ppermute: perm {perm} must be pairs of distinct sources and "
                         f"distinct destinations in range({size})")
    return _tree_apply(x, lambda v: C.ppermute_p.bind(v, axes=names, comm=comm, perm=perm))


def pshuffle(x, axis_name, perm):
    """Member i receives member perm[i]'s `x`."""
    return ppermute(x, axis_name, [(int(s), i) for i, s in enumerate(perm)])


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Split `x` along `split_axis` into one chunk per member, send chunk k to member k,
    and stack (tiled: concatenate) the received chunks along `concat_axis`."""
    if axis_index_groups is not None:
        raise NotImplementedError("all_to_all: axis_index_groups")
    names, size, comm = _single(axis_name, "all_to_all")

    def one(v):
        nd = core.get_aval(v).ndim
        sa = _axis(split_axis, nd, "all_to_all")
        if tiled:
            v = _split(v, sa, size, "all_to_all")
        elif core.get_aval(v).shape[sa] != size:
            raise ValueError(f"all_to_all: split_axis {split_axis} has size "
                             f"{core.get_aval(v).shape[sa]}, expected the axis size {size}")
        y = C.all_to_all_p.bind(moveaxis(v, sa, 0), axes=names, comm=comm, axis_size=size)
        ca = _axis(concat_axis, nd if tiled else nd, "all_to_all")
        y = moveaxis(y, 0, ca)
        return _merge(y, ca) if tiled else y
    return _tree_apply(x, one)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the mapped axis `axis_name` with x's axis `axis` (of the same size): member i
    gets entry i of every member's `x` along `axis`, in member order.

        >>> xf.vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(xnp.arange(4.).reshape(2, 2))
        Array([[0., 2.], [1., 3.]])
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pbroadcast(x, axis_name, source):
    """Every member gets member `source`'s `x` (a pytree): jax's definition, the sum over the
    axis of x masked to the source member.

        >>> xf.vmap(lambda v: lax.pbroadcast(v, "i", 1), axis_name="i")(xnp.arange(3.))
        Array([1., 1., 1.])
    """
    names, size, _ = _resolve(axis_name, "pbroadcast")
    if not 0 <= int(source) < size:
        raise ValueError(f"pbroadcast: source {source} is not an index of axis {axis_name!r} "
                         f"of size {size}")
    here = eq(axis_index(axis_name), np.int32(int(source)))

    def masked(v):              # (a select, not a product with 0: NaNs elsewhere stay out)
        aval = core.get_aval(v)
        return select_n(broadcast_to_aval(here, aval), full(aval.shape, 0, aval.dtype), v)
    return psum(_tree_apply(x, masked), axis_name)


__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "pshuffle", "all_to_all", "axis_index", "axis_size", "pswapaxes", "pbroadcast"]
