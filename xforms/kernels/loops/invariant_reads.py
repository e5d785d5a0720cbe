"""The rule both CPU paths read a fused loop's row-invariant elements by: the array reads of
its body whose index holds no sym of its innermost loop (a row's max, mean or sum broadcast
along the row: softmax, layernorm), which the Numba path's printer
(xforms/kernels/cpu/numba/printer.py `invariant_reads`) and the direct LLVM path
(xforms/kernels/cpu/llvm/row_reads.py) read once before that loop.

    [ld for ld in loads(body) if invariant_index(ld, inner)]   # m = AN[i0, i1, i2]
"""
from .ir import Bin, Clamp, Const, Load, Reduce, Store, Sym


def loads(body):
    """The array reads of a fused loop's statements, not those under a guard (a pad's read
    depends on where the peeled loops are)."""
    todo = []
    for st in body:
        todo.extend(getattr(st, "args", ()))
        if isinstance(st, (Store, Reduce)):
            todo.append(st.value)
    while todo:
        e = todo.pop()
        if type(e) is Load:
            yield e
        elif type(e) is Bin:
            todo += (e.a, e.b)
        elif type(e) is Clamp:
            todo.append(e.expr)


def invariant_index(ld, inner):
    """Whether load `ld`'s index is made of other loops' syms and constants alone."""
    todo = list(ld.index)
    while todo:
        e = todo.pop()
        if type(e) is Sym:
            if e is inner:
                return False
        elif type(e) is Bin:
            todo += (e.a, e.b)
        elif type(e) is Clamp:
            todo.append(e.expr)
        elif type(e) is not Const:
            return False
    return True
