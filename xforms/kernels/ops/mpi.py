"""CPU rules for collectives bound to MPI ranks: numba-mpi calls inside the compiled kernel,
so a jitted pmap step never returns to Python to communicate.

numba-mpi reaches COMM_WORLD only; psum/pmax/pmin/all_gather/psum_scatter over another
communicator (the sub-communicators of `axis_index_groups`) call xforms/kernels/runtime/mpi_calls.py's
bindings instead; the other collectives are refused there (pmap over another communicator
runs eagerly through mpi4py).  A kernel that calls MPI holds ctypes pointers into the MPI
library and handles of this process's communicators, which Numba cannot keep in its disk
cache: the module is marked `NO_DISK_CACHE` and compiled once per process.

psum/pmax/pmin of several operands of one dtype travel in one packed message when they are
small (JAX users pass whole gradient pytrees to `pmean`).  A large operand is reduced in
place (MPI_IN_PLACE, xforms/kernels/runtime/mpi_calls.py) when the buffer planner handed its buffer to
the result: the operand is the kernel's own intermediate and nothing reads it afterwards
(the facts declare `inplace="each"`, xforms/kernels/plan/storage.py checks lifetimes).  Otherwise (a
kernel input, a value still live, an operand sharing its buffer with another operand) it is
reduced from its buffer into a fresh one: a functional program never sees an input
change.  Every call checks the MPI status.

    # the generated code for `lax.psum((g1, g2, big), "i")`, big dead afterwards
    _pk1 = np.empty(n1 + n2, np.float64); _pk1[0:n1] = G1.reshape(-1); ...
    _st = nm_allreduce(_pk1, _pk2, nm_SUM)
    C = BIG
    _st = mc_allreduce_inplace(C.reshape(-1), mc_op_SUM, mc_comm)
"""
import numpy as np

from xforms.core.facts import OP
from xforms.core.ir import Var
from xforms.primitives import collectives as C
from xforms.core.registry import ALL_PRIMITIVES

from ..runtime import mpi_calls
from ..cpu.numba.emit import OP_RULES, unsupported, dtype_str
from ..user_prims import NO_DISK_CACHE

PACK_MAX_ELEMENTS = 1 << 16      # operands this small are packed into one message
_OPS = {"sum": "SUM", "max": "MAX", "min": "MIN"}     # a collective's monoid (reduce_op)
_DTYPES = ("float64", "float32", "int64", "int32", "uint8")


def _start(em, eqn, any_comm=False):
    """Checks and module globals; `any_comm`: the rule can call xforms/kernels/runtime/mpi_calls.py for a
    communicator other than COMM_WORLD."""
    comm = eqn.params.get("comm")
    if comm is None or not (comm.is_world or any_comm and mpi_calls.available()):
        why = "" if not any_comm else f" ({mpi_calls.unavailable_reason()})"
        raise unsupported(eqn, f"compiled code reaches only MPI COMM_WORLD here{why} "
                           "(numba-mpi); pmap over another communicator runs with jit=False")
    for a in list(eqn.invars) + list(eqn.outvars):
        if np.dtype(a.aval.dtype).name not in _DTYPES:
            raise unsupported(eqn, f"MPI collectives in compiled code take {_DTYPES} "
                               f"(numba-mpi's datatypes), not {a.aval.dtype}")
    em.globals.setdefault("_nm", "__import__('numba_mpi')")
    em.globals.setdefault("__xforms_private__", repr(NO_DISK_CACHE))
    return comm


def _mc(em, name):
    """A function of xforms/kernels/runtime/mpi_calls.py."""
    em.globals.setdefault("_mc", "__import__('xforms.kernels.runtime.mpi_calls', fromlist=['_'])")
    return em._global(f"_mc.{name}", f"mc_{name}_")


def _mc_comm(em, comm):
    return em._global(str(mpi_calls.comm_handle(comm.comm)), "mc_comm_")


def _mc_op(em, name):
    return em._global(str(mpi_calls.op_handle(name)), f"mc_op_{name}_")


def _fn(em, name):
    return em._global(f"_nm.{name}", f"nm_{name}_")


def _check(em, call, what):
    st = em.fresh("st")
    em.line(f"{st} = {call}")
    with em.block(f"if {st} != 0:"):
        em.line(f"raise RuntimeError('{what} failed')")


def _flat_in(em, a):
    """A contiguous 1-d array holding operand `a` (a rank-0 operand gets a 1-array).  Every
    array of a CPU kernel is C-contiguous (parameters are typed so, buffers are allocated
    so), so this is a view, never a copy."""
    if a.aval.shape:
        return f"{em.atom(a)}.reshape(-1)"
    t = em.fresh("mpi_in")
    em.line(f"{t} = np.empty(1, {dtype_str(a.aval.dtype)})")
    em.line(f"{t}[0] = {em.atom(a)}")
    return t


