"""CUDA rules for control flow (cond, while, for_loop, scan; semantics in
xforms/primitives/control/control_flow.py).  Two lowerings, chosen per equation:

1. **Inside one kernel** when the control flow is *lane-local*: every array in its
   sub-programs has one shape S (the lanes) and every equation is elementwise over S (or
   works on scalars shared by all lanes).  Each thread then runs the whole loop or branch
   for its lane in registers: one launch however many iterations.  Scalar loops are the
   case S = () (one thread).  A vmapped `while_loop` is lane-local too: its predicate is
   `reduce_or` of a per-lane predicate and its body freezes finished lanes with
   `select_n(pred, old, new)` (checked structurally), so a lane may stop as soon as its
   own predicate is false.

        for _t in range(cuda.grid(1), 1024, cuda.gridsize(1)):   # one lane per thread
            w1_a = A[_t]
            while True:
                w2_c = w1_a < 10.0                                # the lane's predicate
                if not w2_c:
                    break
                ...

2. **On the host** otherwise: the sub-programs' kernels are launched from a Python loop or
   branch in the host function.  The host waits only for what it must know: a `while`
   predicate or a `cond` index computed on the device (a one-element copy back).  A loop's
   host text is then run by one kernel where block_loop.py can (a stencil loop: one launch).
"""
import re

import numpy as np

from xforms.core.facts import CONTROL
from xforms.core.ir import Literal, Var, split as _split

from ...codegen import dtype_str, lit
from ... import user_prims
from ...loops.control_print import ControlPrinter, register
from ...prepare.fusion_classes import VIEWS, is_elementwise
from ...plan.plan import subjaxprs
from . import block_loop
from .scan_rows import ScanRows
from .emit import CONTROL_RULES, SUPPORTED_DTYPES, KernelBuilder, cdiv, decompose, scalar_expr


# =============================================================================================
# 1. lane-local control flow: one kernel
# =============================================================================================
class _NotLocal(Exception):
    pass


def _shape_of(a):
    return tuple(a.aval.shape)


class _LaneCheck:
    """Finds the lane shape S of a control equation, or raises _NotLocal."""

    def __init__(self):
        self.S = None

    def shape(self, shp):
        shp = tuple(shp)
        if not shp:
            return
        if self.S is None:
            self.S = shp
        elif self.S != shp:
            raise _NotLocal(f"shapes {self.S} and {shp}")

    def dtype(self, a):
        if np.dtype(a.aval.dtype) not in SUPPORTED_DTYPES:
            raise _NotLocal("dtype")

    def jaxpr(self, jaxpr, consts):
        for c in consts:
            if np.ndim(c):
                raise _NotLocal("array constant")
        for v in list(jaxpr.invars) + list(jaxpr.constvars):
            self.dtype(v)
            self.shape(v.aval.shape)
        for e in jaxpr.eqns:
            self.eqn(e, jaxpr)

    def eqn(self, e, jaxpr, top=False):
        name = e.prim.name
        for a in list(e.invars) + list(e.outvars):
            self.dtype(a)
        if is_elementwise(e):             # built-in or user (xforms/kernels/user_prims.py)
            for a in list(e.invars) + list(e.outvars):
                self.shape(a.aval.shape)
            return
        if _lane_view(e):
            self.shape(e.outvars[0].aval.shape)
            return
        if (e.prim.facts.reduce_op == "or" and e is jaxpr.eqns[-1]
                and getattr(self, "_cond", None) is jaxpr):
            x = e.invars[0]
            self.shape(x.aval.shape)
            if tuple(sorted(e.params["axes"])) != tuple(range(len(x.aval.shape))):
                raise _NotLocal("partial reduce_or")
            return
        if e.prim.facts.kind == CONTROL:
            self.control(e, top=top)
            return
        raise _NotLocal(name)

    def control(self, e, top=True):
        name, p = e.prim.name, e.params
        if name == "scan":
            if not top:
                raise _NotLocal("nested scan")
            consts, carry, xs = _split(e.invars, p["num_consts"], p["num_carry"])
            for a in consts + carry:
                self.shape(a.aval.shape)
            for x in xs:
                self.shape(x.aval.shape[1:])
            for y in e.outvars[p["num_carry"]:]:
                self.shape(y.aval.shape[1:])
            self.jaxpr(p["jaxpr"].jaxpr, p["jaxpr"].consts)
            return
        for a in list(e.invars) + list(e.outvars):
            self.shape(a.aval.shape)
        if name == "cond":
            if e.invars[0].aval.shape:
                raise _NotLocal("batched index")
            for b in p["branches"]:
                self.jaxpr(b.jaxpr, b.consts)
        elif name == "for_loop":
            self.jaxpr(p["body_jaxpr"].jaxpr, p["body_jaxpr"].consts)
        elif name == "while":
            cj = p["cond_jaxpr"]
            prev, self._cond = getattr(self, "_cond", None), cj.jaxpr
            self.jaxpr(cj.jaxpr, cj.consts)
            self._cond = prev
            self.jaxpr(p["body_jaxpr"].jaxpr, p["body_jaxpr"].consts)
            if _lane_pred(cj.jaxpr) is not None and not _frozen(e):
                raise _NotLocal("a batched predicate without frozen lanes")
        else:
            raise _NotLocal(name)


