"""The elements the innermost loop of a fused loop reads at the same index in every
iteration (a row's max or sum broadcast along the row: softmax, layernorm), read once
before that loop on the direct LLVM path (xforms/kernels/cpu/llvm/loops.py), by the rule
of the Numba path's printer (xforms/kernels/cpu/numba/printer.py `invariant_reads`), both
xforms/kernels/loops/invariant_reads.py.

Why: they live in buffers LLVM cannot tell apart from the ones the loop stores to (the
kernel's workspace), so read inside the loop they are loaded again after every store, and
its vectoriser gives up ("unknown data dependence").  The masked softmax feeding `a @ v` in
the transformer block (4 x 4 x 64 x 64, float32) ran its exp and divide loops scalar:
1.06 ms on the direct path against the Numba kernel's 0.58 (session 24).  The loads are
the same, only moved: the results are the same bits.

    saved = read_before(m, body, sym, n)     # m.invariant[load] -> its value
    ...                                      # the loop over `sym`; m.expr reads the table
    m.invariant = saved
"""
from ...loops.invariant_reads import invariant_index, loads
from ...loops.ir import Store


def read_before(m, body, sym, n):
    """Emit, before the innermost loop (over `sym`, `n` iterations) of statements `body`,
    the loads of its elements read at an index without `sym` from arrays the loop does not
    write; -> the table they replace (`m.invariant`), to restore after the loop.

        m = load AN[i0, i1, i2]            ; before the loop over i3
        ar = exp(AJ[i0, i1, i2, i3] - m)   ; inside it
    """
    saved = m.invariant
    if n <= 0 or (m.peel and m.peel[0] is sym):     # (the peeled axis: guarded reads)
        return saved
    m.invariant = dict(saved)
    written = {_storage(m, st.var) for st in body if isinstance(st, Store)}
    for ld in loads(body):
        if (ld.var.aval.shape and ld.var not in m.blocks and ld.var in m.arrays
                and _storage(m, ld.var) not in written and invariant_index(ld, sym)):
            m.invariant[ld] = m.expr(ld, m._element(ld.var)[0])
    return saved


def _storage(m, var):
    """The data pointer of the buffer `var` lives in (a view: its base's)."""
    var = m.views.get(var, var)
    return m.arrays.get(var, (var, None))[0]
