"""A scan's products outside its loop (xforms/kernels/prepare/scan_products.py): the product of
a scanned input with a loop constant is one product over all steps before the loop, a
carry that only accumulates products (a reverse sweep's weight gradients) is one product
after it; sums of zero pads that tile an array (the transpose of `split`) are one
concatenate (prepare/pad_sums.py).  Results are the fast tier's up to rounding (the steps'
sums are reassociated)."""
import types

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.prepare.passes import prepare
from benchmarks.workloads import cliffs
from plan_check import loop_bodies as loops

_XF = types.SimpleNamespace(np=xnp, lax=lax)

RNG = np.random.default_rng(11)
T, B, I, H = 7, 3, 4, 5
PARAMS = tuple(a.astype(np.float32) for a in (RNG.standard_normal((I, 4 * H)) / 2,
                                              RNG.standard_normal((H, 4 * H)) / 2,
                                              RNG.standard_normal(4 * H) / 10))
XS = RNG.standard_normal((T, B, I)).astype(np.float32)


def lstm(params, xs):
    # the cliffs benchmark's LSTM loss (written once, against a namespace)
    return cliffs.lstm_loss(_XF, params, xs)


def products(lines):
    return sum("mm_" in ln or "la_mm" in ln for ln in lines)


def prims(closed):
    return [e.prim.name for e in closed.jaxpr.eqns]


def test_input_projection_leaves_the_forward_loop():
    f = xf.jit(lstm, tiered=False)
    (body,) = loops(f.lower(PARAMS, XS).as_text()).values()
    assert products(body) == 1, body                  # h @ wh only; x @ wx for all steps before
    np.testing.assert_allclose(f(PARAMS, XS), xf.jit(lstm, tiered=True)(PARAMS, XS),
                               rtol=2e-6)


def test_weight_gradients_are_one_product_after_the_reverse_loop():
    g = xf.jit(xf.grad(lstm), tiered=False)
    src = g.lower(PARAMS, XS).as_text()
    fwd, rev = loops(src).values()
    assert products(fwd) == 1 and products(rev) == 1, (fwd, rev)   # the recurrent ones
    assert "max(" not in "\n".join(rev)               # no clamped reads of the split's pads
    got, want = g(PARAMS, XS), xf.jit(xf.grad(lstm), tiered=True)(PARAMS, XS)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("b, i, j, in_loop, numba", [
    (3, 2, 4, False, False), (3, 2, 4, True, False), (8, 16, 32, False, False),
    (8, 16, 32, True, False), (8, 16, 32, True, True)])
def test_reverse_scan_accumulation_matches_numpy(monkeypatch, b, i, j, in_loop, numba):
    """acc + x_t^T y_t and acc + sum(y_t) over a reverse scan, and the input product x_t @ m
    of all steps before it, against NumPy's sums: the products moved out of the loop, or
    kept in it (the CPU backend's choice, `nest_ir.step_in_loop`, forced here; at (8, 16,
    32) an AVX-512 host runs them as small_mm's nest, C += x_t^T y_t), on the direct LLVM
    path or Numba's."""
    from xforms.kernels.runtime.products import nest_ir
    monkeypatch.setattr(nest_ir, "step_in_loop", lambda *sizes: in_loop)
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0" if numba else "1")
    xs, ws, m = RNG.standard_normal((6, b, i)), RNG.standard_normal((6, b, j)), \
        RNG.standard_normal((i, j))

    def f(a0, s0, xs, ws, m):
        def step(c, xw):
            acc, s, h = c
            x, w = xw
            y = xnp.tanh(w + h + x @ m)
            return (acc + x.T @ y, s + xnp.sum(y, axis=0), y), None
        return lax.scan(step, (a0, s0, xnp.zeros((b, j))), (xs, ws), reverse=True)[0]
    a0, s0 = RNG.standard_normal((i, j)), RNG.standard_normal(j)
    acc, s, _ = xf.jit(f, tiered=False)(a0, s0, xs, ws, m)
    h, ys = np.zeros((b, j)), np.zeros((6, b, j))
    for t in reversed(range(6)):
        h = ys[t] = np.tanh(ws[t] + h + xs[t] @ m)
    np.testing.assert_allclose(acc, a0 + np.einsum("tbi,tbj->ij", xs, ys), rtol=1e-12)
    np.testing.assert_allclose(s, s0 + ys.sum((0, 1)), rtol=1e-12)
    src = xf.jit(f, tiered=False).lower(a0, s0, xs, ws, m).as_text()
    (body,) = loops(src).values()
    assert products(body) == 2 * in_loop, body      # x_t @ m and x_t^T @ y_t, or neither


