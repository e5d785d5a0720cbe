"""The "cuda" backend: ClosedJaxpr -> plan -> kernels + host launch sequence (one module) ->
numba.cuda.jit -> `CudaExecutable`.

    exe = compile_cuda(closed, {"name": "loss"})
    outs = exe(*flat_args)          # DeviceArrays; inputs may be NumPy or DeviceArrays
    print(exe.source)               # the kernels and the host function that launches them
    exe.count_launches(*flat_args)  # kernels and library calls one call makes (host loops:
                                    #   per iteration)

Generated modules go through `xforms.kernels.build.codecache` (content-addressed files, so Numba's
cache works across processes); each kernel is compiled eagerly for its signature (flat
C-contiguous arrays and scalars), so a kernel Numba or NVVM rejects fails at compile time
with a `LoweringError` naming the primitive and the generated line.
"""
import collections
import os
import re
import threading

import numpy as np

from xforms import config
from xforms.errors import LoweringError
from xforms.core.ir import Literal
from xforms.core.memo import Memo

from ..build import codecache  # noqa: F401  (loop rules)
from ..prepare import scalarize_loops  # noqa: F401  (loop rules)
from .. import user_prims  # noqa: F401  (loop rules)
from ..codegen import dtype_str, numba_side
from ..plan.fusion import plan_program
from ..prepare.passes import prepare
from ..prepare.scalarize import scalarize
from . import runtime as rt
from .printer import scalar  # noqa: F401  (CUDA scalar rules)
from .printer import complexes  # noqa: F401  (complex scalar rules; after printer/scalar)
from .printer import control, ops  # noqa: F401  (register rules)
from .printer.cas import MODULE_LINE as CAS_MODULE_LINE
from .printer.complexes import MODULE_LINE as COMPLEX_MODULE_LINE
from .printer.scalar import MODULE_LINE as SCALAR_MODULE_LINE
from .printer.emit import CudaEmitter
from .launch import launcher
from .graph import Graphs, ThunkCapture
from .vendor import LibraryError
from .vendor.solver_map import SolverCall
from .packing import drop_unused_views, pack_inputs, pack_outputs
from .printer.control import add_consts, is_lane_local

_exes = Memo(size=config.jit_cache_size)     # ClosedJaxpr -> executable (xforms/core/memo.py)
_lock = threading.RLock()


FINGERPRINT = (codecache.fingerprint(os.path.dirname(os.path.abspath(__file__))) +
               codecache.fingerprint(codecache.SHARED_SCALAR)[:8])


# ---- the module -----------------------------------------------------------------------------
class Program:
    """Emitted code of one program: `source`, `kernels` (printer/emit.Kernel), `launches`
    ((kernel name, grid, block) per launch site), workspace and constants."""

    def __init__(self, source, em, in_avals, out_avals, consts, direct, groups):
        self.source, self.kernels, self.launches = source, em.kernels, em.launches
        self.workspace = list(em.ws)                   # (size, dtype, Home)
        self.consts = consts
        self.const_homes = list(em.const_homes)
        self.mem = {dt: (k, size) for dt, (k, size) in em.mem.items()}   # packed buffers
        self.in_avals, self.out_avals = in_avals, out_avals
        self.direct = direct       # positions of the inputs passed as they are
        self.groups = groups       # packed inputs: (dtype, [(position, offset, size)], total)
        self.spec = em.spec
        # kernels launched from the host (the others are only device functions of a block
        # loop's kernel: block_loop.py); only these compile as kernels
        self.launched = {name for name, _, _ in em.launches}

    def signatures(self):
        """{kernel name: numba signature}"""
        from numba.core import types
        from numba.np.numpy_support import from_dtype
        out = {}
        for k in self.kernels:
            args = [types.Array(from_dtype(dt), 1, "C") if kind == "array" else from_dtype(dt)
                    for _, kind, dt in k.params]
            out[k.name] = types.void(*args)
        return out


