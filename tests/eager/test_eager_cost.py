"""The fast tier's cost model (xforms/exec/eager_cost.py): which tier the first call of a program
takes.  Issue #16/#20's cliff: the CNN's `jit(grad)` at batch 128 compiled synchronously on
its first call (7-17 s) where batch 32 answered on the fast tier in 0.2 s, because every
element of every equation was priced at ~50 ns (NumPy's elementwise ops take 1-5).  No
timings here: the tests assert the tier a program gets and how the estimate scales with
each equation's work, on traced programs (nothing is evaluated but one jit call)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.exec import eager_cost
from xforms import lax, nn, random
from xforms.exec import tiered
import xforms.scipy.linalg as xsl
from benchmarks.workloads import cnn as cnn_workload
from xforms.core.registry import lookup

def cnn_loss(p, x, y):
    """The benchmark suite's CNN (benchmarks/workloads/cnn.py): conv-relu-pool twice, dense."""
    return cnn_workload.loss(p, x, y, xnp, lax, nn.log_softmax)


def cnn_args(batch):
    f32 = np.float32
    p = {"c1": np.ones((3, 3, 1, 32), f32), "b1": np.ones(32, f32),
         "c2": np.ones((3, 3, 32, 64), f32), "b2": np.ones(64, f32),
         "w": np.ones((5 * 5 * 64, 10), f32), "b": np.ones(10, f32)}
    return p, np.ones((batch, 28, 28, 1), f32), np.ones((batch, 10), f32)


def gp_loss(theta, d2, y):
    """The suite's GP negative log-likelihood (benchmarks/workloads/gp_nll.py)."""
    k = xnp.exp(theta[1]) * xnp.exp(-0.5 * d2 / xnp.exp(2 * theta[0])) \
        + (xnp.exp(theta[2]) + 1e-6) * xnp.eye(y.shape[0])
    c = xnp.linalg.cholesky(k)
    a = xsl.solve_triangular(c, y, lower=True)
    return 0.5 * xnp.sum(a * a) + xnp.sum(xnp.log(xnp.linalg.diagonal(c)))


def big(shape, dtype=np.float64):
    """An input of `shape` that allocates nothing (tracing reads shapes only)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


def estimate(fn, *args, direct=False):
    """(estimated eager seconds, fast tier?) of `fn` at `args`, compiled by Numba or (`direct`)
    by the direct LLVM path."""
    closed = xf.make_jaxpr(fn)(*args)
    executed, _ = eager_cost.eager_cost(closed)
    return executed * eager_cost.EQN_NS * 1e-9, tiered.worthwhile(closed, lambda c: direct)


LARGE = {   # measured eagerly: CNN 0.63 s (compile 6-7 s), GP 1.0 s (3.8 s), sin 0.25 s
    "cnn_grad_b128": lambda d=False: estimate(xf.grad(cnn_loss), *cnn_args(128), direct=d),
    "cnn_forward_b128": lambda d=False: estimate(cnn_loss, *cnn_args(128), direct=d),
    "gp_grad_n2000": lambda d=False: estimate(xf.grad(gp_loss), np.zeros(3),
                                              big((2000, 2000)), big((2000,)), direct=d),
    "elementwise_grad_1e7": lambda d=False: estimate(
        xf.grad(lambda x: xnp.sum(xnp.sin(x) * xnp.cos(x) + xnp.exp(-x ** 2))), big((10 ** 7,)),
        direct=d),
    "normal_1e6": lambda d=False: estimate(lambda k: random.normal(k, (10 ** 6,)),
                                           random.PRNGKey(0), direct=d),
}


@pytest.mark.parametrize("name", sorted(LARGE))
def test_large_array_programs_start_on_the_fast_tier_beside_numbas_compile(name):
    seconds, fast = LARGE[name]()
    assert fast, f"{name}: estimated {seconds:.2f} s eagerly, compiled first"
    assert 0.05 < seconds < 1.5                  # within ~2x of the measured eager time


# The direct LLVM path compiles ~10x faster than Numba (eager_cost.direct_compile_limit);
# measured 2026-12-01 (CPU s, fresh processes, after the compiler's imports, load 12-60):
# eagerly / direct compile: elementwise grad 10^7 0.46 / 0.11, random.normal 10^6 1.06 /
# 0.10, the GP gradient at n = 2000 2.08 / 1.40, the CNN's gradient at batch 128 0.16 /
# (5 convolutions: more than its eager time).
DIRECT_FIRST = {"elementwise_grad_1e7": False, "normal_1e6": False, "gp_grad_n2000": False,
                "cnn_grad_b128": True, "cnn_forward_b128": True}


@pytest.mark.parametrize("name", sorted(DIRECT_FIRST))
def test_beside_the_direct_paths_compile(name):
    _, fast = LARGE[name](True)
    assert fast == DIRECT_FIRST[name]


def _fft_conv_loss(x, k):
    """The suite's FFT convolution (benchmarks/workloads/fft_conv.py), y = 0."""
    n = x.shape[-1]
    return xnp.sum(xnp.fft.irfft(xnp.fft.rfft(x) * xnp.fft.rfft(k), n) ** 2)


