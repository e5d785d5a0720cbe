"""Compile every kernel the CUDA test matrix generates to PTX for real GPUs (compute
capabilities 8.0 and 9.0) with numba-cuda and NVVM, without a GPU and without the simulator:
code that only the simulator accepts fails here.

    python tests/cuda/ptx_check.py            # prints one line per program, exits 1 on failure
    python tests/cuda/ptx_check.py NAME...    # those programs only (tests/cuda/programs.py;
                                              # a NAME ending in ':' every one it begins;
                                              # bench: the GPU table's, public: every public
                                              # linalg/fft function's, only on request)
    python tests/cuda/ptx_check.py --nsw      # int64 arithmetic wraps: no `nsw` in its IR

Run by tests/kernels/cuda/test_cuda_sim.py in its own process (NUMBA_ENABLE_CUDASIM must be unset).
Kernels with the same text, signature and called device functions are compiled once (in
the matrix no two are: 685 distinct of 685 launched); each kernel is typed and lowered once
and its NVVM IR compiled for both architectures: sm_80 with NVVM's full optimisation, as
numba-cuda compiles on a GPU, sm_90 at -opt=0 (see OPT).  The VENDOR programs (and the GPU table's,
benchmarks/on_gpu.sh: `_bench_programs`) are emitted as for a GPU with cuBLAS, cuFFT and
cuSOLVER (xforms/kernels/cuda/vendor/; the libraries are only named, never called), so that
the kernels around their calls (the inverse FFTs' scaling, the
factorisations' transposing copies and devInfo checks) compile too.
"""
import dataclasses
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

CCS = ((8, 0), (9, 0))
# NVVM's optimisation level per architecture: the first gets numba-cuda's own (-opt=3, as on a
# GPU); the others are code generation of the same IR (-opt=0): what differs between sm_80
# and sm_90 is instruction selection and libdevice's __nvvm_reflect paths, which -opt=0 runs
# on every instruction, while the optimiser's passes are the same for both.  (-opt=3 again
# was 22% of the check: 87 of 389 CPU s; -opt=0 is about a quarter of that.)
OPT = {CCS[0]: None, CCS[1]: 0}


def ptx_for_ccs(fn, sig, ccs, opt=OPT):
    """PTX of one kernel for several compute capabilities, typing and lowering it once;
    `opt`: NVVM's optimisation level per capability (None: numba-cuda's)."""
    from numba import cuda
    try:
        lib = _compiled_library(fn, sig, ccs[0])
        return [_ptx(lib, cc, opt.get(cc)) for cc in ccs]
    except ImportError:          # another numba-cuda version: the public API, once per cc
        return [cuda.compile_ptx(fn, sig, cc=cc)[0] for cc in ccs]


def _ptx(lib, cc, opt):
    """The PTX of a compiled library for `cc`, at NVVM optimisation level `opt`."""
    if opt is None:
        return lib.get_asm_str(cc=cc)
    from numba.cuda.cudadrv import nvrtc, nvvm
    options = dict(lib._nvvm_options, arch=nvrtc.get_arch_option(*cc), opt=opt)
    return nvvm.compile_ir(lib.llvm_strs, **options).decode().strip("\x00").strip()


def _compiled_library(fn, sig, cc):
    from numba.cuda.compiler import _compile_pyfunc_with_fixup
    lib, _ = _compile_pyfunc_with_fixup(
        fn, sig, debug=None, lineinfo=False, device=False, fastmath=False, cc=cc, opt=None,
        abi="numba", abi_info=None, forceinline=False, launch_bounds=None, lto=False)
    return lib


def _wrap_program(x, y):
    """int64 arithmetic that may overflow: elementwise, a literal operand, a cube, sums and
    products along both axes (a thread's loop, the block's tree) and of everything."""
    import xforms.numpy as xnp
    return (x + y, x * y - x, 3 - x, x ** 3, x ** 41, xnp.sum(x, axis=0), xnp.prod(y, axis=1),
            xnp.sum(x * y))


