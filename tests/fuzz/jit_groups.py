"""Groups of fuzz programs through one `jit`: compiled code against eager and NumPy.

A compile costs seconds and a call microseconds, so a group shares one compile and the
compiled function is called several times: at the drawn inputs, then at `calls - 1` other
draws, each compared with eager evaluation -- values, and (where the program is away from a
singular point there) its gradient and a jvp.  A loop's trip count follows its inputs, so
the later calls run the same compiled loops (and their transposes) for other trip counts.
`paths` compiles the group on each CPU path in turn, the direct LLVM kernels and Numba's,
against the same eager results.

    >>> check_jit_group(group, derivatives=True, calls=4, paths=("llvm", "numba"))
"""
import contextlib

import numpy as np
from hypothesis import reject

import xforms as xf
import xforms.numpy as xnp

from . import reference as R
from .layouts import laid_out
from .checks import (BIG, EXACT, F32_MARGIN, F32_TOL, MARGIN, assert_close, dtype_of,
                     fast_tier_only, flatten, float64_args, n_args, random_args, reference,
                     scalarize, small_array_paths, tmap, unit_direction, weights)

WHAT = ("value vs NumPy", "grad vs eager grad", "jvp vs eager jvp")


def _smooth_at(case, args):
    """Whether the NumPy rendering is finite at `args` and away from a singular point
    (`reference`'s margin, without rejecting the example)."""
    with R.margins() as m, np.errstate(all="ignore"):
        out = case.ref_fn()(*float64_args(args))
    return m.singular > MARGIN and all(np.all(np.isfinite(x)) and np.all(np.abs(x) < BIG)
                                       for x in flatten(out)[0])


def _float32(case):
    """Whether the case computes in single precision (float32, complex64)."""
    return dtype_of(case) in (np.float32, np.complex64)


def _away_from_jumps(case, args):
    """Whether every jump of the NumPy rendering at `args` (a floor, a comparison, a trip
    count) is F32_MARGIN from its threshold: float32 rounding cannot cross it."""
    with R.margins() as m, np.errstate(all="ignore"):
        case.ref_fn()(*float64_args(args))
    return m.value > F32_MARGIN


def _tolerance(case):
    """assert_close's tolerances and dtype for the case's outputs (checks.py F32_TOL)."""
    dt = dtype_of(case)
    tol = F32_TOL if _float32(case) else EXACT
    return dict(rtol=tol, atol=tol, dtype=dt)


def _real(fs, dt):
    """fs, or for a complex program its real part (grad takes a real function of complex
    inputs, as JAX's)."""
    return (lambda *a: xnp.real(fs(*a))) if dt.kind == "c" else fs


def _finite(tree):
    return all(np.all(np.isfinite(np.asarray(x))) for x in flatten(tree)[0])


def _path(name):
    from .dtype_programs import llvm_kernels
    return llvm_kernels(False) if name == "numba" else contextlib.nullcontext()


