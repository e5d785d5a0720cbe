"""JAX's top-level configuration options (issue #36): each is a context manager and a
`config.update("jax_...")` name with JAX's values; the ones xforms honours are checked for
their effect, with the behaviour JAX 0.10.2 showed for the same code (recorded here, as jax
is not installed in CI)."""
import warnings

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import config, lax, random
from xforms.errors import KeyReuseError, UnexpectedTracerError

# (name, JAX 0.10.2's default, a second value JAX accepts)
OPTIONS = [
    ("jax_check_tracer_leaks", False, True),
    ("jax_debug_key_reuse", False, True),
    ("jax_enable_checks", config.ENABLE_CHECKS, not config.ENABLE_CHECKS),  # (env default)
    ("jax_softmax_custom_jvp", False, True),
    ("jax_threefry_partitionable", True, True),
    ("jax_default_prng_impl", "threefry2x32", "threefry2x32"),
    ("jax_enable_custom_prng", False, True),
    ("jax_legacy_prng_key", "allow", "warn"),
    ("jax_allow_f16_reductions", True, False),
    ("jax2tf_associative_scan_reductions", False, True),
    ("jax_array_garbage_collection_guard", None, "log"),
    ("jax_thread_guard", False, True),
    ("jax_no_execution", False, True),
    ("jax_remove_size_one_mesh_axis_from_type", False, True),
    ("jax_transfer_guard_host_to_device", None, "disallow"),
    ("jax_transfer_guard_device_to_host", None, "log"),
    ("jax_transfer_guard_device_to_device", None, "allow"),
]


@pytest.mark.parametrize("name,default,other", OPTIONS)
def test_every_option_has_jax_name_default_and_context_manager(name, default, other):
    top = name[4:] if name.startswith("jax_") else name
    state = getattr(xf, top)
    assert getattr(config, name) == default == state.value
    with state(other):
        assert getattr(config, name) == other
    assert getattr(config, name) == default
    config.update(name, other)
    try:
        assert getattr(config, name) == other
    finally:
        config.update(name, default)


@pytest.mark.parametrize("name,bad,error", [
    ("jax_check_tracer_leaks", "yes", ValueError),
    ("jax_legacy_prng_key", "sometimes", ValueError),
    ("jax_transfer_guard_host_to_device", "never", ValueError),
    ("jax_array_garbage_collection_guard", "panic", ValueError),
    # values JAX takes that would change its numbers: refused, naming the gap
    ("jax_threefry_partitionable", False, NotImplementedError),
    ("jax_default_prng_impl", "rbg", NotImplementedError),
])
def test_bad_or_unsupported_values_are_refused(name, bad, error):
    with pytest.raises(error, match=name):
        config.update(name, bad)


def test_transfer_guard_sets_every_direction():
    with xf.transfer_guard("disallow"):
        assert config.jax_transfer_guard_host_to_device == "disallow"
        assert config.jax_transfer_guard_device_to_host == "disallow"
        assert config.jax_transfer_guard_device_to_device == "disallow"
    assert config.transfer_level(config.transfer_guard_host_to_device) == "allow"


# ---- check_tracer_leaks ---------------------------------------------------------------------
def _leaky(store):
    def f(x):
        store.append(x)
        return x * 2.0
    return f


@pytest.mark.parametrize("transform", [xf.jit, xf.grad, xf.vmap, xf.make_jaxpr])
def test_check_tracer_leaks_names_the_function(transform):
    # JAX 0.10.2: jit and vmap raise "Leaked trace ..." naming f and the list that holds it
    store = []
    with xf.checking_leaks():
        with pytest.raises(UnexpectedTracerError, match=r"Leaked trace of .*\bf: .*held by a list"):
            transform(_leaky(store))(np.ones(3) if transform is xf.vmap else 1.0)
    store.clear()
    transform(_leaky(store))(np.ones(3) if transform is xf.vmap else 1.0)   # off: no check


def test_check_tracer_leaks_finds_a_leak_from_a_loop_body():
    store = []

    def f(x):
        return lax.scan(lambda c, a: (store.append(c) or c * a, c), x, xnp.arange(3.0))[0]
    with xf.check_tracer_leaks(True), pytest.raises(UnexpectedTracerError,
                                                          match=r"of .*\bf: .*held by a list"):
        xf.jit(f)(1.0)


def test_check_tracer_leaks_passes_clean_nested_transforms():
    @xf.custom_jvp
    def g(x):
        return xnp.sin(x)
    g.defjvp(lambda p, t: (g(p[0]), xnp.cos(p[0]) * t[0]))

    def f(x):
        y = lax.scan(lambda c, a: (c * a + g(c), c), x, xnp.arange(3.0))[0]
        y = lax.cond(y > 0, lambda v: v * 2, lambda v: v, y)
        return xf.checkpoint(lambda z: xnp.tanh(z) ** 2)(y)
    with xf.checking_leaks():
        d = xf.grad(f)(0.3)
        assert xf.jit(xf.grad(f))(0.3) == pytest.approx(d)
        assert xf.linearize(f, 0.3)[1](1.0) == pytest.approx(d)
        np.testing.assert_allclose(xf.vmap(xf.grad(f))(np.full(2, 0.3)), [d, d], rtol=1e-12)


