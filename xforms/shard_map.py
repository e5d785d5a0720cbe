"""`shard_map`: run a function on each member's block of its inputs, over a one-axis mesh.

Each member of the mesh (xforms/sharding.py) gets the block of every input that `in_specs`
assigns it and returns its block of each output; `out_specs` says how the blocks are put
together (concatenated along the array axis that names the mesh axis) or that an output is
the same on every member (no mesh axis in its spec: one copy is returned).  Collectives over
the mesh axis name (`lax.psum(x, "i")` ...) work as under `vmap`/`pmap`.

    mesh = xf.make_mesh((4,), ("i",))
    f = xf.shard_map(lambda x: lax.psum(x.sum(), "i"), mesh=mesh,
                     in_specs=P("i"), out_specs=P())
    f(xnp.arange(8.0))          # 28.0: each of 4 members sums 2 elements, psum adds them

On a mesh of this process's members (`xf.make_mesh`) the members run as one `vmap` over the
blocks; on a mesh of MPI ranks (`xforms.mpi.make_mesh`) each rank passes the whole inputs,
computes its own block (collectives are MPI calls, inside compiled code as in `pmap`) and
receives the whole outputs, gathered from every rank.  Both give the numbers one process
computes.

With `check_vma=True` (JAX's default) an output whose spec names no mesh axis must be
replicated: the traced program is checked (an output that depends on an input split over the
axis, other than through `psum`/`pmax`/`pmin`/`all_gather` over it, is a ValueError), as JAX
checks it.  With `check_vma=False` member 0's value is returned unchecked.
"""
import functools

from . import lax
from .core import axis_env, trace as core
from .core.ir import ClosedJaxpr, Jaxpr, Var
from .core.source_info import describe_function
from .pmap import Pmapped
from .primitives import collectives as C
from .sharding import Mesh, PartitionSpec
from .transforms.tracing import flatten_args, trace_program
from .transforms.vmap import moveaxis, vmap_jaxpr
from .tree_util import tree_broadcast, tree_flatten, tree_unflatten

