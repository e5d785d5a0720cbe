"""`xforms.lax`'s JAX primitive objects (`lax.add_p`, ...): `bind` with JAX's operands and
parameters gives JAX's value, eagerly, under jit (both tiers) and, where differentiable, grad.

The expected values are jax 0.10.2's `jax.lax.<name>_p.bind(*operands, **params)`
(jax_enable_x64), computed with the installed jax and recorded here as literals: JAX is not
installed in CI.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import close, tiers  # noqa: F401  (the fixture)

x = np.array([[0.3, 0.7], [0.5, 0.1]])
y = np.array([[0.4, 0.2], [0.8, 0.3]])
c = x + 1j * y
xa = x + 1.5
i = np.array([[3, 1], [5, 7]])
j = np.array([[1, 2], [0, 3]])
b = x > 0.4
UNARY = ("abs acos asin asinh atan atanh bessel_i0e bessel_i1e ceil cosh digamma erf erf_inv erfc "
         "floor is_finite lgamma neg sign sinh stop_gradient").split()
BINARY = ("add atan2 div max min nextafter pow rem sub eq ne ge gt le lt igamma igammac "
          "igamma_grad_a zeta complex").split()
CASES = {**{n: ((x,), {}) for n in UNARY}, **{n: ((xa, y), {}) for n in BINARY}}
CASES.update({
    "acosh": ((xa,), {}), "and": ((i, j), {}), "or": ((i, j), {}), "xor": ((i, j), {}),
    "not": ((i,), {}), "shift_left": ((i, j), {}), "shift_right_arithmetic": ((-i, j), {}),
    "shift_right_logical": ((i, j), {}), "imag": ((c,), {}), "real": ((c,), {}),
    "integer_pow": ((x,), dict(y=3)),
    "bitcast_convert_type": ((x,), dict(new_dtype=np.dtype(np.int64))),
    "concatenate": ((x, y), dict(dimension=1)),
    "cumsum": ((x,), dict(axis=1, reverse=True)), "cumprod": ((x,), dict(axis=0, reverse=False)),
    "cummax": ((x,), dict(axis=1, reverse=False)), "cummin": ((x,), dict(axis=0, reverse=True)),
    "cumlogsumexp": ((x,), dict(axis=1, reverse=False)),
    "dynamic_slice": ((x, np.int32(1), np.int32(0)), dict(slice_sizes=(1, 2))),
    "dynamic_update_slice": ((x, y[:1], np.int32(1), np.int32(0)), {}),
    "pad": ((x, np.float64(0.0)), dict(padding_config=((1, 0, 1), (0, 2, 0)))),
    "reduce_and": ((b,), dict(axes=(1,))), "reduce_or": ((b,), dict(axes=(0,))),
    "reduce_max": ((x,), dict(axes=(0,))), "reduce_min": ((x,), dict(axes=(1,))),
    "reduce_prod": ((x,), dict(axes=(0, 1))), "rev": ((x,), dict(dimensions=(0,))),
    "select_n": ((b, x, y), {}),
    "slice": ((x,), dict(start_indices=(0, 1), limit_indices=(2, 2), strides=(2, 1))),
    "sort": ((x, y), dict(dimension=0, is_stable=True, num_keys=1)),
    "squeeze": ((x[:1],), dict(dimensions=(0,))), "transpose": ((x,), dict(permutation=(1, 0))),
})

# jax.lax.<name>_p.bind(*CASES[name]) under jax 0.10.2: the list of its outputs
JAX = {
    'abs': [[[0.3, 0.7], [0.5, 0.1]]],
    'acos': [[[1.2661036727794992, 0.7953988301841436], [1.0471975511965976, 1.4706289056333368]]],
    'acosh': [[[1.192910730993049, 1.4254169430706127], [1.3169578969248166, 1.0469679150031885]]],
    'add': [[[2.2, 2.4000000000000004], [2.8, 1.9000000000000001]]],
    'and': [[[1, 0], [0, 3]]],
    'asin':
        [[[0.30469265401539747, 0.7753974966107531], [0.5235987755982989,
         0.10016742116155981]]],
    'asinh':
        [[[0.29567304756342244, 0.6526665660823557], [0.48121182505960347,
         0.09983407889920758]]],
    'atan': [[[0.2914567944778671, 0.6107259643892086], [0.4636476090008061, 0.09966865249116202]]],
    'atan2': [[[1.3521273809209546, 1.4801364395941514], [1.1902899496825317, 1.3854483767992019]]],
    'atanh':
        [[[0.30951960420311175, 0.8673005276940531], [0.5493061443340548,
         0.10033534773107558]]],
    'bessel_i0e':
        [[[0.7575806251825477, 0.5593055265070683], [0.6450352704491501, 0.9071009257823011]]],
    'bessel_i1e':
        [[[0.11237756063983881, 0.18466998276274726], [0.15642080318487173,
         0.045298446808809324]]],
    'bitcast_convert_type':
        [[[4599075939470750515, 4604480259023595110], [4602678819172646912,
         4591870180066957722]]],
    'ceil': [[[1.0, 1.0], [1.0, 1.0]]],
    'complex': [[[(1.8+0.4j), (2.2+0.2j)], [(2+0.8j), (1.6+0.3j)]]],
    'concatenate': [[[0.3, 0.7, 0.4, 0.2], [0.5, 0.1, 0.8, 0.3]]],
    'cosh': [[[1.0453385141288605, 1.255169005630943], [1.1276259652063807, 1.0050041680558037]]],
    'cumlogsumexp': [[[0.3, 1.2130152523999524], [0.5, 1.0130152523999525]]],
    'cummax': [[[0.3, 0.7], [0.5, 0.5]]],
    'cummin': [[[0.3, 0.1], [0.5, 0.1]]],
    'cumprod': [[[0.3, 0.7], [0.15, 0.06999999999999999]]],
    'cumsum': [[[1.0, 0.7], [0.6, 0.1]]],
    'digamma':
        [[[-3.5025242222001336, -1.2200235536979354], [-1.9635100260214255,
         -10.423754940411078]]],
    'div': [[[4.5, 11.0], [2.5, 5.333333333333334]]],
    'dynamic_slice': [[[0.5, 0.1]]],
    'dynamic_update_slice': [[[0.3, 0.7], [0.4, 0.2]]],
    'eq': [[[False, False], [False, False]]],
    'erf': [[[0.3286267594591274, 0.6778011938374184], [0.5204998778130465, 0.1124629160182849]]],
    'erf_inv':
        [[[0.2724627147267544, 0.7328690779592166], [0.47693627620446977,
         0.08885599049425769]]],
    'erfc': [[[0.6713732405408726, 0.32219880616258156], [0.4795001221869535, 0.8875370839817152]]],
    'floor': [[[0.0, 0.0], [0.0, 0.0]]],
    'ge': [[[True, True], [True, True]]],
    'gt': [[[True, True], [True, True]]],
    'igamma':
        [[[0.0890763159737453, 0.010434523371192305], [0.1912078645890011,
         0.08497511754323869]]],
    'igamma_grad_a':
        [[[-0.16121672156797862, -0.027424292097656712], [-0.23750414808954243,
         -0.170003458901382]]],
    'igammac':
        [[[0.9109236840262547, 0.9895654766288077], [0.8087921354109989, 0.9150248824567613]]],
    'imag': [[[0.4, 0.2], [0.8, 0.3]]],
    'integer_pow': [[[0.027, 0.3429999999999999], [0.125, 0.0010000000000000002]]],
    'is_finite': [[[True, True], [True, True]]],
    'le': [[[False, False], [False, False]]],
    'lgamma':
        [[[1.0957979948180747, 0.26086724653166726], [0.5723649429247004, 2.252712651734206]]],
    'lt': [[[False, False], [False, False]]],
    'max': [[[1.8, 2.2], [2.0, 1.6]]],
    'min': [[[0.4, 0.2], [0.8, 0.3]]],
    'ne': [[[True, True], [True, True]]],
    'neg': [[[-0.3, -0.7], [-0.5, -0.1]]],
    'nextafter':
        [[[1.7999999999999998, 2.1999999999999997], [1.9999999999999998, 1.5999999999999999]]],
    'not': [[[-4, -2], [-6, -8]]],
    'or': [[[3, 3], [5, 7]]],
    'pad':
        [[[0.0, 0.0, 0.0, 0.0], [0.3, 0.7, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.5, 0.1, 0.0,
         0.0]]],
    'pow': [[[1.2650538190282499, 1.1708049129648923], [1.7411011265922482, 1.1514259016263246]]],
    'real': [[[0.3, 0.7], [0.5, 0.1]]],
    'reduce_and': [[False, False]],
    'reduce_max': [[0.5, 0.7]],
    'reduce_min': [[0.3, 0.1]],
    'reduce_or': [[True, True]],
    'reduce_prod': [0.0105],
    'rem':
        [[[0.19999999999999996, 5.551115123125783e-17], [0.3999999999999999,
         0.10000000000000014]]],
    'rev': [[[0.5, 0.1], [0.3, 0.7]]],
    'select_n': [[[0.3, 0.2], [0.8, 0.1]]],
    'shift_left': [[[6, 4], [5, 56]]],
    'shift_right_arithmetic': [[[-2, -1], [-5, -1]]],
    'shift_right_logical': [[[1, 0], [5, 0]]],
    'sign': [[[1.0, 1.0], [1.0, 1.0]]],
    'sinh': [[[0.3045202934471426, 0.7585837018395336], [0.5210953054937473, 0.10016675001984403]]],
    'slice': [[[0.7]]],
    'sort': [[[0.3, 0.1], [0.5, 0.7]], [[0.4, 0.3], [0.8, 0.2]]],
    'squeeze': [[0.3, 0.7]],
    'stop_gradient': [[[0.3, 0.7], [0.5, 0.1]]],
    'sub': [[[1.4, 2.0], [1.2, 1.3]]],
    'transpose': [[[0.3, 0.5], [0.7, 0.1]]],
    'xor': [[[2, 3], [5, 4]]],
    'zeta': [[[6.485659509079726, 35.58869240079698], [2.2994741375017003, 8.679556780304052]]],}


def _outputs(r):
    return list(r) if isinstance(r, (list, tuple)) else [r]


def _check(got, name):
    got = _outputs(got)
    assert len(got) == len(JAX[name])
    for g, want in zip(got, JAX[name]):
        want = np.asarray(want, dtype=np.asarray(g).dtype if np.asarray(want).dtype.kind == "c"
                          else None)
        assert np.asarray(g).dtype == want.dtype, (name, np.asarray(g).dtype, want.dtype)
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-13, err_msg=name)


def test_every_exposed_primitive_is_checked_here():
    # (the ones whose bind takes xforms' parameters: tests/core/test_lax_primitive_names.py)
    from xforms.lax.primitive_objects import _XFORMS_PARAMS
    assert sorted(n[:-2] for n in lax.__all__ if n.endswith("_p")
                  and n not in _XFORMS_PARAMS) == sorted(JAX)


@pytest.mark.parametrize("name", sorted(JAX))
def test_bind_equals_jax(name):
    operands, params = CASES[name]
    _check(getattr(lax, name + "_p").bind(*operands, **params), name)


@pytest.mark.parametrize("name", ["add", "sort", "dynamic_slice", "cumsum", "pad"])
def test_bind_under_jit_on_both_tiers(tiers, name):
    operands, params = CASES[name]
    for r in tiers(lambda *a: getattr(lax, name + "_p").bind(*a, **params), *operands):
        _check(r, name)


def test_bind_under_grad_and_vmap():
    # d/dx sum(sinh(x) * x) = cosh(x) * x + sinh(x); the sorted first key's cotangent is 1
    g = xf.grad(lambda a: xnp.sum(lax.mul(lax.sinh_p.bind(a), a)))(x)
    np.testing.assert_allclose(np.asarray(g), np.cosh(x) * x + np.sinh(x), rtol=1e-13)
    g = xf.grad(lambda a: xnp.sum(lax.sort_p.bind(a, y, dimension=0, is_stable=True,
                                                  num_keys=1)[1] * a))(x)
    np.testing.assert_allclose(np.asarray(g), y[np.argsort(x, axis=0), [0, 1]], rtol=1e-13)
    v = xf.vmap(lambda r: lax.cumsum_p.bind(r, axis=0, reverse=True))(x)
    _check(v, "cumsum")


def test_slice_binds_with_jaxs_default_strides(tiers):
    # jax.lax.slice binds slice_p with strides=None (its jaxpr shows it); jax 0.10.2 values of
    # slice_p.bind(X, start_indices=(0, 1), limit_indices=(2, 3), strides=None), its grad of
    # sum(out ** 2) and its vmap over [X, 2X]
    X = np.array([[3., -1., 2.], [0.5, 4., -2.]])
    f = lambda a: lax.slice_p.bind(a, start_indices=(0, 1), limit_indices=(2, 3),  # noqa: E731
                                   strides=None)
    for r in (f(X), *tiers(f, X)):
        np.testing.assert_array_equal(np.asarray(r), [[-1.0, 2.0], [4.0, -2.0]])
    g = xf.grad(lambda a: xnp.sum(f(a) ** 2))(X)
    np.testing.assert_array_equal(np.asarray(g), [[0.0, -2.0, 4.0], [0.0, 8.0, -4.0]])
    v = xf.vmap(f)(np.stack([X, 2 * X]))
    np.testing.assert_array_equal(np.asarray(v), [[[-1.0, 2.0], [4.0, -2.0]],
                                                  [[-2.0, 4.0], [8.0, -4.0]]])
