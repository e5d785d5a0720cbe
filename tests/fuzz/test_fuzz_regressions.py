"""Bugs found by the differential fuzzer (tests/fuzz), each kept as its shrunk program.

Every test is a plain xforms program beside its NumPy reference, checked with the same
properties the fuzzer checks (tests/fuzz/checks.py).  The docstring says what went wrong.
"""
import importlib

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

from fuzz import reference as R
from fuzz.checks import Case, check_eager, check_grad, check_jvp, check_vjp, check_vmap
from fuzz.second_order import check_hvp


def _args(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(np.asarray(rng.standard_normal(s)) for s in shapes)


def _all_checks(case, in_axes=0):
    check_eager(case)
    check_jvp(case)
    check_vjp(case)
    check_grad(case)
    check_hvp(case)
    check_vmap(case, in_axes=(in_axes,) * len(case.args), out_axes=0, size=2)


def test_none_beside_integer_array_index():
    """x[None, :, [0]] under a transform raised "combining None with integer-array indexing
    is not supported" (xforms/numpy/indexing/subscripts.py getitem; None now becomes a length-1
    axis)."""
    def f(x0):
        return x0[None, :, [0]], x0[[1, 0], None, [2, 0]]

    def f_ref(x0):
        return x0[None, :, [0]], x0[[1, 0], None, [2, 0]]
    _all_checks(Case.of(f, f_ref, _args((2, 3))))


def test_scan_inside_while_body_reading_an_outer_value():
    """grad of a while_loop whose body runs a scan (static fori_loop) whose carry starts from
    a value closed over from outside the loop: the tangent for_loop's body mixed the primal
    and tangent carries of the inner scan, and the for_loop transpose (plain path) transposed
    it as is: "scan transpose: the carry mixes linear and non-linear values".  Fixed in
    xforms/primitives/control/loops.py `_plain_transpose` (partially evaluates the body first)."""
    def f(x0):
        def body(c):
            t, a = c
            v, = lax.fori_loop(0, 1, lambda i, c: (xnp.sin(c[0]),), (x0,))
            return (t + 0.5 + 0.25 * xnp.tanh(v), v)
        return lax.while_loop(lambda c: c[0] < 1.0, body, (0.0, x0))

    def f_ref(x0):
        def body(c):
            t, a = c
            v, = R.fori_loop(0, 1, lambda i, c: (np.sin(c[0]),), (x0,))
            return (t + 0.5 + 0.25 * np.tanh(v), v)
        return R.while_loop(lambda c: R.lt(c[0], 1.0), body, (0.0, x0))
    _all_checks(Case.of(f, f_ref, _args(())))


def test_concrete_array_indexed_by_a_traced_loop_index():
    """`xs[i]` with `xs` a concrete xforms Array closed over by a fori_loop/scan body and `i`
    the traced loop index raised ConcretizationError (NumPy's ndarray indexing asked for the
    index's value).  Fixed in xforms/core/trace.py `Array.__getitem__` (traced index -> gather)."""
    def f(x0, x1):
        def body(i, c):
            a, = c
            return (a * x1[i % 3] + x1[None, (i + 1) % 3, 0],)
        return lax.fori_loop(0, 4, body, (x0,))[0]

    def f_ref(x0, x1):
        def body(i, c):
            a, = c
            return (a * x1[i % 3] + x1[None, (i + 1) % 3, 0],)
        return R.fori_loop(0, 4, body, (x0,))[0]
    _all_checks(Case.of(f, f_ref, _args((2,), (3, 2))))


def test_vmap_of_custom_jvp_whose_rule_calls_itself_after_hvp():
    """vmap of a custom_jvp function whose rule calls the function itself (the usual
    pattern) hit RecursionError once its rule had been traced at the example's shape (here
    by an hvp): the batching analysis of the rule followed the rule's own call back into the
    same rule jaxpr forever.  Fixed in xforms/primitives/custom.py `_custom_jvp_batched`."""
    import xforms as xf

    @xf.custom_jvp
    def softabs(x):
        return xnp.sqrt(x * x + 0.1)

    @softabs.defjvp
    def _softabs_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = softabs(x)
        return y, t * (x / y)

    x = np.array([0.3, -0.5])
    xf.hvp(softabs, (x[0],), (1.0,))
    np.testing.assert_allclose(xf.vmap(softabs)(x), np.sqrt(x * x + 0.1), rtol=1e-14)
    np.testing.assert_allclose(xf.vmap(xf.grad(softabs))(x), x / np.sqrt(x * x + 0.1),
                               rtol=1e-14)


def test_jit_of_grad_and_jvp_of_sigmoid_of_batched_matmul():
    """jit of (grad, jvp) of sigmoid(g @ h) failed in the fusion planner: "fusion produced a
    cyclic schedule".  `_can_merge` skipped groups whose first node came after the consumer
    group, but sibling-merged groups span index ranges, so a path back into the consumer
    went unseen.  Fixed in xforms/kernels/plan/groups.py `can_merge` (no such pruning)."""
    rng = np.random.default_rng(0)
    g, h = rng.standard_normal((1, 3, 1)), rng.standard_normal((1, 3))
    w = rng.standard_normal((1, 3, 3))

    def f(g, h):
        return xf.nn.sigmoid(g @ h)

    def both(g, h, tg, th):
        return (xf.grad(lambda h: xnp.sum(w * f(g, h)))(h),
                xf.jvp(f, (g, h), (tg, th))[1])
    got = xf.jit(both)(g, h, g, h)
    want = both(g, h, g, h)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_jit_closing_over_a_read_only_eager_array():
    """A jitted function closing over an eager `xnp.expand_dims` result (a read-only NumPy
    view, C-contiguous with a zero stride) failed with Numba's "No matching definition for
    argument type(s) ..., readonly array(float64, 2d, C)": constants were passed as they
    were while the kernel's signature says writeable.  Fixed in xforms/kernels/cpu/backend.py
    `_const_value` (copies read-only constants)."""
    x = xnp.expand_dims(xnp.asarray(np.array([0.3, 0.8])), -1)
    f = xf.jit(lambda a: a * x)
    np.testing.assert_allclose(f(np.ones((2, 3))), np.array([[0.3] * 3, [0.8] * 3]), rtol=0)


def test_jit_scan_over_a_matrix_carry_stacking_it():
    """Silently wrong values (and writes out of bounds) from jit of a scan whose body holds
    a fused loop nest over a rank-2 array: the scan's counter was named `i1`, as was the
    nest's second loop index, so `ys[i1] = ...` after the nest wrote the wrong row.  Found
    through an inner `xf.jit` in an eagerly run program.  Fixed in
    xforms/kernels/cpu/numba/control.py (`_scan`, `_for_loop` name their counter `it<n>`)."""
    def f(b):
        def step(v, x):
            v2 = v + x[0] * 0.5
            return v2, v2
        return lax.scan(step, b, b)[1]

    def f_ref(b):
        def step(v, xs):
            v2 = v + xs[0][0] * 0.5
            return v2, (v2,)
        return R.scan(step, b, (b,))[1][0]
    b = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(xf.jit(f)(b), f_ref(b), rtol=1e-15)
    np.testing.assert_allclose(xf.jit(lambda b: lax.fori_loop(0, 2, lambda i, c: c * 2.0, b))(b),
                               4 * b, rtol=0)


def test_jacfwd_of_checkpoint_around_control_flow():
    """jacfwd (and so hessian) of `xf.checkpoint(f)` with a loop or cond inside f raised
    BatchedOutputError: the checkpoint's batching rule forced every output batched whenever
    a conservative analysis could not see through the loop, including the primal outputs
    jacfwd needs unbatched.  Fixed in xforms/primitives/custom.py `_checkpoint_vmap` (uses
    the batching the rules actually produce)."""
    def g(a):
        v, = lax.fori_loop(0, 2, lambda i, c: (xnp.sin(c[0]),), (a,))
        return xnp.sin(v) + lax.cond(a > 0, xnp.sin, xnp.cos, a)
    x = np.array(0.3)
    f = xf.checkpoint(g)
    np.testing.assert_allclose(xf.jacfwd(f)(x), xf.grad(g)(x), rtol=1e-14)
    np.testing.assert_allclose(xf.hessian(f)(x), xf.grad(xf.grad(g))(x), rtol=1e-14)


def test_cuda_backend_error_names_the_compiler_import_failure(monkeypatch):
    """A fuzz run's CUDA-simulator worker failed with "backend 'cuda' is not available:
    install the CUDA extra ..." while the real cause was that the compiler package `kernels`
    had failed to import (a half-edited file): the CUDA message hid the import error that
    the message for other backends shows.  Fixed in xforms/jit/backends.py `require`."""
    from xforms.errors import BackendError
    jit_module = importlib.import_module("xforms.jit.backends")
    monkeypatch.setattr(jit_module, "_backends",
                        {k: v for k, v in jit_module._backends.items() if k != "cuda"})
    monkeypatch.setattr(jit_module, "_import_error", [ImportError("no module named kernels.x")])
    with pytest.raises(BackendError, match="xforms.kernels' failed to import .no module named kernels.x"):
        xf.jit(lambda x: x * 2.0, backend="cuda")(1.0)


# ---- the transforms' own parameters (tests/fuzz/params.py) ----------------------------------
def _plan(**kw):
    from fuzz.params import Plan
    base = dict(deriv="grad", argnums=0, has_aux=False, inner=(), outer=(), forms=("array",),
                extra=None, static=None, in_axes=None, out_axes=None, size=1)
    return Plan(**{**base, **kw})


def _sin_case():
    return Case.of(lambda x0: xnp.sin(xnp.asarray(x0)), lambda x0: np.sin(x0),
                   (np.array(0.1257302210933933),))


def test_plan_function_argument_outside_argnums():
    """grad(f, argnums=1)(a_function, x) raised "unsupported input function": arguments that
    are not differentiated were flattened as arrays.  Fixed in xforms/argnums.py (DiffArgs
    passes non-array leaves through, as JAX does)."""
    from fuzz.params import check_plan
    check_plan(_sin_case(), _plan(argnums=(1,), extra=(0, "fn"), static=0))


@pytest.mark.parametrize("argnums", [-1, (-1,), (0,)])
def test_plan_negative_argnums(argnums):
    """grad(f, argnums=-1) raised IndexError and argnums=(-1,) returned an empty tuple: only
    jacrev/jacfwd resolved negative indices.  Fixed in xforms/argnums.py `resolve`."""
    from fuzz.params import check_plan
    check_plan(_sin_case(), _plan(argnums=argnums))


def test_plan_reordered_argnums_with_aux_under_vmap():
    """argnums=(1, 0) gave the gradients in position order, not argnums order."""
    from fuzz.params import check_plan
    case = Case.of(lambda a, b: xnp.sin(a) * b, lambda a, b: np.sin(a) * b,
                   (np.array(0.3), np.array([0.5, -1.0])))
    for deriv in ("grad", "value_and_grad", "jacrev", "jacfwd"):
        check_plan(case, _plan(deriv=deriv, argnums=(1, -2), has_aux=True,
                               forms=("python", "array")))
        check_plan(case, _plan(deriv=deriv, argnums=(1, 0), outer=("vmap",),
                               forms=("array", "array"), in_axes=(None, -1), out_axes=-1,
                               size=2))


def test_abs_of_a_zero_fft_bin():
    """|rfft(v)|^2 where a bin is exactly 0 (two equal rows): the jvp was NaN, 0/0 in complex
    abs's rule Re(conj(x) t) / |x|.  JAX replaces |x| = 0 by 1 in that quotient (the
    derivative is 0 there); so does xforms/primitives/elementwise/ now.  Found when the
    fuzzer learned the FFT, sort, cumulative, convolve and solve ops (ALONG)."""
    def f(x0):
        v6 = lax.scan(lambda c, x: (c, xnp.sin(x0)), x0, x0)[1]
        return xnp.abs(xnp.fft.rfft(v6, axis=0)) ** 2

    def f_ref(x0):
        v6 = np.stack([np.sin(x0)] * x0.shape[0])
        return np.abs(np.fft.rfft(v6, axis=0)) ** 2
    _all_checks(Case.of(f, f_ref, (np.array([[[0.1257302210933933]], [[-0.1321048632913019]]]),)))
    z = np.array([0.0j, 3 - 4j])
    t = np.array([1 + 1j, 1j])
    np.testing.assert_allclose(xf.jvp(xnp.abs, (z,), (t,))[1], [0.0, -0.8])


def test_scatter_into_a_transposed_einsum_result():
    """The reference's .at[].add wrote into a reshaped copy of an einsum result laid out
    transposed ('a,yx->axy'), so the update was lost and the eager check failed against a
    wrong reference (tests/fuzz/reference.py `_update` now copies in C order)."""
    def f(x4, x5, x14):
        v = xnp.sin(xnp.einsum('a,yx->axy', x4, x5))
        return xnp.sin(v.at[0, :, :].add(x14))

    def f_ref(x4, x5, x14):
        v = np.sin(np.einsum('a,yx->axy', x4, x5))
        return np.sin(R.at_add(v, (0, slice(None), slice(None)), x14))
    _all_checks(Case.of(f, f_ref, _args((1,), (2, 2), (2, 2))))


def test_convolve_with_an_infinite_kernel_element():
    """np.convolve([a0, a1], [inf, v1]) is [inf, a1 * inf + ...] only where the infinity
    meets a real element: the padding adds nothing (XLA's float64 convolution skips it too).
    xforms multiplied its zero padding by the kernel, 0 * inf = NaN, on both tiers
    (xforms/primitives/conv.py masks the padding; the CPU runtime's `direct` method runs when
    the kernel is not finite).  The fuzzer draws such kernels since (`convolve_inf`)."""
    def f(x0, x1):
        c = xnp.convolve(x0, xnp.where(x1 > 0.5, float('inf'), x1))
        return xnp.nan_to_num(c, nan=-7.0, posinf=7.0, neginf=-6.0)

    def f_ref(x0, x1):
        return R.convolve_special(x0, x1, float('inf'))
    case = Case.of(f, f_ref, (np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.25])))
    check_eager(case)
    got = xf.jit(f, tiered=False)(*case.args)
    np.testing.assert_array_equal(got, f_ref(*case.args))     # [7, -6, 7, 0.5]