def check_jit_group(group, backend=None, derivatives=True, small=False, numba=False,
                    layout="contiguous", calls=2, paths=None):
    """One jitted function runs every program of the group (one compile for many programs),
    with derivatives also its gradient and a jvp; each must equal its eager counterpart.
    `calls - 1` more calls with other inputs must agree with eager too (derivatives where
    the program is smooth there) and leave the first call's results as they were
    (compiled code may keep buffers between calls).  `small`: compile under
    `small_array_paths`.  `numba`: compile on the CPU's Numba path (XFORMS_LLVM_KERNELS=0),
    not the direct LLVM kernels where they take a loop; `paths` (("llvm", "numba")) compiles
    on each in turn.  On the CPU the group also runs on jit's fast tier (the NumPy
    implementations of the traced program), which must agree as well.  `layout`: the
    second call's inputs are NumPy arrays in that memory layout (tests/fuzz/layouts.py)."""
    fns, grads, dirs, eager = [], [], [], []
    for case in group:
        expected, margin = reference(case)
        if _float32(case) and not _away_from_jumps(case, case.args):
            reject()
        fns.append(case.fn())
        # derivatives of each program away from a singular point (see fd); a program near
        # one (a float -> int conversion anywhere) no longer drops its group's derivatives
        if derivatives and margin >= 0:
            dt = dtype_of(case)
            fs = _real(scalarize(case.fn(), tmap(lambda w: w.astype(dt), weights(expected)),
                                 xnp), dt)
            grads.append(xf.grad(fs, argnums=n_args(case)))
            # (a complex program's direction: complex, both parts nonzero)
            turn = 0.6 + 0.8j if dt.kind == "c" else 1.0
            dirs.append(case.xargs(tmap(lambda t: (t * turn).astype(dt), unit_direction(
                np.random.default_rng(6), case.args))))
            eager.append((expected, grads[-1](*case.xargs()),
                          xf.jvp(case.fn(), case.xargs(), dirs[-1])[1]))
        else:
            grads.append(None)
            dirs.append(None)
            eager.append((expected,))

    def everything(all_args, all_dirs):
        return [(f(*a),) if g is None else (f(*a), g(*a), xf.jvp(f, a, d)[1])
                for f, g, a, d in zip(fns, grads, all_args, all_dirs)]
    name = f"jit({backend or 'cpu'})"

    def compare(results, label):
        for k, (out, exp) in enumerate(zip(results, eager)):
            for w, a, e in zip(WHAT, out, exp):
                assert_close(tmap(np.asarray, a), e, f"{name} program {k}: {w}{label}",
                             **_tolerance(group[k]))
    later = _later_calls(group, fns, grads, dirs, calls)

    def run(jitted, label, path=contextlib.nullcontext, setup=contextlib.nullcontext):
        """The first call at the drawn inputs, then the later calls; each against eager,
        and the first call's results unchanged by the later ones."""
        with path(), setup():
            got = jitted([c.xargs() for c in group], dirs)
        compare(got, label)
        for j, (args, want) in enumerate(later):
            lay = layout if j == 0 else "contiguous"
            with path():
                got_j = jitted([tmap(lambda x: laid_out(x, lay), a) for a in args], dirs)
            compare(got, f"{label} (first call's result, after call {j + 2})")
            for k, (out, exp) in enumerate(zip(got_j, want)):
                for w, a, e in zip(WHAT, out, exp):
                    if e is not None:
                        assert_close(tmap(np.asarray, a), e,
                                     f"{name} program {k}: call {j + 2} (other inputs): "
                                     f"{w.replace('NumPy', 'eager')}{label}",
                                     **_tolerance(group[k]))
    for p in paths or ("numba" if numba else "llvm",):
        run(xf.jit(everything, backend=backend), f" ({p} path)" if paths else "",
            lambda: _path(p), lambda: small_array_paths(backend or "cpu") if small else
            contextlib.nullcontext())
    if backend in (None, "cpu"):
        # (every call on the fast tier: the loops' other trip counts too)
        with fast_tier_only():
            run(xf.jit(everything, backend=backend, tiered=True), " (fast tier)")


# the later calls' inputs: standard normal plus these offsets in turn (a loop's trip count
# grows with the mean of an input: 3-4 trips at +1, where the first call has mostly 2-3)
OFFSETS = (1.0, 0.0, -0.5, 0.5)


def _later_calls(group, fns, grads, dirs, calls):
    """[(inputs for every program, [(value, grad, jvp) eagerly, None where not compared])]
    for the calls after the first (other random inputs, the same seeds every time)."""
    rng = np.random.default_rng(11)
    later = []
    for j in range(calls - 1):
        off = OFFSETS[j % len(OFFSETS)]
        args = [tmap(lambda x: x + off, random_args(c.prog, rng)) for c in group]
        want = []
        for case, f, g, d, a in zip(group, fns, grads, dirs, args):
            x = tmap(xnp.asarray, a)
            value = tmap(np.asarray, f(*x))
            # (a float32 program near a jump: jit may round to its other side)
            ok = _finite(value) and (not _float32(case) or _away_from_jumps(case, a))
            row = [value if ok else None, None, None]
            if g is not None and row[0] is not None and _smooth_at(case, a):
                gj, tj = g(*x), xf.jvp(f, x, d)[1]
                if _finite(gj) and _finite(tj):
                    row[1:] = [tmap(np.asarray, gj), tmap(np.asarray, tj)]
            want.append(row if g is not None else row[:1])
        later.append((args, want))
    return later


__all__ = ["check_jit_group"]
