"""Complex values on the direct LLVM path (issue #35, session 28:
xforms/kernels/cpu/llvm/ops/complexes.py): complex64/complex128 arrays loaded and stored as
pairs, their arithmetic spelled as Numba lowers the Numba path's statements, so the same
bits on a grid of special values (signed zeros, infinities, NaN, huge, denormal parts)."""
import itertools

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import llvm

from test_llvm_control import _both, _taken
from test_llvm_loops import _same


def _parts(out):
    """Complex outputs as their float parts (`_same` compares NaN positions per part)."""
    out = out if isinstance(out, tuple) else (out,)
    out = [np.asarray(o) for o in out]
    return tuple(np.stack([o.real, o.imag], -1) if np.iscomplexobj(o) else o for o in out)


def _grid(dt):
    """Every pair of complex values whose parts are special: a (b) runs over the grid's
    complex values slowly (fast)."""
    huge = 3e38 if dt == np.complex64 else 1e300
    tiny = 1e-40 if dt == np.complex64 else 1e-310          # (a denormal)
    part = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, huge, tiny]
    values = [complex(r, i) for r, i in itertools.product(part, part)]
    a, b = zip(*itertools.product(values, values))
    return np.array(a, dt), np.array(b, dt)


def _arith(a, b):
    x = xnp.real(b)
    return (a * b, a + b, a - b, -a, xnp.conj(a), xnp.real(a), xnp.imag(a),
            lax.complex(x, xnp.imag(a)), xnp.where(x > 0, a, b), a * (2 - 3j),
            x.astype(a.dtype), xnp.abs(a), a == b, a != b)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("n", [16, None])        # (a short loop; the whole grid)
def test_complex_arithmetic_matches_numba_on_special_values(dt, n):
    a, b = _grid(dt)
    a, b = (a[:n], b[:n]) if n else (a, b)
    assert _taken(_arith, a, b)[0], llvm.refusals(_taken(_arith, a, b)[1])
    ours, numba = _both(_arith, a, b)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a, b)), _parts(numba(a, b)))


def _sums(a, b):
    s = (a * b).reshape(81, 81)
    return (xnp.sum(s, axis=1), xnp.prod(a.reshape(81, 81), axis=0), xnp.sum(b[:100]),
            xnp.sum(s), xnp.prod(b[:7]))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_sums_and_products_match_numba(dt):
    """Row sums (a register), column products (the output array), whole sums (a complex
    scalar output), in the Numba kernel's order, over the special values."""
    a, b = _grid(dt)
    assert _taken(_sums, a, b)[0]
    ours, numba = _both(_sums, a, b)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a, b)), _parts(numba(a, b)))


def test_complex_conversions_match_numba():
    """complex128 <-> complex64 (parts rounded as floats), float32 -> complex128."""
    a, b = _grid(np.complex128)

    def f(a, x):
        return a.astype(xnp.complex64), (a.astype(xnp.complex64) * 2).astype(xnp.complex128), \
            x.astype(xnp.complex128)
    with np.errstate(over="ignore"):
        x = np.real(b).astype(np.float32)
    assert _taken(f, a, x)[0]
    ours, numba = _both(f, a, x)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a, x)), _parts(numba(a, x)))


def test_complex_gathers_and_stores_match_numba():
    """Gathers and plain scatters move pairs; a combining scatter stays Numba's."""
    a, b = _grid(np.complex128)
    a, idx = a[:40].reshape(8, 5), np.array([0, 7, 3, 3])

    def f(a):
        return a[idx] * 2, a.at[idx].set(a[4:] * 1j), a[idx, idx[::-1]] + 1j
    assert _taken(f, a)[0]
    ours, numba = _both(f, a)
    with np.errstate(all="ignore"):
        _same(_parts(ours(a)), _parts(numba(a)))
    assert not _taken(lambda a: a.at[idx].add(a[:4]), a)[0]


def test_complex_values_match_jax():
    a = np.array([1 + 2j, -0.5 + 0.25j, 3.0 - 1j])
    b = np.array([3 - 4j, 2 + 0j, -1j])
    got = xf.jit(lambda a, b: xnp.conj(a * b) - a, tiered=False)(a, b)
    # JAX 0.10.2, x64: jnp.conj(a * b) - a
    want = np.array([10 - 4j, -0.5 - 0.75j, -4 + 4j])
    np.testing.assert_array_equal(np.asarray(got), want)


def test_refusals_name_what_stays_numba():
    """Complex division (complex_arith's helper), transcendentals and a sum over threaded
    chunks stay Numba's."""
    a = np.ones(8, np.complex128)
    for f in (lambda a: a / (a + 1), lambda a: xnp.exp(a),
              lambda a: xnp.sum(xnp.broadcast_to(a, (50000, 8)) * 2)):
        taken, plan = _taken(f, a)
        assert not taken and llvm.refusals(plan)


def test_may_take_complex_programs():
    a = np.ones(8, np.complex128)
    assert llvm.may_take(xf.make_jaxpr(lambda a: xnp.conj(a) * a)(a))
    assert llvm.may_take(xf.make_jaxpr(lambda a: xnp.sum(a))(a))
    assert not llvm.may_take(xf.make_jaxpr(lambda a: xnp.max(xnp.real(a) * 0 + a))(a))
    assert not llvm.may_take(xf.make_jaxpr(lambda a: a / 2)(a))
