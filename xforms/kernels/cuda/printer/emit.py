"""CUDA emitter: a fusion `Plan` (xforms/kernels/plan/fusion.py) becomes one Python module holding
numba-cuda kernels and the host function that launches them, readable by a person.

    def k0(A, B, C):                              # loop (32, 512): mul tanh -> c
        for _t in range(cuda.grid(1), 16384, cuda.gridsize(1)):
            i1 = _t % 512
            # c:f64[32,512] = mul a b       mlp.py:5 (loss)
            c = A[_t] * B[i1]
            C[_t] = c

    def host(_rt, _K, _M, _W, A, B):              # the launch sequence
        C = _rt.empty(16384, np.float64)
        _K[0](A, B, C)                            # k0 <<<(64,), (256,)>>>
        return (C,)

Conventions.  Every device buffer is flat and C-contiguous: kernels index with static
linear offsets, so reshapes are free.  Small buffers of one dtype live packed in one buffer
(a `Home`: `_IN{g}` the call's small inputs, `_OUT{k}` its small outputs, `_MEM{k}`
constants and workspace, made once): a kernel takes the packed buffer as one parameter and
slices it in its prologue (`A = _IN0[0:12]`), because numba-cuda spends microseconds of
host time per array argument of every launch.  The host binds a view of a packed buffer
only where host code uses it (lines marked `# view` are dropped otherwise).  A rank-0
value lives either on the host (a program input, a loop counter, a literal: passed to
kernels by value, spelled `a`) or on the device (a one-element buffer `A`, read once at
the top of a kernel).  Kernel-internal names start with `_` or contain a digit, so they
never meet the jaxpr's letter-only names.

Kernels per step (launch configuration from `runtime.DeviceSpec`):
- Loop without reductions: one grid-stride kernel over the iteration space; rank-0 loops are
  one-thread kernels (`loop.loop_kernel`: the loop lowered by xforms/kernels/loops/lower_loops.py).
- Loop with reductions: two-level trees (reduce.py) around the same lowered
  body; reductions over different axes in one Loop get one kernel each.
- Ops (dot_general, gather, scatter, ...): `ops.py`; control flow:
  `control.py` (whole loops inside one kernel when they are lane-local, else host
  loops around launches).
"""
import numpy as np

from xforms.core.ir import Literal, Var
from xforms.core.registry import EXEMPT, RuleTable

from ... import user_prims
from ...codegen import Naming, SourceBuilder, dtype_str, eqn_comment, lit
from ...prepare.fusion_classes import REDUCTIONS
from ...loops.scalar_rules import ScalarCtx, dtype_refused, math_name, reduction_monoid, rule_expr
from . import complexes  # noqa: F401  (registers the CUDA scalar-rule overrides)
from ..packing import Packing
from .kernel_builder import (Kernel, KernelBuilder, c_strides, cdiv, decompose, nbt_name,
                             pow2_at_least, unsupported)
from .loop import loop_kernel

OP_RULES = RuleTable()          # prim (or its name) -> rule(em, eqn)
CONTROL_RULES = RuleTable()     # prim (or its name) -> rule(em, control_step)
TARGET = "cuda"
# float16 is not: the CPU backend computes it in float32 (xforms/kernels/cpu/float16.py); here it is refused
SUPPORTED_DTYPES = frozenset(np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64",
                                                    "uint8", "uint16", "uint32", "uint64",
                                                    "float32", "float64", "complex64",
                                                    "complex128"))
_RESERVED = {"np", "math", "cuda", "nbt", "range", "min", "max", "abs", "int", "float",
             "bool", "len", "print", "host"}



class Ctx(ScalarCtx):
    """A scalar rule's context on CUDA: numba-cuda's math functions."""

    def fn(self, prim):
        """The math function `prim` declares for CUDA (`Facts.math`: numba-cuda's math and
        cmath modules; NumPy ufuncs do not lower).  None: an override spells it
        (scalar.py, complexes.py)."""
        if np.dtype(self.in_dtypes[0]).kind == "c":
            return math_name(prim, "cuda_complex")
        return math_name(prim, "cuda")


