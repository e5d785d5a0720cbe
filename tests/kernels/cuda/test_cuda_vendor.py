"""The CUDA backend's vendor layer without a GPU (xforms/kernels/cuda/vendor/): the
dot_general -> cuBLAS GEMM mapping checked against a NumPy model of the BLAS contract, the
precision -> compute-type rule, and the fallback to the tile kernel where cuBLAS is absent.
The calls on a real GPU: tests/cuda/test_gpu_vendor.py (XFORMS_CUDA_TESTS=gpu)."""
import dataclasses
import importlib.util
import itertools
import logging
import os
import sys

import numpy as np
import pytest

from xforms.kernels.cuda import vendor
from xforms.kernels.cuda.vendor.fft_map import C2R, FftPlan, Z2D, fft_plan
from xforms.kernels.cuda.vendor.gemm_map import (COMPUTE_32F, COMPUTE_32F_FAST_TF32,
                                                 COMPUTE_64F, OP_N, OP_T, Gemm, compute_type,
                                                 gemm_for)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cuda"))
from vendor_model import fft_plan_many, gemm_strided_batched  # noqa: E402  (tests/cuda/)

RNG = np.random.default_rng(0)
DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def _reference(x, y, dn):
    (lc, rc), (lb, rb) = dn
    xf = [d for d in range(x.ndim) if d not in lc and d not in lb]
    yf = [d for d in range(y.ndim) if d not in rc and d not in rb]
    xt = np.transpose(x, list(lb) + xf + list(lc))
    yt = np.transpose(y, list(rb) + list(rc) + yf)
    nb = len(lb)
    bs, fx, fy = xt.shape[:nb], xt.shape[nb:nb + len(xf)], yt.shape[nb + len(rc):]
    k = int(np.prod(xt.shape[nb + len(xf):]))
    out = np.matmul(xt.reshape(bs + (-1, k)), yt.reshape(bs + (k, -1)))
    return out.reshape(bs + fx + fy)


def _via_model(g, x, y, dtype):
    """dot_general computed the way the backend asks cuBLAS to: A is y's flat buffer, B is
    x's, C the C-contiguous output buffer."""
    out = np.full(g.batch * g.m * g.n, np.nan, dtype)
    gemm_strided_batched(g, y.ravel(), x.ravel(), out)
    return out


def _patterns():
    """Every dot_general layout the tile kernel receives for operands of rank <= 3 with at
    most one batch axis: which axes are batch, contracting and free on each side, in
    every order (the backend hands dot_general over with whatever dimension numbers the
    transforms and the transpose folding produced)."""
    sizes = (2, 3, 4, 5)
    for nb, nc in itertools.product((0, 1), (1, 2)):
        for fx, fy in itertools.product((1, 2), (1, 2)):
            rx, ry = nb + nc + fx, nb + nc + fy
            if max(rx, ry) > 3 + nb:
                continue
            for px in itertools.permutations(range(rx)):
                for py in itertools.permutations(range(ry)):
                    lb, lc = px[:nb], px[nb:nb + nc]
                    rb, rc = py[:nb], py[nb:nb + nc]
                    xs, ys = [0] * rx, [0] * ry
                    for i, (a, b) in enumerate(zip(lb + lc, rb + rc)):
                        xs[a] = ys[b] = sizes[i % 2] if i < nb else sizes[(i + 1) % 4]
                    for d in px[nb + nc:]:
                        xs[d] = 3
                    for d in py[nb + nc:]:
                        ys[d] = 4
                    yield tuple(xs), tuple(ys), ((lc, rc), (lb, rb))


PATTERNS = sorted(set(_patterns()))


def test_every_layout_gemm_expresses_matches_the_blas_model():
    mapped = 0
    for xs, ys, dn in PATTERNS:
        g = gemm_for(xs, ys, dn)
        if g is None:
            continue
        mapped += 1
        x, y = RNG.standard_normal(xs), RNG.standard_normal(ys)
        np.testing.assert_allclose(_via_model(g, x, y, np.float64),
                                   _reference(x, y, dn).ravel(), rtol=1e-12,
                                   err_msg=f"{xs} . {ys} {dn}: {g}")
    # pinned: of 961 layouts, 120 are one GEMM (the rest have a batch axis innermost, or
    # free or contracted axes that another axis splits); a change to the mapping that takes
    # or refuses more updates these numbers, and the check above keeps what it takes right
    assert (len(PATTERNS), mapped) == (961, 120)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_and_no_conjugation(dtype):
    xs, ys, dn = (2, 4, 3), (2, 5, 3), (((2,), (2,)), ((0,), (0,)))      # x @ y^T, batched
    x = (RNG.standard_normal(xs) + 1j * RNG.standard_normal(xs)).astype(dtype) \
        if np.dtype(dtype).kind == "c" else RNG.standard_normal(xs).astype(dtype)
    y = (RNG.standard_normal(ys) - 2j * RNG.standard_normal(ys)).astype(dtype) \
        if np.dtype(dtype).kind == "c" else RNG.standard_normal(ys).astype(dtype)
    g = gemm_for(xs, ys, dn)
    assert (g.transa, g.transb) == (OP_T, OP_N)
    got = _via_model(g, x, y, dtype).reshape(2, 4, 5)
    np.testing.assert_allclose(got, np.einsum("bmk,bnk->bmn", x, y),
                               rtol=1e-5 if np.dtype(dtype).itemsize <= 8 else 1e-12)