def _out_buffer(em, v, eqn=None):
    """-> (1-d name to receive into, finisher) for output Var v.  Never a buffer of an
    operand of `eqn` (MPI forbids a send buffer that overlaps the receive buffer): where
    the planner gave v an operand's buffer for an in-place reduction that is not taken,
    v gets a fresh one."""
    if v.aval.shape:
        prev = em.plan.reuse.get(v)
        if eqn is not None and prev is not None and prev in eqn.invars:
            em.line(f"{em.A(v)} = np.empty({v.aval.shape!r}, {dtype_str(v.aval.dtype)})")
        else:
            em.alloc(v)
        return f"{em.A(v)}.reshape(-1)", lambda: None
    t = em.fresh("mpi_out")
    em.line(f"{t} = np.empty(1, {dtype_str(v.aval.dtype)})")
    return t, lambda: em.line(f"{em.s(v)} = {t}[0]")


def _reduce(em, eqn):
    comm = _start(em, eqn, any_comm=True)
    name = _OPS[eqn.prim.facts.reduce_op]
    if comm.is_world:
        nm_op, nm_allreduce = em._global(f"_nm.Operator.{name}", "nm_op_"), _fn(em, "allreduce")
        call = lambda src, dst: f"{nm_allreduce}({src}, {dst}, {nm_op})"   # noqa: E731
    else:
        mc, op, c = _mc(em, "allreduce"), _mc_op(em, name), _mc_comm(em, comm)
        call = lambda src, dst: f"{mc}({src}, {dst}, {op}, {c})"           # noqa: E731
    groups = {}
    for a, v in zip(eqn.invars, eqn.outvars):
        if name != "SUM" and np.dtype(a.aval.dtype).kind == "f":
            _ordered(em, eqn, a, v, call, name, comm)
            continue
        small = a.aval.size <= PACK_MAX_ELEMENTS
        groups.setdefault((np.dtype(a.aval.dtype), small), []).append((a, v))
    for (dt, small), pairs in groups.items():
        if small and len(pairs) > 1:
            _packed(em, pairs, dt, call)
            continue
        for a, v in pairs:
            if _in_place(em, eqn, a, v):
                em.alloc(v)                    # v = a's buffer (a dies here)
                _check(em, f"{_mc(em, 'allreduce_inplace')}({em.A(v)}.reshape(-1), "
                           f"{_mc_op(em, name)}, {_mc_comm(em, comm)})",
                       "MPI_Allreduce (in place)")
                continue
            src = _flat_in(em, a)
            dst, finish = _out_buffer(em, v, eqn)
            _check(em, call(src, dst), "MPI_Allreduce")
            finish()


def _ordered(em, eqn, a, v, call, name, comm):
    """A float pmax/pmin as JAX orders it (-0.0 < +0.0, NaN wins): MPI's MAX/MIN of the
    integer keys of xforms/primitives/collectives.py's `ordered_keys` (the eager tier's),
    printed here: the bits as a signed integer, the negatives' magnitude bits flipped, NaN
    the extreme key; the same map back.  (MPI's float MAX/MIN keep either zero of a tie
    and drop a NaN that comes first.)  In place where the planner gave v a's buffer: the
    keys overwrite it through an integer view."""
    dt = np.dtype(a.aval.dtype)
    it, n = f"np.int{8 * dt.itemsize}", max(a.aval.size, 1)
    top = int(np.iinfo(f"i{dt.itemsize}").max)
    nan_key = top if name == "MAX" else -top - 1
    j, b, f = em.fresh("j"), em.fresh("b"), em.fresh("f")

    def to_keys(src, bits, key):
        with em.block(f"for {j} in range({n}):"):
            em.line(f"{f} = {src}[{j}]")
            em.line(f"{b} = {bits}[{j}]")
            em.line(f"{key}[{j}] = {nan_key} if {f} != {f} else ({b} ^ {top} if {b} < 0 "
                    f"else {b})")

    def from_keys(key, dst, bits):
        with em.block(f"for {j} in range({n}):"):
            em.line(f"{b} = {key}[{j}]")
            em.line(f"{bits}[{j}] = {b} ^ {top} if {b} < 0 else {b}")
            with em.block(f"if {dst}[{j}] != {dst}[{j}]:"):
                em.line(f"{dst}[{j}] = np.nan")

    if _in_place(em, eqn, a, v) and mpi_calls.dtype_supported(np.dtype(it[3:])):
        em.alloc(v)                                        # v = a's buffer (a dies here)
        buf, keys = em.fresh("buf"), em.fresh("keys")
        em.line(f"{buf} = {em.A(v)}.reshape(-1)")
        em.line(f"{keys} = {buf}.view({it})")
        to_keys(buf, keys, keys)
        _check(em, f"{_mc(em, 'allreduce_inplace')}({keys}, {_mc_op(em, name)}, "
                   f"{_mc_comm(em, comm)})", "MPI_Allreduce (in place)")
        from_keys(keys, buf, keys)
        return
    src = _flat_in(em, a)
    key, got, bits = em.fresh("key"), em.fresh("got"), em.fresh("bits")
    em.line(f"{key} = np.empty({n}, {it})")
    em.line(f"{got} = np.empty({n}, {it})")
    em.line(f"{bits} = {src}.view({it})")
    to_keys(src, bits, key)
    _check(em, call(key, got), "MPI_Allreduce")
    dst, finish = _out_buffer(em, v, eqn)
    out_bits = em.fresh("bits")
    em.line(f"{out_bits} = {dst}.view({it})")
    from_keys(got, dst, out_bits)
    finish()