# ---- enable_checks ----------------------------------------------------------------------------
def test_enable_checks_type_checks_every_simplified_program(monkeypatch):
    from xforms.transforms import simplify
    seen = []
    monkeypatch.setattr(simplify, "check_jaxpr", lambda j: seen.append(j) or True)
    with xf.enable_checks(False):          # (the test suite's default is XFORMS_ENABLE_CHECKS=1)
        xf.make_jaxpr(lambda x: xnp.sin(x) * 3.0)(1.0)
    assert not seen
    with xf.enable_checks(True):
        xf.make_jaxpr(xf.grad(lambda x: xnp.sin(x) * 4.0))(1.0)
    assert seen


# ---- debug_key_reuse ------------------------------------------------------------------------
def _reuse(fn):
    with xf.debug_key_reuse(True):
        return fn()


def test_key_reuse_is_an_error_eagerly_and_under_transforms():
    # JAX 0.10.2 raises KeyReuseError in each of these cases
    def eager():
        k = random.key(0)
        random.normal(k)
        return random.normal(k)

    def split_twice():
        k = random.key(0)
        random.split(k)
        return random.split(k)

    def same_slice():
        ks = random.split(random.key(0), 3)
        random.normal(ks[0])
        return random.normal(ks[0])

    def unpacked():
        k1, k2 = random.split(random.key(0))
        random.normal(k1)
        return random.normal(k2), random.normal(k1)

    def in_jit():
        return xf.jit(lambda k: (random.normal(k), random.uniform(k)))(random.key(0))

    def in_vmap():
        return xf.vmap(lambda k: (random.normal(k), random.normal(k)))(
            random.split(random.key(0), 2))
    for fn in (eager, split_twice, same_slice, unpacked, in_jit, in_vmap):
        with pytest.raises(KeyReuseError, match="Previously-consumed key|consumed"):
            _reuse(fn)
    assert issubclass(KeyReuseError, TypeError)          # as jax.errors.KeyReuseError


def test_key_reuse_allows_what_jax_allows():
    def other_slices():
        ks = random.split(random.key(0), 3)
        random.normal(ks[0])
        return random.normal(ks[1])

    def readers_and_clone():
        k = random.key(0)
        a = random.normal(k)
        random.key_data(k)
        return a, random.normal(random.clone(k))

    def raw_keys():                       # legacy keys are not tracked (as in JAX)
        k = random.PRNGKey(0)
        return random.normal(k), random.normal(k)
    # JAX 0.10.2's values: normal(split(key(0), 3)[1]) = -1.4008841, normal(key(0)) =
    # -0.20584214
    np.testing.assert_allclose(_reuse(other_slices), -1.4008841, rtol=1e-6)
    np.testing.assert_allclose(_reuse(readers_and_clone), [-0.20584214] * 2, rtol=1e-6)
    np.testing.assert_allclose(_reuse(raw_keys), [-0.20584214] * 2, rtol=1e-6)
    k = random.key(0)                      # off: no tracking
    random.normal(k)
    random.normal(k)


# ---- legacy_prng_key, enable_custom_prng, the PRNG implementation ---------------------------
def test_legacy_prng_key_warns_or_refuses_raw_keys():
    raw = random.PRNGKey(0)
    with xf.legacy_prng_key("warn"), pytest.warns(UserWarning, match="Legacy uint32 key"):
        random.normal(raw)
    with xf.legacy_prng_key("error"):
        with pytest.raises(ValueError, match="Legacy uint32 key"):
            random.split(raw)
        random.key_data(raw)                       # reading a key is not a use (as JAX)
        random.PRNGKey(1)                          # nor is making one
        k = random.key(0)                          # samplers built on others pass no raw key
        for draw in (lambda: random.f(k, 2.0, 3.0), lambda: random.ball(k, 3),
                     lambda: random.generalized_normal(k, 1.5),
                     lambda: random.double_sided_maxwell(k, 0.0, 1.0),
                     lambda: random.choice(k, 5), lambda: random.choice(k, 5, (3,), False)):
            draw()


def test_enable_custom_prng_makes_prngkey_typed():
    with xf.enable_custom_prng(True):
        k = random.PRNGKey(0)
    assert k.dtype == random.key_dtype()            # JAX: dtype=key<fry>, data [0 0]
    np.testing.assert_array_equal(random.key_data(k), [0, 0])