def emit_program(closed, spec, label="function", dev_scalars=frozenset()):
    """ClosedJaxpr -> Program (source text; nothing compiled, no device needed).
    `dev_scalars`: positions of rank-0 inputs passed as one-element device buffers (a
    DeviceArray from an earlier call) rather than by value."""
    numba_side()         # (the op families' rules register with the Numba side)
    # small arrays in loop bodies as scalar carries (xforms/kernels/prepare/scalarize.py), as on the CPU:
    # an array-state ODE loop (stack, s[0]) then runs whole in one kernel, not as kernels
    # per iteration; a loop that is lane-local already keeps a thread per element
    plan = plan_program(scalarize(prepare(closed), keep=is_lane_local), prepared=True,
                        rows=True)     # (a scan's h computed in its stacked row: control.py)
    em = CudaEmitter(spec, label)
    jaxpr = plan.jaxpr
    em.bind_names(jaxpr)
    for i, v in enumerate(jaxpr.invars):
        em.loc[v] = "dev" if v.aval.shape or i in dev_scalars else "host"
        em.bound.add(v)
    direct, groups = pack_inputs(em, jaxpr)
    pack_outputs(em, plan)
    add_consts(em, plan)
    em.top_plan = plan
    em.emit_plan(plan)
    em._plan_outs = set()
    outs, seen = [], set()
    ins = set(jaxpr.invars) | set(jaxpr.constvars)
    for v in jaxpr.outvars:
        if isinstance(v, Literal) or not em.is_dev(v):
            outs.append(f"_rt.scalar({em.host_atom(v)}, {dtype_str(v.aval.dtype)})")
            continue
        e = em.A(v)
        key = plan.storage.get(v) if v.aval.shape else ("scalar", v)
        external = v in ins or (v.aval.shape and (key is None or key.external))
        home = em.home.get(v)
        if external or key in seen:
            outs.append(f"_rt.copy({e})")
        elif home is not None and home.kind == "out":
            outs.append(f"({home.host}, {home.off})")      # DeviceArray(buffer, offset)
        else:
            outs.append(e)
        seen.add(key)
    params = ([em.host_atom(jaxpr.invars[i]) for i in direct] +
              [f"_IN{g}" for g in range(len(groups))] + [n for n, _ in em.const_params])
    prologue = [f"    {name} = _rt.empty({size}, {dtype_str(dt)})"
                for dt, (name, size) in em.out_arenas.items() if size]
    listing = str(jaxpr).replace('"""', "'''").replace("\\", "/")
    head = [f'"""xforms CUDA kernels and host launch sequence for {label}.', "",
            "Generated from the program below by xforms/kernels/cuda/printer/emit.py for "
            f"{spec.name} (compute capability {spec.cc[0]}.{spec.cc[1]}, {spec.block} threads "
            "per block).", "Each kernel is compiled by numba.cuda.jit for its signature; "
            "`host` launches them in order", "on one stream (_K: configured kernels, "
            "_W: workspace buffers reused across calls).", "", listing, '"""',
            f"# xforms.kernels.cuda {FINGERPRINT}",
            "import cmath", "import math", "", "import numpy as np", "from numba import cuda",
            "from numba import types as nbt", CAS_MODULE_LINE,
            COMPLEX_MODULE_LINE, SCALAR_MODULE_LINE] + user_prims.module_lines(em, "cuda") + ["", ""]
    lines = list(head)
    for k in em.kernels:
        k.first_line = len(lines) + 1
        lines += k.lines + ["", ""]
    # kernels a block loop calls (block_loop.py): device functions as well (not inlined by
    # Numba: it cannot inline a call of more than 30 arguments, which Python passes as *args)
    for n in sorted(em.device_defs):
        lines += em.device_defs[n] + ["", ""]
    lines += [f"_d_{n} = cuda.jit(device=True)({n})" for n in sorted(em.device_fns)] + [""]
    ret = ", ".join(outs) + ("," if len(outs) == 1 else "")
    host = [f"def host(_rt, _K, _M, _W, {', '.join(params)}):".replace(", )", ")"),
            f'    """The launch sequence: {len(em.launches)} launch site(s) of '
            f'{len(em.kernels)} kernel(s)."""']
    host += drop_unused_views(prologue + em.host.lines + [f"    return ({ret})"])
    lines += host
    source = "\n".join(lines) + "\n"
    consts = [c for _, c in em.const_params]
    return Program(source, em, [v.aval for v in jaxpr.invars],
                   [v.aval for v in jaxpr.outvars], consts, direct, groups)