def _in_place(em, eqn, a, v):
    """Reduce operand `a` in place as result `v`?  Only when the planner gave v a's buffer
    (a is the kernel's own and dies here) and no other operand of the collective shares
    that buffer (the same Var twice, or a reshape view of it), which a later message of
    this collective would still read."""
    if not (isinstance(a, Var) and a.aval.shape and em.plan.reuse.get(v) is a):
        return False
    st = em.plan.storage.get(a)
    sharing = [b for b in eqn.invars if isinstance(b, Var) and em.plan.storage.get(b) is st]
    return (len(sharing) == 1 and mpi_calls.available()
            and mpi_calls.dtype_supported(a.aval.dtype))


def _packed(em, pairs, dt, call):
    total = sum(max(a.aval.size, 1) for a, _ in pairs)
    send, recv = em.fresh("pk"), em.fresh("pk")
    em.line(f"{send} = np.empty({total}, {dtype_str(dt)})")
    em.line(f"{recv} = np.empty({total}, {dtype_str(dt)})")
    off = 0
    for a, _ in pairs:
        n = max(a.aval.size, 1)
        rhs = f"{em.atom(a)}.reshape(-1)" if a.aval.shape else em.atom(a)
        em.line(f"{send}[{off}:{off + n}] = {rhs}")
        off += n
    _check(em, call(send, recv), "MPI_Allreduce")
    off = 0
    for a, v in pairs:
        n = max(a.aval.size, 1)
        if v.aval.shape:
            em.alloc(v)                        # may be a's buffer: a is packed already
            em.line(f"{em.A(v)}.reshape(-1)[:] = {recv}[{off}:{off + n}]")
        else:
            em.line(f"{em.s(v)} = {recv}[{off}]")
        off += n


def _all_gather(em, eqn):
    comm = _start(em, eqn, any_comm=True)
    (a,), (v,) = eqn.invars, eqn.outvars
    src = _flat_in(em, a)
    em.alloc(v)
    dst = f"{em.A(v)}.reshape(-1)"
    if comm.is_world:
        call = f"{_fn(em, 'allgather')}({src}, {dst}, {max(a.aval.size, 1)})"
    else:
        call = f"{_mc(em, 'allgather')}({src}, {dst}, {_mc_comm(em, comm)})"
    _check(em, call, "MPI_Allgather")


def _psum_scatter(em, eqn):
    # numba-mpi has no reduce-scatter: reduce everything, keep this rank's row
    comm = _start(em, eqn, any_comm=True)
    (a,), (v,) = eqn.invars, eqn.outvars
    tot = em.fresh("mpi_sum")
    em.line(f"{tot} = np.empty({a.aval.size}, {dtype_str(a.aval.dtype)})")
    n = max(v.aval.size, 1)
    if comm.is_world:
        _check(em, f"{_fn(em, 'allreduce')}({_flat_in(em, a)}, {tot}, "
                   f"{em._global('_nm.Operator.SUM', 'nm_op_')})", "MPI_Allreduce")
        row = f"{_fn(em, 'rank')}() * {n}"
    else:       # this process's rank in the sub-communicator never changes
        _check(em, f"{_mc(em, 'allreduce')}({_flat_in(em, a)}, {tot}, {_mc_op(em, 'SUM')}, "
                   f"{_mc_comm(em, comm)})", "MPI_Allreduce")
        row = f"{comm.rank * n}"
    if v.aval.shape:
        em.alloc(v)
        em.line(f"{em.A(v)}.reshape(-1)[:] = {tot}[{row}:{row} + {n}]")
    else:
        em.line(f"{em.s(v)} = {tot}[{row}]")