@pytest.mark.parametrize("xs, ys, dn, want", [
    # plain x @ y: C^T = y^T x^T, both as they lie
    ((3, 4), (4, 5), (((1,), (0,)), ((), ())), Gemm(OP_N, OP_N, 5, 3, 4, 5, 4, 5, 0, 0, 15, 1)),
    # x^T @ y and x @ y^T: transposed operands read in place
    ((4, 3), (4, 5), (((0,), (0,)), ((), ())), Gemm(OP_N, OP_T, 5, 3, 4, 5, 3, 5, 0, 0, 15, 1)),
    ((3, 4), (5, 4), (((1,), (1,)), ((), ())), Gemm(OP_T, OP_N, 5, 3, 4, 4, 4, 5, 0, 0, 15, 1)),
    # a batch axis in the middle of y: a strided batch with a wide leading dimension
    ((2, 3, 4), (4, 2, 5), (((2,), (0,)), ((0,), (1,))),
     Gemm(OP_N, OP_N, 5, 3, 4, 10, 4, 5, 5, 12, 15, 2)),
    # two contracting axes merge into one K
    ((3, 2, 4), (2, 4, 5), (((1, 2), (0, 1)), ((), ())),
     Gemm(OP_N, OP_N, 5, 3, 8, 5, 8, 5, 0, 0, 15, 1)),
])
def test_gemm_parameters_of_common_layouts(xs, ys, dn, want):
    assert gemm_for(xs, ys, dn) == want


@pytest.mark.parametrize("xs, ys, dn", [
    ((3, 4, 2), (4, 5, 2), (((1,), (0,)), ((2,), (2,)))),    # batch innermost: no unit stride
    ((3, 4, 5), (4, 6), (((1,), (0,)), ((), ()))),            # free axes 0, 2 split by K
    ((4, 3, 4), (4, 4, 5), (((0, 2), (0, 1)), ((), ()))),     # contracting axes split by M
])
def test_layouts_one_gemm_cannot_express_fall_back(xs, ys, dn):
    assert gemm_for(xs, ys, dn) is None


def test_compute_type_follows_jax_precision():
    assert compute_type(np.float32) == COMPUTE_32F_FAST_TF32               # DEFAULT: TF32
    assert compute_type(np.complex64, "high") == COMPUTE_32F_FAST_TF32
    assert compute_type(np.float32, "highest") == COMPUTE_32F
    assert compute_type(np.float32, ("default", "highest")) == COMPUTE_32F
    from xforms import lax
    assert compute_type(np.complex64, lax.Precision.HIGHEST) == COMPUTE_32F
    for dt in (np.float64, np.complex128):
        assert compute_type(dt) == compute_type(dt, "highest") == COMPUTE_64F


# ---- fft -> one cuFFT plan ----------------------------------------------------------------------
FFTS = [(kind, shape, lengths, single) for kind in ("FFT", "IFFT", "RFFT", "IRFFT")
        for shape, lengths in [((8,), (8,)), ((3, 9), (9,)), ((2, 4, 6), (4, 6)),
                               ((2, 3, 4, 5), (3, 4, 5)), ((5, 2, 7), (7,))]
        for single in (True, False)]


_KINDS = {(True, "f"): np.float32, (True, "c"): np.complex64,
          (False, "f"): np.float64, (False, "c"): np.complex128}