# Issue #35, session 32 (CPU s, fresh processes, one BLAS thread, load 10-17): eagerly / the
# direct path's compile and first call: FFT convolution grad 2^20 0.26 / 0.33 (an FFT was
# priced as a sort, 5x its time: estimated 0.87 s, compiled first); the GP gradient at
# n = 500 0.05 / 0.30 (its compile 1.3 s before Cholesky's cotangent looped over its blocks).
DIRECT_ONLY = {
    "fftconv_grad_2e20": (lambda: estimate(xf.grad(_fft_conv_loss, (0, 1)), big((2 ** 20,)),
                                           big((2 ** 20,)), direct=True), True),
    "gp_grad_n500": (lambda: estimate(xf.grad(gp_loss), np.zeros(3), big((500, 500)),
                                      big((500,)), direct=True), True),
}


@pytest.mark.parametrize("name", sorted(DIRECT_ONLY))
def test_first_calls_beside_the_direct_compile(name):
    make, want = DIRECT_ONLY[name]
    assert make()[1] == want


def test_an_fft_is_cheaper_than_a_sort_eagerly():
    n = 2 ** 20
    fft = eager_cost.work_ns(eqn_of(xnp.fft.rfft, big((n,)), prim="fft"))
    srt = eager_cost.work_ns(eqn_of(xnp.sort, big((n,)), prim="sort"))
    assert 0.1 < fft / srt < 0.4             # measured: rfft 26 ms, sort 169 ms


def test_the_cnn_estimate_grows_with_the_batch_like_its_work():
    small, _ = estimate(xf.grad(cnn_loss), *cnn_args(32))
    large, _ = estimate(xf.grad(cnn_loss), *cnn_args(128))
    assert 3.5 < large / small < 4.1             # linear in the batch (plus fixed overhead)


@pytest.mark.parametrize("n", [10 ** 7])
def test_programs_slower_eagerly_than_compiled_compile_first(n):
    seconds, fast = estimate(lambda k: random.normal(k, (n,)), random.PRNGKey(0))
    assert not fast and seconds > 2.0            # 5.6 s eagerly; compile + run ~1.2 s
    _, fast = estimate(lambda k: random.uniform(k, (n,)), random.PRNGKey(0))
    assert not fast                              # 1.9 s eagerly (the hash: 164 ns/element)


def eqn_of(fn, *args, prim):
    """The first equation of primitive `prim` in `fn`'s program."""
    return next(e for e in xf.make_jaxpr(fn)(*args).jaxpr.eqns if e.prim.name == prim)


def test_work_by_fusion_class():
    n = 10 ** 6
    mul = eager_cost.work_ns(eqn_of(lambda x: x * 3.0, big((n,)), prim="mul"))
    sin = eager_cost.work_ns(eqn_of(xnp.sin, big((n,)), prim="sin"))
    view = eager_cost.work_ns(eqn_of(lambda x: x.reshape(1000, 1000), big((n,)),
                                     prim="reshape"))
    total = eager_cost.work_ns(eqn_of(xnp.sum, big((n,)), prim="reduce_sum"))
    assert view < mul < sin                      # a view is free, a transcendental is not
    assert total == mul                          # a reduction reads its input's elements
    assert mul == n * eager_cost.ELEMENT_NS


def test_contractions_count_multiply_adds():
    dot = lambda k: eager_cost.work_ns(eqn_of(                      # noqa: E731
        lambda a, b: a @ b, big((100, k)), big((k, 100)), prim="dot_general"))
    assert dot(1000) > 5 * dot(100)              # the contracted size counts, not the output
    conv = lambda cin: eager_cost.work_ns(eqn_of(                  # noqa: E731
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=cnn_workload.DN),
        big((8, 28, 28, cin), np.float32), big((3, 3, cin, 16), np.float32),
        prim="conv_general_dilated"))
    # window x input features per output (at BLAS speed the elements read and written
    # weigh too: 32 features cost ~8x one, 64 ~16x)
    assert conv(64) > 10 * conv(1)
    chol = lambda n: eager_cost.work_ns(eqn_of(                    # noqa: E731
        xnp.linalg.cholesky, big((n, n)), prim="cholesky"))
    # cubic in the order at large sizes, LAPACK's per-element overhead at small ones
    # (measured, one BLAS thread: n = 200 / 1000 / 2000: 1.0 / 38 / 165 ms)
    assert 4 < chol(400) / chol(200) < 10
    assert 5 < chol(2000) / chol(1000) < 8