def test_the_cpu_keeps_the_step_products_its_nest_takes():
    """The CPU backend's choice (nest_ir.step_in_loop): an LSTM step's products on an
    AVX-512 host where small_mm's rule takes them; never an integer product or one whose
    columns are no whole number of vectors.  At such sizes the LSTM gradient's loops keep
    their products: 2 in the forward sweep (x_t @ wx, h @ wh), 3 in the reverse one."""
    from xforms.kernels.runtime.products import nest_ir
    f32 = np.dtype(np.float32)
    assert not nest_ir.step_in_loop(128, 20, 32, f32)
    assert not nest_ir.step_in_loop(128, 512, 32, np.dtype(np.int32))
    assert nest_ir.step_in_loop(128, 512, 32, f32) == nest_ir.host_available()
    if not nest_ir.step_in_loop(16, 64, 8, f32):
        pytest.skip("small_mm's nest needs an AVX-512 host")
    params, xs = cliffs.lstm_data(3, steps=4, batch=8, inputs=16, hidden=16)
    g = xf.jit(xf.grad(lstm), tiered=False)
    fwd, rev = loops(g.lower(params, xs).as_text()).values()
    assert products(fwd) == 2 and products(rev) == 3, (fwd, rev)


def test_products_kept_in_the_loop_keep_their_sums():
    """Accumulated products the caller keeps in the loop (the CPU backend: those small_mm's
    nest takes one step at a time) stay there, and so does the bias's sum of the
    cotangents they read: nothing else stacks those; where one product moves out, the
    sum moves with it (it reads the stacked cotangents)."""
    j = xf.make_jaxpr(xf.grad(lstm))(PARAMS, XS)
    for keep, moved in [(lambda *sizes: True, []),
                        (lambda m, n, k, dtype, tb: m == H, ["dot_general", "reduce_sum"])]:
        p = prepare(j, keep)
        rev = [e for e in p.jaxpr.eqns if e.prim.name == "scan"][-1]
        after = prims(p)[p.jaxpr.eqns.index(rev) + 1:]
        assert sorted(after) == moved, after
        body = prims(rev.params["jaxpr"])
        assert body.count("dot_general") == 3 - moved.count("dot_general") and \
            body.count("reduce_sum") == 1 - moved.count("reduce_sum"), body


def test_zero_accumulators_are_the_products_themselves():
    """The LSTM gradient's weight and bias sums start at zeros: after the reverse loop each
    is its product (or sum) over the steps alone, with no `0 + X^T G` pass."""
    j = prepare(xf.make_jaxpr(xf.grad(lstm))(PARAMS, XS))
    last = max(k for k, e in enumerate(j.jaxpr.eqns) if e.prim.name == "scan")
    after = prims(j)[last + 1:]
    assert "add" not in after and after.count("dot_general") == 2, after
    assert after.count("reduce_sum") == 1, after


@pytest.mark.parametrize("steps", [0, 5])
def test_zero_accumulator_over_steps(steps):
    """acc = zeros; acc + x_t^T tanh(x_t) over the steps: the product alone (zeros when there
    are no steps: BLAS contracts nothing), as NumPy's sum."""
    def f(xs):
        def step(acc, x):
            return acc + x.T @ xnp.tanh(x), None
        return lax.scan(step, xnp.zeros((2, 2)), xs)[0]
    xs = RNG.standard_normal((steps, 3, 2))
    got = xf.jit(f, tiered=False)(xs)
    np.testing.assert_allclose(got, np.einsum("tbi,tbj->ij", xs, np.tanh(xs)), rtol=1e-12)
    assert "add" not in prims(prepare(xf.make_jaxpr(f)(xs)))


def test_only_scan_accumulators_are_read_for_zeros(monkeypatch):
    """Telling a zero accumulator reads the constant whole: only constants that start a
    scan's carry are read, not every constant of the program (a large table, every compile)."""
    from xforms.kernels.prepare import passes
    read = []
    monkeypatch.setattr(passes, "_all_zero", lambda c: read.append(np.shape(c)) or not np.any(c))
    table, acc0 = np.zeros(1000), np.zeros((2, 2))

    def f(xs):
        def step(acc, x):
            return acc + x.T @ xnp.tanh(x), None
        return lax.scan(step, acc0, xs)[0] + xnp.sum(xs * table[:2])
    xs = RNG.standard_normal((5, 3, 2))
    assert "add" in prims(prepare(xf.make_jaxpr(f)(xs)))     # (+ the table's sum)
    assert read == [(2, 2)]


def test_the_loss_cotangent_is_computed_in_the_reverse_loop():
    """The LSTM gradient's `2 * hs / N`, a map over the stacked hidden states read row by row
    by the reverse sweep, is computed in that sweep: no top-level pass between the loops."""
    j = prepare(xf.make_jaxpr(xf.grad(lstm))(PARAMS, XS))
    at = [k for k, e in enumerate(j.jaxpr.eqns) if e.prim.name == "scan"]
    assert len(at) == 2 and "mul" not in prims(j)[at[0]:at[1]], prims(j)
    assert prims(j.jaxpr.eqns[at[1]].params["jaxpr"])[:2] == ["mul", "mul"]


def _map_then_scan(inner):
    def f(xs, ys, m):
        zs = xnp.exp(xs) * ys + 1.0                  # a map of two stacked arrays

        def step(c, z):
            return xnp.tanh(c + inner(z, m)), c
        return lax.scan(step, xnp.ones(3), zs, reverse=True)
    return f


@pytest.mark.parametrize("inner, sunk", [(lambda z, m: 2.0 * z, True),
                                          (lambda z, m: z @ m, False)])