def _lane_view(e):
    """A view equation that keeps every lane's element in place: its operand is a scalar
    (broadcast to the lanes) or the view is a no-op (its facts' `noop`)."""
    noop = e.prim.facts.noop
    return e.prim in VIEWS and noop is not None and (not e.invars[0].aval.shape or noop(e))


def lane_shape(step):
    """The lane shape S if the control step can run inside one kernel, else None."""
    chk = _LaneCheck()
    try:
        chk.control(_prepared(step), top=True)
    except _NotLocal:
        return None
    return chk.S or ()


def is_lane_local(eqn):
    """Can control equation `eqn` (sub-programs as traced) run inside one kernel?"""
    try:
        _LaneCheck().control(eqn, top=True)
    except _NotLocal:
        return False
    return True


def _prepared(step):
    """The control equation with its sub-jaxprs replaced by the planned (prepared) ones,
    whose custom rules are inlined and dead code removed."""
    eqn = step.eqn
    params = dict(eqn.params)
    for (k, i, _), plan in zip(subjaxprs(eqn), step.subplans):
        from xforms.core.ir import ClosedJaxpr
        c = ClosedJaxpr(plan.jaxpr, plan.consts)
        if i is None:
            params[k] = c
        else:
            lst = list(params[k])
            lst[i] = c
            params[k] = tuple(lst)
    return eqn.replace(params=params)


def _lane_pred(cond_jaxpr):
    """The per-lane predicate Var when the cond is reduce_or over all lanes, else None."""
    if not cond_jaxpr.eqns:
        return None
    last = cond_jaxpr.eqns[-1]
    if last.prim.facts.reduce_op == "or" and last.outvars[0] is cond_jaxpr.outvars[0] and \
            isinstance(last.invars[0], Var) and last.invars[0].aval.shape:
        return last.invars[0]
    return None


def _key(v, producers, inmap, memo):
    """A structural key of value v: equal keys compute equal values."""
    if isinstance(v, Literal):
        return ("lit", np.dtype(v.aval.dtype).str, repr(np.asarray(v.val).item()))
    if v in inmap:
        return inmap[v]
    if v in memo:
        return memo[v]
    e = producers.get(v)
    if e is None:
        return ("free", id(v))
    params = tuple(sorted((k, repr(x)) for k, x in e.params.items()))
    k = (e.prim.name, params, tuple(_key(a, producers, inmap, memo) for a in e.invars),
         e.outvars.index(v))
    memo[v] = k
    return k


def _outer(a):
    return ("op", id(a)) if isinstance(a, Var) else ("lit", repr(a.val))


def _frozen(e):
    """A while whose predicate is reduce_or of per-lane P: does its body keep a lane's carry
    unchanged where P is false (`select_n(P', old, new)` with P' computing P)?"""
    p = e.params
    cj, bj = p["cond_jaxpr"].jaxpr, p["body_jaxpr"].jaxpr
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cc, bc, carry = _split(e.invars, ncc, nbc)
    P = _lane_pred(cj)
    cin = {v: _outer(a) for v, a in zip(cj.invars[:ncc], cc)}
    cin.update({v: ("carry", k) for k, v in enumerate(cj.invars[ncc:])})
    bin_ = {v: _outer(a) for v, a in zip(bj.invars[:nbc], bc)}
    bin_.update({v: ("carry", k) for k, v in enumerate(bj.invars[nbc:])})
    cprod = {v: q for q in cj.eqns for v in q.outvars}
    bprod = {v: q for q in bj.eqns for v in q.outvars}
    want = _key(P, cprod, cin, {})
    bmemo = {}
    for k, out in enumerate(bj.outvars):
        if not out.aval.shape:
            return False
        q = bprod.get(out)
        if q is None or q.prim.name != "select_n" or len(q.invars) != 3:
            return False
        c, old, _ = q.invars
        if old is not bj.invars[nbc + k] or _key(c, bprod, bin_, bmemo) != want:
            return False
    return True