def signed_wrap_flags(dtype):
    """`nsw` (no signed wrap) flags in the NVVM IR of `_wrap_program`'s kernels at `dtype`.
    Numba's own index arithmetic carries some; float64's count is that part alone, so int64
    arithmetic that wraps (printer/scalar.wrapping_int64) has the same count.

        signed_wrap_flags(np.int64) == signed_wrap_flags(np.float64)
    """
    import re
    import numpy as np
    import xforms as xf
    from xforms.kernels.build import codecache
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program
    x = np.arange(4 * 40, dtype=dtype).reshape(4, 40)
    program = emit_program(xf.make_jaxpr(_wrap_program)(x, x), rt.spec_for(CCS[0], sms=132))
    mod, _, _ = codecache.load_module(program.source)
    sigs, flags = program.signatures(), 0
    for k in program.kernels:
        if k.name in program.launched:
            ir = _compiled_library(getattr(mod, k.name), sigs[k.name].args, CCS[0]).get_llvm_str()
            flags += len(re.findall(r"= (?:add|sub|mul) nsw ", ir))
    return flags


def _toolchain_missing():
    """Why numba-cuda cannot compile PTX here (no NVVM or NVRTC library), or None."""
    from numba import cuda, float64

    def probe(a):
        a[0] = 1.0
    try:
        cuda.compile_ptx(probe, (float64[::1],), cc=CCS[0])
    except Exception as e:
        text = f"{type(e).__name__}: {e}"
        if any(w in text.lower() for w in ("nvvm", "nvrtc", "dynamiclibnotfound")):
            return text.splitlines()[0] + (" (pip install nvidia-nvvm nvidia-cuda-nvrtc, "
                                           "or install the CUDA toolkit)")
        raise
    return None


def _vendor_programs():
    """{name: (f, args, tol)} of programs whose products and transforms go to the libraries."""
    import numpy as np
    import xforms as xf
    import xforms.numpy as xnp
    z64, z128 = np.ones((4, 16), np.complex64), np.ones((4, 6, 8), np.complex128)
    w, x = np.ones((8, 8), np.float32), np.ones((4, 8), np.float32)
    tall, wide = np.ones((2, 5, 3), np.complex64), np.ones((3, 5), np.float64)
    from programs import lstm_grad
    lstm_args = ((np.ones((32, 512), np.float32), np.ones((128, 512), np.float32),
                  np.ones(512, np.float32)), np.ones((100, 32, 32), np.float32))
    linalg = lambda a: (xnp.linalg.cholesky(a), xnp.linalg.qr(a), xnp.linalg.eigh(a),  # noqa
                        xnp.linalg.svd(a), xnp.linalg.solve(a, a))
    svds = lambda a, b: (xnp.linalg.svd(a), xnp.linalg.svd(b, full_matrices=False),  # noqa
                         xnp.linalg.eig(b[:, :3]), xnp.linalg.eigvals(a[0, :3]))
    return {"vendor_linalg_f32": (linalg, (np.ones((2, 4, 4), np.float32),), 0),
            "vendor_linalg_c128": (linalg, (np.ones((4, 4), np.complex128),), 0),
            "vendor_svd": (svds, (tall, wide), 0),
            "vendor_fft_c64": (lambda z: (xnp.fft.ifft(z), xnp.fft.irfft(z)), (z64,), 0),
            "vendor_fft_c128": (lambda z: (xnp.fft.ifft2(z), xnp.fft.irfftn(z)), (z128,), 0),
            "vendor_mlp_grad": (xf.grad(lambda w, x: xnp.sum(xnp.tanh(x @ w) ** 2)), (w, x), 0),
            # cliffs' LSTM (32 x 128 x 512 a step, 100 steps): each scan one cooperative grid
            # launch, its products in the tile kernel (vendor.loop_gemm_max_work)
            "vendor_lstm_grad": (xf.grad(lstm_grad), lstm_args, 0),
            "vendor_lstm_forward": (lstm_grad, lstm_args, 0),
            **_conv_programs()}


