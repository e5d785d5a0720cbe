"""Differential fuzzing: random programs through every transform, against NumPy.

Each test draws random well-typed programs (tests/fuzz/programs.py) with random inputs of a
drawn dtype (checks.py DTYPES: float64, float32, complex128, complex64; one dtype per
program, so a profile's cost stays) and checks one property (tests/fuzz/checks.py).  The number of programs scales with
the Hypothesis profile (tests/conftest.py): the default profile is fast; run the deep one with

    pytest -m fuzz --hypothesis-profile=deep

A failure prints the shrunk program as Python source with its inputs; keep it as a
regression test in tests/fuzz/test_fuzz_regressions.py.
"""
import json
import os
import pickle
import subprocess
import sys
import tempfile

import pytest
from hypothesis import event, given, settings, strategies as st

from .checks import (DTYPES, axes_for, cases, check_eager, check_grad, check_ir, check_jvp,
                     check_vjp, check_vmap, loop_segments)
from .complex_programs import check_complex_tiers, complex_programs
from .dtype_programs import check_dtype_tiers, check_llvm_path, dtype_programs
from .dtype_vmap import check_dtype_vmap
from .jit_groups import check_jit_group
from .layouts import LAYOUTS
from .promotion import check_promotion, operator_chains
from .second_order import check_grads2, check_hvp, check_jacobians, check_jvp_of_vjp
from .scalar_programs import check_scalar_tiers, scalar_programs
from .special_history import histories

