"""Where the arrays of a direct-path kernel live (issue #35; xforms/kernels/cpu/llvm/loops.py
allocates them): the outputs the executable's pool passes in, the temporaries carved from
its workspace, and the temporaries computed in an output's array -- the Numba path's rules
(xforms/kernels/cpu/buffers.py), so that both touch the same memory.

    pooled_outputs(plan)   # outputs of 32 MiB or more, loop carries of 1 MiB: trailing arguments
    workspace(plan)        # (bytes, {temporary: offset}) of 16 kB or more in all, else (0, {})
    stepped(plan)          # the scans' carries stepped through the rows of their residuals
    shared(plan)           # {temporary: output} computed in the output's array
"""
from types import SimpleNamespace

import numpy as np

from xforms.core.facts import carried_outputs

from ...plan.fusion import stepped_carries
from ...prepare.fusion_classes import REDUCTIONS
from ...prepare.shape_symbols import is_symbolic
from ..buffers import ALIGN, POOLED_CARRY_MIN_BYTES, POOLED_OUTPUT_MIN_BYTES, WORKSPACE_MIN_BYTES
from . import invariants


def pooled_outputs(plan):
    """The outputs written into buffers the executable's pool passes in after the arguments
    (xforms/kernels/cpu/buffers.py: from glibc's largest mmap threshold, a fresh array
    would fault every page in every call; a top-level loop's carry from
    POOLED_CARRY_MIN_BYTES, as the Numba path's `pooled_carry`), in the order the kernel
    takes them."""
    outs = [v for v in plan.outputs if v.aval.shape]
    carries = _loop_carries(plan)
    return [v for v in dict.fromkeys(outs) if outs.count(v) == 1
            and v not in plan.jaxpr.invars and array_nbytes(v) >= (
                POOLED_CARRY_MIN_BYTES if v in carries else POOLED_OUTPUT_MIN_BYTES)]


def _loop_carries(plan):
    """The array carries of the plan's loops (scan, for_loop, while) in buffers of their own.

    An optimizer's state updated by a fori_loop leaves as outputs that the caller drops
    all at once, more than glibc keeps: allocated afresh, each call faulted every page in
    again -- the VAE epoch's 22 MB of parameters and velocities, 7.5% of its CPU time in
    the kernel (perf, one thread) against 1.2% for the Numba kernel, which pools them."""
    found = set()
    for st in plan.steps:           # (a loop's facts name its carries; a scan's come first)
        if st.kind != "control":
            continue
        for v in carried_outputs(st.eqn):
            s = plan.storage.get(v)
            if (v.aval.shape and s is not None and not s.external and plan.reuse.get(v) is None
                    and not is_symbolic(v.aval.shape)):
                found.add(v)
    return found


def shared(plan):
    """{temporary u: output v} where a loop writes output `v` in the buffer of `u`, which
    dies there (`plan.reuse[v] is u`: read only at the loop's index, xforms/kernels/plan/
    storage.py `_inplace_sources`), as the Numba kernel does: `u` is computed in `v`'s
    array (an optimizer's step: the gradient's product in the new parameters' buffer),
    not in a temporary of its own (measured: the MNIST MLP's update, float64 batch 128,
    kept its 14 MB of weight gradients apart, 20% slower than the Numba kernel).

        >>> shared(plan)         # w2 = w - lr * dw, dw = a.T @ g
        {dw: w2}
    """
    outs = set(plan.outputs)
    written = {}
    for st in plan.steps:
        if st.kind in ("loop", "op"):
            for v in arrays_written(st):
                written[v] = st.kind
    ins = set(plan.jaxpr.invars) | set(plan.jaxpr.constvars)
    pairs = {u: v for v, u in plan.reuse.items()
             if written.get(v) == "loop" and v in outs and u in written
             and u not in plan.placed
             and u not in outs and u not in ins and array_nbytes(u) == array_nbytes(v)
             and np.dtype(u.aval.dtype) == np.dtype(v.aval.dtype)}
    pooled = set(pooled_outputs(plan))
    return {u: v for u, v in pairs.items() if v not in pooled and list(plan.outputs).count(v) == 1}