def _conv_programs():
    """conv_families' programs in float32 and one in complex64, each convolution as im2col
    + cuBLAS (XFORMS_CUDA_CONV_PATH=library): the im2col, weight-copy and permutation
    kernels around the calls ("conv_gemm:<family>")."""
    import numpy as np
    from conv_families import FAMILIES, program
    out = {}
    for name, fam in FAMILIES.items():
        f, args = program(*fam)
        out[f"conv_gemm:{name}"] = (f, tuple(a.astype(np.float32) for a in args), 0)
    f, args = program(*FAMILIES["batch_groups"])
    out["conv_gemm:complex64"] = (f, tuple((a + 1j).astype(np.complex64) for a in args), 0)
    return out


def _bench_programs():
    """{name: (f, args, tol)} of the xforms functions of on_gpu.sh's GPU table at --quick's
    GPU sizes (each workload's cases, "bench:<workload>:<task> <params>:<system>"), emitted as
    on a GPU with the libraries: the lease's programs compile before it starts."""
    from benchmarks import peers
    from benchmarks.harness import Context
    from benchmarks.workloads import load
    from test_bench_rows import gpu_table
    ctx, out = Context(quick=True, backend="cpu"), {}
    for workload in gpu_table():
        for case in load(workload).cases(ctx):
            data = case.make()
            for system, setup in case.systems.items():
                try:
                    prepared = setup(data)
                except peers.Absent:
                    continue
                fn, args = prepared if isinstance(prepared, tuple) else (prepared, ())
                if type(fn).__module__.startswith("xforms"):      # (not Numba's, NumPy's)
                    params = ",".join(f"{k}={v}" for k, v in case.params.items())
                    out[f"bench:{workload}:{case.task} {params}:{system}"] = (fn, args, 0)
    return out


def _public_programs():
    """{name: (f, args, tol)} of every public xforms.numpy.linalg, numpy.fft and scipy.linalg
    function as tests/cuda/test_public_linalg_fft.py calls it ("public:<module>:<name>"),
    emitted as on the simulator (our kernels; the libraries' are `vendor:`)."""
    import test_public_linalg_fft as t
    return {f"public:{module}:{name}": (f, args, 0)
            for module, table in (("linalg", t.LINALG), ("fft", t.FFT), ("scipy", t.SCIPY))
            for name, (f, args, _) in table.items()}


def kernel_key(program, kernel, sig):
    """What makes two kernels one compile: the text after the `def` line (the name differs),
    the signature, and the device functions it calls."""
    return "\n".join(kernel.lines[1:]), str(sig), _callees_text(program, kernel)


def _callees_text(program, kernel):
    """The device functions a block loop's kernel calls (`_d_<name>`: the kernels not
    launched and the definitions after the kernels), as text: part of the kernel's key,
    since the same loop text may call other bodies in another program; '' for a kernel
    that calls none."""
    if "_d_" not in "\n".join(kernel.lines):
        return ""
    inside = ["\n".join(k.lines) for k in program.kernels if k.name not in program.launched]
    after = program.source.split("\n".join(program.kernels[-1].lines), 1)[-1]
    return "\n".join(inside + [after.split("\ndef host(", 1)[0]])


class _Device:
    compute_capability = CCS[0]


def _pretend_device():
    """numba-cuda compiles a device function (block_loop.py's calls) for the current device's
    compute capability, asked of the driver: here one of CCS (its code is LLVM IR linked into
    each kernel, whose PTX is made for every CCS)."""
    from numba.cuda import dispatcher
    dispatcher.get_current_device = _Device