# ---- allow_f16_reductions, no_execution -------------------------------------------------------
def test_allow_f16_reductions_false_refuses_float16_reduce_sum():
    x = np.ones(3, np.float16)
    with xf.allow_f16_reductions(False):
        # JAX 0.10.2: jnp.sum and jnp.mean sum float16 in float32 (3.0, 1.0); the primitive
        # raises "reduce_sum on operand f16[3] is not allowed when
        # jax_allow_f16_reductions=False."
        assert float(xnp.sum(x)) == 3.0 and float(xnp.mean(x)) == 1.0
        with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[3\] is not allowed"):
            lax.reduce_sum(x, (0,))
    assert float(lax.reduce_sum(x, (0,))) == 3.0


def test_no_execution_refuses_to_run_but_traces():
    f = xf.jit(lambda x: x * 2.0)
    with xf.no_execution(True):
        # JAX 0.10.2: "JAX tried to execute function jit(<lambda>), but the no_execution
        # config option is set"; eager ops too; make_jaxpr and eval_shape work
        with pytest.raises(RuntimeError, match=r"execute function jit\(<lambda>\).*no_execution"):
            f(1.0)
        with pytest.raises(RuntimeError, match=r"jit\(sin\)"):
            xnp.sin(1.0)
        assert "mul" in str(xf.make_jaxpr(lambda x: x * 2.0)(1.0))
        assert xf.eval_shape(lambda x: x * 2.0, 1.0).shape == ()
    assert f(1.0) == 2.0


def test_options_without_an_effect_here_leave_results_alone():
    x = np.array([1.0, 2.0, -3.0])
    g = xf.grad(lambda v: xf.nn.softmax(v)[0])(x)
    # JAX 0.10.2's, jax_softmax_custom_jvp False and True (they differ in the last ulp)
    for jax_g in ([0.19600100151274139, -0.19468919602860604, -0.0013118054841353083],
                  [0.19600100151274136, -0.19468919602860607, -0.0013118054841353085]):
        np.testing.assert_allclose(g, jax_g, rtol=1e-14)
    with xf.softmax_custom_jvp(True), xf.thread_guard(True), \
            xf.jax2tf_associative_scan_reductions(True), \
            xf.array_garbage_collection_guard("fatal"), \
            xf.remove_size_one_mesh_axis_from_type(True), xf.transfer_guard("disallow"):
        np.testing.assert_array_equal(xf.grad(lambda v: xf.nn.softmax(v)[0])(x), g)
        np.testing.assert_array_equal(xf.jit(lambda v: xnp.cumsum(v))(x), [1.0, 3.0, 0.0])


def test_state_context_managers_are_thread_local_and_nest():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with xf.legacy_prng_key("warn"):
            with xf.legacy_prng_key("allow"):
                random.normal(random.PRNGKey(0))


def test_cuda_graphs_option_reads_the_environment_once(monkeypatch):
    """XFORMS_CUDA_GRAPHS is read at import, as the default of xforms' option: the CUDA call
    path asks `config.cuda_graphs()` on every call, which reads no environment variable."""
    default = config.CUDA_GRAPHS
    monkeypatch.setenv("XFORMS_CUDA_GRAPHS", "0" if default else "1")
    assert config.cuda_graphs() is default and config.xforms_cuda_graphs is default
    config.update("xforms_cuda_graphs", not default)
    try:
        assert config.cuda_graphs() is (not default)
        with config.use_cuda_graphs(default):
            assert config.cuda_graphs() is default
        assert config.cuda_graphs() is (not default)
    finally:
        config.update("xforms_cuda_graphs", default)
    assert config.cuda_graphs() is default and config.cuda_graphs_on == int(default)
    with pytest.raises(ValueError):
        config.update("xforms_cuda_graphs", "yes")


def test_every_environment_flag_the_package_reads_is_documented():
    """docs/flags.md lists every `XFORMS_*` environment name written as a string in xforms/
    (the flags the package reads or passes on): a flag a user cannot find is a flag they
    cannot set, and one left in the table after its reader is gone misleads them."""
    import pathlib
    import re
    root = pathlib.Path(xf.__file__).parent
    quoted = re.compile(r"""["'](XFORMS_[A-Z0-9_]+)["']""")
    names = {n for path in root.rglob("*.py") for n in quoted.findall(path.read_text())}
    doc = (root.parent / "docs" / "flags.md").read_text()
    listed = set(re.findall(r"`(XFORMS_[A-Z0-9_]+)", doc))
    assert len(names) > 20
    assert sorted(names - listed) == [], "flags missing from docs/flags.md"
    # every name in the table is read somewhere in the package (the test switches' section
    # names flags the test suite reads)
    tests_only = {"XFORMS_CUDA_TESTS"}
    assert sorted(listed - names - tests_only) == [], "docs/flags.md lists flags no code reads"