def _fft_operand(kind, shape, lengths, single):
    if kind == "IRFFT":                      # the operand holds the last axis' n//2 + 1 bins
        shape = shape[:-1] + (lengths[-1] // 2 + 1,)
    x = RNG.standard_normal(shape)
    if kind != "RFFT":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(_KINDS[single, x.dtype.kind])


@pytest.mark.parametrize("kind, shape, lengths, single", FFTS)
def test_fft_plans_match_the_cufft_model(kind, shape, lengths, single):
    """Plan, execution on the flat buffers, then the host's scaling: lax.fft's result."""
    x = _fft_operand(kind, shape, lengths, single)
    p = fft_plan(kind, x.shape, x.dtype, lengths)
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    want = {"FFT": lambda: np.fft.fftn(x, axes=axes), "IFFT": lambda: np.fft.ifftn(x, axes=axes),
            "RFFT": lambda: np.fft.rfftn(x, axes=axes),
            "IRFFT": lambda: np.fft.irfftn(x, s=lengths, axes=axes)}[kind]()
    buf = x.ravel().copy()
    out = np.full(want.size, np.nan, _KINDS[single, want.dtype.kind])
    fft_plan_many(p, buf, out)
    np.testing.assert_allclose(out * p.scale, want.ravel(), rtol=1e-4 if single else 1e-11,
                               atol=1e-4 if single else 1e-11)
    # the model, like cuFFT, may overwrite a complex-to-real transform's input: only those
    # plans ask the host code to copy the operand first
    assert p.copy_input == (p.type in (C2R, Z2D)) == (kind == "IRFFT")
    assert p.batch == int(np.prod(shape[:len(shape) - len(lengths)]))


def test_ffts_cufft_does_not_take_stay_in_the_dft_kernel():
    assert fft_plan("FFT", (2, 2, 2, 2), np.complex64, (2, 2, 2, 2)) is None   # rank 4
    assert fft_plan("FFT", (0, 8), np.complex64, (8,)) is None                 # empty
    assert fft_plan("IFFT", (3, 8), np.complex128, (8,)) == FftPlan(
        1, (8,), 3, 0x69, 1, 1 / 8, False)


# ---- the backend's choice (needs numba-cuda to emit CUDA source; no GPU) -----------------------
needs_numba_cuda = pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                                      reason="numba-cuda is not installed")


def _emit(f, *args, vendor_on=True):
    import xforms as xf
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program
    spec = dataclasses.replace(rt.spec_for((9, 0), sms=132), vendor=vendor_on)
    return emit_program(xf.make_jaxpr(f)(*args), spec, "f")


@pytest.fixture
def no_libraries(monkeypatch):
    monkeypatch.setattr(vendor, "_bound", {})
    monkeypatch.setattr(vendor, "_libs", {})
    monkeypatch.setattr(vendor, "_SONAMES", {n: (f"libxforms-no-such-{n}.so",)
                                             for n in ("cublas", "cufft")})
    monkeypatch.setattr(vendor, "_find_pathfinder", lambda name: None)


@needs_numba_cuda
def test_without_the_libraries_the_own_kernels_compute_and_each_absence_is_logged_once(
        no_libraries, caplog):
    import xforms.numpy as xnp
    x, y = np.ones((128, 256), np.float32), np.ones((256, 128), np.float32)
    z = np.ones((8, 1024), np.complex64)
    with caplog.at_level(logging.WARNING, logger=vendor.__name__):
        first = _emit(lambda a, b: (a @ b, b @ a), x, y)
        _emit(lambda a, b: a @ b * 2.0, x, y)
        ffts = _emit(lambda z: (xnp.fft.fft(z), xnp.fft.ifft(z)), z)
    assert "_rt.gemm" not in first.source and "_rt.fft" not in ffts.source
    assert sum("dot_general:" in k.what for k in first.kernels) == 2
    assert sum("direct DFT" in k.what for k in ffts.kernels) == 2
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 2 and "cublas was not found" in logged[0] \
        and "cufft was not found" in logged[1], logged


@needs_numba_cuda
def test_with_cublas_large_products_become_one_gemm_call(monkeypatch):
    monkeypatch.setattr(vendor, "_bound", {"cublas": object()})       # present; nothing is called
    monkeypatch.delenv("XFORMS_CUDA_GEMM_MIN_WORK", raising=False)
    x, y = np.ones((128, 256), np.float32), np.ones((128, 128), np.float32)
    prog = _emit(lambda a, b: (a.T @ b, a[:8, :8] @ b[:8, :8]), x, y)
    g = gemm_for((128, 256), (128, 128), (((0,), (0,)), ((), ())))
    # JAX's default precision on a GPU: TF32 for float32
    assert f"_rt.gemm({tuple(g)}, 'float32', {COMPUTE_32F_FAST_TF32}," in prog.source
    from xforms import lax
    dn = (((0,), (0,)), ((), ()))
    highest = _emit(lambda a, b: lax.dot_general(a, b, dn, precision="highest"), x, y)
    assert f"_rt.gemm({tuple(g)}, 'float32', {COMPUTE_32F}," in highest.source
    # the small product stays a fused tile kernel (below GEMM_MIN_WORK)
    assert [k.what.split(":")[0] for k in prog.kernels].count("dot_general") == 1
    monkeypatch.setenv("XFORMS_CUDA_GEMM_MIN_WORK", "0")
    prog = _emit(lambda a, b: (a.T @ b, a[:8, :8] @ b[:8, :8]), x, y)
    assert prog.source.count("_rt.gemm(") == 2 and not any(
        "dot_general" in k.what for k in prog.kernels)
    # the simulator's spec (and compile_ptx's) never calls a library
    assert "_rt.gemm" not in _emit(lambda a, b: a.T @ b, x, y, vendor_on=False).source