def test_forward_and_reverse_modes_differ_where_an_infinity_meets_a_zero_cotangent():
    """The deep profile's case (session 16): vmap(jacfwd(checkpoint(f))) against the reverse-
    mode reference, where f takes nan_to_num of a convolution with an infinite kernel.  Reverse
    mode sends nan_to_num's zero cotangent through the convolution, 0 * inf = NaN; forward
    mode's infinite tangent is replaced by 0.  jax 0.10.2 gives the same two answers (grad
    [nan, nan], jacfwd [0, 0]), so the fuzzer no longer compares modes where the reverse-mode
    derivative is not finite (tests/fuzz/params.py `check_plan`)."""
    def f(x):
        c = xnp.convolve(x, xnp.where(x > 0.5, float('inf'), x))
        return xnp.sum(xnp.nan_to_num(c, nan=-7.0, posinf=7.0, neginf=-6.0))
    x = np.array([0.72395654, 1.61877622])
    np.testing.assert_array_equal(xf.grad(f)(x), [np.nan, np.nan])
    np.testing.assert_array_equal(xf.jacfwd(f)(x), [0.0, 0.0])
    np.testing.assert_array_equal(xf.vmap(xf.jacfwd(xf.checkpoint(f)))(np.stack([x, 2 * x])),
                                  np.zeros((2, 2)))


@pytest.mark.parametrize("shape", [(), (40,)])
def test_max_and_min_order_signed_zeros_as_jax(shape):
    """The scalar fuzzer's case (session 20): `xnp.maximum(p0, p1)` of 0.0 and -0.0.  NumPy
    returns either operand of a tie, Numba's and the LLVM kernels' `a if a >= b` the first:
    the fast tier said max(0.0, -0.0) = -0.0, the compiled tier max(-0.0, 0.0) = -0.0.  JAX
    (jax 0.10.2, under jit and eagerly) orders -0.0 < +0.0: max of the two is 0.0 and min
    -0.0, either way round; relu(-0.0) = 0.0."""
    x = np.broadcast_to(np.array([0.0, -0.0, -0.0, 0.0]), shape + (4,)).copy()
    y = np.broadcast_to(np.array([-0.0, 0.0, -0.0, 0.0]), shape + (4,)).copy()
    want_max, want_min = np.array([0.0, 0.0, -0.0, 0.0]), np.array([-0.0, -0.0, -0.0, 0.0])
    both = lambda a, b: (xnp.maximum(a, b), xnp.minimum(a, b))      # noqa: E731
    for tier in (both, xf.jit(both, tiered=False)):
        for dt in ("float32", "float64"):
            mx, mn = map(np.asarray, tier(x.astype(dt), y.astype(dt)))
            np.testing.assert_array_equal(np.signbit(mx), np.signbit(want_max + 0 * mx))
            np.testing.assert_array_equal(np.signbit(mn), np.signbit(want_min + 0 * mn))
    assert not np.signbit(xf.jit(xf.nn.relu, tiered=False)(np.float64(-0.0)))


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
def test_sign_keeps_a_zeros_sign(dt):
    """The dtype fuzzer's case (session 21, tests/fuzz/dtype_programs.py, against jax locally):
    `xnp.sign(-0.0)` was +0.0 eagerly and on both tiers (NumPy's np.sign, the scalar rule's
    `0`); jax 0.10.2 gives -0.0 (values below computed with it)."""
    x = np.array([-0.0, 0.0, np.nan, -2.0, 3.0], dt)
    want = np.array([-0.0, 0.0, np.nan, -1.0, 1.0], dt)
    for tier in (xnp.sign, xf.jit(xnp.sign, tiered=False)):
        got = np.asarray(tier(x))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got[[0, 1, 3, 4]]), [True, False, True, False])