class _Lane:
    """Emits sub-jaxprs as scalar code for one lane inside a kernel."""

    def __init__(self, em, kb, lane_idx, size):
        self.em, self.kb, self.idx, self.size = em, kb, lane_idx, size

    def expr(self, env, a):
        if isinstance(a, Literal):
            return lit(a.val, a.aval.dtype)
        return env[a]

    def jaxpr(self, closed, args, kind):
        em, kb = self.em, self.kb
        jaxpr = closed.jaxpr
        em.bind_names(jaxpr, em.scope_prefix(kind))
        env = {}
        for v, c in zip(jaxpr.constvars, closed.consts):
            env[v] = lit(np.asarray(c)[()], v.aval.dtype)
        for v, a in zip(jaxpr.invars, args, strict=True):
            kb.line(f"{em.s(v)} = {a}")
            env[v] = em.s(v)
        skip = _lane_pred(jaxpr)
        for e in jaxpr.eqns:
            if skip is not None and e is jaxpr.eqns[-1]:
                env[e.outvars[0]] = env[skip]      # the lane's own predicate
                continue
            self.eqn(e, env)
        return [self.expr(env, v) for v in jaxpr.outvars]

    def eqn(self, e, env):
        em, kb = self.em, self.kb
        name = e.prim.name
        kb.comment(e)
        args = [self.expr(env, a) for a in e.invars]
        if user_prims.is_elementwise(e):
            expr = user_prims.scalar_call(em, e, args, "cuda")
        elif is_elementwise(e):
            expr = scalar_expr(e, args, self.idx)
        elif _lane_view(e):
            expr = args[0]
        else:
            outs = getattr(self, "_" + name)(e, args)
            for v, o in zip(e.outvars, outs):
                kb.line(f"{em.s(v)} = {o}")
                env[v] = em.s(v)
            return
        kb.line(f"{em.s(e.outvars[0])} = {expr}")
        env[e.outvars[0]] = em.s(e.outvars[0])

    def _carries(self, outs, inits):
        names = [self.em.fresh("c") for _ in outs]
        for n, a in zip(names, inits):
            self.kb.line(f"{n} = {a}")
        return names

    def _assign(self, names, exprs):
        if names:
            self.kb.line(f"{', '.join(names)} = {', '.join(exprs)}")

    def _while(self, e, args):
        p = e.params
        cc, bc, carry = _split(args, p["cond_nconsts"], p["body_nconsts"])
        c = self._carries(e.outvars, carry)
        with self.kb.block("while True:"):
            (pred,) = self.jaxpr(p["cond_jaxpr"], cc + c, "w")
            with self.kb.block(f"if not {pred}:"):
                self.kb.line("break")
            self._assign(c, self.jaxpr(p["body_jaxpr"], bc + c, "w"))
        return c

    def _for_loop(self, e, args):
        p = e.params
        n, consts, carry = _split(args, 1, p["num_consts"])
        c = self._carries(e.outvars, carry)
        i = self.em.fresh("i")
        rng = f"range({n[0]} - 1, -1, -1)" if p["reverse"] else f"range({n[0]})"
        with self.kb.block(f"for {i} in {rng}:"):
            self._assign(c, self.jaxpr(p["body_jaxpr"], [f"np.int64({i})"] + consts + c, "f"))
        return c

    def _cond(self, e, args):
        index, *ops = args
        branches = e.params["branches"]
        outs = [self.em.fresh("r") for _ in e.outvars]
        if len(branches) == 1:
            self._assign(outs, self.jaxpr(branches[0], ops, "c"))
            return outs
        k = self.em.fresh("k")
        self.kb.line(f"{k} = min(max(np.int64({index}), 0), {len(branches) - 1})")
        for b, br in enumerate(branches):
            head = "else:" if b == len(branches) - 1 else \
                f"{'if' if b == 0 else 'elif'} {k} == {b}:"
            with self.kb.block(head):
                self._assign(outs, self.jaxpr(br, ops, "c"))
        return outs


