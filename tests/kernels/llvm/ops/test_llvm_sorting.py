"""lax.sort on the direct LLVM path (xforms/kernels/cpu/llvm/ops/arrays/sorting.py, session
29): keys of every stored dtype (floats with NaNs of either sign and signed zeros, integers
of either sign, bools, complex), several keys, any axis, payloads of any dtype, sorted by
one stable merge sort -- the Numba kernel's bits (its per-key passes of Numba's mergesort
argsort) and JAX's order (NaN last, -0.0 equal to +0.0, equal keys in their order)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import backend, llvm

RNG = np.random.default_rng(7)
F = np.round(RNG.normal(size=(5, 37)), 1)
F[:, ::7] = np.nan
F[:, 3::9] = -np.nan
F[:, 1::11] = -0.0
F[:, 2::13] = 0.0
F[1, :4] = [np.inf, -np.inf, np.inf, -np.inf]
KEYS = {"f64": F, "f32": F.astype(np.float32),
        "i8": RNG.integers(-128, 128, size=(5, 37)).astype(np.int8) // 16,
        "u64": np.array([2**63, 1, 2**64 - 1, 0, 2**63 + 5],
                        np.uint64)[RNG.integers(0, 5, (5, 37))],
        "bool": RNG.integers(0, 2, size=(5, 37)).astype(np.int8),   # (made bool inside)
        "c128": (np.round(RNG.normal(size=(5, 37)), 0)
                 + 1j * np.round(RNG.normal(size=(5, 37)), 0))}


def _flat(r):
    return [np.asarray(v) for g in r for v in (g if isinstance(g, (tuple, list)) else (g,))]


def _bytes(rs):
    """`rs` flattened, bools as int8 (a bool result is Numba's: only made inside)."""
    return tuple(xnp.astype(v, np.int8) if v.dtype == np.bool_ else v
                 for g in rs for v in (g if isinstance(g, (tuple, list)) else (g,)))


def _check(f, *args):
    """The outputs of `f` at `args` on the direct path, checked against the Numba kernel's
    (each executable passing its consts)."""
    closed = xf.make_jaxpr(f)(*args)
    assert llvm.may_take(closed)
    ours = backend.compile_cpu(closed, {"name": "t"})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XFORMS_LLVM_KERNELS", "0")
        numba_kernel = backend.compile_cpu(xf.make_jaxpr(f)(*args), {"name": "t"})
    assert ours.compiler == "llvm" and ours.refusals() == [] and numba_kernel.compiler == "numba"
    got, want = _flat(ours(*args)), _flat(numba_kernel(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):     # (a sort moves bits: NaN payloads and signs included)
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes(), (g, w)
    return got


@pytest.mark.parametrize("name", list(KEYS))
def test_sorts_of_every_key_dtype_are_the_numba_kernels(name):
    x = KEYS[name]
    pay = np.arange(x.size, dtype=np.int32).reshape(x.shape)

    def f(x, pay):
        x = x > 0 if name == "bool" else x     # (a bool argument is Numba's: made inside)
        return _bytes((lax.sort((x, pay), dimension=1, num_keys=1),
                       lax.sort((x, pay.astype(np.float32), x), dimension=0, num_keys=1),
                       lax.sort(x.reshape(5, 1, 37), dimension=2),
                       lax.sort(x[:, :1], dimension=1)))         # (lines of one)
    _check(f, x, pay)


def test_several_keys_with_ties_and_payloads_of_every_dtype():
    k1 = KEYS["i8"] % 3
    k2 = np.where(F > 0, 1.0, np.where(np.isnan(F), np.nan, -0.0))
    others = (KEYS["bool"], KEYS["c128"], KEYS["u64"], F.astype(np.float32))

    def f(k1, k2, *others):
        others = (others[0] > 0, *others[1:])
        return _bytes((lax.sort((k1, k2, *others), dimension=1, num_keys=2),
                       lax.sort((k2, k1, *others), dimension=0, num_keys=3),
                       lax.sort((others[1], k1), dimension=1, num_keys=2)))
    _check(f, k1, k2, *others)


def test_argsort_top_k_and_searchsorted_are_taken():
    x = F[0]
    long = np.round(np.resize(F, 1500) * 3.0)      # (ties, NaNs; heap buffers: past STACK_BYTES)

    def f(x, long):
        return (xnp.argsort(x), xnp.sort(x)[::-1], lax.top_k(x, 5),
                xnp.searchsorted(xnp.sort(x), x[:6]), xnp.argsort(long),
                lax.sort((long, -long), num_keys=2))
    _check(f, x, long)


def test_sorts_are_jaxs():
    """JAX 0.10.2 (x64): jnp.argsort(x, axis=1), jnp.argsort(x, axis=0), the signbits of
    jnp.sort(x, axis=1); lax.sort((k, v, jnp.arange(6)), num_keys=2); lax.top_k(t, 3);
    jnp.argsort of a bool and of a uint64 array."""
    x = np.array([[2.0, np.nan, -0.0, 1.0, 0.0, -np.inf],
                  [np.nan, -1.0, 0.0, -0.0, -np.nan, 3.0]])
    k = np.array([1, 0, 1, 0, 1, 0], np.int8)
    v = np.array([3.0, 3.0, np.nan, 1.0, 3.0, np.nan])
    t = np.array([1.0, np.nan, 3.0, 3.0, -1.0])
    b = np.array([1, 0, 1, 0], np.int8)      # (a bool argument is Numba's: made inside)
    u = np.array([2**63, 1, 2**64 - 1, 0], np.uint64)

    def f(x, k, v, t, b, u):
        return (xnp.argsort(x, axis=1), xnp.argsort(x, axis=0), xnp.sort(x, axis=1),
                lax.sort((k, v, xnp.arange(6)), num_keys=2), lax.top_k(t, 3),
                xnp.argsort(b > 0), xnp.argsort(u))
    got = _check(f, x, k, v, t, b, u)
    want = [np.array([[5, 2, 4, 3, 0, 1], [1, 2, 3, 5, 0, 4]]),
            np.array([[0, 1, 0, 1, 0, 0], [1, 0, 1, 0, 1, 1]]),
            None,
            np.array([0, 0, 0, 1, 1, 1], np.int8), np.array([1.0, 3.0, np.nan, 3.0, 3.0, np.nan]),
            np.array([3, 1, 5, 0, 4, 2]),
            np.array([np.nan, 3.0, 3.0]), np.array([1, 2, 3], np.int32),
            np.array([1, 3, 0, 2]), np.array([3, 1, 0, 2])]
    assert np.array_equal(np.signbit(got[2]), [[True, True, False, False, False, False],
                                               [True, False, True, False, False, True]])
    for g, w in zip(got, want, strict=True):
        if w is not None:
            np.testing.assert_array_equal(g.astype(w.dtype), w)
