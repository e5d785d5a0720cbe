"""Collectives over a named axis: psum, pmax, pmin, all_gather, psum_scatter, ppermute,
all_to_all, axis_index (JAX's semantics; `xforms/lax/collectives.py` holds the wrappers).

Every collective carries `axes` (the axis names it reduces over) and `comm` (an `MpiComm`
when the axis is bound by `pmap` to MPI ranks, None when `vmap(axis_name=...)` binds it).
A vmap axis never reaches evaluation: the vmap interpreter calls the primitive's *named*
batching rule (`named_vmap_rules`), which rewrites the collective into ordinary array
operations over the batch axis.  An MPI axis is evaluated by mpi4py eagerly and by
numba-mpi inside compiled CPU code (xforms/kernels/ops/mpi.py).

The primitive forms are canonical (gather and scatter along axis 0, untiled); the lax
wrappers move axes and reshape around them, so lowering and AD rules stay small.

AD follows JAX's pmap: psum, all_gather, psum_scatter, ppermute and all_to_all are linear;
psum is its own transpose (each member holds its own cotangent of the replicated sum),
all_gather <-> psum_scatter, ppermute <-> the inverse permutation, all_to_all <-> itself.
pmax/pmin share a tangent evenly among the members attaining the extremum, like
reduce_max.

    >>> xf.vmap(lambda x: lax.psum(x, "i"), axis_name="i")(xnp.arange(3.0))
    Array([3., 3., 3.])
"""
import numpy as np

from ..core import trace as core
from ..core.avals import ShapedArray
from ..core.trace import abstract_eval_rules, impl_rules
from ..core.facts import OP, declare
from ..transforms.jvp import Zero, deflinear, defjvp_zero, jvp_rules, instantiate
from ..transforms.transpose import transpose_rules
from ..transforms.vmap import moveaxis, named_vmap_rules, vmap_rules
from ..core.registry import exempt, primitive
from .elementwise import convert_element_type, div, eq, mul, select_n
from .reductions import reduce_max, reduce_min, reduce_sum
from .structural import broadcast_in_dim, concatenate, full, reshape, slice as lax_slice


def _no_axis(prim):
    prim.trace_time_eval = False
    def impl(*xs, axes, comm, **params):
        if comm is None:
            raise NameError(f"{prim.name} over axis {axes!r} evaluated outside the vmap or "
                            "pmap that binds it")
        return MPI_IMPLS[prim](comm, *xs, **params)
    impl_rules[prim] = impl


def _rest(axes, name):
    return tuple(a for a in axes if a != name)


# ---- psum / pmax / pmin: n operands, n results of the same shapes ----------------------------
def _def_reducer(name, reduce, scale, monoid):
    p = primitive(name, multiple_results=True)
    abstract_eval_rules[p] = lambda *avals, axes, comm: list(avals)
    _no_axis(p)

    def named(args, dims, size, *, axes, comm, name_):
        outs = []
        for x, d in zip(args, dims):
            if d is None:
                outs.append(scale(x, size))
            else:
                outs.append(reduce(x, (d,)))
        rest = _rest(axes, name_)
        if rest:
            outs = p.bind(*outs, axes=rest, comm=comm)
        return outs, [None] * len(outs)
    named_vmap_rules[p] = named

    def other_axis(args, dims, *, axes, comm):       # elementwise across the batch
        return p.bind(*args, axes=axes, comm=comm), list(dims)
    vmap_rules[p] = other_axis
    # result i may take operand i's buffer when the operand dies here: compiled code then
    # reduces in place (xforms/kernels/ops/mpi.py)
    declare(p, OP, inplace="each", reduce_op=monoid)   # MPI spells the monoid
    return p


def _times(x, n):
    dt = core.get_aval(x).dtype
    return x if dt == np.bool_ else mul(x, np.asarray(n, dt)[()])


psum_p = _def_reducer("psum", reduce_sum, _times, "sum")
pmax_p = _def_reducer("pmax", reduce_max, lambda x, n: x, "max")
pmin_p = _def_reducer("pmin", reduce_min, lambda x, n: x, "min")
deflinear(psum_p)
transpose_rules[psum_p] = lambda cts, *xs, axes, comm: [
    None if isinstance(c, Zero) else c for c in
    psum_p.bind(*[instantiate(c) for c in cts], axes=axes, comm=comm)]