# collectives whose result is the same on every member of the axis they reduce over
_REPLICATING = (C.psum_p, C.pmax_p, C.pmin_p, C.all_gather_p)


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(),
              check_vma=True, check_rep=None):
    """Map `f` over the blocks of its inputs on the members of `mesh` (JAX's signature).

    >>> mesh = xf.make_mesh((2,), ("i",))
    >>> xf.shard_map(lambda x: 2 * x, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(
    ...     xnp.arange(4.0))
    Array([0., 2., 4., 6.])
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma,
                                 check_rep=check_rep)
    check = check_vma if check_rep is None else check_rep
    _check_mesh(f, mesh, in_specs, axis_names)
    run = _mpi_runner(f, mesh, in_specs, out_specs, check) if mesh.comm is not None else None

    @functools.wraps(f)
    def mapped(*args):
        if run is not None:
            return run(*args)
        return _run_in_process(f, mesh, in_specs, out_specs, check, args)
    return mapped


def _check_mesh(f, mesh, in_specs, axis_names):
    where = f"shard_map of {describe_function(f)}"
    if mesh is None:
        raise ValueError(f"{where}: pass mesh= (a Mesh from xf.make_mesh or "
                         "xforms.mpi.make_mesh; xforms has no ambient mesh)")
    if not isinstance(mesh, Mesh):
        raise TypeError(f"{where}: mesh must be an xforms.sharding.Mesh, got "
                        f"{type(mesh).__name__}")
    if in_specs is None:
        raise ValueError(f"{where}: pass in_specs= (a PartitionSpec per argument, or one for "
                         "all); xforms does not infer them from the arguments")
    if axis_names and set(axis_names) != set(mesh.axis_names):
        raise NotImplementedError(f"{where}: axis_names={set(axis_names)} (manual over part "
                                  "of the mesh) is not supported; the mesh has one axis")


# ---- specs ------------------------------------------------------------------------------
def _flat_specs(specs, tree, what, f):
    """One PartitionSpec per leaf of `tree` (`specs` is a tree prefix of it)."""
    full = tree_unflatten(tree, [0] * tree.num_leaves)
    try:
        out = tree_flatten(tree_broadcast(specs, full, is_leaf=_is_spec),
                           is_leaf=_is_spec)[0]
    except (ValueError, TypeError) as e:
        raise ValueError(f"shard_map of {describe_function(f)}: {what} {specs!r} must be a "
                         f"tree prefix of the {'arguments' if what == 'in_specs' else 'output'}"
                         f" ({tree}): {e}") from None
    for s in out:
        if not isinstance(s, PartitionSpec):
            raise TypeError(f"shard_map of {describe_function(f)}: {what} leaves must be "
                            f"PartitionSpecs (P(...)), got {s!r}")
    return out


def _is_spec(x):
    return isinstance(x, PartitionSpec)


def _split_axis(spec, name, ndim, f, what):
    """The array axis `spec` splits over mesh axis `name`, or None (not split)."""
    found = []
    for axis, part in enumerate(spec):
        names = part if isinstance(part, tuple) else (part,)
        for n in names:
            if n is not None and n != name:
                raise ValueError(f"shard_map of {describe_function(f)}: {what} {spec} names "
                                 f"axis {n!r}, which the mesh (axis {name!r}) does not have")
        if name in names:
            found.append(axis)
    if len(spec) > ndim:
        raise ValueError(f"shard_map of {describe_function(f)}: {what} {spec} has "
                         f"{len(spec)} entries for an array of rank {ndim}")
    if len(found) > 1:
        raise ValueError(f"shard_map of {describe_function(f)}: {what} {spec} uses mesh axis "
                         f"{name!r} for array axes {found}; an axis splits one array axis")
    return found[0] if found else None


def _in_axes(f, mesh, in_specs, flat, in_tree):
    """The split array axis of each input leaf (None: every member gets it whole)."""
    name, k = mesh.axis_names[0], mesh.size
    axes = []
    for i, (x, s) in enumerate(zip(flat, _flat_specs(in_specs, in_tree, "in_specs", f))):
        shape = core.get_aval(x).shape
        d = _split_axis(s, name, len(shape), f, "in_specs")
        if d is not None and shape[d] % k:
            raise ValueError(
                f"shard_map of {describe_function(f)}: argument leaf {i} of shape "
                f"{list(shape)} has in_specs {s}, which splits its axis {d} (size "
                f"{shape[d]}) over mesh axis {name!r} of {k} members; {k} does not divide "
                f"{shape[d]}")
        axes.append(d)
    return axes


def _block_aval(x, d, k):
    a = core.get_aval(x)
    if d is None:
        return a
    return a.update(shape=a.shape[:d] + (a.shape[d] // k,) + a.shape[d + 1:])


# ---- the replication check (check_vma) --------------------------------------------------
def _varying(jaxpr, varying_in, name):
    """Which outputs of `jaxpr` may differ between the members of axis `name`, given which
    inputs do: a value varies when it depends on a varying one, except through a collective
    that reduces or gathers over `name`; axis_index and the permuting collectives vary."""
    varying = {v for v, b in zip(jaxpr.invars, varying_in) if b}
    for eqn in jaxpr.eqns:
        if eqn.prim in _REPLICATING and name in eqn.params.get("axes", ()):
            continue
        dep = any(isinstance(v, Var) and v in varying for v in eqn.invars)
        if dep or _reads_axis(eqn, name):
            varying.update(eqn.outvars)
    return [isinstance(v, Var) and v in varying for v in jaxpr.outvars]


def _reads_axis(eqn, name):
    """Does `eqn` (or a program inside it) compute a member-dependent value by itself:
    axis_index or a permuting collective over `name`?  (Sub-programs are taken whole:
    a conservative answer, as JAX's check is.)"""
    if eqn.prim in (C.axis_index_p, C.ppermute_p, C.psum_scatter_p, C.all_to_all_p):
        return name in eqn.params.get("axes", (name,))
    for v in eqn.params.values():
        for sub in (v if isinstance(v, tuple) else (v,)):
            if isinstance(sub, (ClosedJaxpr, Jaxpr)):
                body = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
                if any(_reads_axis(e, name) for e in body.eqns):
                    return True
    return False


def _check_replicated(f, closed, varying_in, out_axes, out_specs, name):
    for i, (v, d) in enumerate(zip(_varying(closed.jaxpr, varying_in, name), out_axes)):
        if v and d is None:
            raise ValueError(
                f"shard_map of {describe_function(f)}: output leaf {i} has out_specs "
                f"{out_specs[i]}, which promises the same value on every member of mesh "
                f"axis {name!r}, but it varies over {name!r} (it depends on an input split "
                f"over it, not through psum/pmax/pmin/all_gather over {name!r}). Reduce it "
                f"over {name!r}, give it an out_specs that names {name!r}, or pass "
                "check_vma=False (member 0's value is then returned)")


# ---- this process's members: one vmap over the blocks ---------------------------------
def _trace_member(f, name, out_specs, check, known, in_tree, avals, varying):
    """Trace `f` on one member's blocks (abstract values `avals`; `varying`: which differ
    between members) -> (closed, consts, out_tree, the split axis of each output)."""
    call = lambda *a: f(*a)
    call.__wrapped__ = f
    closed, consts, out_tree, _ = trace_program(call, known, in_tree, in_avals=avals)
    specs = _flat_specs(out_specs, out_tree, "out_specs", f)
    out_axes = [_split_axis(s, name, len(a.shape), f, "out_specs")
                for s, a in zip(specs, closed.out_avals)]
    if check:
        _check_replicated(f, closed, [False] * len(consts) + list(varying), out_axes, specs,
                          name)
    return closed, consts, out_tree, out_axes


def _run_in_process(f, mesh, in_specs, out_specs, check, args):
    name, k = mesh.axis_names[0], mesh.size
    flat, in_tree = flatten_args(tuple(args), f)
    in_axes = _in_axes(f, mesh, in_specs, flat, in_tree)
    known = [x if d is None else None for x, d in zip(flat, in_axes)]
    avals = [_block_aval(x, d, k) for x, d in zip(flat, in_axes)]
    with axis_env.bind_axis(name, k, vma=check, mesh=mesh):
        closed, consts, out_tree, out_axes = _trace_member(
            f, name, out_specs, check, known, in_tree, avals, [d is not None for d in in_axes])
    # member j's block of a split axis d is x[..., j*b:(j+1)*b, ...]: axis d becomes (k, b)
    blocks = [x if d is None else lax.reshape(x, _split_shape(x, d, k))
              for x, d in zip(flat, in_axes)]
    batched = vmap_jaxpr(closed, [None] * len(consts) + list(in_axes), k,
                         [0] * len(out_axes), axis_name=name)
    outs = core.eval_jaxpr(batched, *consts, *blocks)
    return tree_unflatten(out_tree, [_assemble(o, e) for o, e in zip(outs, out_axes)])


def _split_shape(x, d, k):
    s = core.get_aval(x).shape
    return s[:d] + (k, s[d] // k) + s[d + 1:]


def _assemble(o, e):
    """The members' blocks (stacked on axis 0) as one output: concatenated along axis `e`,
    or member 0's copy when the output is replicated (e is None)."""
    if e is None:
        return lax.index_in_dim(o, 0, 0, keepdims=False)
    o = moveaxis(o, 0, e)
    s = core.get_aval(o).shape
    return lax.reshape(o, s[:e] + (s[e] * s[e + 1],) + s[e + 2:])


# ---- MPI ranks: each rank computes its block inside one pmap ---------------------------
def _mpi_runner(f, mesh, in_specs, out_specs, check):
    """A `pmap` over the mesh's communicator whose program slices this rank's blocks, runs
    `f` on them and gathers every rank's output blocks (all_gather, tiled)."""
    name, k = mesh.axis_names[0], mesh.size

    def rank_program(*args):
        flat, in_tree = tree_flatten(args)
        in_axes = _in_axes(f, mesh, in_specs, flat, in_tree)
        r = lax.axis_index(name)
        blocks = [x if d is None else
                  lax.dynamic_slice_in_dim(x, r * (core.get_aval(x).shape[d] // k),
                                           core.get_aval(x).shape[d] // k, d)
                  for x, d in zip(flat, in_axes)]
        with axis_env.bind_axis(name, k, mesh.comm, vma=check, mesh=mesh):
            closed, consts, out_tree, out_axes = _trace_member(
                f, name, out_specs, check, [None] * len(blocks), in_tree,
                [core.get_aval(b) for b in blocks], [d is not None for d in in_axes])
        outs = core.eval_jaxpr(closed, *consts, *blocks)
        return tree_unflatten(out_tree, [o if e is None else
                                         lax.all_gather(o, name, axis=e, tiled=True)
                                         for o, e in zip(outs, out_axes)])
    rank_program.__wrapped__ = f
    return Pmapped(rank_program, name, mesh.comm, (), (), True, True, True)
