"""Weak types as jax.numpy gives them (session 21): JAX's promotion never gives a weak bool
(two weak bools combined by a jnp function are a strong bool), its logical functions promote
first and then compare with 0 (so a weak int or float operand gives a weak bool), and its
reductions and astype are strongly typed.  The weak operands are made inside jit from a
Python int argument (weak int64), as in the table below.

jax 0.10.2 (jax_enable_x64; computed here, JAX is not installed in CI), with
wb = (a == a), wi = a * 0 + 1, wf = a * 0. + 1. for a jitted Python int `a`:
    stack([wb, wb]): bool; logical_and/logical_or(wb, wi | 1 | wf | 1.): bool (weak);
    logical_and(wi, True): bool (weak); logical_not(wi): bool (weak); logical_not(True): bool
    sum/prod/max/min/cumsum/astype(own dtype) of wi or wf: int64/float64 (strong);
    max/min/any/astype(bool) of wb: bool (strong)
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp

_WEAK = {"wb": lambda a: a == a, "wi": lambda a: a * 0 + 1, "wf": lambda a: a * 0.0 + 1.0}


def _typed(f, kind):
    out = xf.jit(lambda a: f(_WEAK[kind](a)))(1)
    return out.dtype.name, bool(out.weak_type)


def test_stacked_weak_bools_are_strong():
    assert _typed(lambda b: xnp.stack([b, b]), "wb") == ("bool", False)
    assert _typed(lambda b: xnp.concatenate([b[None], b[None]]), "wb") == ("bool", False)


@pytest.mark.parametrize("other", [lambda a: a * 0 + 1, lambda a: 1, lambda a: a * 0.0 + 1.0,
                                   lambda a: 1.0], ids=["wi", "1", "wf", "1."])
@pytest.mark.parametrize("fn", [xnp.logical_and, xnp.logical_or], ids=["and", "or"])
def test_logical_functions_of_weak_numbers_are_weak_bools(fn, other):
    out = xf.jit(lambda a: fn(a == a, other(a)))(1)
    assert (out.dtype, out.weak_type) == (np.bool_, True)
    assert bool(out) is True


def test_logical_not_as_jax():
    assert _typed(xnp.logical_not, "wi") == ("bool", True)
    assert _typed(lambda w: xnp.logical_and(w, True), "wi") == ("bool", True)
    assert _typed(lambda w: xnp.logical_not(True), "wi") == ("bool", False)
    assert _typed(lambda b: xnp.logical_and(b, b), "wb") == ("bool", False)


@pytest.mark.parametrize("kind, dtype", [("wi", "int64"), ("wf", "float64")])
@pytest.mark.parametrize("f", [xnp.sum, xnp.prod, xnp.max, xnp.min, xnp.cumsum,
                               lambda x: x.astype(x.dtype)],
                         ids=["sum", "prod", "max", "min", "cumsum", "astype"])
def test_reductions_and_astype_are_strong(kind, dtype, f):
    assert _typed(f, kind) == (dtype, False)


@pytest.mark.parametrize("f", [xnp.max, xnp.min, xnp.any, lambda x: x.astype(bool)],
                         ids=["max", "min", "any", "astype"])
def test_reductions_of_weak_bools_are_strong(f):
    assert _typed(f, "wb") == ("bool", False)


def test_strong_reductions_promote_as_strong():
    # jax: jit(lambda a: (a * 0 + 1).sum())(1) is a strong int64: + int32 array is int64
    s = xf.jit(lambda a: xnp.sum(a * 0 + 1))(1)
    assert (s + np.ones(2, np.int32)).dtype == np.int64


# jax 0.10.2 (x64): jnp's logical functions compare a non-bool operand with
# lax._const(x, 0), weak only for a weak 0-d x, so a weak array gives a strong bool:
# logical_and(int32 array, 1.5) and logical_xor(int32 array, 1.5) are strong (eagerly and
# under jit); logical_and(int32 0-d, 1.5) weak; logical_not of a weak float (3,) array strong,
# of a weak 0-d float weak; logical_and(weak bool (3,), weak int (3,)) strong.
def _weak(f, *args, jit=False):
    seen = []

    def g(*xs):
        out = f(*xs)
        seen.append(bool(xf.core.trace.get_aval(out).weak_type))
        return out
    (xf.jit(g) if jit else g)(*args)
    return seen[0]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_logical_functions_of_weak_arrays_are_strong_as_jax(jit):
    a = np.array([1, 2, 1], np.int32)
    assert _weak(xnp.logical_and, a, 1.5, jit=jit) is False
    assert _weak(xnp.logical_xor, a, 1.5, jit=jit) is False
    assert _weak(xnp.logical_and, xnp.int32(1), 1.5, jit=jit) is True     # (a 0-d Array)
    assert _weak(lambda a: xnp.logical_not(xnp.full((3,), a * 0 + 1.5)), 1, jit=True) is False
    assert _weak(lambda a: xnp.logical_not(a * 0 + 1.5), 1, jit=True) is True
    assert _weak(lambda a: xnp.logical_and(xnp.full((3,), a == a), xnp.full((3,), a * 0 + 1)),
                 1, jit=True) is False