def test_max_and_min_with_initial_keep_the_operands_dtype():
    """The dtype fuzzer's case (session 21, against jax locally): `xnp.max(b, axis=-1,
    where=b, initial=0)` of a bool array gave int64 [1, 1]: `initial` was combined with
    promotion (JAX converts it to the operand's dtype) and where= filled a bool max's masked
    elements with True (its identity is False).  Expected values from jax 0.10.2."""
    b = np.array([[True, False], [False, False]])
    i8 = np.array([3, 4], np.int8)
    cases = [(lambda b, i: xnp.max(b, axis=-1, where=b, initial=0), [True, False]),
             (lambda b, i: xnp.min(~b, axis=-1, where=b, initial=1), [False, True]),
             (lambda b, i: xnp.min(i, initial=1000, where=i > 3), np.int8(-24)),
             (lambda b, i: xnp.max(i, initial=-1.5), np.int8(4))]
    for f, want in cases:
        want = np.asarray(want)
        for tier in (f, xf.jit(f, tiered=False)):
            got = np.asarray(tier(b, i8))
            assert got.dtype == want.dtype, (got.dtype, want.dtype)
            np.testing.assert_array_equal(got, want)


def test_numpy_scalar_xor_with_a_traced_value():
    """dtype fuzzer, once it drew NumPy scalars (session 23), shrunk to
    `def f(p0): return (np.int8(2) ^ p0,)` with p0 = np.array(False): under jit the NumPy
    scalar's operator called np.bitwise_xor on the tracer, which xforms did not map to
    xnp.bitwise_xor (TypeError "cannot be applied to a traced value"); jax: int8 2 ^ 0 = 2.
    Shifts took the same road."""
    p0 = np.array(False)
    out = xf.jit(lambda p0: np.int8(2) ^ p0)(p0)
    assert out.dtype == np.int8 and out == 2
    x = np.array([0, 1], np.int8)
    np.testing.assert_array_equal(xf.jit(lambda x: np.int8(1) << x)(x), [1, 2])
    np.testing.assert_array_equal(xf.jit(lambda x: np.int8(4) >> x)(x), [4, 2])


def test_eager_integer_floor_division_by_zero_as_the_fast_tier():
    """The class the dtype fuzzer missed until it compared eager runs with jit (session 23):
    `p0 // p1` of eager int8 Arrays with p1 = 0 was NumPy's 0, jit's (and JAX's) -2."""
    p0, p1 = np.array([2, -3], np.int8), np.array([0, 0], np.int8)
    with np.errstate(all="ignore"):
        eager = xnp.asarray(p0) // xnp.asarray(p1)
    np.testing.assert_array_equal(eager, xf.jit(lambda a, b: a // b)(p0, p1))
    np.testing.assert_array_equal(eager, [-2, -2])


def test_eigenvalues_read_from_one_triangle_of_a_non_symmetric_matrix():
    """eigh(m, symmetrize_input=False) reads m's lower triangle; its JVP (JAX's rule) took the
    tangent as Hermitian, so where m (and dm) is not symmetric jvp differed from finite
    differences and hvp from the Hessian (session 24, found by tools/jax_ad_sweep.py's vjp2;
    the fuzzer's linalg ops were all symmetric until its `eigvalsh_tri`).  Fixed in
    xforms/primitives/linalg/spectral.py `_read_triangle`."""
    def f(a):
        s = a @ xnp.swapaxes(a, -1, -2)
        return xnp.linalg.eigh(s + 3 * xnp.eye(3) + xnp.tril(s, -1),
                               symmetrize_input=False).eigenvalues

    def f_ref(a):
        s = a @ np.swapaxes(a, -1, -2)
        return np.linalg.eigh(s + 3 * np.eye(3) + np.tril(s, -1)).eigenvalues
    _all_checks(Case.of(f, f_ref, _args((3, 2))))


@pytest.mark.parametrize("op, kinds", [("arctan2", ("f32", "py_complex")),
                                       ("logaddexp", ("c64", "f32"))])
def test_inexact_functions_of_a_complex_operand(op, kinds):
    """The promotion fuzzer, once it drew arctan2 and logaddexp (session 24), shrunk to
    `xnp.arctan2(f32_array, 1+2j)` and `xnp.logaddexp(c64_array, f32_array)`: both raised
    TypeError (no complex atan2 primitive; logaddexp refused complex), where jax returns
    complex64 (jnp.arctan2(jnp.float32(0.5), 1+2j) = 0.10375-0.20059j)."""
    from fuzz.promotion import check_promotion
    first, other = kinds
    check_promotion(first, [(op, other, False)])
    out = xnp.arctan2(np.float32(0.5), 1 + 2j)
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, 0.10374800860881805 - 0.20058660209178925j, rtol=1e-6)


def test_eager_comparison_with_a_python_int_outside_the_dtype():
    """The dtype fuzzer's deep profile (session 25): `p0 != -1` of an eager uint8 Array
    255 was NumPy's value comparison (True); JAX, and jit's tiers, convert -1 to the
    operand's dtype first (255), so False.  Likewise int8(127) == 383 (383 wraps to 127)."""
    p0 = np.array(255, np.uint8)
    f = lambda a: (a != -1, a == -1, a > -1, a <= -1)
    for got in (f(xnp.asarray(p0)), xf.jit(f)(p0)):
        np.testing.assert_array_equal(got, [False, True, False, True])
    c = xnp.asarray(np.array([127, 0], np.int8))
    np.testing.assert_array_equal(c == 383, [True, False])
    np.testing.assert_array_equal(-129 < c, [False, False])    # (-129 wraps to 127)


def test_eager_uint64_index_arrays_are_read_by_their_value():
    """The dtype fuzzer, once it compared gathers with their NumPy rendering (session 26,
    tests/fuzz/renderings.py), shrunk to `v1 = p0[p0]` with p0 = np.array([0, 2**64 - 2,
    0], np.uint64): an eager Array indexed by a uint64 array gave [0, 2**64 - 2, 0] (NumPy's
    indexing casts the index to intp, so 2**64 - 2 counted from the end as -2); jit's tiers
    and `.at[].get` read the value (out of bounds: clamped to the last element), [0, 0, 0]
    (README "Indexing": xforms does not copy JAX's int32 wrap of index arrays)."""
    p0 = np.array([0, 2 ** 64 - 2, 0], np.uint64)
    a = np.array([10.0, 20.0, 30.0])
    i = np.array([[2 ** 64 - 2], [1]], np.uint64)
    m = np.arange(6.0).reshape(2, 3)
    for tier in (lambda f, *a: f(*map(xnp.asarray, a)),
                 lambda f, *a: xf.jit(f, tiered=True)(*a),
                 lambda f, *a: xf.jit(f, tiered=False)(*a)):
        np.testing.assert_array_equal(tier(lambda p: p[p], p0), [0, 0, 0])
        np.testing.assert_array_equal(tier(lambda x, i: x[i], a, i), [[30.0], [20.0]])
        np.testing.assert_array_equal(tier(lambda x, i: x[0, i], m, i), [[2.0], [1.0]])
        np.testing.assert_array_equal(tier(lambda x, i: x[i[:, 0], 0], m, i), [3.0, 3.0])


def test_adding_a_literal_zero_keeps_a_negative_zero_under_jit_as_jax():
    """The dtype fuzzer at its deep budget (session 26) shrunk to `v0 = p0 + 0` with a -0.0
    in a float16 p0: eager gave 0.0 and jit's tiers -0.0, which its eager-vs-fast-tier check
    called a difference.  JAX 0.10.2 does the same (eager 0.0: IEEE -0.0 + 0.0; jax.jit
    -0.0: XLA folds `x + 0` to `x`, as xforms' simplify does), so the checker now sets zeros'
    signs aside beside a literal `+ 0` (dtype_programs.ADDS_ZERO), and compiled-vs-fast
    stays bit for bit."""
    from fuzz.dtype_programs import DtypeCase, check_dtype_tiers
    for dt in ("float16", "float32", "float64"):
        p0 = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -0.0]], dt)
        assert not np.signbit(np.asarray(xnp.asarray(p0) + 0)).any()          # jax eager
        for tiered in (True, False):                                           # jax.jit
            out = np.asarray(xf.jit(lambda x: x + 0, tiered=tiered)(p0))
            assert out.dtype == dt and np.signbit(out[1, 2]) and not np.signbit(out[0]).any()
        check_dtype_tiers([DtypeCase("def f(p0):\n    v0 = p0 + 0\n    return (v0,)", (p0,))])