class CudaEmitter(Packing, Naming):
    """Builds the kernels and the host function of one program (and its sub-programs)."""

    RESERVED, FRESH = _RESERVED, "_{}{}"

    def __init__(self, spec, label="function"):
        self.spec, self.label = spec, label
        self.host = SourceBuilder()
        self.host.depth = 1
        self.names = {}
        self.loc = {}                 # rank-0 Var -> "host" | "dev"
        self.kernels, self.kernel_by_text, self.launches = [], {}, []
        self.launch_sites = 0
        self.device_fns = set()       # kernels also called as device functions (block_loop.py)
        self.device_defs = {}         # name -> lines of a device function only (block_loop.py)
        self.loop_depth = 0           # loops whose host text is being emitted (block_loop.py)
        self.tile_products = False    # ... whose small products stay in the tile kernel
        self.row_views = {}           # Storage -> (row expr, stacked Var, set): a scan body's
                                      # output computed in its stacked output's row (control.py)
        self.ws, self._ws_slot = [], {}
        self.const_params = []        # (param name, value)
        # packing (runtime.pack_layout): Var -> Home; workspace expression -> Home
        self.home, self.ws_home = {}, {}
        self.mem = {}                 # dtype -> [arena index, next offset]: consts, workspace
        self.const_homes = []         # Home of each array constant, in const_params order
        self.out_arenas = {}          # dtype -> [name, next offset]: this call's outputs
        self._out_slot = {}
        self.top_plan = None
        self.plan = None
        self.bound = set()
        self._scopes = 0
        self._fresh = 0

    def checkpoint(self):
        """The emitter's state, to emit a step again another way (`restore`): block_loop.py
        re-emits a loop refused as one kernel with its products on cuBLAS.

            state = em.checkpoint(); ...; em.restore(state)     # as if nothing was emitted
        """
        return {k: _snapshot(v) for k, v in vars(self).items()}

    def restore(self, state):
        """Back to `checkpoint`'s state, in place: the builders and containers that callers
        hold (an outer loop's `host`, emit_plan's saved `bound`) are the same objects."""
        self.__dict__.clear()
        self.__dict__.update({k: _restored(v) for k, v in state.items()})

    def host_atom(self, a):
        """Host-code expression of an atom: literal, host scalar or buffer name."""
        if isinstance(a, Literal):
            return lit(a.val, a.aval.dtype)
        if not a.aval.shape and self.loc.get(a) == "host":
            return self.s(a)
        return self.A(a)

    def is_dev(self, a):
        return isinstance(a, Var) and (bool(a.aval.shape) or self.loc.get(a) != "host")

    # host lines
    def line(self, s=""):
        self.host.line(s)

    def block(self, header):
        return self.host.block(header)

    def note(self, text):
        self.line(f"# {text}")

    # buffers
    def temp(self, size, dtype):
        """A workspace buffer that no Var names (partial sums, ...): host expression."""
        return self.ws_slot(("temp", len(self.ws)), size, dtype)

    def alloc(self, v):
        """Bind the buffer of a Var a step produces: a dead buffer it takes over, a workspace
        buffer (temporaries, reused across calls) or a new one (the plan's outputs)."""
        if v in self.bound:
            return
        self.bound.add(v)
        plan = self.plan
        top = plan is self.top_plan
        if not v.aval.shape:
            self.loc[v] = "dev"
            if v in self._plan_outs:
                home = self.out_home(("scalar", v), 1, v.aval.dtype) if top else None
                if home is not None:
                    self.bind_home(v, home)
                    return
                self.home.pop(v, None)
                if not self._row_buffer(v, ("scalar", v)):
                    self.line(f"{self.A(v)} = _rt.empty(1, {dtype_str(v.aval.dtype)})")
            else:
                self.bind_home(v, self.ws_home[self.ws_slot(("scalar", v), 1, v.aval.dtype)])
            return
        prev = plan.reuse.get(v)
        st = plan.storage.get(v)
        if prev is not None:
            home = self.home.get(prev)
            if home is not None:
                self.bind_home(v, home)
                return
            self.line(f"{self.A(v)} = {self.A(prev)}")
        elif st is None or st.is_output:
            home = self.out_home(st, st.size, st.dtype) if top and st is not None else None
            if home is not None:
                self.bind_home(v, home)
                return
            if not self._row_buffer(v, st):
                self.line(f"{self.A(v)} = _rt.empty({v.aval.size}, {dtype_str(v.aval.dtype)})")
        else:
            self.bind_home(v, self.ws_home[self.ws_slot(st, st.size, st.dtype)])
            return
        self.home.pop(v, None)

    def _row_buffer(self, v, st):
        """Bind Var `v` of Storage `st` to a row of a scan's stacked output where the scan
        computes that output there (`row_views`): no buffer a step, no copy into the row.

            S1_AN = J[_i1 * 4096:(_i1 + 1) * 4096]      # was _rt.empty(4096, np.float32)
        """
        row = self.row_views.get(st) if st is not None else None
        if row is None:
            return False
        expr, stacked, written = row
        if stacked.aval.size != v.aval.size * stacked.aval.shape[0] or \
                stacked.aval.dtype != v.aval.dtype:
            return False
        written.add(stacked)
        self.line(f"{self.A(v)} = {expr}")
        return True

    # plans
    def emit_plan(self, plan):
        """Emit a plan's steps.  `bound` is per emission: two control equations may hold
        the same sub-jaxpr, whose plans then share Vars, each emitted in its own place."""
        prev, prev_outs, prev_bound = self.plan, getattr(self, "_plan_outs", set()), self.bound
        self.plan = plan
        self._plan_outs = {v for v in plan.jaxpr.outvars if isinstance(v, Var)}
        self.bound = set(plan.jaxpr.invars) | set(plan.jaxpr.constvars)
        try:
            for step in plan.steps:
                if step.kind == "loop":
                    self.emit_loop(step)
                    continue
                rules = OP_RULES if step.kind == "op" else CONTROL_RULES
                rule = rules.get(step.eqn.prim)
                if rule is None and step.kind == "op":
                    rule = user_prims.op_rule(step.eqn, TARGET)   # raises: says what to do
                if rule is None:      # with the reason a declared exemption gives
                    raise unsupported(step.eqn, EXEMPT["cuda"].get(step.eqn.prim, ""))
                self.line(f"# {_host_comment(self, step.eqn)}")
                rule(self, step.eqn if step.kind == "op" else step)
        finally:
            self.plan, self._plan_outs, self.bound = prev, prev_outs, prev_bound

    def check_dtypes(self, eqn):
        why = dtype_refused(eqn, TARGET)
        if why:
            raise unsupported(eqn, why)
        for a in list(eqn.invars) + list(eqn.outvars):
            if np.dtype(a.aval.dtype) not in SUPPORTED_DTYPES:
                ok = ", ".join(sorted(d.name for d in SUPPORTED_DTYPES))
                raise unsupported(eqn, f"dtype {np.dtype(a.aval.dtype).name} is not supported "
                                       f"on CUDA ({ok} are; convert with .astype(float32))")

    # ---- fused loops -----------------------------------------------------------------------
    def scalar_value(self, eqn, args, idx):
        """Expression of elementwise equation `eqn` by the CUDA scalar rules."""
        return scalar_expr(eqn, args, idx)

    def emit_loop(self, step):
        shape = tuple(int(s) for s in step.shape)
        reds = [e for e, _ in step.body if e.prim in REDUCTIONS]
        for v in step.writes:
            self.alloc(v)
        for e in reds:
            self.alloc(e.outvars[0])
        if not reds:
            loop_kernel(self, step)
            return
        groups = {}
        for e in reds:
            groups.setdefault(red_axes(e), []).append(e)
        from .reduce import reduction_kernel
        for k, (axes, es) in enumerate(groups.items()):
            reduction_kernel(self, step, shape, axes, es, with_writes=(k == 0))

    def _needed(self, step, roots):
        """Body equations the values `roots` (Vars) depend on, in body order."""
        producer = {v: e for e, _ in step.body for v in e.outvars}
        need, stack = set(), list(roots)
        reads = {id(e): rs for e, rs in step.body}
        while stack:
            v = stack.pop()
            e = producer.get(v)
            if e is None or id(e) in need:
                continue
            need.add(id(e))
            stack.extend(r.atom for r in reads[id(e)] if isinstance(r.atom, Var))
        return need


