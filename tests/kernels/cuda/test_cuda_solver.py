"""The cuSOLVER part of the CUDA vendor layer without a GPU (xforms/kernels/cuda/vendor/
solver_map.py, cusolver.py; the rules in xforms/kernels/ops/linalg/solver.py): routine names and
buffer sizes, the binding's arguments against its own ctypes signatures (and, where
cusolverDn.h is at hand, the signatures against the header), the backend's choice between
the library and its kernels, and the symbols bound against the real library where it is
installed.  End to end on the simulator: tests/cuda/test_solver_model.py; on a GPU:
tests/cuda/test_gpu_solver.py."""
import ctypes
import dataclasses
import glob
import importlib.util
import logging
import os
import re

import numpy as np
import pytest

from xforms.kernels.cuda import vendor
from xforms.kernels.cuda.vendor import cusolver
from xforms.kernels.cuda.vendor.solver_map import (BATCHED, LETTER, ROUTINES, UPPER,
                                                   SolverCall, buffer_sizes, routine_name)

DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def test_routine_names_follow_lapack():
    assert routine_name("potrf", np.float32) == "cusolverDnSpotrf"
    assert routine_name("orgqr", np.float64) == "cusolverDnDorgqr"
    assert routine_name("orgqr", np.complex64) == "cusolverDnCungqr"
    assert routine_name("syevd", np.complex128) == "cusolverDnZheevd"
    assert routine_name("gesvd", np.complex64) == "cusolverDnCgesvd"


def test_buffer_sizes_per_matrix():
    assert buffer_sizes(SolverCall("getrf", "float64", 5, 5, 0, 2, 25)) == {"ipiv": 5, "info": 1}
    assert buffer_sizes(SolverCall("orgqr", "float64", 6, 6, 4, 2, 36)) == {"tau": 4, "info": 1}
    assert buffer_sizes(SolverCall("gesvd", "float32", 6, 4, 0, 1, 24, job="A")) == \
        {"s": 4, "u": 36, "vt": 16, "info": 1}
    assert buffer_sizes(SolverCall("gesvd", "float32", 6, 4, 0, 1, 24, job="S")) == \
        {"s": 4, "u": 24, "vt": 16, "info": 1}