def _chooser_jvp(p):
    def rule(primals, tangents, *, axes, comm):
        outs = p.bind(*primals, axes=axes, comm=comm)
        t_outs = []
        for x, t, m in zip(primals, tangents, outs):
            if isinstance(t, Zero):
                t_outs.append(Zero(t.aval))
                continue
            hit = eq(x, m)
            picked = select_n(hit, full((), 0, core.get_aval(t).dtype), t)
            count = convert_element_type(hit, core.get_aval(t).dtype)
            # two collectives: a joint one would make the count look linear to transpose
            tot, = psum_p.bind(picked, axes=axes, comm=comm)
            cnt, = psum_p.bind(count, axes=axes, comm=comm)
            t_outs.append(div(tot, cnt))
        return outs, t_outs
    jvp_rules[p] = rule


_chooser_jvp(pmax_p)
_chooser_jvp(pmin_p)


# ---- all_gather (new axis 0) and psum_scatter (over axis 0) ---------------------------------
all_gather_p = primitive("all_gather")
psum_scatter_p = primitive("psum_scatter")


def _gather_aval(x, *, axes, comm, axis_size):
    return [x.update(shape=(axis_size,) + x.shape, weak_type=False)]


def _scatter_aval(x, *, axes, comm, axis_size):
    if not x.shape or x.shape[0] != axis_size:
        raise TypeError(f"psum_scatter: the scattered axis must have the axis size "
                        f"{axis_size}, got operand {x.str_short()}")
    return [x.update(shape=x.shape[1:], weak_type=False)]


abstract_eval_rules[all_gather_p] = _gather_aval
abstract_eval_rules[psum_scatter_p] = _scatter_aval
_no_axis(all_gather_p)
_no_axis(psum_scatter_p)
deflinear(all_gather_p)
deflinear(psum_scatter_p)
transpose_rules[all_gather_p] = lambda ct, x, **params: [
    None if isinstance(ct, Zero) else psum_scatter_p.bind(ct, **params)]
transpose_rules[psum_scatter_p] = lambda ct, x, **params: [
    None if isinstance(ct, Zero) else all_gather_p.bind(ct, **params)]


def _gather_named(args, dims, size, *, axes, comm, axis_size, name_):
    (x,), (d,) = args, dims
    if d is None:
        aval = core.get_aval(x)
        return [broadcast_in_dim(x, (size,) + aval.shape, tuple(range(1, aval.ndim + 1)))], \
            [None]
    return [moveaxis(x, d, 0)], [None]


def _scatter_named(args, dims, size, *, axes, comm, axis_size, name_):
    (x,), (d,) = args, dims
    y = _times(x, size) if d is None else reduce_sum(x, (d,))
    return [y], [0]          # member k holds row k of the summed array


def _gather_other(args, dims, **params):
    x = moveaxis(args[0], dims[0], 0)
    y = all_gather_p.bind(x, **params)        # (n, batch, ...)
    return [y], [1]


def _scatter_other(args, dims, **params):
    x = moveaxis(args[0], dims[0], 1)        # keep the scattered axis first
    return [psum_scatter_p.bind(x, **params)], [0]


named_vmap_rules[all_gather_p] = _gather_named
named_vmap_rules[psum_scatter_p] = _scatter_named
vmap_rules[all_gather_p] = _gather_other
vmap_rules[psum_scatter_p] = _scatter_other


# ---- ppermute: member dst receives member src's value; others receive zeros ------------------
ppermute_p = primitive("ppermute")
abstract_eval_rules[ppermute_p] = lambda x, *, axes, comm, perm: [x]
_no_axis(ppermute_p)
deflinear(ppermute_p)
transpose_rules[ppermute_p] = lambda ct, x, *, axes, comm, perm: [
    None if isinstance(ct, Zero) else
    ppermute_p.bind(ct, axes=axes, comm=comm, perm=tuple((d, s) for s, d in perm))]