def red_axes(eqn):
    return tuple(sorted(reduction_monoid(eqn)[2]))


def scalar_expr(eqn, args, idx):
    """The scalar expression of an elementwise equation (scalar_rules with CUDA overrides)."""
    return rule_expr(eqn, TARGET, Ctx(eqn, idx), args, unsupported)


def _host_comment(em, eqn):
    return eqn_comment(eqn, em, 100, squeeze=True)


def _snapshot(v):
    """(object, its contents, recursively) for `restore`: lists, tuples, dicts, sets and a
    SourceBuilder's lines; anything else (Vars, Kernels, Homes: not changed once made) as is.

        _restored(_snapshot(d))     # -> d, the same dict, holding what it held
    """
    if isinstance(v, SourceBuilder):
        return v, (list(v.lines), v.depth)
    if isinstance(v, (list, tuple)):
        return v, [_snapshot(x) for x in v]
    if isinstance(v, dict):
        return v, [(k, _snapshot(x)) for k, x in v.items()]
    if isinstance(v, set):
        return v, set(v)
    return v, None


def _restored(snap):
    """The object of `_snapshot`'s pair, its contents put back in place."""
    v, held = snap
    if isinstance(v, SourceBuilder):
        v.lines[:], v.depth = held
    elif isinstance(v, list):
        v[:] = [_restored(x) for x in held]
    elif isinstance(v, tuple):
        for x in held:
            _restored(x)
    elif isinstance(v, dict):
        v.clear()
        v.update((k, _restored(x)) for k, x in held)
    elif isinstance(v, set):
        v.clear()
        v.update(held)
    return v
