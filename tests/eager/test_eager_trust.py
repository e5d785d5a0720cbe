"""Issue #31, the eager (un-jitted) path: results nothing can write, never a view of the
user's NumPy array, and NumPy's RuntimeWarnings off (JAX is silent) without touching the
user's NumPy error state.  Values compared with NumPy's (and JAX's IEEE results: inf, nan).
"""
import warnings

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

X = xnp.arange(8.0)
Y = xnp.linspace(1.0, 2.0, 8)
M = xnp.reshape(xnp.arange(12.0), (3, 4))

EAGER_OPS = {
    "sin": lambda: xnp.sin(X), "lax.sin": lambda: lax.sin(X), "divide": lambda: xnp.divide(X, Y),
    "neg": lambda: -X, "abs": lambda: abs(X), "np.sin": lambda: np.sin(X),
    "sum": lambda: xnp.sum(X), "sum0": lambda: M.sum(0), "mean": lambda: xnp.mean(M, 1),
    "max": lambda: X.max(), "cumsum": lambda: xnp.cumsum(X),
    "slice": lambda: X[1:3], "element": lambda: X[2], "take": lambda: X[xnp.array([1, 2])],
    "mask": lambda: X[np.arange(8) > 3], "reshape": lambda: X.reshape(2, 4), "T": lambda: M.T,
    "transpose": lambda: xnp.transpose(M), "ravel": lambda: M.ravel(),
    "expand": lambda: X[None], "broadcast_to": lambda: xnp.broadcast_to(X, (2, 8)),
    "dot": lambda: xnp.dot(X, Y), "outer": lambda: xnp.outer(X, Y), "matmul": lambda: M @ Y[:4],
    "inv": lambda: xnp.linalg.inv(xnp.eye(2) * 2.0), "fft": lambda: xnp.fft.fft(X),
    "zeros": lambda: xnp.zeros(3), "eye": lambda: xnp.eye(3), "arange": lambda: xnp.arange(5),
    "array": lambda: xnp.array([1.0, 2.0]), "full": lambda: xnp.full(3, 2.0),
    "astype": lambda: X.astype(np.float32), "where": lambda: xnp.where(X > 2, X, 0.0),
    "concatenate": lambda: xnp.concatenate([X, Y]), "at_set": lambda: X.at[1].set(5.0),
    "sort": lambda: xnp.sort(Y), "np.sort": lambda: np.sort(Y), "diag": lambda: xnp.diag(M),
    "split": lambda: xnp.split(X, 2)[0], "iter": lambda: list(M)[0],
    "random": lambda: xf.random.normal(xf.random.PRNGKey(0), (3,)),
    "grad": lambda: xf.grad(lambda a: (a ** 2).sum())(X), "vmap": lambda: xf.vmap(xnp.sin)(M),
}


def _writable_bases(r):
    """The arrays (and buffers) on r's .base chain that export writable memory."""
    found, b = [], r
    while b is not None:
        if isinstance(b, np.ndarray):
            if b.flags.writeable:
                found.append(b)
        else:
            try:
                if not memoryview(b).readonly:
                    found.append(b)
            except TypeError:
                pass
        b = getattr(b, "base", None)
    return found


@pytest.mark.parametrize("name", sorted(EAGER_OPS))
def test_nothing_writable_is_reachable_from_an_eager_result(name):
    r = EAGER_OPS[name]()
    assert _writable_bases(r) == []
    b = r.base
    while isinstance(b, np.ndarray):
        if b.size:
            with pytest.raises(ValueError):             # (read-only: NumPy's ValueError)
                np.ndarray.view(b, np.ndarray)[(0,) * b.ndim] = 7
            if b.flags.c_contiguous:
                assert not np.frombuffer(b, np.uint8).flags.writeable
        b = b.base


@xf.custom_jvp
def _jvp_identity(x):
    return x


_jvp_identity.defjvp(lambda p, t: (p[0], t[0]))


@xf.custom_vjp
def _vjp_identity(x):
    return x


_vjp_identity.defvjp(lambda x: (x, None), lambda res, ct: (ct,))

VIEWING_OPS = {
    "reshape": lambda a: xnp.reshape(a, (2, 4)), "ravel": xnp.ravel, "transpose": xnp.transpose,
    "squeeze": lambda a: xnp.squeeze(a[None]), "expand_dims": lambda a: xnp.expand_dims(a, 0),
    "broadcast_to": lambda a: xnp.broadcast_to(a, (2, 8)), "real": xnp.real,
    "lax.reshape": lambda a: lax.reshape(a, (2, 4)), "stop_gradient": lax.stop_gradient,
    "lax.slice": lambda a: lax.slice(a, (1,), (3,)), "vmap_identity": xf.vmap(lambda t: t),
    "np.atleast_1d": lambda a: np.atleast_1d(a, X)[0],
    "np.broadcast_arrays": lambda a: np.broadcast_arrays(a, X)[0],
    "jit_identity": xf.jit(lambda t: t), "asarray": xnp.asarray,
    "custom_jvp": _jvp_identity, "custom_vjp": _vjp_identity,
    "checkpoint": xf.checkpoint(lambda t: t), "checkpoint_view": xf.checkpoint(lambda t: t[1:]),
}