# programs at a singular point (a norm of zeros) make NumPy warn about 0/0 eagerly
pytestmark = [pytest.mark.fuzz, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

N = settings.default.max_examples      # the profile's budget; each test takes a share
# XFORMS_FUZZ_PIECES=n runs 1/n of every test's share (a piece of the deep profile on a
# loaded machine): n pieces with n different --hypothesis-seed values make up the profile
PIECES = int(os.environ.get("XFORMS_FUZZ_PIECES", "1"))


def share(frac, cap=None):
    """This test's number of examples: `frac` of the profile's budget, at most `cap`, over
    PIECES (rounded up).

        >>> share(0.5, cap=1500)     # the deep profile (N = 3000), PIECES = 10: 150
    """
    n = max(1, int(N * frac))
    n = min(n, cap) if cap else n
    return -(-n // PIECES)


@settings(max_examples=share(1.5))
@given(cases(dtypes=DTYPES))
def test_eager_matches_numpy(case):
    check_eager(case)


@settings(max_examples=share(1))
@given(cases(dtypes=DTYPES))
def test_jvp_matches_finite_differences(case):
    check_jvp(case)


@settings(max_examples=share(1))
@given(cases(dtypes=DTYPES))
def test_vjp_passes_dot_product_test(case):
    check_vjp(case)


@settings(max_examples=share(1))
@given(cases(dtypes=DTYPES))
def test_grad_is_vjp_of_one(case):
    check_grad(case)


@settings(max_examples=share(1))
@given(st.data())
def test_vmap_matches_loop(data):
    case = data.draw(cases(dtypes=DTYPES), label="case")
    in_axes, out_axes = data.draw(axes_for(case), label="in_axes, out_axes")
    size = data.draw(st.integers(1, 3), label="batch size")
    check_vmap(case, in_axes, out_axes, size)


@settings(max_examples=share(0.25))
@given(cases(dtypes=DTYPES))
def test_hvp_matches_fd_of_grad(case):
    check_hvp(case)


# forward over reverse with a random cotangent (hvp's cotangent is 1): the other half of
# hvp's former share, so CI's cost stays
@settings(max_examples=share(0.25))
@given(cases(dtypes=DTYPES))
def test_jvp_of_vjp_matches_fd_of_pullback(case):
    check_jvp_of_vjp(case)


@settings(max_examples=share(0.5))
@given(cases(dtypes=DTYPES), st.integers(1, 3))
def test_reverse_loops_with_short_checkpoint_segments(case, steps):
    with loop_segments(steps):
        check_vjp(case)
        check_grad(case)


@settings(max_examples=share(0.5))
@given(cases(max_stmts=4, dtypes=DTYPES))
def test_jacobians_agree(case):
    check_jacobians(case)


@settings(max_examples=share(0.25))
# (float64 and complex128: check_grads' step 1e-6 is below single precision's resolution)
@given(cases(max_stmts=4, max_depth=1, dtypes=("float64", "complex128")))
def test_check_grads_second_order(case):
    check_grads2(case)


@settings(max_examples=share(0.5))
@given(st.data())
def test_transformed_ir_type_checks(data):
    case = data.draw(cases(), label="case")
    in_axes, _ = data.draw(axes_for(case), label="in_axes")
    check_ir(case, in_axes)


# jit compiles take seconds each: several programs share one compile, and few groups run
# (small: with the compiler's large-array paths switched on for these tiny arrays; numba:
# compiled on the Numba path, XFORMS_LLVM_KERNELS=0, not the direct LLVM kernels; layout: the
# second call's inputs read-only, strided, reversed, Fortran-ordered or NumPy scalars)
@settings(max_examples=share(0.067, cap=40))
@given(st.lists(cases(max_stmts=4), min_size=3, max_size=3), st.booleans(), st.booleans(),
       st.sampled_from(LAYOUTS))
def test_jit_matches_eager(group, small, numba, layout):
    check_jit_group(group, derivatives=False, small=small, numba=numba, layout=layout)


@settings(max_examples=share(0.034, cap=20))
@given(st.lists(cases(max_stmts=3), min_size=2, max_size=2), st.booleans(), st.booleans())
def test_jit_of_derivatives_matches_eager(group, small, numba):
    check_jit_group(group, derivatives=True, small=small, numba=numba)


# straight-line rank-0 float32/float64 programs: the CPU's direct LLVM kernels
# (xforms/kernels/cpu/llvm/) against the fast tier, with infinities, NaN and signed zeros
@settings(max_examples=share(0.5))
@given(scalar_programs())
def test_scalar_programs_compiled_matches_fast_tier(case):
    check_scalar_tiers(case)


# straight-line programs over every dtype (bool, int8 ... uint64, float16/32/64) with special
# values, conversions, shifts, reductions with where=, outputs aliasing inputs, inputs in
# every memory layout (read-only, strided, reversed, Fortran, NumPy scalars: layouts.py)
# (tests/fuzz/dtype_programs.py): jit's compiled tier (on the direct LLVM path where it takes
# a program, or forced onto Numba's) against its fast tier and eager, bit for bit, and all of
# them against a NumPy rendering with JAX's semantics; three programs share one compile
@settings(max_examples=share(0.2, cap=600))
@given(st.lists(dtype_programs(), min_size=3, max_size=3), st.booleans(),
       st.sampled_from(LAYOUTS))
def test_dtype_programs_compiled_matches_fast_tier(group, numba, layout):
    check_dtype_tiers(group, numba, layout)


# programs of gathers, scatters and dynamic slices at indices of every integer dtype (uint64
# from 2**63 among them), negative and out of bounds: compiled tier against fast tier
@settings(max_examples=share(0.05, cap=150))
@given(st.lists(dtype_programs(indexed_only=True), min_size=3, max_size=3),
       st.sampled_from(LAYOUTS))
def test_indexed_programs_compiled_matches_fast_tier(group, layout):
    check_dtype_tiers(group, layout=layout)


# the dtype programs, and the indexed ones (their indices batched too), under vmap with drawn
# in_axes (0, -1 or None) and batch size: vmap eagerly and jit(vmap) compiled against the
# program run example by example, bit for bit (tests/fuzz/dtype_vmap.py; session 32)
@settings(max_examples=share(0.05, cap=150))
@given(st.lists(st.one_of(dtype_programs(max_stmts=4), dtype_programs(indexed_only=True)),
                min_size=2, max_size=2), st.data(), st.booleans())
def test_dtype_programs_under_vmap_match_a_loop(group, data, numba):
    in_axes = []
    for case in group:
        axes = data.draw(st.lists(st.sampled_from([0, -1, None]), min_size=len(case.args),
                                  max_size=len(case.args)), label="in_axes")
        nd = [a.ndim for a in case.args]
        axes = [0 if ax == -1 and not d else ax for ax, d in zip(axes, nd)]
        if all(ax is None for ax in axes):
            axes[0] = 0
        in_axes.append(axes)
    check_dtype_vmap(group, in_axes, data.draw(st.integers(1, 3), label="size"), numba)


# the same programs over float32/float64 with the reductions the direct LLVM kernels fold:
# XFORMS_LLVM_KERNELS=1 (xforms/kernels/cpu/llvm/) against =0 (Numba), bit for bit but for
# NaN payloads (programs outside the LLVM path's class are Numba's both times: skipped)
@settings(max_examples=share(0.5, cap=1500))
@given(dtype_programs(dtypes=("float32", "float64"), reductions=("sum", "max", "min", "prod")))
def test_llvm_kernels_match_numba_kernels(case):
    event("direct LLVM kernel" if check_llvm_path(case) else "outside the LLVM path's class")


# complex64/complex128 programs through exp, log, sqrt, trigonometric, hyperbolic and inverse
# functions, power, with special parts (tests/fuzz/complex_programs.py): compiled tier, fast
# tier and eager agree; eager = NumPy where the operands are moderate
@settings(max_examples=share(0.034, cap=150))
@given(st.lists(complex_programs(), min_size=3, max_size=3), st.booleans())
def test_complex_programs_tiers_agree(group, numba):
    check_complex_tiers(group, numba)


# eager Array operators on mixed dtypes, Python scalars and weak types: JAX's promotion
@settings(max_examples=share(1))
@given(operator_chains())
def test_eager_operators_promote_as_jax(chain):
    check_promotion(*chain)


# The loop tests below draw each program's dtype: float64, or float32 (the inputs float32,
# every op keeping it, as JAX does), whose values are compared with the float64 NumPy
# rendering and between tiers to checks.py's F32_TOL (away from a jump: F32_MARGIN), or
# complex128 / complex64 (complex_loops.py: the ops drawn, control scalars through the real
# part; compared with the complex128 rendering, complex64 to F32_TOL; grads of the real part)
LOOP_DTYPES = ("float64", "float32", "complex128", "complex64")


def _dtype_event(group):
    """How many of the group's programs are of each dtype (--hypothesis-show-statistics)."""
    for dt in LOOP_DTYPES[1:]:
        event(f"{dt} programs: {sum(c.prog.dtype == dt for c in group)}")


# loops accumulating products (tests/fuzz/accumulate.py), compiled with their gradients: the
# scan rewrites of xforms/kernels/prepare/scan_products.py and the reverse sweeps' accumulators
@settings(max_examples=share(0.034, cap=20))
@given(st.lists(cases(max_stmts=2, control_kinds=("scan_acc", "fori_acc", "scan"),
                      control_weight=20, dtypes=LOOP_DTYPES), min_size=2, max_size=2),
       st.booleans(),
       st.booleans())
def test_jit_of_accumulating_loops_matches_eager(group, small, numba):
    _dtype_event(group)
    check_jit_group(group, derivatives=True, small=small, numba=numba)


# loops whose gradients are transposed loops -- fori_loop over traced bounds (a reverse
# for_loop) and static ones, scans forwards and reversed -- whose fori bodies start with an
# affine step whose weights change with the index (programs.py `affine_step`), so the order
# a sweep runs in shows; small and unnested, so the direct LLVM path takes most groups.
# Every program starts with a loop; each group compiles on both CPU paths (the direct LLVM
# kernels, then Numba's) and each compile is called at 4 inputs (trip counts 0-4: see
# jit_groups.py), derivatives compared every time.  (CI's budget: 3 groups; the direct
# path's forward-running reverse for_loop of session 32 fails in about one program in four)
@settings(max_examples=share(0.1, cap=30))
@given(st.lists(cases(max_stmts=2, max_depth=1, affine=True, lead_control=True,
                      control_weight=20, control_kinds=("fori_traced",) * 3 + ("fori", "scan"),
                      dtypes=LOOP_DTYPES), min_size=3, max_size=3))
def test_jit_of_transposed_loops_matches_eager(group):
    _dtype_event(group)
    check_jit_group(group, derivatives=True, calls=4, paths=("llvm", "numba"))


# their neighbours: while loops (a trip count, a threshold), scans, fori loops, nested in
# one another, every program starting with one, on both CPU paths at 4 inputs
@settings(max_examples=share(0.034, cap=20))
@given(st.lists(cases(max_stmts=2, max_depth=2, affine=True, lead_control=True,
                      control_weight=8, control_kinds=("while_count", "while_thresh", "scan",
                                                       "fori_traced", "fori"),
                      dtypes=LOOP_DTYPES), min_size=2, max_size=2))
def test_jit_of_nested_and_while_loops_matches_eager(group):
    _dtype_event(group)
    check_jit_group(group, derivatives=True, calls=4, paths=("llvm", "numba"))


# ---- process histories of the special functions, each in a process of its own --------------
# (tests/fuzz/special_history.py): every special function, Bessel function and complex
# elementwise function jitted in a drawn order -- siblings such as gammainc/gammaincc in one
# program and in consecutive ones, runs of one dtype, both CPU paths, eager calls and garbage
# collections between -- each program's values against scipy's or NumPy's ufunc.  A fresh
# process per history: a per-process cache is filled by the first compile of each function,
# which in this process an earlier test may have made (session 33's CI failure: jitted
# float32 gammaincc computed gammainc, depending on what the process had compiled before)
_SPECIAL_WORKER = os.path.join(os.path.dirname(__file__), "special_worker.py")


# (a history costs ~15 CPU s with new kernels, ~5 with the disk cache's: CI's budget runs
# one; the deep profile 100)
@settings(max_examples=share(0.034, cap=100))
@given(histories())
def test_special_function_histories_in_a_fresh_process(plan):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "plans.json")
        with open(path, "w") as f:
            json.dump([plan], f)
        r = subprocess.run([sys.executable, _SPECIAL_WORKER, path], capture_output=True,
                           text=True)
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-6000:]


