"""`einsum` by pairwise `dot_general` contractions, left to right.

Each operand is first reduced to distinct labels (a repeated label inside one operand takes
the diagonal, by a gather), and labels that no later operand and not the output need are
summed out at once.  Then the operands are contracted pairwise: labels both share and still
need become batch dimensions, labels both share and no longer need are contracted.  A final
transpose puts the labels in output order.  Implicit mode (no `->`) outputs the labels that
appear exactly once, sorted, as NumPy does; `...` stands for broadcast leading dimensions.

    >>> einsum("ij,jk->ik", a, b)       # matmul
    >>> einsum("ii", a)                  # trace
    >>> einsum("...ij,...jk", a, b)      # batched matmul
"""
import numpy as np

from ...primitives import contraction as con
from ...primitives import reductions as red
from ...primitives import structural as st
from ...primitives.operands import aval, asarray_operand, convert, promote_dtypes

# labels for the dimensions '...' stands for: private-use characters, which are not letters,
# so they never collide with a user's labels
_ELL_LABELS = "".join(chr(c) for c in range(0xE000, 0xE000 + 64))


def _parse(subscripts, ndims):
    """-> (per-operand label strings, output label string), with '...' expanded."""
    sub = subscripts.replace(" ", "")
    if "->" in sub:
        ins, out = sub.split("->")
        explicit = True
    else:
        ins, out, explicit = sub, None, False
    ins = ins.split(",")
    if len(ins) != len(ndims):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(ins)} operands, "
                         f"but {len(ndims)} were given")
    n_ell = 0
    for s, nd in zip(ins, ndims):
        _check_labels(s, subscripts)
        if "..." in s:
            n_ell = max(n_ell, nd - (len(s) - 3))
    ell = _ELL_LABELS[:n_ell]
    labels = []
    for s, nd in zip(ins, ndims):
        if "..." in s:
            k = nd - (len(s) - 3)
            if k < 0:
                raise ValueError(f"einsum: operand subscripts {s!r} do not fit a {nd}-d operand")
            s = s.replace("...", ell[n_ell - k:])
        if len(s) != nd:
            raise ValueError(f"einsum: operand subscripts {s!r} name {len(s)} axes, but the "
                             f"operand has {nd} (in {subscripts!r})")
        labels.append(s)
    if explicit:
        _check_labels(out, subscripts)
        out = out.replace("...", ell)    # without '...', broadcast dims are summed over
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscripts {out!r} repeat a label")
        for c in out:
            if not any(c in s for s in labels):
                raise ValueError(f"einsum: output label {c!r} appears in no operand "
                                 f"(in {subscripts!r})")
    else:
        counts = {}
        for s in labels:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return labels, out


def _check_labels(s, subscripts):
    rest = s.replace("...", "")
    if "." in rest or s.count("...") > 1:
        raise ValueError(f"einsum: invalid ellipsis in {subscripts!r}")
    for c in rest:
        if not c.isalpha():
            raise ValueError(f"einsum: invalid label {c!r} in {subscripts!r}; use letters")


def _diagonal(x, labels):
    """Collapse repeated labels of one operand to a single axis (its diagonal)."""
    from ..indexing.subscripts import getitem
    from ..manipulation.shapes import moveaxis
    while True:
        dup = next((c for c in labels if labels.count(c) > 1), None)
        if dup is None:
            return x, labels
        pos = [i for i, c in enumerate(labels) if c == dup]
        shape = aval(x).shape
        n = shape[pos[0]]
        if any(shape[p] != n for p in pos):
            raise ValueError(f"einsum: repeated label {dup!r} on axes of different sizes "
                             f"{[shape[p] for p in pos]}")
        x = moveaxis(x, pos, list(range(len(pos))))
        ar = np.arange(n)
        x = getitem(x, (ar,) * len(pos))           # gather: the diagonal lands on axis 0
        labels = dup + "".join(c for i, c in enumerate(labels) if i not in pos)


def _sum_out(x, labels, keep):
    axes = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not axes:
        return x, labels
    return red.reduce_sum(x, axes), "".join(c for c in labels if c in keep)


