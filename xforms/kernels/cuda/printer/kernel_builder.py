"""One CUDA kernel under construction (`KernelBuilder`: parameters, body, launch) and the
index and naming helpers every CUDA emitter module shares.  The emitter state it reads
(`em`: names, homes of buffers, the kernel list) is duck-typed, so this module imports no
other emitter module (xforms/kernels/cuda/printer/emit.py uses it; so do the reduction, op and
control emitters).
"""
import numpy as np

from xforms.core.ir import Literal

from ...codegen import SourceBuilder, eqn_comment, lit, lowering_error


def nbt_name(dt):
    """The numba type of a dtype, spelled for kernel source (`nbt` is numba.types)."""
    dt = np.dtype(dt)
    return "nbt.boolean" if dt.kind == "b" else f"nbt.{dt.name}"


def cdiv(a, b):
    return -(-a // b)


def pow2_at_least(n):
    p = 1
    while p < n:
        p *= 2
    return p


def c_strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= int(n)
    return list(reversed(out))


def unsupported(eqn, why=""):
    """LoweringError naming the primitive, its operand types, the user's line and the target."""
    return lowering_error(eqn, "CUDA", why, "; use backend='cpu' for this function")


# ---- one kernel under construction ----------------------------------------------------------
class Kernel:
    """A finished kernel: its source lines (a `def`), parameters and where it launches."""

    def __init__(self, name, params, lines, what, line_eqns):
        self.name, self.params, self.lines, self.what = name, params, lines, what
        self.line_eqns = line_eqns          # line index in `lines` -> eqn
        # its blocks share nothing but the launch (each reads `cuda.blockIdx` only to pick its
        # part of the work: reductions, matmul tiles): block_loop.py may run them one after
        # another in fewer blocks
        self.blocks_apart = False
        # its blocks take the grid's work in turn themselves (`for _g in range(cuda.blockIdx.x,
        # N, cuda.gridDim.x)`, barriers inside: scan chunks, bitonic tiles), so any grid of
        # its block size computes the same: block_loop.py calls it as it is
        self.takes_turns = False
        self.first_line = None              # 1-based line of the def in the module


class KernelBuilder:
    """Collects a kernel's parameters and body; `launch(grid, block)` finishes it and writes
    the launch into the host code."""

    def __init__(self, em, what):
        self.em, self.what = em, what
        self.sb = SourceBuilder()
        self.sb.depth = 1
        self.params = []                   # (param name, host expression, kind, dtype)
        self._by_host = {}
        self.prologue = []
        self._hoisted = {}
        self._views = set()
        self.line_eqns = {}
        self.blocks_apart = False           # (Kernel.blocks_apart)
        self.takes_turns = False            # (Kernel.takes_turns)

    # parameters
    def _param(self, pname, host, kind, dtype):
        key = (host, kind)
        if key not in self._by_host:
            self._by_host[key] = pname
            self.params.append((pname, host, kind, np.dtype(dtype)))
        return self._by_host[key]

    def arr(self, v):
        """The kernel's name for the buffer of Var v (an array or a device scalar)."""
        name = self.em.A(v)
        home = self.em.home.get(v)
        if home is not None:
            return self.view(name, home)
        return self._param(name, name, "array", v.aval.dtype)

    def buf(self, pname, host, dtype):
        """A buffer that is no Var (a workspace temporary): host expression `host`."""
        home = self.em.ws_home.get(host)
        if home is not None:
            return self.view(pname, home)
        return self._param(pname, host, "array", dtype)

    def value(self, pname, host, dtype):
        """A scalar the host passes by value (`host`: a literal or a host expression): one
        kernel then serves launches that differ only in it (one compile, not one each)."""
        return self._param(pname, str(host), "scalar", dtype)

    def view(self, name, home):
        """A packed buffer (`Home`): the kernel takes the whole buffer once and slices it."""
        p = self._param(home.pname, home.host, "array", home.dtype)
        if name not in self._views:
            self._views.add(name)
            self.prologue.append(f"{name} = {p}[{home.off}:{home.off + home.size}]")
        return name

    def scalar(self, a):
        """Expression of a rank-0 atom: a literal, a host scalar parameter or a device scalar
        read once in the prologue."""
        em = self.em
        if isinstance(a, Literal):
            return lit(a.val, a.aval.dtype)
        if em.loc.get(a) == "host":
            name = em.s(a)
            return self._param(name, name, "scalar", a.aval.dtype)
        if a not in self._hoisted:
            arr = self.arr(a)
            name = em.s(a)
            self.prologue.append(f"{name} = {arr}[0]")
            self._hoisted[a] = name
        return self._hoisted[a]

    # body
    def line(self, s=""):
        self.sb.line(s)

    def block(self, header):
        return self.sb.block(header)

    def swap(self, a, b, tmp="_x"):
        """Lines exchanging the elements `a` and `b` through `tmp`.

            >>> kb.swap("Q[_r]", "Q[_p]", "_v")     # _v = Q[_r]; Q[_r] = Q[_p]; Q[_p] = _v
        """
        self.line(f"{tmp} = {a}")
        self.line(f"{a} = {b}")
        self.line(f"{b} = {tmp}")

    def comment(self, eqn):
        self.line(f"# {eqn_comment(eqn, self.em, 100)}")
        self.line_eqns[len(self.sb.lines)] = eqn

    def launch(self, grid, block, note=""):
        """Finish the kernel and launch it from the host code; -> the kernel's name."""
        em = self.em
        pnames = [p for p, _, _, _ in self.params]
        body = ["    " + ln for ln in self.prologue] + self.sb.lines
        shift = len(self.prologue) + 2          # def line + docstring
        line_eqns = {k + shift: e for k, e in self.line_eqns.items()}
        text = "\n".join(body)
        sig = tuple((kind, dt) for _, _, kind, dt in self.params)
        key = (tuple(pnames), sig, text)
        name = em.kernel_by_text.get(key)
        if name is None:
            name = f"k{len(em.kernels)}"
            lines = [f"def {name}({', '.join(pnames)}):", f'    """{self.what}"""'] + body
            em.kernels.append(Kernel(name, [(p, kind, dt) for p, _, kind, dt in self.params],
                                     lines, self.what, line_eqns))
            em.kernels[-1].blocks_apart = self.blocks_apart
            em.kernels[-1].takes_turns = self.takes_turns
            em.kernel_by_text[key] = name
        grid = tuple(int(g) for g in (grid if isinstance(grid, tuple) else (grid,)))
        block = tuple(int(b) for b in (block if isinstance(block, tuple) else (block,)))
        k = len(em.launches)
        em.launches.append((name, grid, block))
        args = ", ".join(h for _, h, _, _ in self.params)
        cfg = f"<<<{grid if len(grid) > 1 else grid[0]}, {block if len(block) > 1 else block[0]}>>>"
        em.line(f"_K[{k}]({args})    # {name} {cfg}{' ' + note if note else ''}")
        em.launch_sites += 1
        return name


def decompose(kb, flat, dims, names):
    """Lines splitting flat index `flat` into per-axis indices (row-major over `dims`)."""
    if not dims:
        return
    q = flat
    for k in range(len(dims) - 1, -1, -1):
        n, name = int(dims[k]), names[k]
        if n == 1:
            kb.line(f"{name} = 0")
        elif k == 0:
            kb.line(f"{name} = {q}")
        else:
            kb.line(f"{name} = {q} % {n}")
            nq = f"_q{k}"
            kb.line(f"{nq} = {q} // {n}")
            q = nq


# ---- the emitter ------------------------------------------------------------------------------