def _lane_kernel(em, step, S):
    """The whole control equation in one kernel, one lane per thread."""
    e = _prepared(step)
    name = e.prim.name
    size = int(np.prod(S, dtype=np.int64)) if S else 1
    for v in e.outvars:
        em.alloc(v)
    what = (f"{name}, lane-local: one {'loop' if name != 'cond' else 'branch'} per thread "
            f"over {size} lane{'s' if size != 1 else ''}")
    kb = KernelBuilder(em, what)
    idx = [f"i{d}" for d in range(len(S))]
    lane = _Lane(em, kb, idx, size)

    def operand(a):
        if isinstance(a, Literal):
            return lit(a.val, a.aval.dtype)
        if a.aval.shape:
            return f"{kb.arr(a)}[_t]"
        return kb.scalar(a)

    with kb.block(f"for _t in range(cuda.grid(1), {size}, cuda.gridsize(1)):"):
        decompose(kb, "_t", S, idx)
        if name == "scan":
            outs = _lane_scan(em, kb, lane, e, operand, size)
        else:
            args = [operand(a) for a in e.invars]
            outs = getattr(lane, "_" + name)(e, args)
        for v, o in zip(e.outvars, outs):
            if o is None:                 # a scan's ys: written inside the loop
                continue
            if v.aval.shape:
                kb.line(f"{kb.arr(v)}[_t] = {o}")
            else:
                with kb.block("if _t == 0:"):
                    kb.line(f"{kb.arr(v)}[0] = {o}")
    T = em.spec.block
    kb.launch(max(1, min(cdiv(size, T), em.spec.max_blocks)), T if size > 1 else 1)


def _lane_scan(em, kb, lane, e, operand, size):
    p = e.params
    nc, nk = p["num_consts"], p["num_carry"]
    consts, carry, xs = _split(e.invars, nc, nk)
    c = lane._carries(e.outvars[:nk], [operand(a) for a in carry])
    ys = e.outvars[nk:]
    i = em.fresh("i")
    n = p["length"]
    rng = f"range({n - 1}, -1, -1)" if p["reverse"] else f"range({n})"
    with kb.block(f"for {i} in {rng}:"):
        xe = [f"{kb.arr(x)}[{i} * {size} + _t]" if len(x.aval.shape) > 1 else
              f"{kb.arr(x)}[{i}]" for x in xs]
        outs = lane.jaxpr(p["jaxpr"], [operand(a) for a in consts] + c + xe, "s")
        lane._assign(c, outs[:nk])
        for y, o in zip(ys, outs[nk:]):
            if len(y.aval.shape) > 1:
                kb.line(f"{kb.arr(y)}[{i} * {size} + _t] = {o}")
            else:
                with kb.block("if _t == 0:"):
                    kb.line(f"{kb.arr(y)}[{i}] = {o}")
    return c + [None] * len(ys)


# =============================================================================================
# 2. host-side control flow around launches
# =============================================================================================
def emit_sub(em, plan, args, kind):
    """Emit a sub-program in the host code with its inputs bound to `args` ((expression,
    on_device) pairs); -> (expression, on_device) of its outputs.  Outputs that are inputs,
    constants or duplicates are copied, so a carry never shares a buffer with another."""
    em.bind_names(plan.jaxpr, em.scope_prefix(kind))
    add_consts(em, plan)
    for v, (a, dev) in zip(plan.jaxpr.invars, args, strict=True):
        em.rebind(v)
        if v.aval.shape or dev:
            em.loc[v] = "dev"
            em.line(f"{em.A(v)} = {a}")
        else:
            em.loc[v] = "host"
            em.line(f"{em.s(v)} = {a}")
        em.bound.add(v)
    em.emit_plan(plan)
    return output_exprs(em, plan)


def add_consts(em, plan):
    for v, c in zip(plan.jaxpr.constvars, plan.consts):
        if np.ndim(c):
            em.loc.pop(v, None)
            c = np.asarray(c)
            em.const_params.append((em.A(v), c))
            em.home[v] = home = em.mem_home(c.size, c.dtype)   # kernels: the packed buffer
            em.const_homes.append(home)
        else:
            em.loc[v] = "host"
            em.const_params.append((em.s(v), np.asarray(c)[()]))
        em.bound.add(v)


