"""Which of a scan's stacked outputs its host loop computes in their rows, decided once for
both backends: the CPU's kernel (xforms/kernels/cpu/numba/control.py) and CUDA's host code
(xforms/kernels/cuda/printer/scan_rows.py) print the same choices, each in its own terms
(a NumPy view of a row, a device window).

    for t in range(n):          # the LSTM gradient's forward scan
        h_t = ...               # computed in row t of the stacked h (`row_outputs`)
                                # h of the step before: row t of one buffer of n + 1 rows,
                                # its new value row t + 1 (`stepped_rows`) -- no row stored

A stacked output may be laid out in a larger buffer only where its storage is the loop's
own (`own_buffer`): a program output or input keeps the buffer the caller sees (a view of the
kernel's workspace returned as an output would change at the next call).
"""
from collections import Counter

from xforms.core.ir import Var

from .fusion import stepped_carries


def own_buffer(plan, v):
    """Whether stacked output `v` of Plan `plan` may be a window of a larger buffer: its
    storage is no program output and no input, and it took over no other value's buffer."""
    st = plan.storage.get(v)
    return (st is not None and not st.external and not st.is_output
            and plan.reuse.get(v) is None)


def never_written(st):
    """Whether a loop body never writes the buffer of an input of Storage `st`: not owned
    by the body (external), or a body output too (its stacked row: never updated in place,
    xforms/kernels/plan/storage.py)."""
    return getattr(st, "external", False) or getattr(st, "is_output", False)


def stepped_rows(plan, body, params, ys):
    """[(j, y, z)]: the carries `j` of the scan (in Plan `plan`, body plan `body`, stacked
    outputs `ys`) that step through the rows of one buffer of n + 1 rows -- y the stacked
    input (rows 0..n-1, a gradient's residual), z the stacked new value (rows 1..n; None
    where the body does not stack it: it gets rows of its own).  Both must own their
    buffers, and z be laid out with y (`plan.tied`).

        scan(lambda h, x: (tanh(h + x), (h, tanh(h + x))), ...)   # -> [(0, ys[0], ys[1])]
    """
    out, done = [], set()
    for j, a, b in stepped_carries(body.jaxpr, params):
        y, z = ys[a], (ys[b] if b is not None else None)
        if y in done or z in done or not own_buffer(plan, y):
            continue
        if z is not None and ((y, z) not in plan.tied or not own_buffer(plan, z)):
            continue
        out.append((j, y, z))
        done.update((y, z))
    return out


def row_outputs(body, nconsts, num_carry, rows, scalars):
    """[(key, y)]: the body outputs computed in their row of stacked output `y` (of `rows`,
    (body output index, stacked Var) pairs) -- those that leave the body only as that row
    (no other output, not a body input or constant, their buffer no other output's); also
    a carry whose input the body never writes (an LSTM's h: the next step reads the row).
    `key` is the output's Storage, or ("scalar", var) for a device scalar where `scalars`
    (CUDA: a one-element buffer of its own, never updated in place)."""
    outs, ins = body.jaxpr.outvars, body.jaxpr.invars
    stores = [body.storage.get(v) if isinstance(v, Var) else None for v in outs]
    uses = Counter(st for st in stores if st is not None)
    found = []
    for k, y in rows:
        o, st = outs[k], stores[k]
        if (not isinstance(o, Var) or o in ins or o in body.jaxpr.constvars
                or outs[num_carry:].count(o) > 1 or not (o.aval.shape or scalars)):
            continue
        if not all(not ins[nconsts + j].aval.shape
                   or never_written(body.storage.get(ins[nconsts + j]))
                   for j in range(num_carry) if outs[j] is o):
            continue
        if not o.aval.shape:
            found.append((("scalar", o), y))
        elif st is not None and not st.external and uses[st] == outs.count(o):
            found.append((st, y))
    return found


def carries_in_rows(body, c_outs, rows, scalars):
    """[(carry, {stacked Vars})]: the scan's carries `c_outs` that the body also stacks
    (`rows`), which may be left in a row of the stacked output after the loop (each
    backend copies them out once, not a step); device scalars too where `scalars`."""
    outs, found = body.jaxpr.outvars, []
    for j, v in enumerate(c_outs):
        stacked = {y for k, y in rows if outs[k] is outs[j]}
        if stacked and (v.aval.shape or scalars):
            found.append((v, stacked))
    return found