def test_eager_float_remainder_and_floor_division_sign_zeros_as_jax():
    """The dtype fuzzer at its deep budget (session 26) shrunk to `p1 % np.int8(2)` with
    p1 = -2.0**63 (float64): eager 0.0, jit's tiers -0.0.  The eager Array operators `%` and `//` of
    floats were NumPy's, which give a zero the divisor's sign; jax 0.10.2 (eager and jit, as
    xnp.remainder/floor_divide) gives -4.0 % 2.0 = -0.0, 0.0 % -1.0 = 0.0, -0.0 // inf = 0.0
    (values below computed with it)."""
    x = np.array([-4.0, -2.0 ** 14, 0.0, -0.0, 0.0, 3.0, -2.5])
    y = np.array([2.0, 2.0, -1.0, np.inf, -np.inf, -1.5, 2.0])
    want_mod = [-0.0, -0.0, 0.0, -0.0, 0.0, 0.0, 1.5]
    want_div = [-2.0, -8192.0, -0.0, 0.0, -0.0, -2.0, -2.0]
    for dt in ("float16", "float32", "float64"):
        a, b = x.astype(dt), y.astype(dt)
        wm, wd = np.array(want_mod, dt), np.array(want_div, dt)
        for tier in (lambda f: f(xnp.asarray(a), xnp.asarray(b)),
                     lambda f: xf.jit(f, tiered=True)(a, b),
                     lambda f: xf.jit(f, tiered=False)(a, b)):
            for f, want in ((lambda u, v: u % v, wm), (lambda u, v: u // v, wd),
                            (lambda u, v: u % np.int8(2), np.array([-0.0, -0.0, 0.0, -0.0,
                                                                    0.0, 1.0, 1.5], dt))):
                got = np.asarray(tier(f))
                assert got.dtype == dt
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_divmod_of_traced_and_eager_arrays_as_jax():
    """`divmod(x, y)` of traced values raised TypeError (JAX's arrays take it: jnp.divmod),
    and of eager Arrays was NumPy's (an integer by zero gave (0, 0); jax 0.10.2: (-2, 0),
    and a zero's sign followed the divisor).  Values computed with jax 0.10.2."""
    x, y = np.array([7, -7, 7, 0]), np.array([0, 2, -2, -3])
    want = ([-2, -4, -4, 0], [0, 1, -1, 0])
    xf_, yf = np.array([0.0, -4.0, 7.5]), np.array([-1.0, 2.0, -2.0])
    want_f = ([-0.0, -2.0, -4.0], [0.0, -0.0, -0.5])
    for tier in (lambda f, *a: f(*map(xnp.asarray, a)),
                 lambda f, *a: xf.jit(f, tiered=True)(*a),
                 lambda f, *a: xf.jit(f, tiered=False)(*a)):
        for (a, b), w in (((x, y), want), ((xf_, yf), want_f)):
            q, r = tier(lambda u, v: divmod(u, v), a, b)
            for got, wk in ((q, w[0]), (r, w[1])):
                got = np.asarray(got)
                assert got.dtype == a.dtype
                np.testing.assert_array_equal(got, wk)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(np.asarray(wk, float)))
        q, r = tier(lambda v: divmod(7, v), y)                 # __rdivmod__
        np.testing.assert_array_equal(q, [-2, 3, -4, -3])
        np.testing.assert_array_equal(r, [0, 1, -1, -2])


def test_complex64_logaddexp_cancelling_to_near_zero_is_checked_to_its_operands_rounding():
    """Session 26's deep run: `u32 arctan2 c64` then `c64 logaddexp`, whose second element
    cancels to -0.00314033+0j (JAX's formula, xforms' value, JAX 0.10.2's too) where the
    check's reference log(exp(x) + exp(y)) gives -0.00314031+7.6e-9j (-0.00314032+7.6e-9j in
    complex128): both within complex64's rounding of operands near 1, so the check compares
    to a tolerance of the operands' size."""
    from fuzz.promotion import check_promotion
    check_promotion("u32", [("arctan2", "c64", True), ("logaddexp", "c64", False)])
    got = xnp.logaddexp(xnp.asarray(np.array([-0.4636476 + 1.19738e-8j], np.complex64)),
                        xnp.asarray(np.array([-1], np.complex64)))
    # (JAX 0.10.2: -0.00314033+0j.  Since session 28 complex64 log1p is computed in float64 and
    # rounded (complex_arith's algorithms), one float32 ulp (3e-8 at 0.46) from XLA's float32
    # arithmetic here: -0.0031403; issue #31 keeps "complex64 in float32, as XLA" open)
    np.testing.assert_allclose(np.asarray(got), [-0.00314033 + 0j], rtol=0, atol=6e-8)


def test_eager_unary_operators_keep_a_weak_type():
    """The dtype fuzzer, once it compared every statement with its NumPy rendering with JAX's
    semantics (session 27, tests/fuzz/jnp_rendering.py), shrunk to `v0 = xnp.where(p1, p0,
    np.uint64(3))` (int64 and uint64: a weak float64 in JAX) then `v1 = -v0`: the eager
    Array's `-`, `+`, `abs()` and `~` were ndarray's, which drop the weak type, so `-v0`
    added to a float32 array gave float64.  jax 0.10.2: `-w + f32` is float32 for a weak w."""
    w = xf.jit(lambda t: t * 1.0)(0.5)
    i = xf.jit(lambda t: t + 1)(2)
    f32 = xnp.asarray(np.array([1.0], np.float32))
    for v in (-w, +w, abs(w), ~i, -i):
        assert v.weak_type
    assert (-w + f32).dtype == np.float32 and (abs(w) * f32).dtype == np.float32
    assert (~i + xnp.asarray(np.array([1], np.int8))).dtype == np.int8
    assert not (-xnp.asarray(np.array([1.0]))).weak_type


def test_eager_comparisons_compare_in_jax_s_promoted_dtype():
    """The same fuzzer shrunk to `p1 == p0` with p1 = int64 max and p0 = float16 inf: JAX
    promotes both to float16 (int64 max becomes inf) and gives True, as jit's tiers did; the
    eager Array gave NumPy's False (it compares in float64).  jax 0.10.2 values:
    jnp.int64(2**63-1) == jnp.float16(inf) is True, int32 16777217 == float32 16777216 is
    True, int32 16777217 > float32 16777216 is False."""
    big = np.array([2 ** 63 - 1, 1])
    inf16 = np.array([np.inf, 1.0], np.float16)
    i32 = np.array([16777217], np.int32)
    f32 = np.array([16777216.0], np.float32)
    for tier in (lambda f, *a: f(*map(xnp.asarray, a)), lambda f, *a: xf.jit(f)(*a)):
        np.testing.assert_array_equal(tier(lambda a, b: a == b, big, inf16), [True, True])
        np.testing.assert_array_equal(tier(lambda a, b: b != a, big, inf16), [False, False])
        np.testing.assert_array_equal(tier(lambda a, b: a == b, i32, f32), [True])
        np.testing.assert_array_equal(tier(lambda a, b: a > b, i32, f32), [False])


@pytest.mark.parametrize("fn", [lambda x, m: xnp.sum(x, where=m),
                                lambda x, m: xnp.max(x, where=m, initial=0),
                                lambda x, m: xnp.mean(x, where=m),
                                lambda x, m: xnp.any(x, where=m)])
def test_reductions_refuse_a_mask_that_is_not_bool(fn):
    """The same fuzzer drew `xnp.sum(v0, axis=0, where=p1)` with an int8 p1: xforms read it
    as `p1 != 0`; jax 0.10.2 raises "jnp.sum: where must be None or a boolean array"."""
    x = xnp.asarray(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="where= must be None or a boolean array"):
        fn(x, xnp.asarray(np.array([1, 0, 1], np.int8)))
    with pytest.raises(ValueError, match="boolean array"):
        xf.jit(fn)(x, np.array([1.0, 0.0, 1.0]))
    assert float(fn(x, np.array([True, False, True]))) in (4.0, 3.0, 2.0, 1.0)


