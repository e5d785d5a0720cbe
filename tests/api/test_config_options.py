"""JAX's configuration options at the top level (`xf.debug_nans`, `debug_infs`,
`log_compiles`, `default_matmul_precision`, `numpy_rank_promotion`, `xf.config.update`), and
the small runtime names (host_*, process_indices, effects_barrier, copy_to_host_async,
print_environment_info).  JAX's behaviour was read from jax 0.10.2 (x64) here; its
messages and results are written in as literals (JAX is absent in CI)."""
import logging
import threading
import warnings

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import config


def _log2(x):
    return xnp.log(x) * 2


# ---- debug_nans / debug_infs -----------------------------------------------------------------
def test_debug_nans_names_the_primitive_eagerly_and_under_both_jit_tiers():
    with xf.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            xnp.log(-1.0)                                        # JAX's message, op by op
        for f in (xf.jit(_log2), xf.jit(_log2, tiered=False)):
            with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in log \(at "):
                f(-1.0)
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in sqrt"):
            xf.grad(lambda x: xnp.sqrt(x) * x)(-1.0)
        # an input passed through: no equation made it (JAX raises for the output too)
        with pytest.raises(FloatingPointError, match=r"output of jit\(.*no equation"):
            xf.jit(lambda x: x, tiered=False)(np.nan)
        assert xf.jit(_log2)(2.0) == pytest.approx(2 * np.log(2.0))
    assert np.isnan(xf.jit(_log2)(-1.0))                      # off again: NaN, no error


def test_jitted_calls_check_outputs_alike_on_both_tiers():
    """As JAX's compiled functions: a NaN that never reaches an output is not reported
    (while the same code op by op is)."""
    safe_log = lambda x: xnp.where(x > 0, xnp.log(xnp.abs(x) + (x == 0)), 0.0)  # noqa: E731
    masked = lambda x: xnp.where(x > 0, xnp.log(x), 0.0)       # noqa: E731
    with xf.debug_nans(True):
        for tiered in (True, False):
            assert xf.jit(masked, tiered=tiered)(-1.0) == 0.0
        assert safe_log(-1.0) == 0.0
        with pytest.raises(FloatingPointError):
            masked(-1.0)


def test_debug_infs_and_the_global_setting():
    with xf.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
            xf.jit(lambda x: x / 0.0, tiered=False)(1.0)
        assert np.isnan(xnp.log(-1.0))                           # NaNs are debug_nans'
    config.update("jax_debug_nans", True)
    try:
        assert config.jax_debug_nans is True and xf.debug_nans.value is True
        with pytest.raises(FloatingPointError):
            xnp.sqrt(-1.0)
        with xf.debug_nans(False):                               # a block overrides it
            assert np.isnan(xnp.sqrt(-1.0))
    finally:
        config.update("jax_debug_nans", False)
    assert np.isnan(xnp.sqrt(-1.0)) and config.float_checks == 0


def test_a_block_is_this_threads_only():
    seen = []
    with xf.debug_nans(True):
        t = threading.Thread(target=lambda: seen.append(np.isnan(xnp.log(-1.0))))
        t.start()
        t.join()
    assert seen == [True]


def test_options_validate_their_values():
    with pytest.raises(ValueError, match="jax_debug_nans"):
        xf.debug_nans("yes").__enter__()
    with pytest.raises(ValueError, match="jax_numpy_rank_promotion"):
        config.update("jax_numpy_rank_promotion", "sometimes")
    with pytest.raises(AttributeError, match="jax_no_such_option"):
        config.update("jax_no_such_option", 1)
    with pytest.raises(TypeError, match=r"\.value"):
        bool(xf.debug_nans)


# ---- log_compiles, default_matmul_precision ----------------------------------------------------
def test_log_compiles_logs_each_compile_with_the_functions_name(caplog):
    def scaled_sum(x):
        return xnp.sum(x) * 3.0
    f = xf.jit(scaled_sum, tiered=False)
    with caplog.at_level(logging.DEBUG, logger="xforms.jit"):
        with xf.log_compiles(True):
            f(np.ones(3))
            f(np.ones(3))                                        # cached: not compiled again
        f(np.ones(4))                                            # off: DEBUG
    recs = [r for r in caplog.records if "Compiling" in r.getMessage()]
    assert [r.levelno for r in recs] == [logging.WARNING, logging.DEBUG]
    assert "scaled_sum" in recs[0].getMessage() and "f64[3]" in recs[0].getMessage()


def test_default_matmul_precision_is_validated_and_changes_no_result():
    a = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    f = xf.jit(lambda a: a @ a, tiered=False)
    ref = np.asarray(f(a))
    for p in ("bfloat16", "tensorfloat32", "float32", "highest"):
        with xf.default_matmul_precision(p):
            assert xf.default_matmul_precision.value == p
            np.testing.assert_array_equal(f(a), ref)             # full precision always
    with pytest.raises(ValueError, match="jax_default_matmul_precision"):
        xf.default_matmul_precision("fp4").__enter__()


def test_default_matmul_precision_is_read_when_a_product_is_traced():
    prod = lambda a, b: a @ b
    a = np.ones((2, 2))
    assert "precision" not in str(xf.make_jaxpr(prod)(a, a))
    for setting, precision in (("float32", "highest"), ("tensorfloat32", "high"),
                               ("bfloat16", None)):
        with xf.default_matmul_precision(setting):
            text = str(xf.make_jaxpr(prod)(a, a))
        assert (f"precision={precision}" in text) if precision else "precision" not in text
    text = str(xf.make_jaxpr(lambda a, b: xf.lax.dot(a, b, precision="high"))(a, a))
    assert "precision=high" in text                      # an explicit precision wins


def test_traced_options_are_part_of_jits_cache_key():
    """A function jitted under one setting is traced again under another (JAX keys jit's
    caches on them): a cached trace must not skip the rank check, nor answer later calls."""
    f = xf.jit(lambda x, y: xnp.add(x, y))
    a, b = np.ones(3), np.ones((2, 3))
    for _ in range(2):                                    # (the second call: the fast path)
        np.testing.assert_array_equal(f(a, b), 2 * np.ones((2, 3)))
    with xf.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            f(a, b)
    g = xf.jit(lambda x, y: x @ y)
    with xf.default_matmul_precision("highest"):
        g(a[:2], b[:, :2])
        assert config.trace_context() == (("jax_default_matmul_precision", "highest"),)
    assert config.trace_options == 0 and config.trace_context() == ()
    np.testing.assert_array_equal(f(a, b), 2 * np.ones((2, 3)))    # the defaults' entry again


# ---- numpy_rank_promotion ----------------------------------------------------------------------
def test_rank_promotion_raise_and_warn():
    a, b = xnp.ones(3), xnp.ones((2, 3))
    with xf.numpy_rank_promotion("raise"):
        np.testing.assert_array_equal(xnp.add(b, xnp.ones((1, 3))), 2 * np.ones((2, 3)))
        np.testing.assert_array_equal(xnp.multiply(b, 2.0), 2 * np.ones((2, 3)))  # scalar
        for f in (lambda: xnp.add(a, b), lambda: xf.jit(lambda x, y: x * y)(a, b),
                  lambda: xnp.where(a > 0, b, 0.0),
                  lambda: xf.vmap(lambda x: xnp.add(x, b))(xnp.ones((4, 3)))):
            with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
                f()
    with xf.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match=r"rank promotion for add on shapes \(3,\) \(2, 3\)"):
            xnp.add(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(xnp.add(a, b), 2 * np.ones((2, 3)))    # "allow"


# ---- numpy_dtype_promotion ---------------------------------------------------------------------
STRICT_CASES = [   # (operation, the dtype JAX gives, or None: JAX raises TypePromotionError)
    (lambda: xnp.add(xnp.ones(2, xnp.float32), 1.0), np.float32),
    (lambda: xnp.add(xnp.ones(2, xnp.float32), 1), np.float32),
    (lambda: xnp.add(xnp.ones(2, xnp.uint8), 1), np.uint8),
    (lambda: xnp.add(xnp.ones(2, bool), True), np.bool_),
    (lambda: xnp.sin(xnp.ones(2, xnp.int32)), np.float32),
    (lambda: xnp.add(xnp.ones(2, xnp.int32), 1.0), None),
    (lambda: xnp.add(xnp.ones(2, xnp.float32), xnp.ones(2)), None),
    (lambda: xnp.add(xnp.ones(2, xnp.int32), xnp.ones(2, xnp.int64)), None),
    (lambda: xnp.add(xnp.ones(2, bool), 1), None),
    (lambda: xnp.add(xnp.ones(2, xnp.float32), True), None),
    (lambda: xnp.multiply(xnp.ones(2), 2j), None),
    (lambda: xnp.where(True, xnp.ones(2, xnp.float32), xnp.ones(2)), None),
    (lambda: xnp.concatenate([xnp.ones(2, xnp.float32), xnp.ones(2)]), None),
    (lambda: xnp.matmul(xnp.ones(2), xnp.ones(2, xnp.float32)), None),
    (lambda: xnp.einsum("i,i", xnp.ones(2), xnp.ones(2, xnp.float32)), None),
    (lambda: xnp.linalg.solve(xnp.eye(2), xnp.ones(2, xnp.float32)), None),
    (lambda: xnp.searchsorted(xnp.ones(2), xnp.ones(2, xnp.float32)), None),
    (lambda: xf.jit(lambda a, b: a + b)(np.ones(2, np.float32), np.ones(2)), None),
]


@pytest.mark.parametrize("k", range(len(STRICT_CASES)))
def test_strict_dtype_promotion_matches_jax(k):
    op, want = STRICT_CASES[k]
    with xf.numpy_dtype_promotion("strict"):
        if want is None:
            with pytest.raises(xf.dtypes.TypePromotionError, match="jax_numpy_dtype_promotion"):
                op()
        else:
            assert op().dtype == want
    op()                                           # "standard": promotes


def test_xforms_own_functions_promote_strictly():
    a = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)
    with xf.numpy_dtype_promotion("strict"), xf.numpy_rank_promotion("raise"):
        assert xf.scipy.linalg.expm(a).dtype == np.float32
        assert xnp.histogram(a)[0].shape == (10,)
        assert xf.nn.softmax(a).dtype == np.float32