def test_sort_and_fft_priced_n_log_n_from_their_facts():
    from xforms.core.facts import declare
    srt = lambda n: eager_cost.work_ns(eqn_of(                     # noqa: E731
        lambda x: xnp.sort(x), big((n,)), prim="sort"))
    assert 1.8 < srt(4096) / srt(64) * 64 / 4096 < 2.2      # log2 4096 / log2 64 = 2
    for name in ("sort", "fft", "cholesky", "qr", "svd", "conv_general_dilated"):
        assert lookup(name).facts.eager_work in ("n_log_n", "matrix", "window"), name
    with pytest.raises(ValueError, match="eager_work"):
        declare(lookup("sort"), eager_work="cubic")


def test_declared_eager_cost_overrides_the_class_default():
    from xforms.random.threefry import threefry2x32_p
    assert threefry2x32_p.facts.eager_ns is not None
    e = eqn_of(lambda k: random.bits(k, (1000,)), random.PRNGKey(0), prim="threefry2x32")
    assert eager_cost.work_ns(e) == 1000 * threefry2x32_p.facts.eager_ns


def test_jit_answers_the_large_cnn_from_the_fast_tier(monkeypatch):
    """The jit path itself: the first call of the batch-128 CNN gradient runs eagerly (the
    background compile is not started here: `_submit` is stubbed)."""
    monkeypatch.setattr(tiered, "_submit", lambda exe: None)
    g = xf.jit(xf.grad(cnn_loss), tiered=True)
    p, x, y = cnn_args(128)
    out = g(p, x, y)
    (exe, _, _), = g._fast.values()
    assert type(exe) is tiered.TieredExecutable and exe.fast_calls == 1
    assert exe.compiled is None                  # nothing was compiled for the first call
    assert out["c2"].shape == (3, 3, 32, 64) and np.isfinite(np.asarray(out["w"])).all()


def test_a_user_primitive_evaluated_by_np_vectorize_is_priced_as_python_calls():
    from xforms import extend
    p = extend.Primitive("eager_cost_huber", elementwise=True)
    p.def_numba(lambda x: x * x if abs(x) < 1.0 else abs(x), elementwise=True)
    p.def_abstract_eval(lambda x: x)
    e = eqn_of(p.bind, big((10 ** 6,)), prim="eager_cost_huber")
    assert eager_cost.work_ns(e) == 10 ** 6 * extend.VECTORIZE_NS     # 0.3 s, not 2 ms
    p.def_impl(lambda x: np.where(np.abs(x) < 1.0, x * x, np.abs(x)))  # a NumPy impl now
    assert eager_cost.work_ns(e) == 10 ** 6 * eager_cost.ELEMENT_NS


def test_gathers_price_the_elements_moved_not_the_array_read():
    n = 10 ** 6
    window = eager_cost.work_ns(eqn_of(lambda x, i: lax.dynamic_slice(x, (i,), (10,)),
                                       big((n,)), 3, prim="dynamic_slice"))
    gather = eager_cost.work_ns(eqn_of(lambda x, i: x[i], big((n,)),
                                       big((n,), np.int32), prim="gather"))
    assert window < 1000 < n * eager_cost.GATHER_NS <= gather


def test_a_while_loops_gradient_is_priced_like_its_steps():
    """Reverse mode sweeps a while loop's n steps as nseg segments of s (nseg s ~ n): a
    nest of loops of traced counts is guessed to run the guess's trips in all (issue #35:
    guessed 100 trips each, ~300x the forward loop, the ODE gradient was estimated 18.7 s
    eagerly for 1.1-2.0 CPU s; a tenth inside, ~100x, 1.96 s for 1.04 s; now ~15x --
    measured, the ODE's gradient takes 7x its forward solve, and its sweep runs 1 segment
    of ~97 steps where the forward while runs ~98)."""
    def f(x):
        return xnp.sum(lax.while_loop(lambda c: c[1][0] < 10.0, lambda c: (
            c[0] + 1, c[1] * 1.01 + xnp.sin(c[1])), (0, x))[1])
    x = np.ones(4)
    fwd, _ = eager_cost.eager_cost(xf.make_jaxpr(f)(x))
    rev, _ = eager_cost.eager_cost(xf.make_jaxpr(xf.grad(f))(x))
    assert 3 * fwd < rev < 30 * fwd


