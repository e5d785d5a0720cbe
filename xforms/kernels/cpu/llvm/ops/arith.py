"""i64 index arithmetic for the direct path's hand-written loops (ops/signal/convolutions.py):
values are IR names or Python ints, and ints fold, so that a loop of one trip, a stride of
0 or 1 and a constant window position cost no instruction.

    i = iadd(m, imul(m, row, 5408), 3)    # "%t7" (emitted), or an int where row is one
    counted_loop(m, 9, lambda k: ...)     # a counted loop, its index an IR value
"""


def counted_loop(m, n, body):
    """A counted loop 0 .. n - 1 (n an int or an i64 value) around body(index)."""
    if n == 1:
        body(0)
        return
    sym = object()
    m._counted(sym, 0, n, False, lambda: body(m.syms[sym]))


def loop_nest(m, dims, body, idx=()):
    """Loops over `dims` around body(*indices)."""
    if not dims:
        body(*idx)
        return
    counted_loop(m, dims[0], lambda i: loop_nest(m, dims[1:], body, idx + (i,)))


def if_else(m, cond, then, other):
    """then() where i1 `cond` holds, else other(); a constant condition emits one side."""
    if cond in ("true", "false"):
        (then if cond == "true" else other)()
        return
    k = m.fresh()[2:]
    m.emit(f"br i1 {cond}, label %cvt{k}, label %cve{k}")
    m.label(f"cvt{k}")
    then()
    m.emit(f"br label %cvj{k}")
    m.label(f"cve{k}")
    other()
    m.emit(f"br label %cvj{k}")
    m.label(f"cvj{k}")


def _arith(m, op, a, b, fold):
    if isinstance(a, int) and isinstance(b, int):
        return fold(a, b)
    r = m.fresh()
    m.emit(f"{r} = {op} i64 {a}, {b}")
    return r


def iadd(m, a, b):
    if a == 0 or b == 0:
        return b if a == 0 else a
    return _arith(m, "add nsw", a, b, lambda p, q: p + q)


def imul(m, a, b):
    if a == 0 or b == 0:
        return 0
    if a == 1 or b == 1:
        return b if a == 1 else a
    return _arith(m, "mul nsw", a, b, lambda p, q: p * q)


def iudiv(m, a, b):
    return a if b == 1 else (0 if a == 0 else _arith(m, "udiv", a, b, lambda p, q: p // q))


def iurem(m, a, b):
    return 0 if b == 1 or a == 0 else _arith(m, "urem", a, b, lambda p, q: p % q)


def isdiv(m, a, b):
    return a if b == 1 else _arith(m, "sdiv", a, b, lambda p, q: p // q)


def iand(m, a, b):
    if "false" in (a, b):
        return "false"
    if a == "true" or b == "true":
        return b if a == "true" else a
    r = m.fresh()
    m.emit(f"{r} = and i1 {a}, {b}")
    return r


def element_at(m, ty, base, i):
    """A pointer to element i of a `ty` array at `base`."""
    if i == 0:
        return base
    p = m.fresh()
    m.emit(f"{p} = getelementptr {ty}, ptr {base}, i64 {i}")
    return p


def fp_cast(m, x, src, dst):
    """x, a `src` float value ("float" or "double"), as a `dst` one: fpext or fptrunc, nothing
    where the types agree.

        fp_cast(m, "%t3", "float", "double")     # "%t4" (emitted: fpext float %t3 to double)
    """
    if src == dst:
        return x
    r = m.fresh()
    m.emit(f"{r} = {'fpext' if dst == 'double' else 'fptrunc'} {src} {x} to {dst}")
    return r