def output_exprs(em, plan):
    exprs, seen = [], set()
    ins = set(plan.jaxpr.invars) | set(plan.jaxpr.constvars)
    for v in plan.jaxpr.outvars:
        if isinstance(v, Literal) or not em.is_dev(v):
            exprs.append((em.host_atom(v), False))
            continue
        if not v.aval.shape:
            e = em.A(v)
            key = ("scalar", v)
            exprs.append((f"_rt.copy({e})" if v in ins or key in seen else e, True))
            seen.add(key)
            continue
        st = plan.storage.get(v)
        e = em.A(v)
        if st is None or st.external or st in seen:
            e = f"_rt.copy({e})"
        seen.add(st)
        exprs.append((e, True))
    return exprs


def _to_dev(expr, dev, dtype):
    """A device expression for a value that may be a host scalar."""
    if dev:
        return expr
    return f"_rt.scalar({expr}, {dtype_str(dtype)})"


def _init_carry(em, outs, inits):
    """Bind the carries (the loop's outputs) to device copies of the initial values."""
    for v, a in zip(outs, inits):
        em.loc[v] = "dev"
        em.bound.add(v)
        em.rebind(v)
        if em.is_dev(a) and not isinstance(a, Literal):
            em.line(f"{em.A(v)} = _rt.copy({em.A(a)})")
        else:
            em.line(f"{em.A(v)} = _rt.scalar({em.host_atom(a)}, {dtype_str(v.aval.dtype)})")


def _assign(em, outs, exprs):
    for v, (e, dev) in zip(outs, exprs):
        em.loc[v] = "dev"
        em.bound.add(v)
        em.rebind(v)
        em.line(f"{em.A(v)} = {_to_dev(e, dev, v.aval.dtype)}")


def _arg(em, a):
    return (em.host_atom(a), em.is_dev(a))


def _host_value(em, a, conv):
    """A host expression for a rank-0 atom (the host waits for a device scalar)."""
    if em.is_dev(a):
        return f"{conv}(_rt.fetch({em.A(a)}))"
    return f"{conv}({em.host_atom(a)})"


class _HostControl(ScanRows, ControlPrinter):
    """The control skeleton (xforms/kernels/loops/control_print.py) in the host code: values are
    (expression, on the device?) pairs; a branch index or trip count is fetched to the host."""

    def sub(self, plan, args, kind):
        return emit_sub(self.em, plan, args, kind)

    def arg(self, a):
        return _arg(self.em, a)

    def assign(self, outs, exprs):
        _assign(self.em, outs, exprs)

    def init_carry(self, outs, inits):
        _init_carry(self.em, outs, inits)

    def index(self, a):
        return _host_value(self.em, a, "int")

    def host_loop(self):
        self.em.note("host loop: the predicate is computed on the device and copied back")

    def truth(self, c):
        c, dev = c
        return f"_rt.fetch({c})" if dev else c

    def bounds(self, n):
        em = self.em
        i, cnt = em.fresh("i"), em.fresh("n")
        em.line(f"{cnt} = {_host_value(em, n, 'int')}")
        return i, cnt

    def counter(self, i):
        return (f"np.int64({i})", False)

    def scan_counter(self):
        return self.em.fresh("i")

    def _rows(self, a, i):
        sz = int(np.prod(a.aval.shape[1:], dtype=np.int64))
        return f"{self.em.A(a)}[{i} * {sz}:({i} + 1) * {sz}]"

    def row(self, x, i):
        return (self._rows(x, i), True)

    def store_row(self, y, i, e):
        e, dev = e
        m = re.fullmatch(r"_rt\.copy\((\w+)\)", e)      # (storing copies already)
        e = m[1] if m else e
        self.em.line(f"_rt.copy_into({self._rows(y, i)}, {_to_dev(e, dev, y.aval.dtype)})")


def _rule(host_rule):
    def rule(em, step):
        S = lane_shape(step)
        if S is not None:
            _lane_kernel(em, step, S)
        else:                  # the host loop, as one kernel where it can be (block_loop.py)
            block_loop.emit(em, step, host_rule)
    return rule


register(CONTROL_RULES, _HostControl, _rule)

__all__ = ["lane_shape", "emit_sub"]