def test_gathers_and_scatters_are_priced_per_call():
    """An eager gather or scatter costs 3-8 us a call in its index handling and copy (12-19
    before session 35; measured in the ODE gradient's checkpoint reads and writes); under
    EQN_NS of work it was priced nothing, so 1000 checkpoint writes in a loop were
    estimated ~0.4 ms.  Session 35: 48 ms measured (CPU, load 18), estimated 33 (7 with
    the calls floored to whole EQN_NS units and the integer index arithmetic priced as
    float operators)."""
    def f(buf, v):
        return lax.fori_loop(0, 1000, lambda i, b: b.at[i % 64].set(b[(i + 1) % 64] + v),
                             buf)
    executed, _ = eager_cost.eager_cost(xf.make_jaxpr(f)(np.zeros(64), 1.0))
    seconds = executed * eager_cost.EQN_NS * 1e-9
    assert 0.015 < seconds < 0.1


def test_a_short_loop_body_is_priced_per_trip_as_it_now_runs():
    """pow_loop's 10^4 trips of one multiply: 2.8-5 ms eagerly since session 35 (the body
    looked up once, its Python-float input converted once: 61 ms before), estimated 33 ms
    at 3 us a trip before -- beside a 16-27 ms direct compile.  The fast tier is right."""
    closed = xf.make_jaxpr(lambda x: lax.fori_loop(0, 10 ** 4, lambda i, a: a * x, 1.0))(1.0)
    executed, _ = eager_cost.eager_cost(closed)
    assert executed * eager_cost.EQN_NS * 1e-9 < 0.008
    assert tiered.worthwhile(closed, lambda c: True)


def test_integer_index_arithmetic_in_a_body_costs_calls_not_operators():
    """A body's integer and bool equations run as ufunc calls (~1 us), its float ones as
    Python operators (~0.1-0.25 us): the same count of equations weighs more."""
    f_int = lambda i: lax.fori_loop(0, 1000, lambda k, a: (a * 3 + 1) % 7, i)     # noqa: E731
    f_flt = lambda x: lax.fori_loop(0, 1000, lambda k, a: (a * 3.0 + 1.0) * 0.5, x)  # noqa: E731
    ints, _ = eager_cost.eager_cost(xf.make_jaxpr(f_int)(np.int64(2)))
    flts, _ = eager_cost.eager_cost(xf.make_jaxpr(f_flt)(1.0))
    assert ints > 2 * flts


def test_the_ode_gradient_compiles_first_beside_the_direct_compile():
    """The suite's ODE gradient (t_end = 50): 1177 equations, the direct path's compile
    0.67-1.0 CPU s, its eager evaluation 0.72-1.3 CPU s (session 36, load 7).  Estimated 0.57 s
    before (session 35), it started on the fast tier and its first call went 1.19 -> 1.72-1.76
    s; the missing part was its loop bodies' operators on 2-vectors (~0.4-1.4 us each, priced
    as the 0.25 us of a scalar operator) and their impl calls (select_n, broadcasts), not its
    25k gathers and scatters (3.4 and 7.6 us each in place, priced 3.25 and 7.25)."""
    from benchmarks.peers import load
    from benchmarks.workloads import ode
    closed = xf.make_jaxpr(ode.loss_grad(50.0, load("xforms")))(ode.Y0, ode.P0)
    seconds = eager_cost.eager_cost(closed)[0] * eager_cost.EQN_NS * 1e-9
    assert 0.72 < seconds < 1.3
    assert not tiered.worthwhile(closed, lambda c: True)
    # (its while loop's trips are guessed: the first call races the compile, as the quick
    # suite's t_end = 5 -- the same estimate, 0.13-0.21 CPU s eagerly -- should not wait)
    tier, deadline = tiered.first_call_tier(closed, lambda c: True)
    assert tier == "race" and 0.25 < deadline < 0.5      # (half its 0.7 s compile)


def test_a_loop_bodys_operators_on_arrays_cost_more_than_on_scalars():
    """The generated body spells a float multiply as `a * b` either way; on NumPy scalars
    that is ~0.1 us, on small arrays ~0.4, a scalar times an array ~1 (NumPy's mixed path),
    and select_n's impl call ~2 (measured in place, session 36)."""
    def body_cost(f, *x):
        closed = xf.make_jaxpr(lambda *a: lax.fori_loop(0, 1000, lambda i, c: f(*c), a))(*x)
        return eager_cost.eager_cost(closed)[0]
    scalars = body_cost(lambda s, t: (s, s * t), 1.0, 2.0)
    arrays = body_cost(lambda v, w: (v, v * w), np.ones(2), np.ones(2))
    mixed = body_cost(lambda s, v: (s, s * v), np.float64(1.0), np.ones(2))
    select = body_cost(lambda s, t: (s, lax.select(s > 0.0, s, t)), 1.0, 2.0)
    assert scalars < arrays < mixed < select