def _pretend_libraries():
    """As on a GPU with cuBLAS, cuFFT and cuSOLVER loaded, every size taken (emission only)."""
    from xforms.kernels.cuda import vendor
    for name in ("GEMM_MIN_WORK", "FFT_MIN_POINTS", "SOLVER_MIN_N"):
        os.environ[f"XFORMS_CUDA_{name}"] = "0"
    os.environ["XFORMS_CUDA_CONV_PATH"] = "library"
    vendor._bound.update({"cublas": object(), "cufft": object(), "cusolver": object()})


def main(names=None):
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        print("ptx_check: NUMBA_ENABLE_CUDASIM=1 is set; unset it to compile real PTX")
        return 2
    import xforms as xf
    from xforms.kernels.build import codecache
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program, lowering_error
    from programs import PROGRAMS, PTX_ONLY

    from xforms.kernels.numba_fixes import patches
    patches.apply_cuda()                # (as xforms' first compile for a GPU does)
    reason = _toolchain_missing()
    if reason:
        print(f"ptx_check: cannot compile PTX here: {reason}")
        return 3
    if names == ["--nsw"]:
        import numpy as np
        _pretend_device()
        counts = {t.__name__: signed_wrap_flags(t) for t in (np.int64, np.float64)}
        print(f"nsw flags in the NVVM IR: {counts}")
        return 0 if counts["int64"] == counts["float64"] else 1
    spec = rt.spec_for(CCS[0], sms=132)
    # (the GPU table's programs on request only, `bench:`: 209 kernels more, 1211 s at load
    # 20-35 on the 2-core VM, where the whole matrix took 2694 s)
    bench = _bench_programs() if any(n.startswith("bench:") for n in names or ()) else {}
    public = _public_programs() if any(n.startswith("public:") for n in names or ()) else {}
    VENDOR = {**_vendor_programs(), **bench}
    EVERY = {**PROGRAMS, **PTX_ONLY, **VENDOR, **public}
    _pretend_libraries()
    _pretend_device()
    seen, failures, n_kernels, t0 = set(), 0, 0, time.time()
    chosen = [n for n in EVERY if not names or n in names
              or any(a.endswith(":") and n.startswith(a) for a in names)]
    unknown = [a for a in names or () if not a.endswith(":") and a not in EVERY]
    if unknown:
        print(f"ptx_check: no program named {', '.join(unknown)}")
        return 1
    for name in chosen:
        f, args, _ = EVERY[name]
        try:
            closed = xf.make_jaxpr(f)(*args)
            program = emit_program(closed, dataclasses.replace(spec, vendor=name in VENDOR),
                                   name)
            mod, path, _ = codecache.load_module(program.source)
            sigs = program.signatures()
            new = 0
            for k in program.kernels:
                if k.name not in program.launched:     # (device functions: compiled inside)
                    continue
                key = kernel_key(program, k, sigs[k.name])
                if key in seen:
                    continue
                seen.add(key)
                try:
                    ptxes = ptx_for_ccs(getattr(mod, k.name), sigs[k.name].args, CCS)
                except Exception as e:
                    raise lowering_error(e, program, path, k) from None
                for cc, ptx in zip(CCS, ptxes):
                    if f".target sm_{cc[0]}{cc[1]}" not in ptx:
                        raise AssertionError(f"{k.name}: no PTX for sm_{cc[0]}{cc[1]}")
                new += 1
            n_kernels += new
            print(f"ok   {name}: {len(program.kernels)} kernels ({new} new)", flush=True)
        except Exception as e:
            failures += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
            traceback.print_exc(limit=-3)
    levels = ", ".join(f"sm_{a}{b}" + ("" if OPT.get((a, b)) is None else f" (-opt={OPT[a, b]})")
                       for a, b in CCS)
    print(f"{n_kernels} distinct kernels compiled to PTX for {levels} in "
          f"{time.time() - t0:.1f} s; "
          f"{failures} program(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
