"""xforms.random: JAX's numbers for the same seed (values recorded from JAX 0.10.2 in
tests/helpers/jax_random_values.py), the same numbers eagerly, under jit and under vmap over keys,
typed keys through transforms, and statistical tests of every sampler.

The reference values were produced by running the calls named by their keys with
`import jax.random as jr`, JAX_ENABLE_X64=1, and recording floats as bit patterns.
"""
import numpy as np
import pytest
from scipy import stats

import xforms as xf
import xforms.numpy as xnp
from xforms import lax, random
from xforms.nn import initializers

from jax_random_values import JAX

K0 = random.PRNGKey(0)


def _decode(rec):
    kind, vals, shape = rec
    if kind == "f32":
        return np.array(vals, np.uint32).view(np.float32).reshape(shape)
    return np.array([int(v, 16) for v in vals], np.uint64).view(np.float64).reshape(shape)


def _exact(got, want):
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, (got, want)
    np.testing.assert_array_equal(got, want)


def _ulps(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    return np.max(np.abs(got - want) / np.spacing(np.abs(want).astype(want.dtype)))


# ---- JAX's values, bit for bit -------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 42, 2 ** 40 + 7, -1])
def test_prngkey_values(seed):
    _exact(random.PRNGKey(seed), np.array(JAX[f"PRNGKey({seed})"], np.uint32))
    _exact(random.key_data(random.key(seed)), np.array(JAX[f"PRNGKey({seed})"], np.uint32))


def test_split_fold_in_bits_values():
    _exact(random.split(K0), np.array(JAX["split(k0)"], np.uint32))
    _exact(random.split(K0, (2, 3)), np.array(JAX["split(k0,(2,3))"], np.uint32))
    _exact(random.split(random.PRNGKey(42), 3), np.array(JAX["split(PRNGKey(42),3)"], np.uint32))
    _exact(random.fold_in(K0, 12345), np.array(JAX["fold_in(k0,12345)"], np.uint32))
    _exact(random.fold_in(random.PRNGKey(7), 0), np.array(JAX["fold_in(PRNGKey(7),0)"], np.uint32))
    _exact(random.bits(K0, (7,), np.uint32), np.array(JAX["bits(k0,(7,),u32)"], np.uint32))
    _exact(random.bits(K0, (3,)), np.array(JAX["bits(k0,(3,),u64)"], np.uint64))


UNIFORM_CASES = [("uniform(k0,(7,),f32)", K0, (7,), np.float32, 0., 1.),
                 ("uniform(k0,(2,3),f32)", K0, (2, 3), np.float32, 0., 1.),
                 ("uniform(k0,(5,),f64)", K0, (5,), np.float64, 0., 1.),
                 ("uniform(k0,(),f64)", K0, (), np.float64, 0., 1.),
                 ("uniform(k42,(3,),f64,-1,1)", random.PRNGKey(42), (3,), np.float64, -1., 1.),
                 ("uniform(k42,(9,),f32,-2,2)", random.PRNGKey(42), (9,), np.float32, -2., 2.),
                 ("uniform(k0,(7,),f64,-2.5,3.7)", K0, (7,), np.float64, -2.5, 3.7),
                 ("uniform(k0,(6,),f32,0.1,0.3)", K0, (6,), np.float32, 0.1, 0.3)]


@pytest.mark.parametrize("name,key,shape,dtype,lo,hi", UNIFORM_CASES,
                         ids=[c[0] for c in UNIFORM_CASES])
def test_uniform_values(name, key, shape, dtype, lo, hi):
    want = _decode(JAX[name])
    _exact(random.uniform(key, shape, dtype, lo, hi), want)
    _exact(xf.jit(random.uniform, static_argnums=(1, 2))(key, shape, dtype, lo, hi), want)


@pytest.mark.parametrize("dtype,name", [(np.float32, "normal(k0,(7,),f32)"),
                                        (np.float64, "normal(k0,(5,),f64)")])
def test_normal_within_few_ulp(dtype, name):
    want = _decode(JAX[name])
    assert _ulps(random.normal(K0, want.shape, dtype), want) <= 4
    assert _ulps(xf.jit(lambda k: random.normal(k, want.shape, dtype))(K0), want) <= 4


def test_discrete_and_gamma_values():
    _exact(random.permutation(K0, 10), np.array(JAX["permutation(k0,10)"]))
    _exact(random.randint(K0, (6,), 0, 100), np.array(JAX["randint(k0,(6,),0,100)"]))
    _exact(random.choice(K0, 5, (3,), replace=False), np.array(JAX["choice(k0,5,(3,),False)"]))
    _exact(random.categorical(K0, np.log(np.array([.1, .2, .7])), shape=(6,)),
           np.array(JAX["categorical"]))
    _exact(random.poisson(K0, 3., (6,)), np.array(JAX["poisson(k0,3.,(6,))"]))
    _exact(random.poisson(K0, 30., (6,)), np.array(JAX["poisson(k0,30.,(6,))"]))
    np.testing.assert_allclose(random.gamma(K0, 0.5, (4,)), JAX["gamma(k0,0.5,(4,))"],
                               rtol=1e-13)


def test_initializer_values():
    assert _ulps(initializers.glorot_normal()(K0, (3, 2), np.float32),
                 _decode(JAX["glorot_normal(k0,(3,2),f32)"])) <= 4
    _exact(initializers.he_uniform()(K0, (3, 2)), _decode(JAX["he_uniform(k0,(3,2))"]))


# ---- the same numbers eagerly, under jit and vmap over keys ------------------------------
def _draw(k):
    return (random.uniform(k, (5,), np.float32), random.normal(k, (3,)),
            random.randint(k, (4,), -3, 9))


def test_eager_jit_vmap_agree():
    keys = random.split(random.PRNGKey(3), 4)
    loop = [_draw(keys[i]) for i in range(4)]
    jitted = [xf.jit(_draw)(keys[i]) for i in range(4)]
    batched = xf.vmap(_draw)(keys)
    jit_batched = xf.jit(xf.vmap(_draw))(keys)
    for j in range(3):
        want = np.stack([np.asarray(r[j]) for r in loop])
        for got in (np.stack([np.asarray(r[j]) for r in jitted]), batched[j], jit_batched[j]):
            if want.dtype.kind == "f":
                np.testing.assert_array_max_ulp(np.asarray(got), want, maxulp=2)
            else:
                _exact(got, want)


def test_gamma_vmap_jit_agree():
    keys = random.split(random.PRNGKey(5), 3)
    eager = np.stack([np.asarray(random.gamma(keys[i], 0.8, (4,))) for i in range(3)])
    np.testing.assert_allclose(xf.vmap(lambda k: random.gamma(k, 0.8, (4,)))(keys), eager,
                               rtol=1e-12)


# ---- typed keys and keys through transforms -----------------------------------------------
def test_typed_keys():
    k = random.key(0)
    assert k.shape == () and str(k.dtype) == "key<fry>"
    ks = random.split(k, 3)
    assert isinstance(ks, random.KeyArray) and ks.shape == (3,)
    _exact(random.key_data(ks), np.asarray(random.split(K0, 3)))
    _exact(random.key_data(random.wrap_key_data(random.split(K0, 3))[1]),
           np.asarray(random.split(K0, 3))[1])
    np.testing.assert_array_equal(random.normal(k, (3,)), random.normal(K0, (3,)))
    out = xf.jit(lambda k: random.split(k))(k)
    assert isinstance(out, random.KeyArray)
    _exact(random.key_data(out), np.asarray(random.split(K0)))
    batched = xf.vmap(lambda k: random.uniform(k, (2,)))(ks)
    np.testing.assert_array_equal(batched, np.stack([random.uniform(kk, (2,)) for kk in ks]))
    with pytest.raises(TypeError, match="arithmetic on PRNG keys"):
        k + 1


def test_key_in_scan_and_cond():
    def step(key, _):
        key, sub = random.split(key)
        return key, random.uniform(sub, ())
    _, xs = lax.scan(step, K0, None, length=4)
    key, want = K0, []
    for _ in range(4):
        key, sub = random.split(key)
        want.append(random.uniform(sub, ()))
    np.testing.assert_array_equal(xs, np.array(want))
    f = xf.jit(lambda k, p: lax.cond(p, lambda k: random.fold_in(k, 1), lambda k: k, k))
    _exact(f(K0, True), np.asarray(random.fold_in(K0, 1)))
    _exact(f(K0, False), np.asarray(K0))


def test_key_errors():
    with pytest.raises(TypeError, match="single key"):
        random.normal(random.split(K0, 2), (2,))
    with pytest.raises(TypeError, match="expected a PRNG key"):
        random.uniform(np.zeros(2), (2,))
    with pytest.raises(TypeError, match="scalar seed"):
        random.PRNGKey(np.arange(2))
    with pytest.raises(ValueError, match="unsigned"):
        random.bits(K0, (2,), np.int32)


def test_split_streams_independent():
    k1, k2 = random.split(random.PRNGKey(11))
    a, b = np.asarray(random.normal(k1, (4000,))), np.asarray(random.normal(k2, (4000,)))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.06
    c = np.asarray(random.normal(random.fold_in(k1, 1), (4000,)))
    assert abs(np.corrcoef(a, c)[0, 1]) < 0.06
    # neighbouring elements of one stream are uncorrelated too
    assert abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 0.06
    keys = np.asarray(random.split(random.PRNGKey(1), 1000))
    assert len({tuple(r) for r in keys}) == 1000


# ---- statistics ----------------------------------------------------------------------------
N = 3000
KS = random.PRNGKey(2024)

CONTINUOUS = [
    ("uniform", lambda k: random.uniform(k, (N,), minval=-1., maxval=3.), stats.uniform(-1, 4).cdf),
    ("uniform32", lambda k: random.uniform(k, (N,), np.float32), stats.uniform().cdf),
    ("normal", lambda k: random.normal(k, (N,)), stats.norm().cdf),
    ("normal32", lambda k: random.normal(k, (N,), np.float32), stats.norm().cdf),
    ("truncated_normal", lambda k: random.truncated_normal(k, -0.5, 1.5, (N,)),
     stats.truncnorm(-0.5, 1.5).cdf),
    ("exponential", lambda k: random.exponential(k, (N,)), stats.expon().cdf),
    ("laplace", lambda k: random.laplace(k, (N,)), stats.laplace().cdf),
    ("logistic", lambda k: random.logistic(k, (N,)), stats.logistic().cdf),
    ("cauchy", lambda k: random.cauchy(k, (N,)), stats.cauchy().cdf),
    ("gumbel", lambda k: random.gumbel(k, (N,)), stats.gumbel_r().cdf),
    ("gamma0.7", lambda k: random.gamma(k, 0.7, (N,)), stats.gamma(0.7).cdf),
    ("gamma3", lambda k: random.gamma(k, 3.0, (N,)), stats.gamma(3.0).cdf),
    ("loggamma", lambda k: xnp.exp(random.loggamma(k, 0.3, (N,))), stats.gamma(0.3).cdf),
    ("beta", lambda k: random.beta(k, 2.0, 0.5, (N,)), stats.beta(2.0, 0.5).cdf),
    ("t", lambda k: random.t(k, 4.0, (N,)), stats.t(4.0).cdf),
    ("chisquare", lambda k: random.chisquare(k, 3.0, (N,)), stats.chi2(3.0).cdf),
    ("pareto", lambda k: random.pareto(k, 3.0, (N,)), stats.pareto(3.0).cdf),
    ("lognormal", lambda k: random.lognormal(k, 0.5, (N,)), stats.lognorm(0.5).cdf),
    ("weibull_min", lambda k: random.weibull_min(k, 2.0, 1.5, (N,)),
     stats.weibull_min(1.5, scale=2.0).cdf),
    ("rayleigh", lambda k: random.rayleigh(k, 2.0, (N,)), stats.rayleigh(scale=2.0).cdf),
    ("maxwell", lambda k: random.maxwell(k, (N,)), stats.maxwell().cdf),
    ("double_sided_maxwell", lambda k: xnp.abs(random.double_sided_maxwell(k, 1.0, 2.0, (N,))
                                               - 1.0) / 2.0, stats.maxwell().cdf),
    ("wald", lambda k: random.wald(k, 1.5, (N,)), stats.invgauss(1.5).cdf),
    ("triangular", lambda k: random.triangular(k, 0.0, 1.0, 3.0, (N,)),
     stats.triang(1 / 3, scale=3.0).cdf),
    ("f", lambda k: random.f(k, 3.0, 5.0, (N,)), stats.f(3.0, 5.0).cdf),
]


@pytest.mark.parametrize("name,draw,cdf", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_ks(name, draw, cdf):
    x = np.asarray(draw(KS), np.float64)
    assert x.shape == (N,) and np.all(np.isfinite(x))
    assert stats.kstest(x, cdf).pvalue > 1e-3


def test_discrete_statistics():
    b = np.asarray(random.bernoulli(KS, 0.3, (N,)))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 4 * np.sqrt(0.21 / N)
    r = np.asarray(random.rademacher(KS, (N,)))
    assert set(np.unique(r)) == {-1, 1} and abs(r.mean()) < 4 / np.sqrt(N)
    ints = np.asarray(random.randint(KS, (N,), -2, 5))
    assert ints.min() == -2 and ints.max() == 4
    assert stats.chisquare(np.bincount(ints + 2)).pvalue > 1e-3
    for lam in (3.0, 25.0):
        p = np.asarray(random.poisson(KS, lam, (N,)))
        assert abs(p.mean() - lam) < 4 * np.sqrt(lam / N) and abs(p.var() / lam - 1) < 0.15
    g = np.asarray(random.geometric(KS, 0.3, (N,)))
    assert g.min() >= 1 and abs(g.mean() - 1 / 0.3) < 4 * np.sqrt(0.7 / 0.09 / N)
    with pytest.raises(AttributeError):         # not a jax.random name (jax 0.10.2) either
        random.bits_like
    logits = np.log(np.array([0.2, 0.5, 0.3]))
    c = np.asarray(random.categorical(KS, logits, shape=(N,)))
    assert stats.chisquare(np.bincount(c, minlength=3), N * np.exp(logits)).pvalue > 1e-3
    ch = np.asarray(random.choice(KS, 4, (N,), p=np.array([.1, .2, .3, .4])))
    expected = N * np.array([.1, .2, .3, .4])
    assert stats.chisquare(np.bincount(ch, minlength=4), expected).pvalue > 1e-3


def test_permutations_and_choice_without_replacement():
    p = np.asarray(random.permutation(KS, 50))
    assert sorted(p) == list(range(50))
    x = np.arange(12.).reshape(3, 4)
    px = np.asarray(random.permutation(KS, x, axis=1))
    assert sorted(px[0]) == list(x[0])
    ind = np.argsort(px[0])
    np.testing.assert_array_equal(px[:, ind], x)         # the same column permutation
    s = np.asarray(random.shuffle(KS, np.arange(20)))
    assert sorted(s) == list(range(20))
    c = np.asarray(random.choice(KS, 30, (10,), replace=False))
    assert len(set(c)) == 10
    cp = np.asarray(random.choice(KS, 5, (5,), replace=False, p=np.array([.1, .1, .2, .3, .3])))
    assert sorted(cp) == list(range(5))
    firsts = [int(random.permutation(random.fold_in(KS, i), 4)[0]) for i in range(400)]
    assert stats.chisquare(np.bincount(firsts, minlength=4)).pvalue > 1e-3


def test_dirichlet_mvn_orthogonal():
    alpha = np.array([1.0, 2.0, 3.0])
    d = np.asarray(random.dirichlet(KS, alpha, (N,)))
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(d.mean(0), alpha / alpha.sum(), atol=0.02)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    mvn = np.asarray(random.multivariate_normal(KS, np.array([1.0, -1.0]), cov, (N,)))
    np.testing.assert_allclose(mvn.mean(0), [1.0, -1.0], atol=0.1)
    np.testing.assert_allclose(np.cov(mvn.T), cov, atol=0.15)
    q = np.asarray(random.orthogonal(KS, 5, (3,)))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(5), (3, 5, 5)),
                               atol=1e-12)
    w = np.asarray(random.orthogonal(KS, 3, m=6))
    assert w.shape == (3, 6)
    np.testing.assert_allclose(w @ w.T, np.eye(3), atol=1e-12)
    # Haar: the top-left entry of a random 2x2 rotation/reflection is cos(theta), theta uniform
    tl = np.asarray(random.orthogonal(KS, 2, (N,)))[:, 0, 0]
    assert stats.kstest(np.arccos(tl), stats.uniform(0, np.pi).cdf).pvalue > 1e-3


def test_complex_normal():
    z = np.asarray(random.normal(KS, (N,), np.complex128))
    assert z.dtype == np.complex128
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.1 and abs(np.mean(z.real * z.imag)) < 0.05