def _ppermute_named(args, dims, size, *, axes, comm, perm, name_):
    (x,), (d,) = args, dims
    aval = core.get_aval(x)
    if d is None:
        x = broadcast_in_dim(x, (size,) + aval.shape, tuple(range(1, aval.ndim + 1)))
        d, aval = 0, core.get_aval(x)
    src_of = {dst: src for src, dst in perm}
    rows = []
    for m in range(size):
        if m in src_of:
            s = src_of[m]
            start = [0] * aval.ndim
            limit = list(aval.shape)
            start[d], limit[d] = s, s + 1
            rows.append(lax_slice(x, tuple(start), tuple(limit)))
        else:
            shape = list(aval.shape)
            shape[d] = 1
            rows.append(full(tuple(shape), 0, aval.dtype))
    return [concatenate(rows, d)], [d]


named_vmap_rules[ppermute_p] = _ppermute_named
vmap_rules[ppermute_p] = lambda args, dims, **params: ([ppermute_p.bind(args[0], **params)],
                                                       [dims[0]])


# ---- all_to_all: chunk k of member m goes to member k, stacked by source at axis 0 ------------
all_to_all_p = primitive("all_to_all")


def _a2a_aval(x, *, axes, comm, axis_size):
    if not x.shape or x.shape[0] != axis_size:
        raise TypeError(f"all_to_all: the split axis must have the axis size {axis_size}, "
                        f"got operand {x.str_short()}")
    return [x.update(weak_type=False)]


abstract_eval_rules[all_to_all_p] = _a2a_aval
_no_axis(all_to_all_p)
deflinear(all_to_all_p)
transpose_rules[all_to_all_p] = lambda ct, x, **params: [
    None if isinstance(ct, Zero) else all_to_all_p.bind(ct, **params)]


def _a2a_named(args, dims, size, *, axes, comm, axis_size, name_):
    # out[m][k] = x[k][m]: swap the batch axis with the split axis (axis 0 of each member)
    (x,), (d,) = args, dims
    if d is None:
        aval = core.get_aval(x)
        x = broadcast_in_dim(x, (size,) + aval.shape, tuple(range(1, aval.ndim + 1)))
        d = 0
    x = moveaxis(x, d, 0)                    # (member, split, ...)
    return [moveaxis(x, 1, 0)], [0]


named_vmap_rules[all_to_all_p] = _a2a_named
vmap_rules[all_to_all_p] = lambda args, dims, **params: (
    [all_to_all_p.bind(moveaxis(args[0], dims[0], 1), **params)], [1])


# ---- axis_index ---------------------------------------------------------------------------
axis_index_p = primitive("axis_index")
abstract_eval_rules[axis_index_p] = lambda *, axes, comm: [ShapedArray((), np.int32)]
_no_axis(axis_index_p)
defjvp_zero(axis_index_p)
exempt(axis_index_p, "vmap", "has no operands, so it is never batched; a vmap binding its "
       "axis rewrites it with the named rule")


def _index_named(args, dims, size, *, axes, comm, name_):
    from .structural import iota
    return [iota(np.int32, (size,), 0)], [0]


named_vmap_rules[axis_index_p] = _index_named
for _p in (pmax_p, pmin_p):
    exempt(_p, "transpose", "not linear")


# ---- sendrecv: this rank sends x to `dest` and receives from `source` (xforms.mpi) ---------
sendrecv_p = primitive("sendrecv")
sendrecv_p.trace_time_eval = False
abstract_eval_rules[sendrecv_p] = lambda x, *, comm, source, dest: [x.update(weak_type=False)]
impl_rules[sendrecv_p] = lambda x, *, comm, source, dest: _mpi_sendrecv(comm, x, source, dest)
deflinear(sendrecv_p)
transpose_rules[sendrecv_p] = lambda ct, x, *, comm, source, dest: [
    None if isinstance(ct, Zero) else sendrecv_p.bind(ct, comm=comm, source=dest, dest=source)]
vmap_rules[sendrecv_p] = lambda args, dims, **params: ([sendrecv_p.bind(args[0], **params)],
                                                       [dims[0]])


def _contig(x):
    """x as a C-contiguous array, rank 0 kept (np.ascontiguousarray makes it 1-d)."""
    return np.asarray(x, order="C")


