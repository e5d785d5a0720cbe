"""xforms.random.binomial, multinomial, generalized_normal and ball: JAX's numbers for the
same key (counts exactly, continuous values to a few ulp), the same numbers under jit and
vmap, and statistical tests with fixed seeds against SciPy's distributions.

Reference values: computed with jax 0.10.2 (JAX_ENABLE_X64, CPU) by the same calls with
`import jax.random as jr` and written here as literals (JAX is not installed in CI)."""
import numpy as np
import pytest
from scipy import stats

import xforms as xf
import xforms.numpy as xnp
from xforms import random

K0, K42 = random.PRNGKey(0), random.PRNGKey(42)
N = 20000
KS = random.PRNGKey(1234)


def _ulps(got, want):
    got, want = np.asarray(got), np.asarray(want, got.dtype)
    return np.max(np.abs(got - want) / np.spacing(np.abs(want)))


def test_binomial_values_match_jax():
    # inversion (n p <= 10), BTRS (n p > 10), p > 1/2 (flipped), float32
    np.testing.assert_array_equal(random.binomial(K0, 5.0, 0.3, (8,)),
                                  [2.0, 1.0, 2.0, 1.0, 1.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(random.binomial(K42, 100.0, 0.4, (8,)),
                                  [43.0, 36.0, 31.0, 46.0, 36.0, 35.0, 50.0, 42.0])
    got = random.binomial(K0, np.array([3.0, 50.0, 1000.0, 20.0]),
                          np.array([0.9, 0.7, 0.2, 0.5]))
    np.testing.assert_array_equal(got, [2.0, 32.0, 176.0, 13.0])
    got = random.binomial(K0, 30.0, np.float32(0.6), (4,), dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [22.0, 19.0, 22.0, 15.0])
    got = random.binomial(K0, np.array([-1.0, np.nan, np.inf, 5.0, 5.0]),
                          np.array([0.5, 0.5, 0.5, np.nan, -0.1]))
    np.testing.assert_array_equal(got, [np.nan, np.nan, np.inf, np.nan, np.nan])
    assert random.binomial(K0, 5, 0.3).dtype == np.float64


def test_multinomial_values_match_jax():
    np.testing.assert_array_equal(random.multinomial(K0, 20.0, np.array([0.2, 0.5, 0.3])),
                                  [3.0, 11.0, 6.0])
    got = random.multinomial(K42, np.array([10.0, 200.0]),
                             np.array([[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]]))
    np.testing.assert_array_equal(got, [[1.0, 8.0, 1.0], [51.0, 46.0, 103.0]])
    got = random.multinomial(K0, 20.0, np.array([0.2, 0.5, 0.3]), shape=(2, 3))
    np.testing.assert_array_equal(got, [[3.0, 11.0, 6.0], [5.0, 13.0, 2.0]])


def test_generalized_normal_and_ball_values_match_jax():
    want = [1.0052064165636194, -1.6840824023561447, -0.20287836833349696,
            -0.051962326358005614, -0.4776056640319061]
    assert _ulps(random.generalized_normal(K0, 1.5, (5,)), want) <= 8
    got = random.generalized_normal(K42, 3.0, (3,), np.float32)
    assert got.dtype == np.float32
    assert _ulps(got, [-0.6937108635902405, -0.27624452114105225, 0.8334611654281616]) <= 4
    want = [[-0.8670379536639613, -0.45310375921933566, 0.0845090035263144],
            [-0.1435162069500032, -0.2651115120200421, -0.5463699076471065]]
    got = random.ball(K0, 3, 2, (2,))
    assert got.shape == (2, 3) and _ulps(got, want) <= 8
    assert _ulps(random.ball(K42, 2, 1.0), [-0.22950591730198683, -0.2676039447044714]) <= 8


# (vmap evaluates the sampler's program after it returns, outside its errstate: NumPy
# warns about the logs of rejected candidates, whose values are discarded)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_eager_jit_vmap_agree():
    keys = random.split(K0, 3)
    draws = [lambda k: random.binomial(k, 60.0, 0.35, (5,)),
             lambda k: random.multinomial(k, 30.0, xnp.array([0.1, 0.2, 0.7])),
             lambda k: random.generalized_normal(k, 0.8, (4,)),
             lambda k: random.ball(k, 3, 1.5, (2,))]
    for i, draw in enumerate(draws):
        eager = draw(K42)
        # compiled (slow to build) for the rejection loops and ball; the fast tier otherwise
        jitted = xf.jit(draw, tiered=i not in (0, 3))
        np.testing.assert_allclose(jitted(K42), eager, rtol=1e-14)
        loop = np.stack([draw(k) for k in keys])
        np.testing.assert_allclose(xf.vmap(draw)(keys), loop, rtol=1e-14)


@pytest.mark.parametrize("n,p", [(8, 0.3), (40, 0.8), (200, 0.45)])
def test_binomial_distribution(n, p):
    # covers inversion (n p <= 10) and BTRS, for p below and above 1/2
    x = np.asarray(random.binomial(KS, float(n), p, (N,))).astype(int)
    lo, hi = int(stats.binom.ppf(1e-4, n, p)), int(stats.binom.ppf(1 - 1e-4, n, p))
    counts = np.bincount(np.clip(x, lo, hi) - lo, minlength=hi - lo + 1)
    pmf = stats.binom.pmf(np.arange(lo, hi + 1), n, p)
    pmf[0] += stats.binom.cdf(lo - 1, n, p)
    pmf[-1] += stats.binom.sf(hi, n, p)
    assert stats.chisquare(counts, N * pmf).pvalue > 1e-3


def test_multinomial_distribution():
    p = np.array([0.1, 0.25, 0.05, 0.6])
    x = np.asarray(random.multinomial(KS, 12.0, p, shape=(N, 4)))
    assert np.all(x.sum(-1) == 12.0) and np.all(x >= 0)
    # each marginal is binomial(12, p_k)
    for k in range(4):
        counts = np.bincount(x[:, k].astype(int), minlength=13)
        pmf = stats.binom.pmf(np.arange(13), 12, p[k])
        keep = N * pmf > 5                  # pool the far tail into one cell
        obs = np.append(counts[keep], counts[~keep].sum())
        exp = np.append(N * pmf[keep], N * pmf[~keep].sum())
        assert stats.chisquare(obs, exp).pvalue > 1e-3


@pytest.mark.parametrize("p", [0.7, 2.0, 4.0])
def test_generalized_normal_distribution(p):
    x = np.asarray(random.generalized_normal(KS, p, (N,)))
    assert stats.kstest(x, stats.gennorm(p).cdf).pvalue > 1e-3


@pytest.mark.parametrize("d,p", [(2, 2.0), (3, 1.0)])
def test_ball_is_uniform(d, p):
    x = np.asarray(random.ball(KS, d, p, (N,)))
    r = np.sum(np.abs(x) ** p, axis=-1) ** (1 / p)
    assert np.all(r <= 1)
    # uniform in the ball: P(|x|_p <= t) = t ** d, and every direction's sign is fair
    assert stats.kstest(r, lambda t: np.clip(t, 0, 1) ** d).pvalue > 1e-3
    assert stats.binomtest(int(np.sum(x[:, 0] > 0)), N).pvalue > 1e-3


def test_errors():
    with pytest.raises((TypeError, ValueError), match="binomial"):
        random.binomial(K0, 5.0, 0.5, dtype=np.int32)
    with pytest.raises(ValueError, match="binomial"):
        random.binomial(K0, np.ones(3), 0.5, shape=(2,))


# ---- an un-jitted sampler is one jitted program (as JAX jits its samplers) -------------------
_LOGITS = np.log(np.array([.1, .2, .3, .4]))
PROGRAM_CALLS = {
    "normal": lambda k: random.normal(k, (13, 5)),
    "normal_f32": lambda k: random.normal(k, (4000,), np.float32),
    "gumbel": lambda k: random.gumbel(k, (4000,)),
    "uniform": lambda k: random.uniform(k, (13, 5), minval=-2.0, maxval=3.0),
    "split": lambda k: random.split(k, (13, 5)),
    "fold_in": lambda k: random.fold_in(k, 1305),
    "bits": lambda k: random.bits(k, (13, 5), np.uint32),
    "bernoulli": lambda k: random.bernoulli(k, 0.3, (13, 5)),
    "categorical": lambda k: random.categorical(k, _LOGITS, shape=(13, 5)),
}


@pytest.mark.parametrize("name", list(PROGRAM_CALLS))
def test_unjitted_sampler_runs_one_program(name, monkeypatch):
    """Outside any trace a sampler traces at most one program on its first call of a
    signature, none later, and binds no primitive eagerly (it ran ~20-190 eager primitives
    each before); the values are those of an evaluation one primitive at a time, bit for
    bit (the programs are never compiled: compiled, 1% of these float32 normals differ by
    an ulp); under make_jaxpr its equations are inlined, with no call equation."""
    from xforms.core import pass_counts
    from xforms.core import trace as core
    binds = []
    process = core.EvalTrace.process
    monkeypatch.setattr(core.EvalTrace, "process",
                        lambda self, prim, args, params: binds.append(prim.name)
                        or process(self, prim, args, params))
    call = PROGRAM_CALLS[name]
    key = random.PRNGKey(1305)
    for traces in (1, 0):       # a new signature (fold_in's may be seen before), then again
        before = pass_counts.snapshot()
        got = call(key)
        assert pass_counts.since(before)["trace"] <= traces, name
        assert binds == [], f"{name} bound {len(binds)} primitives eagerly: {binds[:5]}"
    with xf.disable_jit():               # one primitive at a time: the same bits
        np.testing.assert_array_equal(got, call(key))
    names = {e.prim.name for e in xf.make_jaxpr(call)(key).jaxpr.eqns}
    assert not names & {"pjit", "xla_call", "closed_call", "core_call", "call"}, names


def test_uniform_bounds_of_another_shape_are_refused_before_tracing():
    """The sampler's own message (it was NumPy's broadcast error eagerly, and a multiply's
    inside the program)."""
    for lo in (np.zeros(4), np.zeros((2, 3))):
        with pytest.raises(ValueError, match="random.uniform: shape .3,. is not broadcast"):
            random.uniform(random.PRNGKey(0), (3,), minval=lo)