@needs_numba_cuda
def test_with_cufft_large_transforms_become_one_plan_execution(monkeypatch):
    import xforms.numpy as xnp
    monkeypatch.setattr(vendor, "_bound", {"cufft": object()})       # present; nothing is called
    monkeypatch.delenv("XFORMS_CUDA_FFT_MIN_POINTS", raising=False)
    z, r = np.ones((8, 1024), np.complex64), np.ones((8, 1024), np.float64)
    prog = _emit(lambda z, r: (xnp.fft.ifft(z), xnp.fft.irfft(z), xnp.fft.rfft(r),
                               xnp.fft.fft(z[:2, :8])), z, r)
    lines = [ln.strip() for ln in prog.source.split("def host(")[1].splitlines()]
    calls = [ln for ln in lines if ln.startswith("_rt.fft(")]
    plans = [fft_plan("IFFT", (8, 1024), np.complex64, (1024,)),
             fft_plan("IRFFT", (8, 1024), np.complex64, (2046,)),
             fft_plan("RFFT", (8, 1024), np.float64, (1024,))]
    assert len(calls) == 3 and all(c.startswith(f"_rt.fft({tuple(p)}, ")
                                   for c, p in zip(calls, plans)), calls
    # IRFFT's operand is copied first (cuFFT may overwrite it); both inverses are scaled
    irfft = lines.index(calls[1])
    assert lines[irfft - 1].startswith("_rt.copy_into(") and "_W[" in calls[1]
    assert sum(k.what.startswith("scale the cuFFT") for k in prog.kernels) == 2
    # the 16-point transform stays a direct DFT kernel (below FFT_MIN_POINTS)
    assert sum("direct DFT" in k.what for k in prog.kernels) == 1


def test_the_bindings_against_the_installed_libraries():
    """Where libcublas and libcufft can be loaded (a CUDA machine, or NVIDIA's wheels on the
    loader's path) their symbols bind with our signatures; without a driver the first call
    fails as an error naming the library's status, not a crash."""
    from xforms.kernels.cuda import cuda_available
    from xforms.kernels.cuda.vendor.cublas import Cublas, CublasError
    from xforms.kernels.cuda.vendor.cufft import Cufft, CufftError
    if cuda_available():
        pytest.skip("a GPU is present: tests/cuda/test_gpu_vendor.py calls the libraries")
    libs = {name: vendor._find(name) for name in ("cublas", "cufft")}
    if None in libs.values():
        pytest.skip(f"not installed here: {[n for n, lib in libs.items() if lib is None]}")
    g = gemm_for((64, 32), (32, 16), (((1,), (0,)), ((), ())))
    with pytest.raises(CublasError, match="cuBLAS cublasCreate failed with status"):
        Cublas(libs["cublas"]).gemm(g, np.float64, COMPUTE_64F, 0, 0, 0, context=1, stream=0)
    p = fft_plan("RFFT", (4, 64), np.float32, (64,))
    with pytest.raises(CufftError, match=r"cuFFT cufftPlanMany\(1, \(64,\), 4, 42"):
        Cufft(libs["cufft"]).run(p, 0, 0, context=1, stream=0)


# ---- library objects per CUDA context (vendor/contexts.py) ----------------------------------
class _RecordingLib:
    """Stands in for libcublas/libcufft/libcusolver: every symbol returns status 0, hands out
    a new handle where the first argument is a pointer to one, and is recorded by name."""

    def __init__(self):
        self.calls, self._next = [], 100

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def fn(*args):
            if args and type(args[0]).__name__ == "CArgObject":
                self._next += 1
                args[0]._obj.value = self._next
            self.calls.append(name)
            return b"ok" if name.endswith("GetStatusString") else 0
        setattr(self, name, fn)
        return fn

    def count(self, name):
        return self.calls.count(name)


