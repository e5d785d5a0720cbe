"""xforms/kernels/numba_fixes/registry.py: on the Numba pinned in pyproject.toml every patch is installed over
the Numba code it was written for; the registry names every Numba attribute that xforms
replaced; tools/check_numba_upgrade.py reports the same for an interpreter it is pointed at."""
import importlib.util
import inspect
import os
import sys

import numba
import pytest

from xforms.kernels.build import codecache  # noqa: F401  (applies the patches)
from xforms.kernels.numba_fixes import patches as _patches
from xforms.kernels.numba_fixes.registry import PATCHES, Patch, installed, status

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _tool():
    path = os.path.join(ROOT, "tools", "check_numba_upgrade.py")
    spec = importlib.util.spec_from_file_location("check_numba_upgrade", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("patch", PATCHES, ids=[p.name for p in PATCHES])
def test_every_patch_is_installed_on_the_pinned_numba(patch):
    if patch.target.startswith("numba.cuda."):      # (numba-cuda's copy: at a GPU compile)
        pytest.importorskip("numba_cuda", reason="numba-cuda is not installed")
        _patches.apply_cuda()
    # no skip: a Numba outside the pinned range that refuses a patch fails here
    assert installed(patch), f"{patch.target} is Numba's own: the patch did not apply"
    assert status(patch) == "ok", f"Numba's {patch.target} is not the code the patch replaced"


def _replaced_attributes():
    """Targets ("module:Class.attr" or "module:attr") of the loaded Numba modules and of
    their classes whose value is a function of kernels (what a patch leaves behind)."""
    found = set()
    for name, mod in list(sys.modules.items()):
        if not name.startswith(("numba.", "llvmlite.")) or mod is None:
            continue
        owners = [("", mod)] + [(f"{v.__qualname__}.", v) for v in vars(mod).values()
                                if inspect.isclass(v) and v.__module__ == name]
        for prefix, owner in owners:
            for attr, value in list(vars(owner).items()):
                if inspect.isfunction(value) and value.__module__.startswith("xforms.kernels."):
                    found.add(f"{name}:{prefix}{attr}")
    return found


def test_the_registry_names_every_replaced_numba_attribute():
    from numba.np import linalg  # noqa: F401  (an alias of the allocation patch)
    registered = {p.target for p in PATCHES} | {
        f"{m}:{p.target.rpartition(':')[2]}" for p in PATCHES for m in p.aliases}
    replaced = _replaced_attributes()
    assert len(replaced) >= len(PATCHES)       # the scan sees the patches
    assert replaced <= registered, "patched but not in xforms/kernels/numba_fixes/registry.py"


def test_status_names_what_broke():
    ours = next(p for p in PATCHES if p.name == "ssa")
    assert status(ours._replace(numba_sha="0" * 12)) == "changed"
    assert status(ours._replace(target="numba.core.ssa:_no_such_function")) == "missing"
    numba_own = Patch("x", "numba.core.ssa:_find_defs_violators", "", "", "")
    assert not installed(numba_own) and status(numba_own) == "not installed"
    alias_left = next(p for p in PATCHES if p.name == "liveness")
    assert not installed(alias_left._replace(aliases=("numba.core.analysis",
                                                      "numba.core.controlflow")))


def test_a_module_left_with_numbas_own_function_is_caught(monkeypatch):
    # (numba.parfors.parfor_lowering kept Numba's fixup_var_define_in_scope until the
    # patches replaced every alias: parallel kernels were lowered with the slow one)
    from numba.parfors import parfor_lowering
    scope = next(p for p in PATCHES if p.name == "scope-fixup")
    assert installed(scope)
    original = parfor_lowering.fixup_var_define_in_scope.__wrapped__
    monkeypatch.setattr(parfor_lowering, "fixup_var_define_in_scope", original)
    assert not installed(scope)
    monkeypatch.undo()
    monkeypatch.setattr(sys.modules["numba.core.config"], "fixup_var_define_in_scope",
                        original, raising=False)
    assert not installed(scope)      # an alias nobody listed


def test_upgrade_check_reports_this_numba(capsys):
    assert _tool().main(["--python", sys.executable]) == 0
    out = capsys.readouterr().out
    assert f"numba {numba.__version__}," in out
    assert out.count(" ok\n") == len(PATCHES)


def test_upgrade_check_report_merges_both_probes():
    before = {"a": "ok", "b": "changed", "c": "missing", "d": "ok", "versions": "numba 9"}
    after = {"a": True, "b": True, "c": False, "d": False}
    assert _tool().report(before, after) == {"a": "ok", "b": "changed", "c": "missing",
                                             "d": "not installed"}


_SETUP_SCRIPT = """
import sys
import numpy as np
import xforms as xf, xforms.numpy as xnp
assert float(xf.jit(lambda x: xnp.sin(x) * 2.0 + x, tiered=False)(0.5)) == np.sin(0.5) * 2.0 + 0.5
print(sorted(m for m in ("scipy.linalg", "scipy.fft", "rocket_fft", "numba.typed.dictimpl",
                         "numba.np.polynomial.polynomial_core",
                         "numba.np.random.generator_core") if m in sys.modules))
import numba
@numba.njit
def user_fft(a):          # a user's own Numba code still gets rocket-fft's overloads
    return np.fft.fft(a)
print(user_fft(np.ones(4)).real.tolist())
@numba.njit
def user_rest(t, u, rng):  # ... and Numba's datetimes, typed dicts and np.random generators
    d = {1: t - u}
    return d[1], rng.random() < 1.0
print(user_rest(np.datetime64("2026-01-03"), np.datetime64("2026-01-01"),
                np.random.default_rng(7)))
"""


def test_numba_setup_imports_no_scipy_a_kernel_does_not_use(tmp_path):
    """xforms/kernels/numba_fixes/extensions.py: a kernel without BLAS or FFT compiles in a
    process that never imports scipy.linalg (Numba's BLAS check) nor scipy.fft (rocket-fft's
    entry point), nor Numba's polynomial, np.random generator and typed-dict implementations;
    Numba code outside xforms still loads every extension and implementation."""
    import subprocess
    env = dict(os.environ, XFORMS_CACHE_DIR=str(tmp_path), NUMBA_CACHE_DIR=str(tmp_path / "nb"),
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", _SETUP_SCRIPT], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:3] == ["[]", "[4.0, 0.0, 0.0, 0.0]",
                                          "(np.timedelta64(2,'D'), True)"]


# ---- llvmlite's lock (xforms/kernels/cpu/llvm/engine.py `_liftable_lock`) ---------------------
def test_the_llvmlite_lock_swap_is_checked_like_a_patch(monkeypatch):
    """The direct path swaps the class of llvmlite's lock for a subclass that a thread can
    skip: the registry says whether the swap holds and whether llvmlite's lock is still the
    code it was written for (an llvmlite upgrade that changes it reads "changed")."""
    from llvmlite.binding import ffi
    from xforms.kernels.cpu.llvm import engine  # noqa: F401  (swaps the class)
    lock = next(p for p in PATCHES if p.name == "llvmlite-lock")
    assert type(ffi.lib._lock).__bases__ == (ffi._LLVMLock,) and installed(lock)
    assert status(lock._replace(numba_sha="0" * 12)) == "changed"
    assert status(lock._replace(target="llvmlite.binding.ffi:_NoSuchLock")) == "missing"
    monkeypatch.setattr(ffi, "_a_lock_of_its_own", ffi._LLVMLock(), raising=False)
    left = lock._replace(swaps="llvmlite.binding.ffi:_a_lock_of_its_own")
    assert not installed(left) and status(left) == "not installed"


def _fake_ffi(lock_class):
    import types
    return types.SimpleNamespace(lib=types.SimpleNamespace(_lock=lock_class()))


def test_the_lock_lifts_only_on_a_flagged_thread_and_only_over_the_expected_class(monkeypatch):
    from xforms.kernels.cpu.llvm import engine

    entered = []

    class _LLVMLock:            # llvmlite's shape: a context manager (its entries counted)
        def __enter__(self):
            entered.append(1)

        def __exit__(self, *exc):
            pass
    fake = _fake_ffi(_LLVMLock)
    monkeypatch.setattr(engine, "_ffi", fake)
    free = engine._liftable_lock()
    assert free is not None and type(fake.lib._lock).__name__ == "_LiftableLock"
    with fake.lib._lock:
        pass
    free.on = True
    try:
        with fake.lib._lock:        # skipped on this thread
            pass
    finally:
        free.on = False
    assert len(entered) == 1
    assert engine._liftable_lock() is free      # a second import shares the flag

    class OtherLock:            # a lock llvmlite renamed or rewrote: left alone
        def __enter__(self):
            pass

        def __exit__(self, *exc):
            pass
    other = _fake_ffi(OtherLock)
    monkeypatch.setattr(engine, "_ffi", other)
    assert engine._liftable_lock() is None and type(other.lib._lock) is OtherLock