def workspace(plan):
    """(bytes, {temporary: offset}): the arrays the loops write that are no output, carved
    at ALIGN-byte offsets from one workspace the executable's pool passes in (as the Numba
    path's, xforms/kernels/cpu/buffers.py: from WORKSPACE_MIN_BYTES in all; a fresh array a
    call lets glibc map and unmap, faulting its pages every call), else (0, {}).  A scan's
    carry stepped through the rows of its stacked input (`stepped`) gets one region of
    n + 1 rows for both its stacked outputs."""
    return _layout(plan)[:2]


def stepped(plan):
    """{id(scan eqn): [(carry position, stacked input index, stacked new value index or
    None)]} of the top-level scans whose carries step through the rows of one workspace
    region (plan/fusion.py `stepped_carries`), as the Numba path's `stack_rows`
    (xforms/kernels/cpu/numba/control.py): the stacked input (a gradient's residual: the LSTM's h
    and c of the step before) holds rows 0..n-1 of n + 1, the new value rows 1..n (reverse
    scans the other way round), so the carry is read in its row and stored by no copy.

        >>> stepped(plan)        # an LSTM's forward sweep in its gradient
        {140...: [(0, 0, 12), (1, 2, None)]}
    """
    return _layout(plan)[2]


def _layout(plan):
    outs, inside = set(plan.outputs), shared(plan)
    temps = [v for st in plan.steps for v in arrays_written(st)
             if v not in outs and v not in inside and v not in plan.placed]
    offsets, off, steps = {}, 0, {}
    temp_set = set(temps)
    for st in plan.steps:
        for y, z, row, entry, reverse in _stepped_pairs(st, temp_set, offsets):
            size = -(-(array_nbytes(y) + row) // ALIGN) * ALIGN
            offsets[y] = off + (row if reverse else 0)
            if z is not None:
                offsets[z] = off + (0 if reverse else row)
            steps.setdefault(id(st.eqn), []).append(entry)
            off += size
    for v in dict.fromkeys(temps):
        if v not in offsets:
            offsets[v] = off
            off += -(-array_nbytes(v) // ALIGN) * ALIGN
    return (off, offsets, steps) if off >= WORKSPACE_MIN_BYTES else (0, {}, {})


def _stepped_pairs(st, temps, taken):
    """(stacked input, stacked new value or None, row bytes, `stepped` entry, reverse) of
    scan step `st`'s stepped carries whose stacked arrays are workspace temporaries."""
    if st.kind != "control" or st.eqn.prim.name != "scan" or int(st.eqn.params["length"]) < 1:
        return []
    p, (body,) = st.eqn.params, st.subplans
    ys = st.eqn.outvars[p["num_carry"]:]
    out, taken = [], set(taken)
    for j, a, b in stepped_carries(body.jaxpr, p):
        y, z = ys[a], (ys[b] if b is not None else None)
        if (len(y.aval.shape) < 2 or y not in temps or y in taken or y is z
                or (z is not None and (z not in temps or z in taken))):
            continue
        taken |= {y, z}
        out.append((y, z, array_nbytes(y) // int(p["length"]), (j, a, b), p["reverse"]))
    return out


class Workspace:
    """The workspace argument: a C-contiguous, ALIGN-aligned uint8 array of `nbytes`."""

    def __init__(self, nbytes):
        self.aval = SimpleNamespace(shape=(nbytes,), dtype=np.dtype(np.uint8))


def array_nbytes(v):
    return int(np.prod([int(d) for d in v.aval.shape], dtype=np.int64)) * v.aval.dtype.itemsize


def arrays_written(step):
    """The arrays `step` writes: its stores' and its reductions' outputs (a product's)."""
    if step.kind == "op":
        return [v for v in step.eqn.outvars if v.aval.shape]
    if step.kind == "control":      # (its sub-plans' intermediates: allocated once, before)
        inner = [v for sub in step.subplans for st in sub.steps for v in arrays_written(st)]
        return list(dict.fromkeys([*(v for v in step.eqn.outvars if v.aval.shape), *inner,
                                   *invariants.copies(step)]))
    outs = [eqn.outvars[0] for eqn, _ in step.body if eqn.prim in REDUCTIONS]
    return [v for v in dict.fromkeys([*step.writes, *outs]) if v.aval.shape]