# ---- executables -----------------------------------------------------------------------------
class _CountingRuntime:
    """The runtime module as the host code sees it, its calls counted into `n` (a Counter):
    "library" `gemm` and `fft` one each, `solve` (cuSOLVER) one per matrix of its batch;
    "host_waits" `fetch` and `host_copy` (the host waits for the device); "copies" device
    copies; "uploads" host values copied to the device (`scalar`, `to_device`)."""

    _KIND = {"gemm": "library", "fft": "library", "solve": "library",
             "fetch": "host_waits", "host_copy": "host_waits",
             "copy": "copies", "copy_into": "copies", "copy_range": "copies",
             "scalar": "uploads", "to_device": "uploads"}

    def __init__(self, n):
        self._n = n

    def __getattr__(self, name):
        fn = getattr(rt, name)
        kind = self._KIND.get(name)
        if kind is None:
            return fn

        def call(*a, **kw):
            self._n[kind] += SolverCall(*a[0]).batch if name == "solve" else 1
            return fn(*a, **kw)
        return call


class CudaExecutable:
    """A compiled program: `exe(*flat_args) -> list of DeviceArrays`; `.source`,
    `.num_kernels`, `.launch_sites`."""

    def __init__(self, program, module, kernels, path, closed=None, options=None,
                 dev_scalars=frozenset()):
        self.program, self.source, self.path = program, program.source, path
        # rank-0 inputs given as DeviceArrays run a variant taking them as device buffers,
        # so that the host never waits for a value it only passes on
        self._closed, self._options, self._dev = closed, options, dev_scalars
        self._scalar_pos = [i for i, a in enumerate(program.in_avals) if not a.shape]
        self._variants = {}
        self.in_avals, self.out_avals = program.in_avals, program.out_avals
        self._kernels = kernels
        self._K = [launcher(kernels[name], grid, block) for name, grid, block in program.launches]
        self._host = module.host
        self._rt = rt                  # what the host code calls (count_launches wraps it)
        self._M = self._W = self._consts = None
        self._direct = [(i, i in dev_scalars) for i in program.direct]
        self._groups = program.groups
        self._lock = threading.Lock()
        self._graphs = None            # made at the first call with graphs on
        self.num_kernels = len(program.kernels)
        self.launch_sites = len(program.launches)
        self.plan_text = ""

    def _arg(self, x, aval, dev):
        if dev:                          # a device scalar (see `_variant`)
            if isinstance(x, rt.DeviceArray) and x.dtype == aval.dtype:
                return x.buf
            rt.guard("host-to-device", rt.describe(aval))
            return rt.scalar(np.asarray(x), aval.dtype)
        if not aval.shape:
            if isinstance(x, rt.DeviceArray):
                x = np.asarray(x)
            if isinstance(x, np.ndarray):
                x = x[()]
            return aval.dtype.type(x)
        if isinstance(x, rt.DeviceArray):
            if x.dtype != aval.dtype:
                return rt.to_device(np.asarray(x), dtype=aval.dtype)
            return x.buf
        if hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray) \
                and not rt.simulating():
            buf = rt.cuda.as_cuda_array(x)
            if buf.is_c_contiguous() and np.dtype(buf.dtype) == aval.dtype:
                return buf.reshape(buf.size)
        rt.guard("host-to-device", rt.describe(aval))   # a NumPy argument: an implicit copy
        return rt.to_device(np.asarray(x), dtype=aval.dtype)

    def relaunch(self):
        """Make the launchers again as XFORMS_CUDA_FAST_LAUNCH says now (read when an
        executable is made), so that one program can be timed with numba-cuda's dispatcher
        and with the direct launcher (benchmarks' `direct launch` rows); -> how many launch
        sites launch directly (0 on the simulator, or where launch.py refused a kernel).

            os.environ["XFORMS_CUDA_FAST_LAUNCH"] = "1"; exe.relaunch()   # 3 of 3 sites
        """
        with self._lock:
            self._K = [launcher(self._kernels[name], grid, block)
                       for name, grid, block in self.program.launches]
            return sum(bool(getattr(k, "direct", False)) for k in self._K)

    def count_launches(self, *args):
        """Run once and return how many kernels that call launched and library routines it
        called (a host loop launches its body's kernels on every iteration; `launch_sites`
        counts them once): a cuBLAS or cuFFT call counts one, a cuSOLVER call one per matrix
        (it runs the routine matrix by matrix)."""
        c = self.launch_counts(*args)
        return c["kernels"] + c["library"]

    def launch_counts(self, *args):
        """Run once: what that call did on the device, by kind (`_CountingRuntime`): where
        a call's time goes on a GPU before any timing says so.

            exe.launch_counts(x)   # {'kernels': 3, 'library': 1, 'host_waits': 0,
                                   #  'copies': 2, 'uploads': 0}
        """
        n = collections.Counter()

        def counted(k):
            def launch(*a):
                n["kernels"] += 1
                return k(*a)
            return launch
        exe = self._target(args)
        with exe._lock:
            plain, exe._K = exe._K, [counted(k) for k in exe._K]
            exe._rt = _CountingRuntime(n)
        try:
            exe(*args)
        finally:
            exe._K, exe._rt = plain, rt
        return {k: n[k] for k in ("kernels", "library", "host_waits", "copies", "uploads")}

    def _memory(self):
        """The packed buffers of constants and workspace (one per dtype, made once), the
        workspace views the host code uses, and the constants' views."""
        prog = self.program
        mem = [None] * len(prog.mem)
        for dt, (k, size) in prog.mem.items():
            mem[k] = rt.empty(size, dt)
        arrays = iter(prog.const_homes)
        consts = []
        for c in prog.consts:
            if np.ndim(c) == 0:
                consts.append(c[()])
                continue
            h = next(arrays)
            buf = rt.view(mem[int(h.host[3:-1])], h.off, h.size)
            rt.copy_into(buf, rt.to_device(c))
            consts.append(buf)
        self._W = [rt.view(mem[int(h.host[3:-1])], h.off, h.size) for _, _, h in prog.workspace]
        self._consts, self._M = consts, mem

    def _variant(self, dev):
        with _lock:
            exe = self._variants.get(dev)
            if exe is None:
                exe = self._variants[dev] = _compile(self._closed, self._options, dev)
        return exe

    def _target(self, args):
        """This executable, or the variant for the rank-0 DeviceArrays among `args`."""
        if self._scalar_pos and self._closed is not None and not self._dev:
            dev = frozenset(i for i in self._scalar_pos if type(args[i]) is rt.DeviceArray)
            if dev:
                return self._variant(dev)
        return self

    def _run(self, runtime, kernels, conv):
        return self._host(runtime, kernels, self._M, self._W, *conv, *self._consts)

    def graphs(self):
        """This executable's CUDA graphs (xforms/kernels/cuda/graph/): `.info()` says
        whether its calls replay as one graph, and why not."""
        if self._graphs is None:
            if rt.simulating():
                capturer = ThunkCapture()
            else:
                from .graph.capture import StreamCapture
                capturer = StreamCapture(int(rt.stream().handle))
            self._graphs = Graphs(capturer)
        return self._graphs

    def graph_info(self, *args):
        """`graphs().info()` of the executable that runs `args` (None: graphs never on)."""
        exe = self._target(args) if args else self
        return None if exe._graphs is None else exe._graphs.info()

    def __call__(self, *args):
        if len(args) != len(self.in_avals):
            raise TypeError(f"expected {len(self.in_avals)} arguments, got {len(args)}")
        if self._scalar_pos and not self._dev:
            exe = self._target(args)
            if exe is not self:
                return exe(*args)
        ins = self.in_avals
        conv = [self._arg(args[i], ins[i], dev) for i, dev in self._direct]
        for dt, members, total in self._groups:
            conv.append(rt.pack(args, dt, members, total))
        with self._lock:
            try:
                if self._M is None:
                    self._memory()
                # (config.cuda_graphs(), inlined: one global read while graphs are off; not
                # while counting launches)
                if config.cuda_graphs_on and config.use_cuda_graphs.value and self._rt is rt:
                    outs = self.graphs()(self._run, rt, self._K, conv)
                else:
                    outs = self._host(self._rt, self._K, self._M, self._W, *conv, *self._consts)
            except Exception as e:
                if type(e).__module__.split(".")[0] in ("numba", "numba_cuda", "cuda") \
                        or isinstance(e, LibraryError):
                    raise launch_error(e, self) from e
                raise
        DA = rt.DeviceArray
        return [DA(b[0], a.shape, b[1], a.weak_type) if type(b) is tuple
                else DA(b, a.shape, None, a.weak_type) for b, a in zip(outs, self.out_avals)]