class _CheckingLib:
    """Stands in for the C library: each symbol converts every argument with the ctypes type
    the binding declared for it (as a CDLL would) and records the call."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        if not name.startswith("cusolverDn"):
            raise AttributeError(name)

        def fn(*args):
            types = fn.argtypes
            assert len(args) == len(types), (name, args, types)
            for a, t in zip(args, types):
                if isinstance(a, ctypes._SimpleCData) or type(a).__name__ == "CArgObject":
                    continue
                t.from_param(a)                  # raises on a wrong type
            refs = [a for a in args if type(a).__name__ == "CArgObject"]
            for r in refs:                           # &lwork (&sizes), a handle to create
                r._obj.value = 16
            self.calls.append((name, args))
            return 0
        fn.__name__ = name
        setattr(self, name, fn)               # one function object per symbol, as ctypes
        return fn


CALLS = [SolverCall("potrf", "", 4, 4, 0, 3, 16, UPPER), SolverCall("getrf", "", 4, 4, 0, 3, 16),
         SolverCall("geqrf", "", 5, 3, 0, 3, 25), SolverCall("orgqr", "", 5, 5, 3, 3, 25),
         SolverCall("syevd", "", 4, 4, 0, 3, 16), SolverCall("gesvd", "", 5, 3, 0, 3, 15, job="S"),
         SolverCall("syevjBatched", "", 4, 4, 0, 3, 16),
         SolverCall("geev", "", 4, 4, 0, 3, 16, job="V")]


# (the rules call geev with complex operands only: eig of a real matrix goes through a copy)
BINDING_CASES = [(c, dt) for c in CALLS for dt in DTYPES
                 if c.routine != "geev" or np.dtype(dt).kind == "c"]


@pytest.mark.parametrize("call, dtype", BINDING_CASES,
                         ids=[f"{c.routine}-{np.dtype(dt).name}" for c, dt in BINDING_CASES])
def test_the_binding_passes_what_its_signatures_declare(call, dtype):
    lib = _CheckingLib()
    c = call._replace(dtype=np.dtype(dtype).name)
    scratch = []
    bufs = {b: 1 << (20 + i) for i, b in enumerate(ROUTINES[c.routine])}
    cusolver.Cusolver(lib).run(tuple(c), 1 << 30, bufs,
                               lambda n, dt: scratch.append((n, np.dtype(dt))) or 1 << 40,
                               context=5, stream=6)
    name = routine_name(c.routine, dtype)
    batched = c.routine in BATCHED                   # one call, its parameters made first
    calls = (1 if batched else c.batch)
    geev = c.routine == "geev"                       # the 64-bit API: its parameters too
    assert [n for n, _ in lib.calls] == ["cusolverDnCreate", "cusolverDnSetStream"] + \
        ["cusolverDnCreateSyevjInfo"] * batched + ["cusolverDnCreateParams"] * geev + \
        [name + "_bufferSize"] + [name] * calls
    # matrix p's A and its info are at their offsets; one workspace of the queried size
    item = np.dtype(dtype).itemsize
    a_at = 6 if geev else list(cusolver.SIGNATURES[c.routine][1]).index("p") + 1
    for p, (_, args) in enumerate(lib.calls[-calls:]):
        assert args[a_at] == (1 << 30) + p * c.stride * item
        assert args[-3 if batched else -1] == bufs["info"] + 4 * p
        assert not batched or args[-1] == c.batch
    assert scratch[0] == (16, np.dtype(np.uint8 if geev else dtype))


def _header():
    """cusolverDn.h of an installed CUDA toolkit or nvidia-cusolver wheel, or None."""
    roots = [os.environ.get("CUDA_HOME", "/usr/local/cuda")]
    spec = importlib.util.find_spec("nvidia")
    roots += list(spec.submodule_search_locations) if spec else []
    for root in roots:
        found = glob.glob(os.path.join(root, "**", "cusolverDn.h"), recursive=True)
        if found:
            return found[0]
    return None


def test_the_signatures_match_the_header():
    path = os.environ.get("XFORMS_CUSOLVER_HEADER") or _header()
    if path is None:
        pytest.skip("no cusolverDn.h here (a CUDA toolkit or the nvidia-cusolver wheel)")
    text = open(path).read()
    kind = {"int": "i", "signed char": "c", "cublasFillMode_t": "i", "cusolverEigMode_t": "i",
            "syevjInfo_t": "p", "cusolverDnParams_t": "p", "int64_t": "l", "cudaDataType": "i",
            "size_t": "z"}
    for routine, (query, call) in cusolver.SIGNATURES.items():
        for dt in DTYPES:
            for name, want in ((routine_name(routine, dt) + "_bufferSize", query),
                               (routine_name(routine, dt), call)):
                m = re.search(rf"\b{name}\s*\(([^)]*)\)", text)
                params = [re.sub(r"\s+", " ", p).strip() for p in m.group(1).split(",")][1:]
                got = "".join("w" if p.startswith("int *") and p.endswith(("Lwork", "lwork"))
                              and name.endswith("_bufferSize") else
                              "s" if p.startswith("size_t*") else "p" if "*" in p
                              else kind[p.rsplit(" ", 1)[0].replace("const ", "")]
                              for p in params)
                assert got == want, (name, params)


# ---- the backend's choice (needs numba-cuda to emit CUDA source; no GPU) -----------------------
needs_numba_cuda = pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                                      reason="numba-cuda is not installed")


def _emit(f, *args, vendor_on=True):
    import xforms as xf
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program
    spec = dataclasses.replace(rt.spec_for((9, 0), sms=132), vendor=vendor_on)
    return emit_program(xf.make_jaxpr(f)(*args), spec, "f")


@needs_numba_cuda
def test_large_factorisations_go_to_cusolver_small_ones_stay_in_the_kernels(monkeypatch):
    from xforms import lax
    monkeypatch.setattr(vendor, "_bound", {"cusolver": object()})    # present; nothing called
    monkeypatch.delenv("XFORMS_CUDA_SOLVER_MIN_N", raising=False)
    n = vendor.SOLVER_MIN_N
    big, small = np.eye(n), np.eye(n - 1)
    prog = _emit(lambda a, b: (lax.linalg.cholesky(a), lax.linalg.cholesky(b),
                               lax.linalg.lu(a), lax.linalg.lu(b)), big, small)
    solves = [ln.strip() for ln in prog.source.splitlines() if "_rt.solve(" in ln]
    assert [s.split("'")[1] for s in solves] == ["potrf", "getrf"], solves
    potrf = SolverCall("potrf", "float64", n, n, 0, 1, n * n, UPPER)
    assert solves[0].startswith(f"_rt.solve({tuple(potrf)}, ")
    assert sum("one block per matrix" in k.what for k in prog.kernels) == 2
    # qr, eigh, svd: the library at every size
    prog = _emit(lambda a: (lax.linalg.qr(a), lax.linalg.eigh(a), lax.linalg.svd(a)), small)
    assert sorted(s.strip().split("'")[1] for s in prog.source.splitlines()
                  if "_rt.solve(" in s) == ["geqrf", "gesvd", "orgqr", "syevd"]


@needs_numba_cuda
def test_spectral_min_n_keeps_small_qr_eigh_svd_eig_in_our_kernels(monkeypatch):
    """vendor.SPECTRAL_MIN_N (0: the library at every size, until measured) and its
    override: below it our one-thread-per-matrix kernels, from it cuSOLVER."""
    from xforms import lax
    monkeypatch.setattr(vendor, "_bound", {"cusolver": object()})    # present; nothing called
    monkeypatch.delenv("XFORMS_CUDA_SPECTRAL_MIN_N", raising=False)

    def f(a):
        return (lax.linalg.qr(a), lax.linalg.eigh(a), lax.linalg.svd(a), lax.linalg.eig(a))

    def routines(a):
        return sorted(x.strip().split("'")[1] for x in _emit(f, a).source.splitlines()
                      if "_rt.solve(" in x)
    everything = ["geev", "geqrf", "gesvd", "orgqr", "syevd"]
    assert routines(np.eye(4) + 0j) == everything
    monkeypatch.setenv("XFORMS_CUDA_SPECTRAL_MIN_N", "5")
    assert routines(np.eye(4) + 0j) == []
    assert routines(np.eye(5) + 0j) == everything


@needs_numba_cuda
def test_without_cusolver_our_kernels_compute_and_the_absence_is_logged_once(
        monkeypatch, caplog):
    """No cuSOLVER: qr (complex too), eigh, svd and eig are our one-thread-per-matrix
    kernels (xforms/kernels/ops/linalg/jacobi.py, eig.py), a large Cholesky the block kernel."""
    from xforms import lax
    monkeypatch.setattr(vendor, "_bound", {})
    monkeypatch.setattr(vendor, "_libs", {})
    monkeypatch.setattr(vendor, "_SONAMES", {"cusolver": ("libxforms-no-such-cusolver.so",)})
    monkeypatch.setattr(vendor, "_find_pathfinder", lambda name: None)
    with caplog.at_level(logging.WARNING, logger=vendor.__name__):
        for _ in range(2):
            prog = _emit(lambda a: (lax.linalg.qr(a), lax.linalg.eigh(a), lax.linalg.svd(a),
                                    lax.linalg.eig(a)), np.eye(3) + 0j)
            assert "_rt.solve(" not in prog.source
            whats = " ".join(k.what for k in prog.kernels)
            for kind in ("Householder", "Jacobi", "one-sided Jacobi", "back-substitution"):
                assert kind in whats, (kind, whats)
        assert "Householder" in _emit(lambda a: lax.linalg.qr(a), np.eye(3)).source
        # a large Cholesky falls back to the block kernel
        prog = _emit(lambda a: lax.linalg.cholesky(a), np.eye(vendor.SOLVER_MIN_N))
    assert "_rt.solve(" not in prog.source
    assert sum("cusolver was not found" in r.getMessage() for r in caplog.records) == 1


def test_the_binding_against_the_installed_library():
    """Where libcusolver can be loaded, every routine the rules use binds for every dtype;
    without a driver the first call fails as an error naming cuSOLVER's status."""
    from xforms.kernels.cuda import cuda_available
    if cuda_available():
        pytest.skip("a GPU is present: tests/cuda/test_gpu_solver.py calls the library")
    lib = vendor._find("cusolver")
    if lib is None:
        pytest.skip("libcusolver is not installed here")
    s = cusolver.Cusolver(lib)
    for routine in ROUTINES:                      # (geev: one generic symbol for all)
        for dt in LETTER:
            s.bind(routine, dt)
    with pytest.raises(cusolver.CusolverError, match="cuSOLVER cusolverDnCreate failed"):
        s.run(SolverCall("potrf", "float64", 4, 4, 0, 1, 16), 0, {"info": 0},
              lambda n, dt: 0, context=1, stream=0)