def _ppermute(em, eqn):
    _start(em, eqn)
    (a,), (v,) = eqn.invars, eqn.outvars
    size = eqn.params["comm"].size
    dst_of = dict(eqn.params["perm"])
    src_of = {d: s for s, d in eqn.params["perm"]}
    dsts = em._global(repr(tuple(dst_of.get(r, -1) for r in range(size))), "perm_dst_")
    srcs = em._global(repr(tuple(src_of.get(r, -1) for r in range(size))), "perm_src_")
    rank, d, s = em.fresh("rank"), em.fresh("dst"), em.fresh("src")
    em.line(f"{rank} = {_fn(em, 'rank')}()")
    em.line(f"{d} = {dsts}[{rank}]")
    em.line(f"{s} = {srcs}[{rank}]")
    src = _flat_in(em, a)
    dst, finish = _out_buffer(em, v)
    with em.block(f"if {d} >= 0 and {s} >= 0:"):
        _check(em, f"{_fn(em, 'sendrecv')}({src}, {d}, {dst}, {s})", "MPI_Sendrecv")
    with em.block("else:"):
        with em.block(f"if {d} >= 0:"):
            _check(em, f"{_fn(em, 'send')}({src}, {d})", "MPI_Send")
        with em.block(f"if {s} >= 0:"):
            _check(em, f"{_fn(em, 'recv')}({dst}, {s})", "MPI_Recv")
        with em.block("else:"):
            em.line(f"{dst}[:] = 0")
    finish()


def _sendrecv(em, eqn):
    _start(em, eqn)
    (a,), (v,) = eqn.invars, eqn.outvars
    src = _flat_in(em, a)
    dst, finish = _out_buffer(em, v)
    _check(em, f"{_fn(em, 'sendrecv')}({src}, {int(eqn.params['dest'])}, {dst}, "
               f"{int(eqn.params['source'])})", "MPI_Sendrecv")
    finish()


def _all_to_all(em, eqn):
    # numba-mpi has no MPI_Alltoall: n-1 pairwise exchanges in the shift order
    # (send to rank+s, receive from rank-s), which cannot deadlock
    _start(em, eqn)
    (a,), (v,) = eqn.invars, eqn.outvars
    n = eqn.params["axis_size"]
    chunk = a.aval.size // n
    x = _flat_in(em, a)
    em.alloc(v)
    out = f"{em.A(v)}.reshape(-1)"
    rank, s, dst, src = em.fresh("rank"), em.fresh("s"), em.fresh("dst"), em.fresh("src")
    em.line(f"{rank} = {_fn(em, 'rank')}()")
    em.line(f"{out}[{rank} * {chunk}:({rank} + 1) * {chunk}] = "
            f"{x}[{rank} * {chunk}:({rank} + 1) * {chunk}]")
    with em.counted_loop(s, n - 1):
        em.line(f"{dst} = ({rank} + {s} + 1) % {n}")
        em.line(f"{src} = ({rank} - {s} - 1 + {n}) % {n}")
        recv = em.fresh("recv")
        em.line(f"{recv} = np.empty({chunk}, {dtype_str(a.aval.dtype)})")
        _check(em, f"{_fn(em, 'sendrecv')}({x}[{dst} * {chunk}:({dst} + 1) * {chunk}].copy(), "
                   f"{dst}, {recv}, {src})", "MPI_Sendrecv")
        em.line(f"{out}[{src} * {chunk}:({src} + 1) * {chunk}] = {recv}")


def _axis_index(em, eqn):
    _start(em, eqn)
    em.line(f"{em.s(eqn.outvars[0])} = np.int32({_fn(em, 'rank')}())")


for _p in ALL_PRIMITIVES:           # the reducing collectives: psum, pmax, pmin
    if _p.facts.kind == OP and _p.facts.reduce_op in _OPS:
        OP_RULES[_p] = _reduce
OP_RULES[C.all_gather_p.name] = _all_gather
OP_RULES[C.psum_scatter_p.name] = _psum_scatter
OP_RULES[C.ppermute_p.name] = _ppermute
OP_RULES[C.axis_index_p.name] = _axis_index
OP_RULES[C.sendrecv_p.name] = _sendrecv
OP_RULES[C.all_to_all_p.name] = _all_to_all