def compile_cuda(closed, options=None):
    """Backend entry point listed as "cuda" in `kernels.BACKENDS` (read by `xforms.jit`)."""
    rt.ensure_available()
    options = options or {}
    with _lock:
        exe = _exes.get(closed, "cuda")
        if exe is None:
            exe = _compile(closed, options)
            _exes.put(closed, "cuda", exe)
        return exe


def _compile(closed, options, dev_scalars=frozenset()):
    from numba import cuda
    label = options.get("name") or "a jitted function"
    program = emit_program(closed, rt.device_spec(), label, dev_scalars)
    mod, path, h = codecache.load_module(program.source)
    if config.DUMP:
        print(f"[xforms] {label}: CUDA module {path}")
    sigs = program.signatures()
    kernels = {}
    for k in program.kernels:
        if k.name not in program.launched:
            continue
        def build(cache, k=k):
            return cuda.jit(sigs[k.name], cache=cache)(getattr(mod, k.name))
        try:
            # a disk problem (numba-cuda saves the cache entry inside cuda.jit) costs the
            # cache, never the kernel, as on the CPU
            kernels[k.name] = codecache.build_with_cache(build, mod, allowed=_disk_cache())
        except Exception as e:
            raise lowering_error(e, program, path, k) from None
    return CudaExecutable(program, mod, kernels, path, closed, options, dev_scalars)