def _mpi_sendrecv(comm, x, source, dest):
    x = _contig(x)
    out = np.empty_like(x)
    comm.comm.Sendrecv(x, dest=dest, recvbuf=out, source=source)
    return [out]


# ---- MPI implementations (eager; compiled code uses xforms/kernels/ops/mpi.py) ------------------
def _mpi_reduce(op_name):
    def impl(comm, *xs):
        MPI = __import__("mpi4py.MPI", fromlist=["MPI"])
        op = getattr(MPI, op_name)
        outs = []
        for x in xs:
            x = _contig(x)
            if op_name != "SUM" and x.dtype.kind == "f":     # JAX's order of zeros and NaN
                key = ordered_keys(x, op_name == "MAX")
                got = np.empty_like(key)
                comm.comm.Allreduce(key, got, op=op)
                outs.append(from_ordered_keys(got, x.dtype))
                continue
            out = np.empty_like(x)
            comm.comm.Allreduce(x, out, op=op)
            outs.append(out)
        return outs
    return impl


def ordered_keys(x, is_max):
    """Integers in the order pmax/pmin must follow (-0.0 < +0.0; NaN wins either): a
    float's bits as a signed integer, the negatives' magnitude bits flipped; NaN the
    largest key for max, the smallest for min.  MPI's MAX/MIN of floats keep either zero of
    a tie and lose NaN to whichever operand comes second; of these keys they give JAX's
    answer.  The compiled tier prints the same (xforms/kernels/ops/mpi.py).

        >>> ordered_keys(np.array([-0.0, 0.0, -1.0]), True)     # [-1, 0, -4607182418800017409]
    """
    it = np.dtype(f"i{x.dtype.itemsize}")
    bits = x.view(it)
    key = np.where(bits < 0, bits ^ np.iinfo(it).max, bits)
    key[np.isnan(x)] = np.iinfo(it).max if is_max else np.iinfo(it).min
    return key


def from_ordered_keys(key, dtype):
    """The floats of `ordered_keys` (the map is its own inverse); NaN as NumPy's (+) NaN."""
    out = np.where(key < 0, key ^ np.iinfo(key.dtype).max, key).view(dtype)
    out[np.isnan(out)] = np.nan
    return out


def _mpi_all_gather(comm, x, *, axis_size):
    x = _contig(x)
    out = np.empty((axis_size,) + x.shape, x.dtype)
    comm.comm.Allgather(x, out)
    return [out]


def _mpi_psum_scatter(comm, x, *, axis_size):
    x = _contig(x)
    out = np.empty(x.shape[1:], x.dtype)
    comm.comm.Reduce_scatter_block(x, out)
    return [out]


def _mpi_ppermute(comm, x, *, perm):
    x = _contig(x)
    rank = comm.rank
    dst = next((d for s, d in perm if s == rank), None)
    src = next((s for s, d in perm if d == rank), None)
    out = np.zeros_like(x)
    if dst is not None and src is not None:
        comm.comm.Sendrecv(x, dest=dst, recvbuf=out, source=src)
    elif dst is not None:
        comm.comm.Send(x, dest=dst)
    elif src is not None:
        comm.comm.Recv(out, source=src)
    return [out]


def _mpi_all_to_all(comm, x, *, axis_size):
    x = _contig(x)
    out = np.empty_like(x)
    comm.comm.Alltoall(x, out)
    return [out]


MPI_IMPLS = {
    psum_p: _mpi_reduce("SUM"), pmax_p: _mpi_reduce("MAX"), pmin_p: _mpi_reduce("MIN"),
    all_gather_p: _mpi_all_gather, psum_scatter_p: _mpi_psum_scatter,
    ppermute_p: _mpi_ppermute, all_to_all_p: _mpi_all_to_all,
    axis_index_p: lambda comm: [np.int32(comm.rank)],
}
COLLECTIVES = frozenset(MPI_IMPLS) | {sendrecv_p}
for _p in COLLECTIVES:
    exempt(_p, "cuda", "MPI collectives run on the CPU (numba-mpi); a vmap axis never reaches "
           "a backend (the vmap rewrites it into array operations)")