# ---- the CUDA backend on Numba's simulator, in a process of its own -------------------------
_WORKER = os.path.join(os.path.dirname(__file__), "cuda_worker.py")
_cuda_ok = []


def _sim_env():
    return dict(os.environ, NUMBA_ENABLE_CUDASIM="1", XFORMS_ENABLE_CHECKS="1")


def _cuda_sim_available():
    """Whether jit(backend="cuda") runs on the simulator here (checked once)."""
    if not _cuda_ok:
        probe = ("import numpy as np, xforms as xf; "
                 "assert float(np.asarray(xf.jit(lambda x: x * 2.0, backend='cuda')(1.5))) == 3")
        r = subprocess.run([sys.executable, "-c", probe], env=_sim_env(), capture_output=True)
        _cuda_ok.append(r.returncode == 0)
    return _cuda_ok[0]


@settings(max_examples=share(0.034, cap=20))
@given(st.lists(cases(max_stmts=4), min_size=3, max_size=3), st.booleans())
def test_cuda_simulator_matches_eager(group, small):
    if not _cuda_sim_available():
        pytest.skip("jit(backend='cuda') does not run on the CUDA simulator here")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cases.pickle")
        with open(path, "wb") as f:
            pickle.dump([[(c.prog, c.args) for c in group]], f)
        r = subprocess.run([sys.executable, _WORKER, path] + ["small"] * small,
                           env=_sim_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-6000:]


# ---- the transforms' own parameters (tests/fuzz/params.py) ---------------------------------
@settings(max_examples=share(1))
@given(st.data())
def test_transform_parameters(data):
    from .params import check_plan, plans
    case = data.draw(cases(max_stmts=4), label="case")
    check_plan(case, data.draw(plans(case), label="plan"))


@settings(max_examples=share(0.067, cap=40))
@given(st.data())
def test_transform_parameters_with_jit(data):
    from .params import check_plan, plans
    case = data.draw(cases(max_stmts=3, max_depth=1), label="case")
    check_plan(case, data.draw(plans(case, jit=True), label="plan"))