def _broadcast_labels(x, labels, sizes):
    """Broadcast size-1 axes (from '...' broadcasting) to the common size of their label."""
    shape = aval(x).shape
    target = tuple(sizes[c] for c in labels)
    if target == shape:
        return x
    return st.broadcast_in_dim(x, target, tuple(range(len(shape))))


def _from_sublists(args):
    """NumPy's interleaved form einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]):
    integer labels 0-51 stand for a-z, A-Z and Ellipsis for '...'.
    -> (subscripts string, operands)."""
    def letters(sub):
        try:
            items = list(sub)
        except TypeError:
            raise TypeError("einsum: the first argument must be a subscripts string such as "
                            "'ij,jk->ik', or an operand followed by its list of integer "
                            f"labels (NumPy's interleaved form); got {sub!r}") from None
        out = []
        for k in items:
            if k is Ellipsis:
                out.append("...")
            elif isinstance(k, (int, np.integer)) and 0 <= k < 52:
                out.append(chr(ord("a") + k) if k < 26 else chr(ord("A") + k - 26))
            else:
                raise ValueError(f"einsum: sublist labels must be integers in [0, 52) or "
                                 f"Ellipsis, got {k!r} in {sub!r}")
        return "".join(out)
    operands, subs = list(args[0::2]), [letters(sb) for sb in args[1::2]]
    out = None
    if len(operands) > len(subs):        # an odd count: the last entry is the output sublist
        out = letters(operands.pop())
    return ",".join(subs) + ("" if out is None else "->" + out), operands


def einsum(subscripts, *operands, optimize=None):
    """Einstein summation.  >>> xnp.einsum("ij,jk->ik", a, b)"""
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts,) + operands)
    if not operands:
        raise ValueError("einsum: at least one operand is needed")
    ops = [asarray_operand(x) for x in operands]
    dtype, _ = promote_dtypes(*((aval(x).dtype, aval(x).weak_type) for x in ops))
    ops = [convert(x, dtype) for x in ops]
    ops = [np.asarray(x) if isinstance(x, (np.generic, bool, int, float, complex)) else x
           for x in ops]
    labels, out = _parse(subscripts, [aval(x).ndim for x in ops])
    # every label's size; size-1 axes broadcast against the others, as in NumPy
    sizes = {}
    for x, ls in zip(ops, labels):
        for c, n in zip(ls, aval(x).shape):
            m = sizes.get(c, n)
            if n != m and 1 not in (n, m):
                raise TypeError(f"einsum: label {c!r} has sizes {m} and {n} in {subscripts!r} "
                                f"(operand shapes {', '.join(str(aval(o).shape) for o in ops)})")
            sizes[c] = m if n == 1 else n           # (0 stays 0: a zero-size operand)
    ops = [_broadcast_labels(x, ls, sizes) for x, ls in zip(ops, labels)]
    pending = [_diagonal(x, ls) for x, ls in zip(ops, labels)]

    def needed(rest):
        return set(out).union(*(set(ls) for _, ls in rest))

    x, lx = pending[0]
    x, lx = _sum_out(x, lx, needed(pending[1:]))
    for k in range(1, len(pending)):
        y, ly = pending[k]
        later = needed(pending[k + 1:])
        y, ly = _sum_out(y, ly, later | set(lx))
        x, lx = _sum_out(x, lx, later | set(ly))
        batch = [c for c in lx if c in ly and c in later]
        contract = [c for c in lx if c in ly and c not in later]
        dn = ((tuple(lx.index(c) for c in contract), tuple(ly.index(c) for c in contract)),
              (tuple(lx.index(c) for c in batch), tuple(ly.index(c) for c in batch)))
        x = con.dot_general(x, y, dn)
        lx = ("".join(batch) + "".join(c for c in lx if c not in ly)
              + "".join(c for c in ly if c not in lx))
    x, lx = _sum_out(x, lx, set(out))
    if lx != out:
        x = st.transpose(x, tuple(lx.index(c) for c in out))
    return x