def test_stacked_maps_move_into_the_body_of_elementwise_readers(inner, sunk):
    """A map read in the body by elementwise equations is computed there; one read by a
    product stays a stacked input (the product would need it stored a step at a time)."""
    xs, ys, m = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 3)), \
        RNG.standard_normal((3, 3))
    f = _map_then_scan(inner)
    top = prims(prepare(xf.make_jaxpr(f)(xs, ys, m)))
    assert ("exp" in top) != sunk, top
    c, want = np.ones(3), np.zeros((6, 3))
    for t in reversed(range(6)):
        want[t], c = c, np.tanh(c + inner(np.exp(xs[t]) * ys[t] + 1.0, m))
    got = xf.jit(f, tiered=False)(xs, ys, m)
    np.testing.assert_allclose(got[0], c, rtol=1e-12)
    np.testing.assert_allclose(got[1], want, rtol=1e-12)


def test_maps_made_before_two_scans_move_into_each():
    """exp(xs) and sin(ys) both made before the first scan: each moves into its scan."""
    def f(xs, ys):
        a, b = xnp.exp(xs), xnp.sin(ys)
        step = lambda c, z: (xnp.tanh(c + 2.0 * z), None)       # noqa: E731
        return lax.scan(step, xnp.ones(3), a)[0], lax.scan(step, xnp.ones(3), b)[0]
    xs, ys = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3))
    top = prims(prepare(xf.make_jaxpr(f)(xs, ys)))
    assert "exp" not in top and "sin" not in top, top
    want = []
    for zs in (np.exp(xs), np.sin(ys)):
        c = np.ones(3)
        for z in zs:
            c = np.tanh(c + 2.0 * z)
        want.append(c)
    for got, w in zip(xf.jit(f, tiered=False)(xs, ys), want, strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-12)


def test_a_carry_read_in_the_step_keeps_its_products():
    def f(a0, xs):
        def step(acc, x):
            acc = acc + x.T @ xnp.tanh(x @ acc)      # acc read by the step: not a plain sum
            return acc, None
        return lax.scan(step, a0, xs)[0]
    a0, xs = RNG.standard_normal((2, 2)), RNG.standard_normal((5, 3, 2))
    j = xf.make_jaxpr(f)(a0, xs)
    (scan,) = [e for e in prepare(j).jaxpr.eqns if e.prim.name == "scan"]
    assert prims(scan.params["jaxpr"]).count("dot_general") == 2
    want = a0
    for x in xs:
        want = want + x.T @ np.tanh(x @ want)
    np.testing.assert_allclose(xf.jit(f, tiered=False)(a0, xs), want, rtol=1e-12)


@pytest.mark.parametrize("pieces, tiles", [(((0, 2), (2, 3), (5, 4)), True),
                                            (((0, 2), (2, 3), (6, 3)), False)])
def test_zero_pads_that_tile_become_a_concatenate(pieces, tiles):
    """The split's transpose (pieces of 2, 3 and 4 of 9 columns) is a concatenate; pieces
    that leave a gap are left as pads."""
    def f(*parts):
        padded = [lax.pad(p, 0.0, ((0, 0, 0), (lo, 9 - lo - n, 0)))
                  for p, (lo, n) in zip(parts, pieces)]
        return padded[0] + padded[1] + padded[2]
    args = [RNG.standard_normal((2, n)) for _, n in pieces]
    p = prims(prepare(xf.make_jaxpr(f)(*args)))
    assert ("concatenate" in p) == tiles and ("pad" in p) != tiles, p
    np.testing.assert_array_equal(xf.jit(f, tiered=False)(*args), f(*args))


def test_products_stay_in_the_loop_above_the_stacking_bound(monkeypatch):
    from xforms.kernels.prepare import scan_products
    monkeypatch.setattr(scan_products, "MAX_STACKED", T * B * 4 * H - 1)
    j = prepare(xf.make_jaxpr(xf.grad(lstm))(PARAMS, XS))
    fwd, rev = [e.params["jaxpr"] for e in j.jaxpr.eqns if e.prim.name == "scan"]
    assert prims(fwd).count("dot_general") == 2 and prims(rev).count("dot_general") == 3


def test_no_steps():
    """A scan of no steps: the accumulated products are the carries' initial values."""
    def f(a0, xs):
        def step(acc, x):
            return acc + x.T @ xnp.tanh(x), None
        return lax.scan(step, a0, xs)[0]
    a0 = RNG.standard_normal((2, 2))
    np.testing.assert_array_equal(xf.jit(f, tiered=False)(a0, np.zeros((0, 3, 2))), a0)


def test_no_steps_with_small_stacked_outputs():
    """Small ys become columns in the kernel (prepare/scalarize_loops.py); of no steps too
    (this divided by the steps' count)."""
    f = lambda xs: lax.scan(lambda c, x: (c + xnp.sum(x), xnp.tanh(x)), 0.0, xs)  # noqa
    c, ys = xf.jit(f, tiered=False)(np.zeros((0, 3)))
    assert float(c) == 0.0 and ys.shape == (0, 3)
