"""A concatenate that only loops read -- so `roll`, and the zero pads that tile an axis in a
transposed program (prepare/pad_sums.py) -- is read in place by its consumer loop
(xforms/kernels/plan/stencil.py `_join_read`): each element selects the operand that holds
it, nothing is copied.  Values are the fast tier's bit for bit (the arithmetic is the same);
gradients agree with the closed forms."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp

from plan_check import temps_and_pads

rng = np.random.default_rng(5)
X = rng.standard_normal((5, 7))
W = rng.standard_normal((5, 7))


def _concats(f, *args):
    """(plan, the concatenate ops and the temporaries of f's plan other than a concatenate's
    computed operands, which are stored once and read in place, never recomputed)."""
    plan, temps, _ = temps_and_pads(xf.make_jaxpr(f)(*args))
    joins = [e for e in plan.jaxpr.eqns if e.prim.name == "concatenate"]
    ops = [s for s in plan.steps if s.kind == "op" and s.eqn.prim.name == "concatenate"]
    return plan, ops, [t for t in temps if not any(t in e.invars for e in joins)]


FORWARD = {
    "roll +1 axis 0": (lambda x: xnp.roll(x, 1, 0) * 2.0 + x, lambda x: np.roll(x, 1, 0) * 2.0 + x),
    "roll -2 axis 1": (lambda x: xnp.sin(x) - xnp.roll(x, -2, 1),
                       lambda x: np.sin(x) - np.roll(x, -2, 1)),
    "roll larger than the size": (lambda x: xnp.roll(x, 16, 1) * x,
                                  lambda x: np.roll(x, 16, 1) * x),
    "roll -13 axis 0": (lambda x: xnp.roll(x, -13, 0) + 1.0, lambda x: np.roll(x, -13, 0) + 1.0),
    "roll both axes at once": (lambda x: xnp.roll(x, (2, -3), (0, 1)) * x,
                               lambda x: np.roll(x, (2, -3), (0, 1)) * x),
    "laplacian": (lambda x: xnp.roll(x, 1, 0) + xnp.roll(x, -1, 0) + xnp.roll(x, 1, 1)
                  + xnp.roll(x, -1, 1) - 4.0 * x,
                  lambda x: np.roll(x, 1, 0) + np.roll(x, -1, 0) + np.roll(x, 1, 1)
                  + np.roll(x, -1, 1) - 4.0 * x),
    "three lengths": (lambda x: xnp.concatenate([x[:2], x[4:] - 0.5, x[1:3] * 3.0]) - x[:, ::-1],
                      lambda x: np.concatenate([x[:2], x[4:] - 0.5, x[1:3] * 3.0]) - x[:, ::-1]),
    "a slice inside one operand": (lambda x: xnp.concatenate([x, x * 2.0], 1)[:, 8:12] + 1.0,
                                   lambda x: np.concatenate([x, x * 2.0], 1)[:, 8:12] + 1.0),
    "a reversed slice across two": (lambda x: xnp.concatenate([x, -x], 1)[:, 10:3:-1] * x,
                                    lambda x: np.concatenate([x, -x], 1)[:, 10:3:-1] * x),
    "a sum of a roll": (lambda x: xnp.sum(xnp.roll(x, 3, 1) * xnp.arange(7.0), axis=0),
                        lambda x: np.sum(np.roll(x, 3, 1) * np.arange(7.0), axis=0)),
}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_reads_the_concatenate_in_place(name):
    f, ref = FORWARD[name]
    want = xf.jit(f, backend="interpret")(X)
    np.testing.assert_allclose(want, ref(X), rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(xf.jit(f, tiered=False)(X), want)      # bit for bit
    np.testing.assert_array_equal(xf.jit(f)(X), want)
    plan, ops, temps = _concats(f, X)
    assert not ops and not temps, plan.dump()


def test_integer_and_complex_rolls():
    i = np.arange(35, dtype=np.int32).reshape(5, 7)
    f = lambda i: xnp.roll(i, 2, 1) * 3 - xnp.roll(i, -1, 0)        # noqa: E731
    np.testing.assert_array_equal(xf.jit(f, tiered=False)(i),
                                  np.roll(i, 2, 1) * 3 - np.roll(i, -1, 0))
    z = X + 1j * W
    g = lambda z: xnp.conj(xnp.roll(z, -4, 1)) * z                  # noqa: E731
    # (complex products round differently compiled: not bit for bit)
    np.testing.assert_allclose(xf.jit(g, tiered=False)(z), np.conj(np.roll(z, -4, 1)) * z,
                               rtol=1e-15)
    assert not _concats(f, i)[1] and not _concats(g, z)[1]


def test_an_op_or_an_output_keeps_the_buffer():
    """A concatenate read by a matrix product, or returned, is still one copy."""
    f = lambda x: xnp.roll(x, 1, 0).T @ x                           # noqa: E731
    np.testing.assert_allclose(xf.jit(f, tiered=False)(X), np.roll(X, 1, 0).T @ X, rtol=1e-13)
    assert len(_concats(f, X)[1]) == 1
    g = lambda x: (xnp.roll(x, 1, 0), xnp.roll(x, 1, 0) * 2.0)      # noqa: E731
    a, b = xf.jit(g, tiered=False)(X)
    np.testing.assert_array_equal(a, np.roll(X, 1, 0))
    np.testing.assert_array_equal(b, np.roll(X, 1, 0) * 2.0)


@pytest.mark.parametrize("shift,axis", [(1, 0), (-3, 1), (9, 1), ((2, -1), (0, 1))])
def test_grad_of_a_roll_is_a_roll_read_in_place(shift, axis):
    """The transpose of a roll is the opposite roll (slices of the cotangent, summed as pads
    that pad_sums makes one concatenate): read in place by the loop that multiplies by
    exp(x)'s derivative."""
    def loss(x, w):
        return xnp.sum(xnp.sin(xnp.roll(xnp.exp(x), shift, axis)) * w)

    back = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    want = np.roll(np.cos(np.roll(np.exp(X), shift, axis)) * W, back, axis) * np.exp(X)
    g = xf.grad(loss)
    np.testing.assert_allclose(xf.jit(g, tiered=False)(X, W), want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(xf.jit(g)(X, W), want, rtol=1e-13, atol=1e-14)
    plan, ops, _ = _concats(g, X, W)
    assert not ops, plan.dump()


def test_heat_steps_and_their_gradient():
    """Explicit heat-equation steps by four rolls (issue #35): forward and gradient on
    both tiers, no copies in the compiled plan."""
    def step(u):
        return u + 0.1 * (xnp.roll(u, 1, 0) + xnp.roll(u, -1, 0) + xnp.roll(u, 1, 1)
                          + xnp.roll(u, -1, 1) - 4.0 * u)

    def loss(u):
        for _ in range(3):
            u = step(u)
        return xnp.sum(u * u)

    def np_step(u):
        return u + 0.1 * (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1)
                          + np.roll(u, -1, 1) - 4.0 * u)
    u, want = X, X
    for _ in range(3):
        want = np_step(want)
    # the gradient: the step is linear and self-adjoint (a symmetric stencil)
    gwant = 2.0 * np_step(np_step(np_step(want)))
    np.testing.assert_allclose(xf.jit(loss, tiered=False)(u), np.sum(want * want), rtol=1e-14)
    g = xf.grad(loss)
    fast = xf.jit(g, backend="interpret")(u)
    np.testing.assert_allclose(fast, gwant, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(xf.jit(g, tiered=False)(u), fast, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(xf.jit(g)(u), fast, rtol=1e-14, atol=1e-15)
    for f in (loss, g):
        plan, ops, _ = _concats(f, u)
        assert not ops, plan.dump()


def test_a_roll_loop_is_peeled():
    """roll(x, 1) + roll(x, -1) along the innermost axis: no index has every select decided
    the same way, so the CPU nest peels the longest run where each is decided ([1, n - 1))
    and reads x[i - 1], x[i + 1] there without guards, clamps or selects."""
    x = rng.standard_normal((3, 40))
    f = lambda x: xnp.roll(x, 1, 1) + xnp.roll(x, -1, 1) - 2.0 * x      # noqa: E731
    src = xf.jit(f, tiered=False).lower(x).as_text().split("def kernel")[1]
    loops = src.split("while i1 < ")[1:]
    assert [lp.split(":")[0] for lp in loops] == ["1", "39", "40"]
    middle = "\n".join(ln for ln in loops[1].split("\n") if not ln.lstrip().startswith("#"))
    assert " if " not in middle and "min(" not in middle and "max(" not in middle, middle
    assert "[i0, -1 + i1]" in middle and "[i0, 1 + i1]" in middle
    np.testing.assert_array_equal(xf.jit(f, tiered=False)(x),
                                  np.roll(x, 1, 1) + np.roll(x, -1, 1) - 2.0 * x)