@pytest.mark.parametrize("name", sorted(VIEWING_OPS))
def test_an_eager_result_never_shares_a_users_numpy_array(name):
    """NumPy's reshape of an ndarray is a view: xforms' result was one, so a later write
    to the user's array changed it (JAX copies the input); the user's array keeps its
    flags (it is never made read-only)."""
    a = np.arange(8.0)
    r = VIEWING_OPS[name](a)
    before = np.array(r)
    a[:] = -1.0
    assert a.flags.writeable
    np.testing.assert_array_equal(r, before)
    assert _writable_bases(r) == []


def test_a_read_only_chain_costs_no_copy():
    """A view of an Array shares its (read-only) memory, as before; a fresh result is not
    copied either."""
    s = X[2:5]
    assert np.shares_memory(s, X)
    r = xnp.sin(X)
    assert r.base is not None and r.base.base is None and not r.base.flags.writeable


SILENT = {   # op -> NumPy's value (the IEEE result JAX gives, silently)
    "divide": (lambda: xnp.divide(xnp.array([1.0, 0.0]), 0.0), [np.inf, np.nan]),
    "operator /": (lambda: xnp.array([1.0, -1.0]) / 0.0, [np.inf, -np.inf]),
    "bool / 0": (lambda: xnp.array([True, False]) / 0.0, [np.inf, 0.0]),   # (jax: a select)
    "log": (lambda: xnp.log(0.0), -np.inf), "log1p": (lambda: xnp.log1p(-1.0), -np.inf),
    "sqrt": (lambda: xnp.sqrt(-1.0), np.nan), "arccos": (lambda: xnp.arccos(2.0), np.nan),
    "exp": (lambda: xnp.exp(xnp.array([1000.0])), [np.inf]),
    "power": (lambda: xnp.array([0.0]) ** -1.0, [np.inf]),
    "f32 product": (lambda: xnp.array([1e30], xnp.float32) * xnp.array([1e30], xnp.float32),
                    [np.inf]),
    "inf - inf": (lambda: xnp.array([np.inf]) - xnp.array([np.inf]), [np.nan]),
    "floor_divide": (lambda: xnp.array([1.0]) // 0.0, [np.inf]),
    "mean of empty": (lambda: xnp.mean(xnp.zeros(0)), np.nan),
    "Array.mean of empty": (lambda: xnp.zeros(0).mean(), np.nan),
    "var ddof": (lambda: xnp.var(xnp.ones(1), ddof=1), np.nan),
    "Array.var ddof": (lambda: xnp.ones(1).var(ddof=1), np.nan),
    "grad of sqrt at 0": (lambda: xf.grad(xnp.sqrt)(0.0), np.inf),
    "vmap": (lambda: xf.vmap(lambda a: a / 0.0)(xnp.array([1.0])), [np.inf]),
    "fori_loop": (lambda: lax.fori_loop(0, 2, lambda i, c: c / 0.0, xnp.array([1.0])),
                  [np.inf]),
    "scan": (lambda: lax.scan(lambda c, a: (c, xnp.log(a)), 0.0, xnp.zeros(2))[1],
             [-np.inf, -np.inf]),
    "jit": (lambda: xf.jit(lambda a: xnp.log(a) / 0.0)(xnp.array([2.0])), [np.inf]),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_eager_ops_are_silent_as_jax(name):
    fn, expected = SILENT[name]
    state = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fn()
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert np.geterr() == state


def test_nan_to_integer_casts_are_silent():
    n = xnp.array([np.nan, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xnp.asarray(n, dtype=xnp.int32)
        n.astype(xnp.int32)
        lax.convert_element_type(n, np.int32)
        xf.jit(lambda a: a.astype(xnp.int32))(n)


def test_the_users_numpy_error_state_is_untouched():
    """Inside the user's np.errstate(divide='raise'), xforms is silent and NumPy's own
    code still raises, before and after an eager op."""
    with np.errstate(divide="raise"):
        assert xnp.log(0.0) == -np.inf
        assert float((xnp.array([1.0]) / 0.0)[0]) == np.inf
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xnp.log(0.0)
        with pytest.raises(RuntimeWarning):
            np.log(np.zeros(1))
