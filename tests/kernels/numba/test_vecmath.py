"""Accuracy and special-value tests for xforms.kernels.libm.vecmath.

Every function is compiled into an ``@njit`` element-wise loop (the way the
generated kernels call it) and compared against NumPy evaluated in extended
precision (``np.longdouble``), in ulps of the output dtype.  No timing
assertions.
"""

import contextlib
import re
import warnings
import zlib

import numba
import numpy as np
import pytest
from llvmlite import binding as llvm_binding

from xforms.kernels.libm import vecmath as vm

LD = np.longdouble
# the float64 ulp measurements need a reference with >= 64 mantissa bits
HAVE_EXTENDED = np.finfo(LD).nmant >= 63
DTYPES = (np.float64, np.float32)


def _logistic_ref(x):
    x = np.asarray(x, dtype=LD)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


REF = {
    "exp": np.exp,
    "expm1": np.expm1,
    "log": np.log,
    "log1p": np.log1p,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "logistic": _logistic_ref,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "atan": np.arctan,
    "cbrt": np.cbrt,
}
# exact-everywhere function per primitive (VECMATH + the libm-fallback trig)
EXACT = {**vm.VECMATH, **vm.VECMATH_TRIG_EXACT}
# the *_bounded trig variants agree with the exact ones on |x| <= TRIG_MAX_ARG
BOUNDED = {"sin": "vm_sin_bounded", "cos": "vm_cos_bounded", "tan": "vm_tan_bounded"}


def _pm(v):
    return np.concatenate([v, -v])