def _bindings(lib):
    from xforms.kernels.cuda.vendor.cublas import Cublas
    from xforms.kernels.cuda.vendor.cufft import Cufft
    from xforms.kernels.cuda.vendor.cusolver import Cusolver
    from xforms.kernels.cuda.vendor.solver_map import SolverCall
    g = gemm_for((64, 32), (32, 16), (((1,), (0,)), ((), ())))
    p, q = fft_plan("RFFT", (4, 64), np.float32, (64,)), fft_plan("FFT", (2, 8), np.complex64,
                                                                   (8,))
    blas, fft, solver = Cublas(lib), Cufft(lib), Cusolver(lib)
    potrf = tuple(SolverCall("potrf", "float64", 4, 4, 0, 1, 16, 0))

    def call(context, stream=3):
        blas.gemm(g, np.float64, COMPUTE_64F, 1, 2, 3, context=context, stream=stream)
        fft.run(p, 1, 2, context=context, stream=stream)
        fft.run(q, 1, 2, context=context, stream=stream)
        solver.run(potrf, 1, {"info": 2}, lambda n, dt: 5, context=context, stream=stream)
    return call


def test_library_objects_live_in_their_context_and_are_destroyed_at_exit():
    """A handle or plan per context, made once; a new context (numba.cuda.close() and a new
    one: the same driver handle, a new serial) gets new ones, the old forgotten (their context
    freed them); at exit (close_all) the current context's are destroyed, once each."""
    from xforms.kernels.cuda.vendor import contexts
    lib = _RecordingLib()
    call = _bindings(lib)
    made = ("cublasCreate_v2", "cufftPlanMany", "cusolverDnCreate")
    call((7, 1))
    call((7, 1))
    assert [lib.count(m) for m in made] == [1, 2, 1]
    assert lib.count("cublasSetStream_v2") == lib.count("cusolverDnSetStream") == 1
    call((7, 1), stream=4)                       # rebinding to a new stream, no new handle
    assert [lib.count(m) for m in made] == [1, 2, 1]
    assert lib.count("cublasSetStream_v2") == 2
    call((7, 2))                                 # the same handle value, a new context
    assert [lib.count(m) for m in made] == [2, 4, 2]
    assert lib.count("cublasDestroy_v2") == lib.count("cufftDestroy") == 0
    contexts.close_all()
    assert [lib.count(d) for d in ("cublasDestroy_v2", "cufftDestroy", "cusolverDnDestroy")] \
        == [1, 2, 1]
    contexts.close_all()                         # nothing left to destroy twice
    assert lib.count("cufftDestroy") == 2
    call((7, 2))                                 # and a call after it makes new ones
    assert [lib.count(m) for m in made] == [3, 6, 3]


def test_the_context_key_tells_a_new_context_from_a_closed_one(monkeypatch):
    """runtime._context_key: numba's Context object decides, not the driver's handle, which
    the primary context may get again after numba.cuda.close()."""
    from xforms.kernels.cuda import runtime as rt

    class Ctx:
        def __init__(self, handle):
            self.handle = handle
    now = [Ctx(7)]
    monkeypatch.setattr(rt, "cuda", type("FakeCuda", (), {
        "current_context": staticmethod(lambda: now[0])}))
    first = rt._context_key()
    assert rt._context_key() == first and first[0] == 7
    now[0] = Ctx(7)                              # closed and made again, same handle
    second = rt._context_key()
    assert second[0] == 7 and second != first
    now[0] = Ctx(9)
    assert rt._context_key() not in (first, second)


def test_an_emitters_checkpoint_restores_its_state_in_place():
    """block_loop re-emits a refused loop from `CudaEmitter.checkpoint()`: what was emitted
    since is undone, and the builders and containers that callers hold stay the objects
    the emitter uses (an outer loop's `host`, emit_plan's saved `bound`)."""
    from xforms.kernels.cuda.device.spec import spec_for
    from xforms.kernels.cuda.printer.emit import CudaEmitter
    em = CudaEmitter(spec_for((8, 0)))
    em.line("A = B")
    em.mem[np.dtype(np.float32)] = [0, 64]
    host, bound, mem, slot = em.host, em.bound, em.mem, em.mem[np.dtype(np.float32)]
    state = em.checkpoint()
    with em.block("for _i1 in range(3):"):
        em.line("_K[0](A)")
    em.bound.add("v")
    slot[1] += 128
    em.launches.append(("k0", 1, 8))
    em.loop_modes = ["grid"]
    em.restore(state)
    assert em.host is host and em.bound is bound and em.mem is mem and mem[np.dtype(np.float32)] is slot
    assert host.lines == ["    A = B"] and host.depth == 1
    assert bound == set() and slot == [0, 64] and em.launches == []
    assert not hasattr(em, "loop_modes")
