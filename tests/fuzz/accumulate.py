"""Loops that accumulate products: `lax.scan` and `lax.fori_loop` bodies ending in
`acc = acc + b_t @ c_t` (an outer product, a matrix product, a contraction of the leading
axes, a sum over rows), with `acc` starting at zeros or at a value.

These are the programs the compiler's scan rewrites take apart
(xforms/kernels/prepare/scan_products.py: the accumulated product computed once after the
loop, a product of a stacked input and a loop constant before it, an elementwise map of a
stacked input sunk into the body), and their gradients the reverse sweeps' weight
accumulators:

    def step0(c, x):
        a1, a2 = c
        a3, = x
        v4 = xnp.sin(a3)
        v5 = a1 + xnp.outer(v4, a3)
        return (v5, a2), ()
    (v6, v7), _ = lax.scan(step0, (z8, x9), (x10,))
"""
from .program_ast import Block, Fori, Op, Scan, _tuple, out_shape

ACC_KINDS = ["acc_outer", "acc_dot", "acc_tdot", "acc_sum"]


def gen_accumulate(g, scope, depth, kind):
    """Statements of a scan (kind "scan_acc") or fori_loop ("fori_acc") whose first carry
    accumulates a product of the body's per-step values; `g` a programs._Gen."""
    ops = g.operands(scope)
    names, shapes, in_vars = g.params_for(ops, scope)
    counter = g.fresh("i")
    if kind == "scan_acc":
        x0, sx = g.pick(scope, lambda s: len(s) >= 1, lambda: g.shape(1))
        xnames, _, x_vars = g.params_for([x0], scope)
        in_vars = in_vars + [(n, s[1:]) for n, s in x_vars]
    stmts, inner, outs = g.block(scope, depth, in_vars, shapes,
                                 counter if kind == "fori_acc" else None)
    acc, new = g.fresh("a"), g.fresh()
    product, args = _product(g, inner)
    acc_shape = out_shape(product, [(), *[dict(inner.vars)[a] for a in args]], ())
    stmts.append(Op(new, acc_shape, product, (acc, *args)))
    pre, init = _init(g, scope, acc_shape)
    carry = [acc] + names
    if kind == "fori_acc":
        body = Block(g.fresh("body"), [counter, "c"], [f"{_unpack(carry)} = c"], stmts,
                     _tuple([new] + outs))
        stmt = Fori([], g.integer(0, 1), str(g.integer(1, 3)), [init] + ops, body)
    else:
        ys = [inner.vars[-1 - g.integer(0, min(2, len(inner.vars) - 1))][0]
              for _ in range(g.integer(0, 1))]
        body = Block(g.fresh("step"), ["c", "x"],
                     [f"{_unpack(carry)} = c", f"{_unpack(xnames)} = x"], stmts,
                     f"{_tuple([new] + outs)}, {_tuple(ys)}")
        stmt = Scan([], [], [init] + ops, [x0], g.flag(), body)
    g.finish(scope, stmt, [acc_shape] + list(shapes))
    if kind == "scan_acc":
        stmt.ys = [g.fresh() for _ in ys]
        scope.vars += [(y, (sx[0],) + dict(inner.vars)[v]) for y, v in zip(stmt.ys, ys)]
    return pre + [stmt]


def _product(g, inner):
    """(op kind, operand names) of a product of two of the body's values: mostly ones of
    this step (the rewrite stacks them over the steps), else loop constants from outside
    or carries (which it must leave alone)."""
    kind = g.choice(ACC_KINDS)
    b, sb = _operand(g, inner, lambda s: 1 <= len(s) <= 2, lambda: g.shape(1, 2))
    if kind == "acc_sum":
        return kind, (b,)
    if kind == "acc_outer":
        return kind, (b, _operand(g, inner, lambda s: len(s) == 1, lambda: g.shape(1, 1))[0])
    want = ((sb[0],) if kind == "acc_tdot" else (sb[-1],)) + g.shape(0, 1)
    return kind, (b, _operand(g, inner, lambda s: s == want, lambda: want)[0])


def _operand(g, inner, ok, make):
    """A value of the body itself (3 times in 4, where one fits), else `g.pick`'s."""
    local = [v for v in inner.vars[inner.start:] if ok(v[1])]
    if local and g.integer(0, 3):
        return local[-1 - g.integer(0, len(local) - 1)]
    return g.pick(inner, ok, make)


def _init(g, scope, shape):
    """(statements, name) of the accumulator's initial value: zeros mostly (the rewrite's
    product is then the result), else some value of its shape."""
    if g.integer(0, 2):
        z = g.fresh("z")
        return g.emit(scope, z, "zeros", (), (repr(tuple(shape)), g.dtype), shapes=[],
                      exact=True), z
    return [], g.pick_exact(scope, shape)


def _unpack(names):
    return ", ".join(names) + ("," if len(names) == 1 else "")