# ---- runtime names -----------------------------------------------------------------------------
def test_single_process_runtime_names():
    assert (xf.process_indices(), xf.host_id(), xf.host_count(), xf.host_ids()) == \
        ([0], 0, 1, [0])
    assert xf.effects_barrier() is None

    class Leaf:
        started = 0

        def copy_to_host_async(self):
            Leaf.started += 1
    tree = {"a": Leaf(), "b": np.ones(2)}
    assert xf.copy_to_host_async(tree) is tree and Leaf.started == 1
    text = xf.print_environment_info(return_string=True)
    assert "numba:" in text and "process_count: 1" in text


def test_explain_cache_misses_says_what_changed(caplog):
    # JAX 0.10.2 logs "TRACING CACHE MISS ... never seen function" on a first call, and for a
    # later miss the difference from the closest previous key ("now f64[4] and before f64[3]")
    def scale(x, k=2.0):
        return x * k
    f = xf.jit(scale)
    g = xf.jit(scale, static_argnames="k")
    with caplog.at_level(logging.WARNING, logger="xforms.jit"), xf.explain_cache_misses(True):
        f(np.ones(3))
        f(np.ones(3))                   # a hit: nothing logged
        f(np.ones(4, np.float32))
        f(np.ones(3), k=3.0)            # a keyword: another argument structure
        g(np.ones(2), k=3)
        g(np.ones(2), k=4)
        with xf.numpy_rank_promotion("raise"):
            f(np.ones(3))
    f(np.ones(5))                       # the option is off again
    msgs = [r.getMessage() for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()]
    assert len(msgs) == 6, msgs
    assert all("scale (test_config_options.py" in m for m in msgs)
    assert "never seen function" in msgs[0] and "never seen function" in msgs[3]
    assert "argument leaf 0: now f32[4] and before f64[3]" in msgs[1]
    assert "different argument structure" in msgs[2]
    assert "static argument 'k': now 4 and before 3" in msgs[4]
    assert "traced options: now (('jax_numpy_rank_promotion', 'raise'),)" in msgs[5]
    assert xf.config.jax_explain_cache_misses is False


def test_no_tracing_refuses_a_new_jit_trace_only():
    # JAX 0.10.2: RuntimeError "re-tracing function <lambda> at ... for `jit`, but
    # 'no_tracing' is set" for a new signature; a cached one runs
    traces = []

    def double(x):
        traces.append(x.shape)
        return x * 2
    f = xf.jit(double)
    f(np.ones(3))
    with xf.no_tracing(True):
        np.testing.assert_array_equal(f(np.ones(3)), [2.0, 2.0, 2.0])
        np.testing.assert_array_equal(xf.grad(lambda x: xnp.sum(f(x)))(np.ones(3)), [2.0] * 3)
        with pytest.raises(RuntimeError, match=r"re-tracing function .*double .*'no_tracing'"):
            f(np.ones(4))
    assert traces == [(3,)]
    np.testing.assert_array_equal(f(np.ones(4)), [2.0] * 4)
