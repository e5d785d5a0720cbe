"""Products of a `scan` that need not be one small product per step.

Two rewrites of a scan equation, both moving work out of the loop into one large product:

* **stacked inputs**: a body product `x_t @ W` of a scanned input `x_t` (an xs) and a loop
  constant `W` has its value for every step known before the loop: `X @ W` over all steps
  at once (one (steps * rows) x k product; BLAS runs it faster than `steps` small ones and
  the loop drops a call), read by the body as a new xs.  An LSTM's input projection.
* **accumulated products**: a carry `acc` that a step only updates by `acc + a_t . b_t`
  (or `acc + sum(b_t)`), read by nothing else in the body, is the sum over steps of the
  products: after the loop, one product that also contracts the steps' axis,
  `acc0 + A . B`, where the body emits each step's `b_t` as a new ys (`a_t` being an xs,
  or emitted too).  The weight gradients of a scan's reverse sweep, dW = sum_t x_t^T g_t
  = X^T G, one product after the loop instead of one per step plus an add of the
  accumulator.  Where acc0 is zeros (a gradient's accumulators start so) the product is
  the result: no add pass over it, and the product writes the result's buffer.  The CPU
  backend keeps in the loop the products small_mm's nest takes per step (`in_loop`): in
  cache, they beat the stacked operands and BLAS's packing of them (`_stays`); so it
  does the input projections the nest takes.

A third rewrite moves work into the loop instead:

* **maps of stacked inputs**: an xs computed outside the loop by an elementwise equation of
  arrays of its own shape (and scalars), read by nothing but the scan and inside it only by
  elementwise equations, is computed in the body from the rows of its operands: its pass
  over all steps and its stacked buffer are gone, the body's loop fuses the map.  The
  loss's cotangent `2 * hs / N` read row by row by an LSTM's reverse sweep.

The sums are reassociated (steps summed inside the product), so results differ from the
per-step loop by rounding only.  A new stacked input or output is kept below `MAX_STACKED`
elements: the program then holds a (steps x ...) array where it held one step's.

    >>> hoist_step_products(jaxpr)    # scan(W; acc; X) { y = X_t @ W; acc + X_t^T @ g }
    ...                               # -> XW = X @ W; scan(; ; X, XW) { ... ys g }; acc + X^T G
"""
import math

from xforms.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, use_counts
from xforms.core.avals import ShapedArray
from xforms.primitives.contraction import dot_general_p
from xforms.primitives.control.scan import scan_p
from xforms.primitives.elementwise import add_p
from xforms.primitives.reductions import reduce_sum_p
from xforms.primitives.structural import broadcast_in_dim_p

from .fusion_classes import ELEMENTWISE

MAX_STACKED = 1 << 24        # elements of a hoisted stacked product (64 MiB of float32)


def hoist_step_products(jaxpr, zeros=(), in_loop=None):
    """-> `jaxpr` with each top-level scan's stacked-input and accumulated products moved out
    of the loop (module docstring); `zeros`: its constvars known to hold zeros only.
    `in_loop(m, n, k, dtype, tb)`: whether a product of one step of those sizes stays in
    the loop (the CPU backend's: where small_mm's nest takes it), and with it a sum
    accumulated over a per-step value that nothing else stacks (None: every one moves
    out; `_stays`)."""
    eqns, zeros = [], set(zeros)
    for e in jaxpr.eqns:
        if _zeros(e):
            zeros.add(e.outvars[0])
        if e.prim is scan_p and not e.params["jaxpr"].consts \
                and not e.params["jaxpr"].jaxpr.constvars:
            eqns.extend(_rewrite(e, zeros, in_loop))
        else:
            eqns.append(e)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)


class _Scan:
    """A scan equation taken apart: the body's consts / carry / xs invars, carry outs and ys,
    with the outer operands and results beside them (edited, then put back by `eqn`)."""

    def __init__(self, e):
        p, j = e.params, e.params["jaxpr"].jaxpr
        nc, nx = p["num_consts"], p["num_carry"]
        self.e, self.eqns = e, list(j.eqns)
        self.consts = list(zip(j.invars[:nc], e.invars[:nc]))
        self.carry = list(zip(j.invars[nc:nc + nx], e.invars[nc:nc + nx], j.outvars[:nx],
                              e.outvars[:nx]))
        self.xs = list(zip(j.invars[nc + nx:], e.invars[nc + nx:]))
        self.ys = list(zip(j.outvars[nx:], e.outvars[nx:]))

    def eqn(self):
        body = Jaxpr([], [v for v, _ in self.consts] + [c[0] for c in self.carry]
                     + [v for v, _ in self.xs], self.eqns,
                     [c[2] for c in self.carry] + [v for v, _ in self.ys])
        params = dict(self.e.params, jaxpr=ClosedJaxpr(body, []),
                      num_consts=len(self.consts), num_carry=len(self.carry))
        return self.e.replace(
            invars=[a for _, a in self.consts] + [c[1] for c in self.carry]
            + [a for _, a in self.xs],
            outvars=[c[3] for c in self.carry] + [a for _, a in self.ys], params=params)

    def uses(self, v):
        n = sum(a is v for b in self.eqns for a in b.invars)
        return n + sum(c[2] is v for c in self.carry) + sum(y is v for y, _ in self.ys)

    def producer(self, v):
        return next((b for b in self.eqns if v in b.outvars), None)

    def stacked(self, v):
        """The outer (steps x ...) array of body value `v`: its xs operand, or a new ys."""
        for x, outer in self.xs:
            if x is v:
                return outer
        for y, outer in self.ys:
            if y is v:
                return outer
        if self.producer(v) is None or not _fits(v, self.e):
            return None                     # a const, a carry or a literal: not per-step
        outer = Var(ShapedArray((self.e.params["length"],) + v.aval.shape, v.aval.dtype))
        self.ys.append((v, outer))
        return outer