def _disk_cache():
    """Whether kernels may use Numba's disk cache (the simulator has none)."""
    return not rt.simulating()


def lowering_error(e, program, path, kernel):
    """A numba-cuda/NVVM failure as a LoweringError naming the primitive and the line."""
    msg = str(e)
    first = next((ln.strip() for ln in msg.splitlines() if ln.strip()), msg)
    lines = [int(m) for m in re.findall(re.escape(os.path.basename(path)) + r'", line (\d+)',
                                        msg)]
    eqn = None
    if lines and kernel.first_line:
        rel = lines[-1] - kernel.first_line
        for ln, q in sorted(kernel.line_eqns.items()):
            if ln <= rel:
                eqn = q
    where = f"{path}:{lines[-1]}" if lines else path
    if eqn is not None:
        info = eqn.source_info
        user = f" (user code: {info.location}, in {info.function})" if info else ""
        text = (f"the CUDA backend could not compile primitive '{eqn.prim.name}'{user} in "
                f"kernel {kernel.name}; generated code at {where}: {type(e).__name__}: {first}")
    else:
        text = (f"the CUDA backend could not compile kernel {kernel.name} ({kernel.what}); "
                f"generated code at {where}: {type(e).__name__}: {first}")
    err = LoweringError(text)
    err.cause = e
    return err


def launch_error(e, exe):
    """A numba-cuda/driver failure while running the host code, naming the launch."""
    tb, line = e.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == exe.path:
            line = tb.tb_lineno
        tb = tb.tb_next
    what = "the host code"
    if line is not None:
        text = exe.source.splitlines()[line - 1].strip()
        what = f"line {line} of {exe.path} ({text})"
        name = text.split("# ")[-1].split(" ")[0] if "# k" in text else None
        kern = next((k for k in exe.program.kernels if k.name == name), None)
        if kern is not None:
            what += f", kernel {kern.name}: {kern.what}"
    return RuntimeError(f"the CUDA backend failed running {what}: {type(e).__name__}: {e}")


# ---- PTX for real architectures (no GPU needed; tests) -------------------------------------------
def compile_ptx(closed, cc, label="function", sms=108):
    """Emit `closed` for a device of compute capability `cc` and compile every kernel to PTX
    with numba.cuda.compile_ptx; -> {kernel name: ptx text}.  Raises LoweringError."""
    from numba import cuda
    program = emit_program(closed, rt.spec_for(cc, sms), label)
    mod, path, _ = codecache.load_module(program.source)
    out = {}
    for k in program.kernels:
        try:
            ptx, _ = cuda.compile_ptx(getattr(mod, k.name), program.signatures()[k.name].args,
                                      cc=tuple(cc))
        except Exception as e:
            raise lowering_error(e, program, path, k) from None
        out[k.name] = ptx
    return out


def device_put(tree):
    from xforms.tree_util import tree_flatten, tree_unflatten
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, rt.put_leaves(leaves))


__all__ = ["compile_cuda", "CudaExecutable", "emit_program", "compile_ptx"]