def _domain(name, n=100_000):
    """~n float64 points: log-spaced magnitudes (tiny .. large) + a dense core."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    m = n // 4

    def mags(lo, hi, k):
        return 10.0 ** rng.uniform(lo, hi, k)

    if name == "exp":
        parts = [rng.uniform(-746, 710, 2 * m), _pm(mags(-320, 2.86, m // 2)),
                 rng.uniform(-1, 1, m)]
    elif name == "expm1":
        parts = [rng.uniform(-50, 710, m), _pm(mags(-320, 2.86, m)), rng.uniform(-1, 1, m)]
    elif name == "log":
        parts = [mags(-323.5, 308.2, 2 * m), rng.uniform(0.5, 2, m),
                 1 + _pm(mags(-16, -1, m // 2))]
    elif name == "log1p":
        parts = [mags(-323.5, 308.2, m), -mags(-323.5, -1e-9, m), rng.uniform(-1, 3, 2 * m)]
    elif name in ("sin", "cos", "tan"):
        parts = [_pm(mags(-320, 6, m)), rng.uniform(-10, 10, m),
                 rng.uniform(-vm.TRIG_MAX_ARG, vm.TRIG_MAX_ARG, m)]
    elif name in ("tanh", "logistic", "sinh", "cosh"):
        hi = 2.86 if name in ("sinh", "cosh", "logistic") else 2.0
        parts = [_pm(mags(-320, hi, m)), rng.uniform(-3, 3, m), rng.uniform(-40, 40, m)]
    elif name == "atan":
        parts = [_pm(mags(-320, 308, m)), rng.uniform(-4, 4, 2 * m)]
    elif name == "cbrt":        # every binade (subnormals too) and [1, 8) densely
        parts = [_pm(mags(-323.5, 308.2, m)), rng.uniform(-8, 8, 2 * m)]
    else:  # pragma: no cover
        raise KeyError(name)
    return np.concatenate(parts)


SPECIALS = np.array([
    0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan,
    5e-324, -5e-324, 1e-310, -1e-310, 2.2250738585072014e-308, -2.2250738585072014e-308,
    1e-300, -1e-300, 1e-20, -1e-20, 1e-9, -1e-9, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0,
    0.9999999999999999, 1.0000000000000002, -0.9999999999999999,
    19.0, 22.0, 40.0, 88.72, 89.0, -103.9, -104.0,
    709.7, 709.78, 709.79, 710.0, 710.4758, 710.48, 711.0, 1000.0,
    -708.0, -709.9, -740.0, -745.1, -745.2, -746.0, -1000.0,
    1e5, -1e5, 1e6, -1e6, 1e6 + 1, 1e7, -1e7, 1e15, 1e22, -1e22, 1e300, 1e308,
    1.7976931348623157e308, -1.7976931348623157e308,
    np.pi / 2, -np.pi / 2, np.pi, 3 * np.pi / 2, 1e6 * np.pi,
])

_LOOPS = {}


def _loop(fname):
    """One compiled element-wise loop per function (specialised per dtype)."""
    if fname not in _LOOPS:
        f = getattr(vm, fname)

        @numba.njit
        def loop(a, out):
            # y's type unifies a's dtype with f's result type, so the loop's
            # return type exposes any float32 -> float64 promotion
            y = a[0]
            for i in range(a.size):
                y = f(a[i])
                out[i] = y
            return y

        _LOOPS[fname] = loop
    return _LOOPS[fname]


def _run(fname, x):
    out = np.empty_like(x)
    _loop(fname)(x, out)
    return out


def _ulp_errors(y, x, name, dt):
    """|y - ref| / ulp(ref) for finite non-zero rounded references; exact
    agreement (value, nan-ness, sign of zero) required elsewhere."""
    with np.errstate(all="ignore"):
        ref = REF[name](x.astype(LD))
        refd = ref.astype(dt)
    exact = ~np.isfinite(refd) | (refd == 0)
    same = (y == refd) | (np.isnan(y) & np.isnan(refd))
    same &= (np.signbit(y) == np.signbit(refd)) | (refd != 0) | np.isnan(refd)
    bad = exact & ~same
    assert not bad.any(), (f"{name}/{dt.__name__}: mismatch at x={x[bad][:5]!r}: "
                           f"{y[bad][:5]!r} vs {refd[bad][:5]!r}")
    fin = ~exact
    spacing = np.spacing(np.abs(refd[fin])).astype(LD)
    err = np.abs(y[fin].astype(LD) - ref[fin]) / spacing
    normal = np.abs(refd[fin]) >= np.finfo(dt).tiny
    return err, normal, x[fin]


def _check_bounds(name, dt, x, y):
    err, normal, xf = _ulp_errors(y, x, name, dt)
    bound = vm.ERROR_BOUNDS_ULP[(name, np.dtype(dt).name)]
    if normal.any():
        worst = int(np.argmax(np.where(normal, err, -1)))
        assert err[worst] <= bound, (
            f"{name}/{dt.__name__}: {float(err[worst]):.3f} ulp at x={xf[worst]!r} (bound {bound})")
    if (~normal).any():
        sub = float(err[~normal].max())
        assert sub <= vm.SUBNORMAL_ERROR_BOUND_ULP, f"{name}/{dt.__name__}: subnormal {sub:.3f} ulp"


# ---------------------------------------------------------------------------


F32 = {name: fname for name, fname in
       (("exp", "vmf_exp"), ("log", "vmf_log"), ("tanh", "vmf_tanh"), ("sin", "vmf_sin"),
        ("cos", "vmf_cos"), ("tan", "vmf_tan"))}


def _domain_f32(name, n=60_000):
    """~n float32 points over the whole float32 domain of `name` plus a dense core; for
    sin/cos/tan also every float32 nearest to k*pi/2 (and its neighbours) up to the bound."""
    rng = np.random.default_rng(zlib.crc32(b"f32" + name.encode()))
    m = n // 3
    mags = lambda lo, hi, k: 10.0 ** rng.uniform(lo, hi, k)
    if name == "exp":
        parts = [rng.uniform(-104, 89, m), _pm(mags(-45, 1.95, m // 2)), rng.uniform(-1, 1, m)]
    elif name == "log":
        parts = [mags(-45.8, 38.5, 2 * m), rng.uniform(0.5, 2, m)]
    elif name == "tanh":
        parts = [_pm(mags(-45, 1.2, m // 2)), rng.uniform(-0.7, 0.7, m), rng.uniform(-10, 10, m)]
    else:
        big = vm.TRIG_MAX_ARG_F32
        k = np.arange(1, int(big / (np.pi / 2)) + 1)
        near = (k.astype(LD) * LD("1.57079632679489661923132169163975144")).astype(np.float32)
        near = near[np.abs(near) <= big]
        parts = [_pm(mags(-45, np.log10(big), m // 2)), rng.uniform(-10, 10, m),
                 near, np.nextafter(near, np.float32(0)), np.nextafter(near, np.float32(1e9))]
    return np.concatenate(parts).astype(np.float32)


@pytest.mark.parametrize("name", list(F32))
def test_float32_family_accuracy(name):
    """vmf_* compute in float32: error bound ERROR_BOUNDS_ULP_F32 against long double."""
    with np.errstate(all="ignore"):
        x = _domain_f32(name)
    y = _run(F32[name], x)
    assert y.dtype == np.float32
    err, normal, xf = _ulp_errors(y, x, name, np.float32)
    bound = vm.ERROR_BOUNDS_ULP_F32[name]
    worst = int(np.argmax(np.where(normal, err, -1)))
    assert err[worst] <= bound, f"{name}: {float(err[worst]):.3f} ulp at x={xf[worst]!r}"
    if (~normal).any():
        assert float(err[~normal].max()) <= vm.SUBNORMAL_ERROR_BOUND_ULP


@pytest.mark.parametrize("name", list(F32))
def test_float32_family_special_values(name):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = np.concatenate([SPECIALS, [88.7, 88.73, 89.0, -87.3, -103.0, -103.98, -104.0,
                                       1e-40, -1e-40, 1.4e-45, 5999.0, 6000.0, 6000.5, 7000.0,
                                       3e38, -3e38, 9.0, 9.5, 10.0]]).astype(np.float32)
        y = _run(F32[name], x)
        expect = REF[name](x.astype(np.float64)).astype(np.float32)
    assert y.dtype == np.float32
    nonfin = ~np.isfinite(expect) | (expect == 0)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(expect), err_msg=f"{name} nan at {x}")
    np.testing.assert_array_equal(y[nonfin], expect[nonfin], err_msg=f"{name} at {x[nonfin]}")
    zero = expect == 0
    np.testing.assert_array_equal(np.signbit(y[zero]), np.signbit(expect[zero]))
    _ulp_errors(y, x, name, np.float32)
    err, normal, xf = _ulp_errors(y, x, name, np.float32)
    assert (err[normal] <= vm.ERROR_BOUNDS_ULP_F32[name]).all(), xf[normal][err[normal].argmax()]


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_float32_bounded_trig_nan_beyond_bound(name):
    big = np.array([vm.TRIG_MAX_ARG_F32 * 1.001, -1e5, 3e38, np.inf, -np.inf, np.nan],
                   np.float32)
    assert np.isnan(_run(f"vmf_{name}_bounded", big)).all()
    y = _run(F32[name], big[:3])       # the exact variant: float64 libm beyond the bound
    np.testing.assert_array_equal(y, getattr(np, name)(big[:3].astype(np.float64))
                                  .astype(np.float32))


def test_float32_family_computes_in_float32():
    """No float64 arithmetic in the vectorised loop body of the float32 family."""
    for fname in ("vmf_exp", "vmf_log", "vmf_tanh", "vmf_sin_bounded", "vmf_cos_bounded",
                  "vmf_tan_bounded"):
        loop = _loop(fname)
        _run(fname, np.ones(8, np.float32))
        sig = [s for s in loop.signatures if s[0].dtype == numba.float32][0]
        ir = loop.inspect_llvm(sig)
        body = "\n".join(line for line in ir.splitlines()
                         if ("fmul" in line or "fadd" in line or "fsub" in line)
                         and "double" in line)
        assert not body, f"{fname}: float64 arithmetic\n{body[:400]}"


def test_tables_consistent():
    assert set(vm.VECMATH_BOUNDED) == set(REF) | {"erfc_inv"}
    # (erfc_inv: no NumPy reference; scipy's in tests/scipy/special/test_special.py
    # test_erfcinv_vectorised)
    assert set(vm.VECMATH) | set(vm.VECMATH_TRIG_EXACT) == set(REF) | {"erfc_inv"}
    for table in (vm.VECMATH, vm.VECMATH_BOUNDED, vm.VECMATH_TRIG_EXACT):
        for name, fname in table.items():
            assert callable(getattr(vm, fname)), fname
    for name in REF:
        for dt in ("float64", "float32"):
            assert (name, dt) in vm.ERROR_BOUNDS_ULP
    assert vm.measured_error_bounds() == vm.ERROR_BOUNDS_ULP
    assert vm.TRIG_MAX_ARG >= 1e5


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", list(REF))
def test_accuracy_dense(name, dt):
    if dt is np.float64 and not HAVE_EXTENDED:
        pytest.skip("np.longdouble has no extra precision on this platform")
    with np.errstate(all="ignore"):
        x = _domain(name).astype(dt)
    y = _run(EXACT[name], x)
    assert y.dtype == dt
    _check_bounds(name, dt, x, y)


@pytest.mark.parametrize("name", list(BOUNDED))
def test_trig_hard_cases_near_multiples_of_pi_over_2(name):
    """x = fl(k*pi/2) for every k up to TRIG_MAX_ARG: r = x - k*pi/2 is tiny
    and only an accurate multi-part reduction keeps the relative error."""
    if not HAVE_EXTENDED:
        pytest.skip("np.longdouble has no extra precision on this platform")
    k = np.arange(1, int(vm.TRIG_MAX_ARG / (np.pi / 2)) + 1)
    x = (k.astype(LD) * LD("1.57079632679489661923132169163975144")).astype(np.float64)
    x = x[np.abs(x) <= vm.TRIG_MAX_ARG]
    y = _run(BOUNDED[name], x)
    _check_bounds(name, np.float64, x, y)
    np.testing.assert_array_equal(y, _run(EXACT[name], x))


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", list(REF))
def test_special_values(name, dt):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = SPECIALS.astype(dt)
        y = _run(EXACT[name], x)
        if name == "logistic":  # the naive 1/(1+exp(-x)) flushes subnormal results
            expect = _logistic_ref(x).astype(dt)
        else:
            expect = REF[name](x.astype(np.float64)).astype(dt)
    assert y.dtype == dt
    # non-finite results and zeros must match NumPy exactly (incl. sign of zero)
    nonfin = ~np.isfinite(expect) | (expect == 0)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(expect), err_msg=f"{name} nan at {x}")
    np.testing.assert_array_equal(y[nonfin], expect[nonfin], err_msg=f"{name} at {x[nonfin]}")
    zero = expect == 0
    np.testing.assert_array_equal(np.signbit(y[zero]), np.signbit(expect[zero]),
                                  err_msg=f"{name}: sign of zero at {x[zero]}")
    spurious = ~nonfin & ~np.isfinite(y)
    assert not spurious.any(), f"{name}: spurious inf/nan at {x[spurious]}"
    if HAVE_EXTENDED or dt is np.float32:
        _check_bounds(name, dt, x, y)


def test_specific_special_values():
    f64 = np.float64
    e = _run("vm_exp", np.array([np.inf, -np.inf, 1000.0, -1000.0, -0.0], f64))
    np.testing.assert_array_equal(e, [np.inf, 0.0, np.inf, 0.0, 1.0])
    lg = _run("vm_log", np.array([0.0, -0.0, -1.0, np.inf, -np.inf, 5e-324], f64))
    np.testing.assert_array_equal(lg[:4], [-np.inf, -np.inf, np.nan, np.inf])
    assert np.isnan(lg[4]) and lg[5] == np.log(5e-324)
    s = _run("vm_sin", np.array([np.inf, -np.inf, np.nan, -0.0], f64))
    assert np.isnan(s[:3]).all() and s[3] == 0.0 and np.signbit(s[3])
    c = _run("vm_cos", np.array([np.inf, -np.inf, np.nan], f64))
    assert np.isnan(c).all()
    t = _run("vm_tanh", np.array([np.inf, -np.inf, 0.0, -0.0], f64))
    np.testing.assert_array_equal(t, [1.0, -1.0, 0.0, -0.0])
    assert np.signbit(t[3]) and not np.signbit(t[2])


@pytest.mark.parametrize("fname", sorted(BOUNDED.values()))
def test_bounded_trig_nan_beyond_bound_and_exact_fallback(fname):
    big = np.array([vm.TRIG_MAX_ARG * 1.0000001, -3e6, 1e22, np.inf, np.nan])
    assert np.isnan(_run(fname, big)).all()
    name = fname[3:6]
    ref = getattr(np, name)(big[:3])
    y = _run(EXACT[name], big[:3])
    np.testing.assert_allclose(y, ref, rtol=4e-16, atol=0)


@pytest.mark.parametrize("fname", sorted(EXACT.values()))
def test_float32_in_float32_out(fname):
    # (vm_sin/cos/tan inline the *_bounded variants and could not return
    # float32 if those did not)
    for dt in (np.float32, np.float64):
        y = _run(fname, np.array([0.75, -2.5, 1e-3], dt))
        assert y.dtype == dt
    loop = _loop(fname)
    rtypes = {sig.args[0].dtype: sig.return_type for sig in loop.nopython_signatures}
    assert rtypes[numba.float32] == numba.float32, rtypes
    assert rtypes[numba.float64] == numba.float64, rtypes


def test_rebuild_with_other_decorator():
    """rebuild_with re-creates the family with another decorator (the route to
    e.g. CUDA device functions); here a plain, non-inlining njit."""
    fam = vm.rebuild_with(lambda f: numba.njit(f))
    assert set(EXACT.values()) | set(vm.VECMATH_BOUNDED.values()) <= set(fam)
    x = np.array([-3.0, -0.5, 1e-20, 0.25, 2.0, 30.0])
    for fname in ("vm_expm1",):
        g = fam[fname]
        assert g is not getattr(vm, fname)
        np.testing.assert_array_equal([g(v) for v in x], [getattr(vm, fname)(v) for v in x])


@pytest.mark.skipif("+avx512dq" not in llvm_binding.get_host_cpu_features().flatten(),
                    reason="vectorisation is only asserted on AVX-512DQ hosts")
@pytest.mark.parametrize("name", list(REF))
def test_loops_vectorise(name):
    """The branch-free functions must not block LLVM loop vectorisation."""
    loop = _loop(vm.VECMATH_BOUNDED[name])
    _run(vm.VECMATH_BOUNDED[name], np.ones(8))
    ir = loop.inspect_llvm(loop.signatures[0])
    assert "llvm.loop.isvectorized" in ir
    assert "<4 x double>" in ir or "<8 x double>" in ir


@pytest.mark.skipif("+avx512dq" not in llvm_binding.get_host_cpu_features().flatten(),
                    reason="vectorisation is only asserted on AVX-512DQ hosts")
@pytest.mark.parametrize("fname, dt", [("vm_erfcinv", np.float64), ("vmf_erfcinv", np.float32)])
def test_erfcinv_loops_vectorise(fname, dt):
    """erfc^-1's branch-free forms vectorise (issue #37: the scalar one with its branches and
    libm calls ran jitted ndtri at ~3x JAX's time in float64, ~20x in float32)."""
    loop = _loop(fname)
    _run(fname, np.ones(8, dt))
    sig = [s for s in loop.signatures if s[0].dtype == numba.from_dtype(np.dtype(dt))][0]
    ir = loop.inspect_llvm(sig)
    assert "llvm.loop.isvectorized" in ir
    lane = "double" if dt == np.float64 else "float"
    assert f"<4 x {lane}>" in ir or f"<8 x {lane}>" in ir or f"<16 x {lane}>" in ir


