"""Where the CUDA emitter's buffers live: small buffers of one dtype packed into one buffer,
so that a kernel launch passes a few buffers however many arrays it touches (numba-cuda
spends microseconds of host time per array argument of every launch).

    _IN{g}    a call's small inputs of one dtype (runtime.pack builds it, or passes the
              buffer the arrays already share: outputs of a call, a device_put pytree)
    _OUT{k}   a call's small outputs of one dtype, in output order (one allocation)
    _MEM{k}   constants and workspace of one dtype (made once per executable; `_M[k]`)

A Var placed in one has a `Home`; a kernel takes the packed buffer as one parameter and
slices it in its prologue (`A = _IN0[16:28]`); the host binds a view only where host code
uses one (lines ending in VIEW_MARK are dropped when nothing else names them).
"""
import re

import numpy as np

from xforms.core.ir import Var

# ---- the layout of a packed buffer (runtime.pack fills one; no numba.cuda needed here) ---------
PACK_BYTES = 1 << 20          # arrays up to this size are packed
PACK_ALIGN = 128                  # bytes: every packed array starts on a cache line


def pack_layout(sizes, itemsize):
    """Offsets (in elements) of arrays of `sizes` packed in order, and the total size.

    >>> pack_layout([3, 1, 20], 8)
    ([0, 16, 32], 52)
    """
    step = max(PACK_ALIGN // int(itemsize), 1)
    offs, at = [], 0
    for n in sizes:
        offs.append(at)
        at += -(-max(int(n), 1) // step) * step
    last = offs[-1] + max(int(sizes[-1]), 1) if offs else 0
    return offs, last


def packable(shape, dtype):
    size = int(np.prod(shape, dtype=np.int64))
    return bool(shape) and size * np.dtype(dtype).itemsize <= PACK_BYTES


class Home:
    """Where a buffer lives in a packed buffer: kernel parameter `pname`, host expression
    `host`, element offset and size.  `kind`: "mem" (constants and workspace, made once per
    executable), "out" (this call's outputs) or "in" (packed inputs)."""
    __slots__ = ("pname", "host", "off", "size", "dtype", "kind", "hostview")

    def __init__(self, pname, host, off, size, dtype, kind, hostview=None):
        self.pname, self.host, self.off, self.size = pname, host, int(off), max(int(size), 1)
        self.dtype, self.kind = np.dtype(dtype), kind
        self.hostview = hostview        # a host expression of a view made once, if any


VIEW_MARK = "  # view"      # host lines binding a name to a view; dropped when unused


def drop_unused_views(lines):
    """Remove host lines `NAME = ...  # view` whose NAME no other line mentions."""
    views = {}
    for k, ln in enumerate(lines):
        if ln.endswith(VIEW_MARK):
            views.setdefault(ln.split("=", 1)[0].strip(), []).append(k)
    if not views:
        return lines
    used = set()
    for k, ln in enumerate(lines):
        if not ln.endswith(VIEW_MARK):
            used.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", ln))
    drop = {k for name, ks in views.items() if name not in used for k in ks}
    kept = [ln for k, ln in enumerate(lines) if k not in drop]
    out = []
    for k, ln in enumerate(kept):        # a block left empty gets a `pass`
        out.append(ln)
        if ln.endswith(":") and not ln.lstrip().startswith("#"):
            ind = len(ln) - len(ln.lstrip())
            nxt = next((x for x in kept[k + 1:] if not x.lstrip().startswith("#")), None)
            if nxt is None or len(nxt) - len(nxt.lstrip()) <= ind:
                out.append(" " * (ind + 4) + "pass")
    return out




class Packing:
    """CudaEmitter's methods that place buffers (state set up in its __init__: `home`,
    `ws_home`, `mem`, `const_homes`, `out_arenas`, `_out_slot`, `ws`, `_ws_slot`)."""

    def mem_home(self, size, dtype):
        """A new place in the executable's packed buffer of `dtype` (made once, holding
        constants and workspace)."""
        dtype = np.dtype(dtype)
        slot = self.mem.get(dtype)
        if slot is None:
            slot = self.mem[dtype] = [len(self.mem), 0]
        k, off = slot
        step = max(PACK_ALIGN // dtype.itemsize, 1)
        slot[1] = off + -(-max(int(size), 1) // step) * step
        return Home(f"_MEM{k}", f"_M[{k}]", off, size, dtype, "mem")

    def ws_slot(self, key, size, dtype):
        if key not in self._ws_slot:
            self._ws_slot[key] = k = len(self.ws)
            home = self.mem_home(size, dtype)
            home.hostview = f"_W[{k}]"
            self.ws.append((max(int(size), 1), np.dtype(dtype), home))
            self.ws_home[f"_W[{k}]"] = home
        return f"_W[{self._ws_slot[key]}]"

    def out_home(self, key, size, dtype):
        """A place in this call's packed output buffer of `dtype`, or None (not packed)."""
        dtype = np.dtype(dtype)
        slot = self.out_arenas.get(dtype)
        if slot is None or size * dtype.itemsize > PACK_BYTES:
            return None
        if key not in self._out_slot:
            off = slot[1]
            step = max(PACK_ALIGN // dtype.itemsize, 1)
            slot[1] = off + -(-max(int(size), 1) // step) * step
            self._out_slot[key] = Home(slot[0], slot[0], off, size, dtype, "out")
        return self._out_slot[key]

    def bind_home(self, v, home):
        """Var v lives at `home`: kernels slice the packed buffer; the host binds a name to
        a view only if host code uses it (VIEW_MARK lines are dropped otherwise)."""
        self.home[v] = home
        if home.hostview is not None:
            self.line(f"{self.A(v)} = {home.hostview}{VIEW_MARK}")
        else:
            self.line(f"{self.A(v)} = _rt.view({home.host}, {home.off}, {home.size}){VIEW_MARK}")

    def alias(self, out, src):
        """Bind array/device-scalar out to the buffer of src (a reshape, a check)."""
        self.bound.add(out)
        self.loc[out] = "dev"
        home = self.home.get(src)
        if home is not None:
            self.bind_home(out, home)
        else:
            self.home.pop(out, None)
            self.line(f"{self.A(out)} = {self.A(src)}")

    def rebind(self, v):
        """v's name is about to be bound by host code to some buffer: no packed home."""
        self.home.pop(v, None)


def pack_inputs(em, jaxpr):
    """Small array inputs of one dtype (two or more) become one packed parameter `_IN{g}`
    (runtime.pack builds it per call); -> (positions of the other inputs, groups)."""
    by_dtype = {}
    for i, v in enumerate(jaxpr.invars):
        if packable(v.aval.shape, v.aval.dtype):
            by_dtype.setdefault(np.dtype(v.aval.dtype), []).append(i)
    groups, packed = [], set()
    for dt, pos in by_dtype.items():
        if len(pos) < 2:
            continue
        offs, total = pack_layout([jaxpr.invars[i].aval.size for i in pos], dt.itemsize)
        g = len(groups)
        groups.append((dt, [(i, o, jaxpr.invars[i].aval.size) for i, o in zip(pos, offs)],
                       total))
        for i, o in zip(pos, offs):
            v = jaxpr.invars[i]
            em.bind_home(v, Home(f"_IN{g}", f"_IN{g}", o, v.aval.size, dt, "in"))
        packed.update(pos)
    return [i for i in range(len(jaxpr.invars)) if i not in packed], groups


def pack_outputs(em, plan):
    """Dtypes of which the program makes two or more small outputs get a packed output
    buffer per call (`_OUT{k}`, allocated once at the top of the host function), laid out
    in output order as `runtime.pack_layout` lays out inputs: outputs passed back in the
    same order (new parameters of a training step) need no copy."""
    keys, ins = {}, set(plan.jaxpr.invars)
    for v in plan.jaxpr.outvars:
        if not isinstance(v, Var) or v in ins:
            continue
        st = plan.storage.get(v)
        if not v.aval.shape:
            key = ("scalar", v)
        elif st is not None and not st.external and packable(v.aval.shape, v.aval.dtype):
            key = st
        else:
            continue
        keys.setdefault(np.dtype(v.aval.dtype), {}).setdefault(key, v.aval.size)
    for dt, ks in keys.items():
        if len(ks) >= 2:
            em.out_arenas[dt] = [f"_OUT{len(em.out_arenas)}", 0]
            for key, size in ks.items():
                em.out_home(key, size, dt)          # reserve the places in output order