def test_the_dtype_programs_rendering_gives_jax_s_values():
    """tests/fuzz/jnp_rendering.py, which every dtype program's tier is compared with, against
    jax 0.10.2's values (x64) of the same expressions, written here as literals."""
    from fuzz import jnp_rendering as JR
    i8 = JR.Rendered(np.array([-128, 5], np.int8))
    u8 = JR.Rendered(np.array([0, 255], np.uint8))
    b = JR.Rendered(np.array([True, False]))
    f16 = JR.Rendered(np.array([65504, 65504, -65504], np.float16))
    cases = [  # (rendered, jax's value, jax's weak type)
        (i8 // JR.Rendered(np.int8(0)), np.array([-2, -2], np.int8), False),
        (i8 % JR.Rendered(np.int8(0)), np.array([0, 0], np.int8), False),
        (i8 // JR.Rendered(np.int8(-1)), np.array([-128, -5], np.int8), False),
        (u8 // JR.Rendered(np.uint8(0)), np.array([255, 255], np.uint8), False),
        (i8 << JR.Rendered(np.int8(-1)), np.array([0, 0], np.int8), False),
        (i8 >> 9, np.array([-1, 0], np.int8), False),
        (i8 << u8, np.array([-128, 0], np.int16), False),
        (u8 + -1, np.array([255, 254], np.uint8), False),
        (i8 + 256, np.array([-128, 5], np.int8), False),
        (b // b, np.array([1, -1], np.int32), False),
        (b + 1, np.array([2, 1]), True),
        (b / 0.5, np.array([2.0, 0.0]), True),
        (JR.XNP.square(b), np.array([1, 0], np.int32), False),
        (JR.XNP.sum(f16), np.array(65504, np.float16), False),
        (JR.XNP.cumsum(f16, 0), np.array([65504, np.inf, np.inf], np.float16), False),
        (JR.XNP.sum(i8), np.array(-123), False),
        (JR.XNP.sum(u8), np.array(255, np.uint64), False),
        (JR.XNP.max(u8, where=JR.Rendered(np.array([False, False])), initial=-1),
         np.array(255, np.uint8), False),
        (JR.XNP.where(b, b, 0.5), np.array([1.0, 0.5]), True),
        (JR.Rendered(np.array([2 ** 63 + 1], np.uint64)) == JR.Rendered(np.array([2 ** 62])),
         np.array([False]), True),
        (JR.XNP.sign(JR.Rendered(np.array([-0.0, np.nan, -3.0]))),
         np.array([-0.0, np.nan, -1.0]), False),
        (JR.LAX.cummax(JR.Rendered(np.array([-0.0, 0.0, -0.0])), 0),
         np.array([-0.0, 0.0, 0.0]), False)]
    for got, want, weak in cases:
        assert got.dtype == want.dtype and got.weak == weak, (got, want)
        np.testing.assert_array_equal(got.value, want)
        assert (np.signbit(got.value) == np.signbit(want)).all(), (got, want)
    with pytest.raises(TypeError):
        -b
    with pytest.raises(TypeError):
        JR.LAX.cummax(b, 0)


def test_lax_cumulative_reductions_refuse_bools():
    """The rendered dtype fuzzer at its deep budget (session 27) drew `lax.cummin(v2, axis=0)`
    of a bool v2: xforms computed it, jax 0.10.2 raises "cummin does not accept dtype bool"
    (lax.cumsum, cumprod, cummax the same); xnp.cumsum of bools still counts them (int64)."""
    b = np.array([True, False, True])
    for fn in (lax.cumsum, lax.cumprod, lax.cummax, lax.cummin):
        for call in (fn, xf.jit(fn)):
            with pytest.raises(TypeError, match="does not accept dtype bool"):
                call(b)
    np.testing.assert_array_equal(xnp.cumsum(xnp.asarray(b)), [1, 1, 2])
    np.testing.assert_array_equal(lax.cummax(np.array([1, 3, 2], np.int8)), [1, 3, 3])


@pytest.mark.parametrize("llvm", ["0", "1"])
def test_narrow_dtype_sums_wrap_on_both_cpu_paths(llvm, monkeypatch):
    """Numba path (XFORMS_LLVM_KERNELS=0): `sum(x, dtype=int8)` to a scalar raised
    OverflowError -- the kernel's register `b += A[i0]` is int64 in Numba, so it returned the
    unwrapped 300.  jax 0.10.2: sum([100, 100, 100] int8, dtype=int8) = 44, prod = 64,
    sum(dtype=int16) of [30000, 30000, 30000] = 24464, prod(dtype=int32) of [70000] * 3 =
    -383225856 (wrapped)."""
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", llvm)
    x = np.array([100, 100, 100], np.int8)
    for tiered in (True, False):
        f = xf.jit(lambda a: (xnp.sum(a, dtype=np.int8), xnp.prod(a, dtype=np.int8),
                              xnp.sum(a.astype(np.int16) * 300, dtype=np.int16),
                              xnp.prod(a.astype(np.int32) * 700, dtype=np.int32)),
                   tiered=tiered)
        got = [np.asarray(v) for v in f(x)]
        assert [v.dtype for v in got] == [np.int8, np.int8, np.int16, np.int32]
        assert [int(v) for v in got] == [44, 64, 24464, -383225856]


def test_float16_scatter_add_with_repeated_indices_rounds_each_add():
    """The rendered dtype fuzzer at its deep budget (session 27): `p0.at[p2].mul(2)` then
    `.at[p2].add(1)` with row 0 indexed three times: 2400 + 1 + 1 + 1 in float16 (spacing 2
    there) rounds back to 2400 at each add -- jax 0.10.2 eager and jit, and the fast tier,
    give 2400 -- but the compiled tier gave 2404 (2403 rounded once: its float32 program
    rounded the scatter's result, not each add; session 28 rounds each combine)."""
    p0 = np.array([[300.0, np.inf, -129.0], [1.5, 0.5, 1.5]], np.float16)
    p2 = np.array([[0, 2, 0], [-2, -32767, 7]], np.int16)
    f = lambda p0, p2: p0.at[p2].mul(2).at[p2].add(1)
    want = np.array([[2400.0, np.inf, -1029.0], [1.5, 0.5, 1.5]], np.float16)
    np.testing.assert_array_equal(xf.jit(f, tiered=True)(p0, p2), want)      # (fast tier)
    np.testing.assert_array_equal(xf.jit(f, tiered=False)(p0, p2), want)


def test_float16_scatter_mul_with_repeated_indices_rounds_each_product():
    """1115 * 1.0098 six times at one index, each product rounded to float16: jax 0.10.2
    `jax.jit(lambda x, u, i: x.at[i].mul(u))` gives 1181 (rounded once at the end: 1182).
    (float16 programs compile on the Numba path: the direct path has no float16 rounding.)"""
    x, u = np.float16([1115.0, 3.0]), np.float16([1.0098] * 6)
    i = np.zeros(6, np.int64)
    got = xf.jit(lambda x, u, i: x.at[i].mul(u), tiered=False)(x, u, i)
    np.testing.assert_array_equal(got, np.float16([1181.0, 3.0]))
    got = xf.jit(lambda x, u, i: x.at[i].add(u), tiered=False)(np.float16([2048.0, 1.0]),
                                                                np.float16([1.0] * 6), i)
    np.testing.assert_array_equal(got, np.float16([2048.0, 1.0]))     # (jax 0.10.2: 2048)


def test_square_of_a_weak_bool_is_a_strong_int32():
    """The rendering itself (tests/fuzz/jnp_rendering.py), caught by the deep run: `v1 = v0
    != 2.0` of a uint32 v0 is a weakly typed bool in JAX (uint32 and a Python float promote to
    a weak float64), and jax 0.10.2's `jnp.square(v1)` is int32, strongly typed, as xforms
    gives (the rendering had kept the weak type)."""
    from fuzz import jnp_rendering as JR
    v1 = JR.Rendered(np.array(0, np.uint32)) != 2.0
    assert v1.weak and JR.XNP.square(v1).dtype == np.int32 and not JR.XNP.square(v1).weak
    x = xnp.asarray(np.array(0, np.uint32)) != 2.0
    assert x.weak_type and not xnp.square(x).weak_type and xnp.square(x).dtype == np.int32


@pytest.mark.parametrize("llvm", ["0", "1"])
def test_int64_sums_wrap_before_a_sign_on_both_paths(monkeypatch, llvm):
    """The deep dtype fuzz run (session 27, fuzz-deep6.log; reproduced in session 28):
    `sign(-(x + x))` at x = int64 MIN is sign(0) = 0 (x + x wraps, as in jax 0.10.2), but
    the Numba path gave 1: Numba marks signed int64 adds `nsw`, so LLVM folded
    `sign(-(x + x))` to `-sign(x)`.  int64 + - * are now spelled on uint64 there."""
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", llvm)

    def f(p0, p1):
        v0 = p0 + p0
        v1 = xnp.take(v0, p1, axis=0, mode="clip")
        v3 = xnp.sign(-v0)
        return v0, v1, v3 * p1.astype(np.int64) + v3     # (p1 is 0: v3 itself)
    p0 = np.array([[0, 0, 0], [0, 0, np.iinfo(np.int64).min]])
    v0, v1, v3 = xf.jit(f, tiered=False)(p0, np.array(0, np.int8))
    np.testing.assert_array_equal(v0, np.zeros((2, 3), np.int64))
    np.testing.assert_array_equal(v3, np.zeros((2, 3), np.int64))
    m = np.int64(np.iinfo(np.int64).min)
    got = xf.jit(lambda x: (x * 3 - x, (x - 1) < x), tiered=False)(np.array([m, 5]))
    np.testing.assert_array_equal(got[0], np.array([0, 10]))       # (jax: MIN*3 - MIN wraps)
    np.testing.assert_array_equal(got[1], np.array([False, True]))  # MIN - 1 wraps to MAX


@pytest.mark.parametrize("llvm", ["0", "1"])
def test_int64_reduction_sums_and_products_wrap_on_both_paths(monkeypatch, llvm):
    """An int64 sum or product in a reduction wraps, as in jax 0.10.2 (x64: jax.jit of
    `jnp.sum(jnp.broadcast_to(x, (2,))) < x` at x = int64 MIN is False, the sum wrapping to
    0; `jnp.sign(-jnp.prod(jnp.broadcast_to(x, (2,))))` is 0).  The Numba path's
    accumulator `c += a` carried Numba's `nsw`, and LLVM folded the first to True and the
    second to -1; it is spelled on uint64 now, as int64 arithmetic is."""
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", llvm)
    m = np.int64(np.iinfo(np.int64).min)
    twice = lambda x: xnp.broadcast_to(x, (2,))   # noqa: E731
    got = xf.jit(lambda x: (xnp.sum(twice(x)) < x, xnp.sign(-xnp.prod(twice(x))),
                            xnp.sum(twice(x)), xnp.prod(twice(x))), tiered=False)(m)
    assert [int(v) for v in got] == [0, 0, 0, 0]


def test_complex_logaddexp_is_weak_only_of_two_weak_0d_operands():
    """jax 0.10.2 (x64): jnp.logaddexp of a complex promotion is weakly typed only when the
    promoted operands are weak and both are 0-d -- logaddexp(jnp.asarray(True), 2j) and
    logaddexp(weak 0-d 0.5j, True) weak, logaddexp(jnp.ones((1,), bool), 2j) strong.  The
    fuzzer's oracle (tests/fuzz/promotion.py) said weak for `(bool (3,) * (1+2j))
    logaddexp bool (3,)` (a rendering error); xforms said strong for a strong 0-d operand
    beside a weak one (xforms' error, fixed in xforms/numpy/elementwise/ufuncs.py)."""
    from fuzz.promotion import check_promotion
    check_promotion("b", [("*", "py_complex", False), ("logaddexp", "b", False)])
    weak0 = xf.jit(lambda t: t * 1j)(0.5)
    assert xnp.logaddexp(xnp.asarray(True), 2j).weak_type
    assert xnp.logaddexp(weak0, xnp.asarray(True)).weak_type
    assert xnp.logaddexp(weak0, 2j).weak_type
    assert not xnp.logaddexp(xnp.ones((1,), bool), 2j).weak_type
    assert not xnp.logaddexp(weak0, xnp.ones((1,), bool)).weak_type
    assert not xnp.logaddexp(xnp.asarray(np.int32(1)) + xnp.zeros(2, np.int32), 2j).weak_type


def test_complex64_divided_by_an_integer_array_is_an_array():
    """The promotion fuzzer's deep run (session 29): eager `complex64 / int32` (either way
    round, and by int64 or bool) computes by casting both operands to complex64 and XLA's
    complex division, which returned a plain NumPy ndarray (no weak_type), not an Array."""
    from fuzz.promotion import check_promotion
    check_promotion("b", [("*", "c64", False), ("/", "i32", False)])
    c = xnp.asarray(np.array([0.5 + 1j, -1, 2j], np.complex64))
    for i in (np.int32, np.int64, np.bool_):
        n = xnp.asarray(np.array([1, 2, 3]).astype(i))
        for got in (c / n, n / c):
            assert type(got) is type(c) and got.dtype == np.complex64 and not got.weak_type
    np.testing.assert_allclose(np.asarray(c / xnp.asarray(np.array([1, -2, 4], np.int32))),
                               np.array([0.5 + 1j, 0.5, 0.5j], np.complex64))


def test_complex_logaddexp_at_infinities_is_checked_against_jax_formula():
    """The promotion fuzzer's deep run (session 29): `logaddexp(f32 [inf, nan, inf], c64)`
    is nan + nanj in every element with jax 0.10.2 (its formula max + log1p(exp(x + y -
    2 max)) meets inf - inf), as in xforms; the oracle's log(exp(x) + exp(y)) said inf + 0j
    (a rendering error: the oracle computes jax's formula now)."""
    from fuzz.promotion import check_promotion
    check_promotion("b", [("<", "b", False), ("/", "b", True), ("logaddexp", "c64", False)])
    # c64 / b holds -inf + nan j (-1 / 0); jax's logaddexp of it with False is nan + nan j
    check_promotion("b", [("/", "c64", True), ("logaddexp", "b", False)])
    # jnp.logaddexp(jnp.float32([inf, 1, -inf]), jnp.complex64([0.5+1j, 1+1j, 1+1j])), jax 0.10.2
    got = np.asarray(xnp.logaddexp(xnp.asarray(np.float32([np.inf, 1.0, -np.inf])),
                                   xnp.asarray(np.complex64([0.5 + 1j, 1 + 1j, 1 + 1j]))))
    assert np.isnan(got[0].real) and np.isnan(got[0].imag)
    np.testing.assert_allclose(got[1:], np.complex64([1.562563 + 0.5j, 1 + 1.0000002j]),
                               rtol=1e-6)


@pytest.mark.parametrize("tiered", [True, False])
def test_negated_differences_keep_xla_zero_signs(tiered):
    """The indexed fuzz run (session 29, seed 2 of 5) shrunk to `v0 = p0 - p0; v1 = -v0` at
    p0 = -0.0 (float32): jit gave +0.0 for v1, eager and jax 0.10.2 -0.0.  The simplifier
    rewrote -(a - b) to b - a, and (-a) - b to -(a + b), which differ at a = b (a = -b) in a
    zero's sign.  jax 0.10.2: jit(lambda p: -(p - p))(float32(-0.0)) -> -0.0,
    jit(lambda a, b: (-a) - b)(1.0, -1.0) -> 0.0, jit(lambda a, b: -(a - b))(2.0, 2.0) -> -0.0."""
    from fuzz.checks import fast_tier_only
    import contextlib
    with fast_tier_only() if tiered else contextlib.nullcontext():
        v = xf.jit(lambda p: (p - p, -(p - p)), tiered=tiered)(np.array(-0.0, np.float32))
        w = xf.jit(lambda a, b: ((-a) - b, -(a - b)), tiered=tiered)(1.0, -1.0)
        u = xf.jit(lambda a, b: -(a - b), tiered=tiered)(2.0, 2.0)
    assert [np.signbit(np.asarray(t)) for t in (*v, *w, u)] == [False, True, False, True, True]


def test_promotion_oracle_divides_complex_numbers_as_xla():
    """Session 29's promotion piece 4 (seed 4) stopped on `b / (c64 / b)`: `c64 / b` holds
    -1 / False = -inf + nan j, and b / that is -0 + 0j in xforms and jax 0.10.2 (XLA's complex
    division: a finite numerator over an infinite denominator is 0), where the oracle's NumPy
    division gave nan + nan j.  The oracle now renders XLA's division (fuzz/complex_division.py)."""
    from fuzz.complex_division import divide
    from fuzz.promotion import check_promotion
    check_promotion("c64", [("/", "b", False), ("/", "b", True)])
    z = divide(np.array([1 + 0j, 2 + 0j, np.nan]), np.array([complex(-np.inf, np.nan), 0j, 1]))
    # (jax 0.10.2: -0-0j for a positive NaN, inf+nanj over 0j, nan+nanj from a NaN numerator)
    assert str(z[0]) == "(-0-0j)" and z[1].real == np.inf and np.isnan(z[1].imag)
    assert np.isnan(z[2].real) and np.isnan(z[2].imag)


def test_cumulative_rendering_of_an_empty_axis():
    """Session 31 (programs over empty arrays): the dtype oracle's cumsum/cummin stacked
    one row per step and raised "need at least one array to stack" on an axis of length 0;
    jax 0.10.2's cumsum of a (2, 0) uint16 array along axis 1 is (2, 0) uint16, as xforms'."""
    from fuzz import jnp_rendering as JR
    x = np.zeros((2, 0), np.uint16)
    for src in ("xnp.cumsum(a, axis=1)", "lax.cummin(a, axis=0)"):
        got = JR.render(src, {"a": JR.Rendered(x, False)}).value
        assert (got.dtype, got.shape) == (np.uint16, (2, 0))
    assert np.asarray(xf.jit(lambda a: xnp.cumsum(a, axis=1))(x)).shape == (2, 0)


def test_scatter_and_gather_modes_render_as_jax():
    """The indexed dtype programs draw .at[].add/set/max(mode='clip'), .mul/.min(mode='drop'),
    .at[].get(mode='fill') and take_along_axis(mode='fill') (session 31); the oracle's
    renderings and xforms' eager values against jax 0.10.2's (int8 [10, 20, 30] at indices
    [-1, 5, -7]: a negative index counts from the end, then clip clamps, drop drops)."""
    from fuzz import renderings as RN
    x, i = np.array([10, 20, 30], np.int8), np.array([-1, 5, -7], np.int8)
    want = {("add", 1, "clip"): [11, 20, 32], ("mul", 2, "clip"): [20, 20, 120],
            ("set", 0, "clip"): [0, 20, 0], ("max", 25, "clip"): [25, 20, 30],
            ("add", 1, "drop"): [10, 20, 31], ("mul", 2, "drop"): [10, 20, 60]}
    for (op, v, mode), w in want.items():
        assert RN.update(x, i, op, v, mode).tolist() == w
        got = getattr(xnp.asarray(x).at[i], op)(v, mode=mode)
        assert np.asarray(got).tolist() == w, (op, mode)
    u = np.array([[1, 2], [3, 4]], np.uint8)
    k = np.array([[-1, 5], [0, -3]], np.int16)
    assert RN.take_along_axis(u, k, 1, "fill").tolist() == [[2, 255], [3, 255]]
    assert np.asarray(xnp.take_along_axis(u, k, axis=1, mode="fill")).tolist() == \
        [[2, 255], [3, 255]]
    assert np.asarray(xnp.asarray(x).at[np.array([-1, 5])].get(mode="fill")).tolist() == \
        [30, -128]


def test_complex_arctan2_on_the_negative_real_axis():
    """Session 31 (promotion chains, deep seed 3102): arctan2(False, arctan2(int32 -2,
    complex64 -1)).  xforms' arctan2(-2, -1 + 0j) was -2.0344439 + 1.2e-8j, jax 0.10.2's
    -2.0344439 - 0j: XLA's complex atan2 (its emitter's own sqrt, divide and log) rounds
    otherwise, and the next arctan2 then landed on the other side of the cut: -pi - 4.7e-33j,
    pi + 0j in jax.  Session 32: XLA's steps (numpy/elementwise/complex_atan2.py; more in
    test_jax_complex_atan2.py)."""
    y = xnp.arctan2(xnp.asarray(np.array([-2], np.int32)),
                    xnp.asarray(np.array([-1 + 0j], np.complex64)))
    z = np.asarray(xnp.arctan2(xnp.asarray(np.array([False])), y))
    assert z[0].real == np.float32(3.1415927) and z[0].imag == 0


def test_complex_arctan2_past_the_cut_and_its_oracle():
    """Session 32 (promotion chains, seed 3102 rerun after the fix above): `(weak 0.5j *
    float16 [0.5, -1.25, 2]) ` then `arctan2(bool [T, F, T], .)`.  The middle element is
    arctan2(0, -0 - 0.625j): jax 0.10.2 3.1415925 + 0j, xforms 3.1415927 + 0j (now on jax's
    side), while the oracle's NumPy formula -i log((x + iy) / sqrt(x^2 + y^2)) gave -pi: the
    oracle now renders XLA's steps (tests/fuzz/xla_complex_atan2.py)."""
    from fuzz import promotion as P
    v = P.make("weak_complex") * P.make("f16")
    got = np.asarray(xnp.arctan2(P.make("b"), v))
    want = [1.5707963705062866 - 0.2554127871990204j, 3.141592502593994 + 0j]
    np.testing.assert_allclose(got[:2], want, rtol=1e-6)
    assert got[1].imag == 0 and not np.signbit(got[1].imag) and np.isnan(got[2].real)
    ref = P._ref_arctan2(np.array([True, False, True]).astype(np.complex64), np.asarray(v))
    np.testing.assert_allclose(ref[:2], want, rtol=1e-6)


def test_complex_programs_compare_a_complex64_input_in_its_roundings():
    """Session 32 (complex programs, seed 3214): `exp(c128 p0) + sin(c64 p1)` at p1 =
    0.25 - 1.25j.  The compiled tier's complex64 sin is a float32 rounding off the eager
    one's (0.46720356 - 1.55211937j, eager and jax 0.10.2 0.46720353 - 1.55211926j: the
    documented last-bit class), and the sum is complex128, whose eps the oracle took: 64
    roundings of float64 failed.  The tolerance is now the roundings of the narrowest input."""
    from fuzz.complex_programs import ComplexCase, check_complex_tiers
    src = ("def f(p0, p1):\n    v0 = xnp.exp(p0)\n    v1 = xnp.sin(p1)\n    v2 = v0 + v1\n"
           "    return (v0, v1, v2,)")
    case = ComplexCase(src, (np.zeros(2, np.complex128),
                             np.array([0.25 + 0.25j, 0.25 - 1.25j], np.complex64)), {})
    check_complex_tiers([case])


def test_complex_programs_compare_arctan2_near_zero_in_its_operands_roundings():
    """Session 32 (complex programs with arctan2 drawn, seed 3215): v0 = exp(p1), v1 =
    arctan2(v0, v0), v2 = arctan2(p1, v1) at p1 = -1e-20 + 0j (complex64).  v1 is a float32
    rounding apart between eager (NumPy's float32 log/atan2) and compiled (libm's: jax
    0.10.2's bits, 0.78539819 + 5.9604645e-08j), and v2, whose operands are near 1 and whose
    value is near 0, carries that: -9.0e-15 eagerly, 0 compiled, 9.5e-16 in jax.  The
    comparison scaled with v2's own modulus; it now takes an arctan2's operands' size."""
    from fuzz.complex_programs import ComplexCase, check_complex_tiers
    src = ("def f(p0, p1):\n    v0 = xnp.exp(p1)\n    v1 = xnp.arctan2(v0, v0)\n"
           "    v2 = xnp.arctan2(p1, v1)\n    return (v0, v1, v2,)")
    p1 = np.array([-1e-20 + 0j, complex(np.inf, 1.5), 0j], np.complex64)
    check_complex_tiers([ComplexCase(src, (np.full(3, 0.25 + 0.25j), p1), {},
                                     {1: 1.0, 2: 1.0})])


def test_lax_cummax_of_a_weak_value_stays_weak():
    """Session 31 (dtype programs over empty arrays, seed 2): `lax.cummax(p0 * 0.5, axis=0)`
    of a bool p0 is weakly typed float64 in jax 0.10.2 and in xforms (lax.cummin too;
    xnp.cumsum is strong); the oracle rendered every cumulative reduction strong."""
    from fuzz import jnp_rendering as JR
    x = JR.Rendered(np.zeros((2, 3)), True)
    assert JR.render("lax.cummax(a, axis=0)", {"a": x}).weak
    assert JR.render("lax.cummin(a, axis=1)", {"a": x}).weak
    assert not JR.render("xnp.cumsum(a, axis=0)", {"a": x}).weak
    v = xnp.asarray(np.zeros((2, 3), bool)) * 0.5
    assert lax.cummax(v, axis=0).weak_type and not xnp.cumsum(v, axis=0).weak_type


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_complex64_integer_power_of_a_0d_array_past_overflow():
    """Session 31 (complex programs, seed 3143): `xnp.power(p, 2)` of a 0-d complex64 p with
    a part of 1e20 raised TypeError eagerly.  integer_power multiplies 0-d arrays, NumPy
    returns a scalar product, and its overflow patch handed the 0-d operands themselves to
    the scalar multiply, whose fma took `type(a)` (ndarray) for the parts' type
    (complex_arith/patching.py `_patch_product`).  Values: jax 0.10.2."""
    want = {(1e20 + 0j, 2): (np.inf, 0.0), (1e20 + 0j, 3): (np.inf, np.nan),
            (1e20 + 1e20j, 2): (-np.inf, np.inf), (1e20 + 1e20j, -2): (-0.0, -0.0),
            (3e19 - 2j, 2): (np.inf, -1.2e20), (3e19 - 2j, 3): (np.inf, -np.inf)}
    for (z, n), (re, im) in want.items():
        x = np.array(z, np.complex64)
        for got in (xnp.power(xnp.asarray(x), n), xf.jit(lambda v: xnp.power(v, n))(x)):
            got = np.asarray(got)
            assert got.dtype == np.complex64 and got.shape == ()
            np.testing.assert_array_equal([got.real, got.imag], np.float32([re, im]))
            for part, w in ((got.real, re), (got.imag, im)):
                assert np.isnan(w) or np.signbit(part) == np.signbit(w)    # (zeros' signs)


@pytest.mark.parametrize("tiered", [True, False])
def test_complex_x_plus_x_is_a_sum_under_jit(tiered):
    """Session 31 (complex programs, seed 3144): `p0 + p0` of complex64 inf + 1.5j gave
    inf + nanj under jit (both tiers), inf + 3j eagerly and in jax 0.10.2's jit.  The
    simplifier rewrote x + x to x * 2 for complex x too, and a complex product by 2 + 0j
    takes inf * 0 (transforms/simplify.py; real floats keep the rewrite: 2x = x + x there).
    jax 0.10.2: jit(lambda p: p + p) of [1+1.5j, inf+1.5j, nan+2j, 1+infj] (complex64) is
    [2+3j, inf+3j, nan+4j, 2+infj]."""
    from fuzz.checks import fast_tier_only
    import contextlib
    z = np.array([1 + 1.5j, complex(np.inf, 1.5), complex(np.nan, 2), complex(1, np.inf)],
                 np.complex64)
    with fast_tier_only() if tiered else contextlib.nullcontext():
        got = np.asarray(xf.jit(lambda p: p + p, tiered=tiered)(z))
    want = np.array([2 + 3j, complex(np.inf, 3), complex(np.nan, 4), complex(2, np.inf)],
                    np.complex64)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.complex64


def test_transposed_fori_loop_over_traced_bounds_counts_down_under_jit():
    """Session 32 (tests/fuzz/test_fuzz.py test_jit_of_transposed_loops_matches_eager, deep
    profile, seed 1): jit(grad) of a fori_loop over traced bounds whose body is affine in
    its carry, with weights that change with the index, gave 0.1034 for d/dx6, eagerly
    0.0775.  The gradient's loop is a reverse for_loop, and the direct LLVM path ran it
    forwards (xforms/kernels/cpu/llvm/control.py `_for_loop`).  The fuzzer missed it: its
    fori bodies' only index-weighted op (iscale) commutes, and a float -> int conversion in
    any program of a jit group switched off the group's derivative checks."""
    from fuzz.dtype_programs import llvm_kernels

    def f(p0):
        x0, x6 = xnp.asarray(p0[0]), xnp.asarray(p0[1])
        v1 = x0.at[[0, 0, 0], 0:].get(mode='clip')
        n5 = xnp.floor(2.5 + 2.0 * xnp.tanh(xnp.mean(v1))).astype(xnp.int64)

        def body4(i3, c):
            a2, = c
            return (a2 * (1.0 + 0.5 * (i3 % 2)) + x6 * i3,)
        return lax.fori_loop(0, n5, body4, (v1,))[0]

    def f_ref(p0):
        x0, x6 = p0
        v1 = x0[[0, 0, 0], 0:]
        n5 = R.floor(2.5 + 2.0 * np.tanh(np.mean(v1))).astype(np.int64)
        return R.fori_loop(0, n5, lambda i, c: (c[0] * (1.0 + 0.5 * (i % 2)) + x6 * i,),
                           (v1,))[0]
    case = Case.of(f, f_ref, ((np.array([[0.345584192064786], [0.8216181435011584]]),
                               np.array([[0.33043707618338714]])),))
    check_grad(case)
    g = xf.grad(lambda p: xnp.sum(f(p) * np.array([[1.0], [-2.0], [0.5]])))
    eager = g(case.xargs()[0])
    for numba in (False, True):          # the direct LLVM path, then Numba's
        with llvm_kernels(not numba):
            got = xf.jit(g, tiered=False)(case.xargs()[0])
        for a, e in zip(got, eager):
            np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-12, atol=1e-14)


def test_the_llvm_switch_is_read_per_compile_not_served_from_the_other_path():
    """Session 33: a program compiled on the direct LLVM path was served from memory when
    the same program (the tracing cache's ClosedJaxpr) was compiled again under
    XFORMS_LLVM_KERNELS=0, so the fuzzer's `paths=("llvm", "numba")` and the regression
    test above compared the LLVM kernel with itself (xforms/kernels/cpu/backend.py `_key`)."""
    from fuzz.dtype_programs import llvm_kernels
    from xforms.kernels.cpu import backend

    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: c * 1.5 + x, x)
    closed = xf.make_jaxpr(f)(np.ones(2))
    with llvm_kernels(True):
        direct = backend.compile_cpu(closed)
    with llvm_kernels(False):
        numba = backend.compile_cpu(closed)
    with llvm_kernels(True):
        again = backend.compile_cpu(closed)
    # (a direct kernel's text holds its LLVM IR; a Numba kernel's has none)
    assert direct._text.__dict__.get("llvm_ir") is not None
    assert numba._text.__dict__.get("llvm_ir") is None
    assert again is direct
    x = np.array([0.5, -2.0])
    np.testing.assert_array_equal(numba(x)[0], direct(x)[0])


# the special functions' translations made one after another in a fresh process, as the
# direct LLVM path's emitter makes them for the statements of one loop (each checks that
# it got its own function: the symbol names it)
_IN_TURN = """
import numpy as np, xforms as xf
from xforms.kernels.cpu.llvm.ops import special
from xforms.primitives.special.functions import SCALAR_IMPLS
wrong = []
for dt in (np.float32, np.float64):
    eqns = []
    for prim in SCALAR_IMPLS:
        if special.scalar_function(prim) is None:
            continue
        n = 3 if prim.name == "betainc" else 1 if prim.name in (
            "digamma", "erfc_inv", "bessel_i0e", "bessel_i1e") else 2
        j = xf.make_jaxpr(lambda *xs: prim.bind(*xs))(*[np.ones(3, dt)] * n)
        eqns.append(j.jaxpr.eqns[0])
    seen = {}
    for e in eqns:
        t = special.translated(e)
        if t is None:
            continue
        if special.scalar_function(e.prim).__name__ + "_" not in t.symbol or t.symbol in seen:
            wrong.append((np.dtype(dt).name, e.prim.name, t.symbol, seen.get(t.symbol)))
        seen[t.symbol] = e.prim.name
print(wrong)
"""


def test_special_function_translations_in_turn_are_each_their_own():
    """Found by the process-history fuzzer (tests/fuzz/special_history.py) on 768a8262^:
    in one process, float64 `jit` of xsp.ive after a program of xsp.iv (and gc steps)
    returned iv's values -- session 33's CI failure (float32 gammaincc computed gammainc),
    in another pair.  ops/special.py passed a temporary {"np": np, "f": fn} to the
    translator, whose cache keyed it by id(); the next function's dict could take the
    freed id.  Made in turn, as here, float64 igamma, igammac and igamma_grad_a were
    served zeta's translation on every run of the old code (3 of 3: the body of every
    function of two operands is one text, `return np.float64(f(a0, a1))`)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _IN_TURN], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout[-4000:]


def test_an_eager_array_raised_to_a_traced_power_inside_a_loop_body():
    """CI's fuzz (session 34, after the jaxsweep merge): `(x4 * x4 + 0.5) ** xnp.tanh(x5)` in
    an un-jitted scan's body, x4 an eager Array and the exponent traced: the eager operator's
    C-pow fix-up called np.asarray on the traced exponent (ConcretizationError)."""
    import xforms as xf
    import xforms.numpy as xnp
    from xforms import lax
    base = np.array([0.5, 2.0])
    e = np.array([0.3, -0.4])

    def f(x5):
        x4 = xnp.asarray(base)

        def step(c, _):
            return c + (x4 * x4 + 0.5) ** xnp.tanh(x5), None
        return lax.scan(step, xnp.zeros(2), None, length=2)[0]
    want = 2 * (base * base + 0.5) ** np.tanh(e)
    np.testing.assert_allclose(f(e), want, rtol=1e-14)
    np.testing.assert_allclose(xf.jit(f)(e), want, rtol=1e-14)
    g = xf.grad(lambda t: f(t).sum())(e)
    np.testing.assert_allclose(g, want * np.log(base * base + 0.5) * (1 - np.tanh(e) ** 2),
                               rtol=1e-12)


def test_an_eager_complex_array_divided_by_a_traced_value():
    """The complex loop fuzz (session 37): `x9 / (2.0 + a3 * xnp.conj(a3))` in an
    un-jitted while_loop's body, x9 an eager complex128 Array and the divisor a traced
    carry: the eager operator's complex quotient (XLA's values at zero divisors) called
    np.asarray on the traced divisor (ConcretizationError); jit(lambda a: x / a) too."""
    x = xnp.asarray(np.array([1 + 2j, 3 - 1j]))
    a = np.array([0.5 + 1j, -0.25 - 2j])

    def f(a0):
        def body(c):
            i, v = c
            return i + 1, x / (2.0 + v * xnp.conj(v))
        return lax.while_loop(lambda c: c[0] < 2, body, (0, xnp.asarray(a0)))[1]

    def f_ref(a0):
        v = a0
        for _ in range(2):
            v = np.asarray(x) / (2.0 + v * np.conj(v))
        return v
    want = f_ref(a)
    np.testing.assert_allclose(f(a), want, rtol=1e-14)
    np.testing.assert_allclose(xf.jit(f)(a), want, rtol=1e-14)
    np.testing.assert_allclose(xf.jit(lambda t: x / t)(a), np.asarray(x) / a, rtol=1e-15)
    # grad of Re(sum(x / a)): JAX's (jax 0.10.2) [-0.8+1.6j, 0.77633136-0.05680473j], -x/a^2
    g = xf.grad(lambda t: xnp.real(xnp.sum(x / t)))(a)
    np.testing.assert_allclose(g, -np.asarray(x) / a ** 2, rtol=1e-14)


def test_jacrev_of_a_real_function_of_complex_inputs():
    """The complex widening of test_jacobians_agree (session 38): xf.jacrev refused complex
    inputs without holomorphic=True ("requires real-valued (float) inputs"); JAX's jacrev
    takes them (only jacfwd, and so hessian, needs real inputs; jacrev needs real outputs)
    and gives grad's value, JAX's conjugate convention: jax 0.10.2 gives the literals."""
    z = np.array([0.3 + 0.4j, -0.5 + 0.2j])
    w = np.array([0.7 - 0.2j, 0.1 + 0.9j])

    def f(z):
        return xnp.real(xnp.sum(w * xnp.sin(z) * xnp.conj(z)))
    want = np.array([0.39510777 - 0.57771694j, -0.04618257 + 0.01428027j])
    np.testing.assert_allclose(xf.jacrev(f)(z), want, rtol=1e-7)
    np.testing.assert_allclose(xf.grad(f)(z), want, rtol=1e-7)
    # jvp of the complex function and jvp of its grad (hvp), jax 0.10.2's values
    g = lambda z: xnp.sin(z) * xnp.conj(z)
    np.testing.assert_allclose(xf.jvp(g, (z,), (w,))[1],
                               [0.23814509 - 0.02834758j, 0.27185757 + 0.04961806j], rtol=1e-7)
    np.testing.assert_allclose(xf.jvp(xf.grad(f), (z,), (w,))[1],
                               [0.86720078 + 0.35478679j, 0.22612155 - 0.04756636j], rtol=1e-7)
    with pytest.raises(TypeError, match="holomorphic"):
        xf.jacfwd(f)(z)
    with pytest.raises(TypeError, match="real-valued outputs"):
        xf.jacrev(g)(z)