def _zeros(e):
    """Whether `e` makes an array of zeros (a broadcast literal 0)."""
    x = e.invars[0] if e.prim is broadcast_in_dim_p else None
    return isinstance(x, Literal) and x.val == 0


def _rewrite(e, zeros, in_loop=None):
    s, before, after = _Scan(e), [], []
    const_of = {v: outer for v, outer in s.consts}
    for b in list(s.eqns):
        moved = _stacked_input(s, b, const_of, in_loop)
        if moved is not None:
            before.append(moved)
    # products first: a sum then moves out only where a moved product stacks its operand
    for sums in (False, True):
        while True:
            moved = next((m for c in list(s.carry)
                          for m in [_accumulated(s, c, zeros, sums, in_loop)] if m), None)
            if moved is None:
                break
            after.extend(moved)
    if not before and not after:
        return [e]
    return before + [s.eqn()] + after


def _fits(v, scan):
    """Whether `v` stacked over the scan's steps stays within MAX_STACKED elements."""
    return math.prod(v.aval.shape) * scan.params["length"] <= MAX_STACKED


def _dims(params):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    return lc, rc, lb or rb


def _stacked_input(s, b, const_of, in_loop=None):
    """Body product `x_t . W` (x_t an xs, W a const, no batch axes) -> the outer product over
    every step, its result read by the body as a new xs; None where it does not apply or
    `in_loop` keeps one step's product in the loop (`_stays`)."""
    if b.prim is not dot_general_p or any(isinstance(a, Literal) for a in b.invars) \
            or _stays(s, b, in_loop):
        return None
    lc, rc, batch = _dims(b.params)
    x, w = b.invars
    xs_of = dict(s.xs)
    if batch or x not in xs_of or w not in const_of or not _fits(b.outvars[0], s.e):
        return None
    out = b.outvars[0]
    stacked = Var(ShapedArray((s.e.params["length"],) + out.aval.shape, out.aval.dtype))
    dn = ((tuple(a + 1 for a in lc), tuple(rc)), ((), ()))
    s.eqns.remove(b)
    s.xs.append((out, stacked))
    return Eqn(b.prim, [xs_of[x], const_of[w]], [stacked], dict(b.params, dimension_numbers=dn),
               b.source_info)


def _accumulated(s, c, zeros, sums, in_loop=None):
    """Carry `c` updated only by `acc + a_t . b_t` or, with `sums`, `acc + sum(b_t)` -> [the
    product over the steps, acc0 + it] after the loop ([the product] where acc0 is in
    `zeros`), the carry gone; None where it does not apply or the product stays in the
    loop (`_stays`)."""
    acc, init, out, final = c
    add = s.producer(out)
    if add is None or add.prim is not add_p or acc not in add.invars or s.uses(acc) != 1 \
            or s.uses(out) != 1 or add.invars[0].aval != add.invars[1].aval:
        return None
    term = add.invars[1] if add.invars[0] is acc else add.invars[0]
    prod = s.producer(term) if isinstance(term, Var) else None
    if prod is None or (prod.prim is reduce_sum_p) != sums or s.uses(term) != 1 \
            or not _summable(prod) or _stays(s, prod, in_loop):
        return None
    ys_before = len(s.ys)
    operands = [s.stacked(a) for a in prod.invars]
    if any(o is None for o in operands):
        del s.ys[ys_before:]
        return None
    s.eqns.remove(add)
    s.eqns.remove(prod)
    s.carry.remove(c)
    if init in zeros:              # 0 + total is total (but for -0.0, which becomes +0.0)
        return [Eqn(prod.prim, operands, [final], _over_steps(prod), prod.source_info)]
    total = Var(term.aval)
    return [Eqn(prod.prim, operands, [total], _over_steps(prod), prod.source_info),
            Eqn(add.prim, [init, total], [final], add.params, add.source_info)]


