"""Passes over memory a transformer block does not need (issue #37): the CPU plan of

* a product-plus-bias split in three (`q, k, v = split(h @ w + b, 3, -1)`) stores no
  column of the sum that no slice reads, and no full-width copy of it beside the slices
  (each slice's loop recomputes its own columns of the add);
* a batched product read only through a transpose (attention's `(b, h, q, d)` output read
  as `(b, q, h, d)`) writes the transposed buffer itself, one BLAS call per batch into its
  strided rows (`out_permutation`), with no loop reordering it afterwards.

Values agree with NumPy on the compiled tier; the plans are inspected without compiling."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.cpu import backend as cpu

rng = np.random.default_rng(3)


def _plan(f, *args):
    closed = xf.jit(f)._trace(args, {})[0]
    return cpu._prepare(closed, {}, symbolic=False).plan


def _loop_writes(plan):
    return [v for st in plan.steps if st.kind == "loop" for v in st.writes]


def _qkv(x, w, b):
    q, k, v = xnp.split(x @ w + b, 3, axis=-1)
    return (q @ k.T) @ v


def _q_only(x, w, b):
    q, _, _ = xnp.split(x @ w + b, 3, axis=-1)
    return q @ q.T


@pytest.mark.parametrize("f,stored", [(_qkv, 3), (_q_only, 1)])
def test_split_of_a_bias_add_stores_only_the_columns_read(f, stored):
    x, w, b = rng.normal(size=(6, 4)), rng.normal(size=(4, 15)), rng.normal(size=15)
    widths = [v.aval.shape[-1] for v in _loop_writes(_plan(f, x, w, b))]
    assert widths == [5] * stored, widths          # never a loop writing all 15 columns
    got = xf.jit(f, tiered=False)(x, w, b)
    q, k, v = np.split(x @ w + b, 3, axis=-1)
    want = (q @ k.T) @ v if f is _qkv else q @ q.T
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _attention_out(a, v):
    B, H, T, _ = a.shape
    return xnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, T, -1) * 2.0


def _head_major(a, v):
    # the transpose moves the product's last axis: no matrix view of it, a loop reorders it
    B, H, T, _ = a.shape
    return xnp.einsum("bhqk,bkhd->bqdh", a, v).reshape(B, T, -1) * 2.0


def _two_readers(a, v):
    B, H, T, _ = a.shape
    o = xnp.einsum("bhqk,bkhd->bhqd", a, v)
    return xnp.transpose(o, (0, 2, 1, 3)).reshape(B, T, -1) * 2.0, o


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("f,folded", [(_attention_out, True), (_head_major, False),
                                      (_two_readers, False)])
def test_product_read_transposed_is_written_transposed(f, folded, dt):
    a = rng.normal(size=(2, 3, 5, 6)).astype(dt)
    v = rng.normal(size=(2, 6, 3, 4)).astype(dt)
    plan = _plan(f, a, v)
    ops = [st.eqn for st in plan.steps if st.kind == "op" and st.eqn.prim.name == "dot_general"]
    assert ("out_permutation" in ops[0].params) == folded
    transposes = [e for st in plan.steps if st.kind == "loop" for e, _ in st.body
                  if e.prim.name == "transpose"]
    assert (not transposes) == folded
    got = xf.jit(f, tiered=False)(a, v)
    want = NUMPY[f](a, v)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    tol = 1e-12 if dt == np.float64 else 1e-5
    for g, w_ in zip(got, want):
        np.testing.assert_allclose(g, w_, rtol=tol, atol=tol)


def _np_out(spec):
    def f(a, v):
        return np.einsum(spec, a, v).reshape(a.shape[0], a.shape[2], -1) * 2.0
    return f


def _np_two_readers(a, v):
    o = np.einsum("bhqk,bkhd->bhqd", a, v)
    return np.transpose(o, (0, 2, 1, 3)).reshape(a.shape[0], a.shape[2], -1) * 2.0, o


NUMPY = {_attention_out: _np_out("bhqk,bkhd->bqhd"), _two_readers: _np_two_readers,
         _head_major: _np_out("bhqk,bkhd->bqdh")}


def _layernorm(x, g, b):
    mu = xnp.mean(x, axis=-1, keepdims=True)
    var = xnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / xnp.sqrt(var + 1e-5) * g + b


def _residual_layernorm(x, y, g, b):
    r = x + y * 2.0                     # stored anyway: the output reads it too
    return _layernorm(r, g, b) + r


def _masked_softmax(s):
    T = s.shape[-1]
    s = xnp.where(xnp.tril(xnp.ones((T, T), bool)), s * 0.5, -1e9)     # as the block's
    e = xnp.exp(s - xnp.max(s, axis=-1, keepdims=True))
    return e / xnp.sum(e, axis=-1, keepdims=True)


def test_layernorm_recomputes_x_minus_mean():
    """`x - mean` is read by the variance loop and by the normalise loop: the normalise
    loop recomputes it from x and the stored mean (as XLA does), so no loop writes a
    full-size buffer but the result (plan/stencil.py `stored_between_loops`); a
    recomputation stops at a value stored anyway (the residual `r`); a softmax's masked
    scores are recomputed from the scores and the mask, which simplify folds into one
    constant array (`fold_consts`: `tril(ones(bool))` was a select over three)."""
    x = rng.normal(size=(6, 8))
    g, b = rng.normal(size=8), rng.normal(size=8)
    full = [v for v in _loop_writes(_plan(_layernorm, x, g, b)) if v.aval.shape == x.shape]
    assert len(full) == 1, full
    full = [v for v in _loop_writes(_plan(_residual_layernorm, x, x, g, b))
            if v.aval.shape == x.shape]
    assert len(full) == 2, full                    # r and the result
    s = rng.normal(size=(2, 5, 5))
    full = [v for v in _loop_writes(_plan(_masked_softmax, s)) if v.aval.shape == s.shape]
    assert len(full) == 2, full                    # exp, result
    for f, args in ((_layernorm, (x, g, b)), (_residual_layernorm, (x, x, g, b)),
                    (_masked_softmax, (s,))):
        got = xf.jit(f, tiered=False)(*args)
        np.testing.assert_allclose(got, f(*args), rtol=1e-12, atol=1e-12)   # the fast tier