def _hot_vector_loop(asm):
    """The longest basic block of `asm` that jumps back to its own label and uses
    512-bit registers, or 256-bit ones (LLVM prefers 256-bit vectors on Intel's AVX-512
    cores): the vectorised main loop."""
    best, label, body = "", None, []
    for line in asm.splitlines():
        m = re.match(r"^(\.LBB\w+):", line)
        if m:
            label, body = m.group(1), []
            continue
        body.append(line)
        if label and re.search(r"\bj\w+\s+" + re.escape(label) + r"\s*$", line):
            text = "\n".join(body)
            if ("zmm" in text or "ymm" in text) and len(text) > len(best):
                best = text
    return best


CARRIED_CASES = [(f, np.float64) for f in sorted(set(vm.VECMATH_BOUNDED.values()))] + [
    (f, np.float32) for f in ("vmf_exp", "vmf_log", "vmf_tanh", "vmf_sin_bounded")]


@pytest.mark.parametrize("fname,dt", CARRIED_CASES)
def test_no_class_test_fold(fname, dt):
    """No float range test may fold into llvm.is.fpclass: LLVM lowers the positive-finite
    class as `(bits - 1) u< C`, whose all-ones vector it rematerialises in the loop with a
    non-dependency-breaking `vpternlogd` (xforms/kernels/libm/vecmath/base.py `finite_nonneg`; the
    float64 log ran at 3.1 instead of 1.3 ns per element)."""
    _run(fname, np.ones(8, dt))
    loop = _loop(fname)
    sig = [s for s in loop.signatures if s[0].dtype == numba.from_dtype(np.dtype(dt))][0]
    assert "llvm.is.fpclass" not in loop.inspect_llvm(sig)