def _stays(s, prod, in_loop):
    """Whether product `prod` of scan `s` (an input projection or an accumulated one) stays
    in the loop: a product of 2-D operands whose one step `in_loop` takes, or a sum of a
    per-step value that no xs or ys already holds for every step (moved out, the sum
    would stack it: a write and a read of (steps x ...) for the same adds).

    Why (issue #37, session 34): on the AVX-512 Xeon VM small_mm's nest, one step at a time
    in cache, beat the stacked operands and one product over the steps: the LSTM
    gradient's weight gradients (per step 128x32 @ 32x512, C += ...) against the stacked
    (100 x 32 x 512) cotangents that BLAS packed twice, its input projection (32x32 @
    32x512) against a (3200 x 512) product that BLAS first zeroed.  CPU ms a call, fresh
    processes, one thread, load 20-23, before -> after: gradient 34.4 / 24.4 / 31.0 ->
    15.2 / 17.9 / 16.0, forward 7.9 / 9.8 / 6.3 -> 4.3 / 7.8 / 5.5."""
    if in_loop is None:
        return False
    if prod.prim is reduce_sum_p:
        x = prod.invars[0]
        return not any(v is x for v, _ in s.xs + s.ys)
    sizes = _step_sizes(prod)
    return sizes is not None and bool(in_loop(*sizes))


def _step_sizes(prod):
    """(m, n, k, dtype, tb) of product `prod` of 2-D operands contracting one axis each
    (C = op(A) @ op(B), B read transposed where `tb`), else None."""
    a, b = prod.invars
    lc, rc, batch = _dims(prod.params)
    if batch or a.aval.ndim != 2 or b.aval.ndim != 2 or len(lc) != 1 \
            or a.aval.dtype != b.aval.dtype:
        return None
    k = a.aval.shape[lc[0]]
    return (a.aval.shape[1 - lc[0]], b.aval.shape[1 - rc[0]], k, a.aval.dtype, rc[0] == 1)


def _summable(prod):
    if prod.prim is reduce_sum_p:
        return True
    return prod.prim is dot_general_p and not _dims(prod.params)[2] \
        and not any(isinstance(a, Literal) for a in prod.invars)


def _over_steps(prod):
    """`prod`'s params on stacked operands, contracting (or summing) the steps' axis too."""
    if prod.prim is reduce_sum_p:
        return dict(prod.params, axes=(0,) + tuple(a + 1 for a in prod.params["axes"]))
    lc, rc, _ = _dims(prod.params)
    dn = (((0,) + tuple(a + 1 for a in lc), (0,) + tuple(a + 1 for a in rc)), ((), ()))
    return dict(prod.params, dimension_numbers=dn)


def sink_stacked_maps(jaxpr):
    """-> `jaxpr` with each top-level scan's xs that is an elementwise map of same-shaped
    arrays computed in the body instead (module docstring, third rewrite).

    >>> sink_stacked_maps(jaxpr)   # g = 2.0 * hs; scan(...; g) { g_t + ... }
    ...                            # -> scan(...; hs) { 2.0 * hs_t + ... }"""
    eqns, uses = list(jaxpr.eqns), use_counts(jaxpr)
    for e in list(eqns):               # (eqns loses the maps moved)
        if e.prim is not scan_p or e.params["jaxpr"].consts \
                or e.params["jaxpr"].jaxpr.constvars:
            continue
        s, moved = _Scan(e), False
        while True:
            made = {v: p for p in eqns for v in p.outvars}
            x = next((x for x in s.xs if _sinkable(s, x, made.get(x[1]), uses)), None)
            if x is None:
                break
            _sink(s, x, made[x[1]], eqns, uses)
            moved = True
        if moved:
            eqns[eqns.index(e)] = s.eqn()
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)


def _sinkable(s, x, p, uses):
    """Whether xs `x` of scan `s`, made by `p` outside, can be made in the body instead."""
    row, outer = x
    return (p is not None and p.prim in ELEMENTWISE and len(p.outvars) == 1
            and uses.get(outer) == 1
            and all(isinstance(a, Literal) or a.aval.shape == outer.aval.shape
                    for a in p.invars)
            and all(b.prim in ELEMENTWISE for b in s.eqns if row in b.invars)
            and all(row is not c[2] for c in s.carry) and all(row is not y for y, _ in s.ys))


def _sink(s, x, p, eqns, uses):
    """Move the outer map `p` of xs `x` into the body, reading rows of its operands."""
    row, outer = x
    rows = dict((o, r) for r, o in s.xs)
    s.xs.remove(x)
    args = []
    for a in p.invars:
        if isinstance(a, Var) and a not in rows:
            rows[a] = Var(ShapedArray(a.aval.shape[1:], a.aval.dtype))
            s.xs.append((rows[a], a))
        elif isinstance(a, Var):
            uses[a] -= 1                # an xs already: it loses p as a reader
        args.append(rows.get(a, a) if isinstance(a, Var) else a)
    s.eqns.insert(0, p.replace(invars=args, outvars=[row]))
    eqns.remove(p)