def _store_loop(f):
    """`out[i] = f(a[i])`: the shape of a generated kernel's element-wise loop."""
    @numba.njit
    def loop(a, out):
        for i in range(a.shape[0]):
            out[i] = f(a[i])
    return loop


@pytest.mark.skipif("+avx512f" not in llvm_binding.get_host_cpu_features().flatten(),
                    reason="512-bit loops only on AVX-512 hosts")
@pytest.mark.parametrize("kernel_width", [False, True])
@pytest.mark.parametrize("fname", ["vm_log", "vmf_log"])
def test_log_loop_carries_no_false_dependency(fname, kernel_width):
    """The log's vectorised loop has no all-ones `vpternlogd $255` (a false dependency of
    each iteration on the one before: 2.5x slower on Zen 4), compiled as generated kernels
    call it (xforms.kernels.runtime.cpu_runtime's copies), at LLVM's width and at the kernels' width
    (xforms/kernels/numba_fixes/vector_width.py: 512 bits on this kind of host)."""
    from xforms.kernels.runtime import cpu_runtime
    from xforms.kernels.numba_fixes import vector_width
    x = np.ones(64, np.float32 if fname.startswith("vmf_") else np.float64)
    loop = _store_loop(getattr(cpu_runtime, fname))
    with vector_width.compiling() if kernel_width else contextlib.nullcontext():
        loop(x, np.empty_like(x))
    hot = _hot_vector_loop(loop.inspect_asm(loop.signatures[0]))
    assert hot and not re.search(r"vpternlogd\s+\$(255|0xff)", hot)


def test_a_second_function_of_a_taken_name_is_refused():
    """Issue #31's audit: the vectorisable math is looked up by function name (the Numba
    clones' namespace, the direct path's translation); a second function registered under
    a taken name silently replaced the first one's formula.  Now it is an error."""
    from xforms.kernels.libm.vecmath import base

    def vm_exp(x):            # (vm_exp is explog.py's)
        return x
    before = base._PY_FUNCS["vm_exp"]
    try:
        with pytest.raises(ValueError, match="vm_exp"):
            base.vm(vm_exp)
    finally:
        base._PY_FUNCS["vm_exp"] = before
    assert base._PY_FUNCS["vm_exp"] is before
