"""Every environment flag xforms and kernels read, in one place (documented in docs/flags.md).

Flags read at import are constants; the functions read the environment on each call, so a
running program (or a test's monkeypatch) may change them.
"""
import os


def _flag(name, default="0"):
    return os.environ.get(name, default).strip().lower() in ("1", "true", "yes", "on")


ENABLE_CHECKS = _flag("XFORMS_ENABLE_CHECKS")      # type-check every IR a transform produces
DUMP = _flag("XFORMS_DUMP")                        # print fusion plans and generated file paths
DISABLE_JIT = _flag("XFORMS_DISABLE_JIT")          # run generated modules as plain Python
DISABLE_CACHE = _flag("XFORMS_DISABLE_CACHE")      # no on-disk compile cache
# XFORMS_SCALARIZE=0: keep small arrays as arrays in compiled CPU code (xforms/kernels/prepare/scalarize.py)
SCALARIZE = os.environ.get("XFORMS_SCALARIZE", "1").strip().lower() not in (
    "0", "false", "no", "off")
# XFORMS_VECMATH=0: libm instead of xforms/kernels/libm/vecmath.py in fused CPU loops (read at import)
VECMATH = os.environ.get("XFORMS_VECMATH", "1").strip().lower() not in ("0", "false", "no",
                                                                         "off")


def gc_pause():
    """XFORMS_GC_PAUSE=0: keep Python's cyclic garbage collector running while jit traces
    and compiles (xforms/exec/gc_pause.py); read at each new signature."""
    return os.environ.get("XFORMS_GC_PAUSE", "1").strip().lower() not in ("0", "false", "no",
                                                                          "off")


def backend():
    """XFORMS_BACKEND ("cpu", "cuda", or another registered name), or None: the default
    backend `jit` uses."""
    return os.environ.get("XFORMS_BACKEND", "").strip().lower() or None


def cuda_simulator():
    """NUMBA_ENABLE_CUDASIM=1: the CUDA backend runs on Numba's simulator."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def cache_disabled():
    """XFORMS_DISABLE_CACHE, as set at import or now."""
    return DISABLE_CACHE or _flag("XFORMS_DISABLE_CACHE")


def tiered():
    """XFORMS_TIERED (default on): a CPU jit function's new signature starts on the fast
    tier while a background process compiles it (xforms/exec/tiered.py)."""
    return os.environ.get("XFORMS_TIERED", "1").strip().lower() not in ("0", "false", "no",
                                                                        "off")


def tiered_wait():
    """XFORMS_TIERED_WAIT: seconds a later call of a signature waits for its background
    compile when the fast tier is much slower than compiled code (xforms/exec/tiered.py);
    default 120, 0: never wait."""
    v = os.environ.get("XFORMS_TIERED_WAIT", "").strip()
    try:
        return float(v) if v else 120.0
    except ValueError:
        raise ValueError(f"XFORMS_TIERED_WAIT must be a number of seconds, got {v!r}") from None


def tiered_max_eager():
    """XFORMS_TIERED_MAX_EAGER: a fixed limit on the equations one eager evaluation may
    execute for a program to start on the fast tier, or None (tiered.py's cost model)."""
    v = os.environ.get("XFORMS_TIERED_MAX_EAGER", "").strip()
    try:
        return int(v) if v else None
    except ValueError:
        return None


def blas_threads():
    """BLAS threads for products in compiled CPU code -> (fixed, count).  XFORMS_BLAS_THREADS
    (a positive number) fixes the count; OPENBLAS_NUM_THREADS or OMP_NUM_THREADS leave
    OpenBLAS its own setting (count None); otherwise (False, None): the count follows the
    machine's load (xforms/kernels/runtime/blas_threads.py)."""
    v = os.environ.get("XFORMS_BLAS_THREADS", "").strip()
    if v.isdigit() and int(v) > 0:
        return True, int(v)
    if v or any(os.environ.get(k, "").strip() for k in ("OPENBLAS_NUM_THREADS",
                                                         "OMP_NUM_THREADS")):
        return True, None
    return False, None


def shape_symbols():
    """XFORMS_SHAPE_SYMBOLS: "batch" (default: a CPU kernel reads its inputs' leading sizes
    at run time, so a new batch size reuses the compiled code; xforms/kernels/prepare/shape_symbols.py),
    "all" (every input size), or "off" (0/false/no/off: sizes are constants)."""
    v = os.environ.get("XFORMS_SHAPE_SYMBOLS", "batch").strip().lower()
    if v in ("0", "false", "no", "off", ""):
        return "off"
    return "all" if v == "all" else "batch"


def jit_cache_size(default=256):
    """XFORMS_JIT_CACHE_SIZE: compiled executables jit keeps in memory (0 or less: no
    bound; xforms/exec/exe_cache.py)."""
    v = os.environ.get("XFORMS_JIT_CACHE_SIZE", "").strip()
    try:
        return int(v) if v else default
    except ValueError:
        return default


def cuda_pool_bytes():
    """XFORMS_CUDA_POOL_MB: the CUDA memory pool's limit in bytes, or None (its default)."""
    v = os.environ.get("XFORMS_CUDA_POOL_MB", "").strip()
    return int(float(v) * (1 << 20)) if v else None


def product_blocks():
    """XFORMS_PRODUCT_BLOCKS=0: keep every matrix product a step of its own in CPU kernels
    instead of computing a short product inside its elementwise consumer loop, a block of
    rows at a time (xforms/kernels/plan/products.py; default on)."""
    return _flag("XFORMS_PRODUCT_BLOCKS", "1")


def vector_width():
    """XFORMS_VECTOR_WIDTH: "auto" (default: 512-bit vectors in compiled CPU kernels where
    the CPU has AVX-512, xforms/kernels/numba_fixes/vector_width.py), a width in bits (128, 256, 512), or
    "native" (LLVM's own choice; it prefers 256 bits on Intel's AVX-512 cores).  Read when
    kernels is imported."""
    v = os.environ.get("XFORMS_VECTOR_WIDTH", "auto").strip().lower() or "auto"
    return v if v in ("auto", "native", "128", "256", "512") else "auto"


def cuda_fast_launch():
    """XFORMS_CUDA_FAST_LAUNCH=1: launch CUDA kernels through xforms/kernels/cuda/launch.py's direct
    launcher instead of numba-cuda's dispatcher.  Off by default until it has been measured
    and checked on a real GPU (it is written against numba-cuda 0.30's kernel ABI)."""
    return _flag("XFORMS_CUDA_FAST_LAUNCH")


def cuda_vendor_threshold(name, default):
    """The size from which the CUDA backend hands an operation to NVIDIA's library rather
    than its own kernel (xforms/kernels/cuda/vendor/__init__.py, where the measured defaults
    live): XFORMS_CUDA_GEMM_MIN_WORK (multiply-adds, batch x M x N x K, of a dot_general) or
    XFORMS_CUDA_FFT_MIN_POINTS (elements an fft transforms) or XFORMS_CUDA_SOLVER_MIN_N (the
    order of a Cholesky's or LU's matrices); 0 sends every case the library takes.  Read at each compile."""
    v = os.environ.get(name, "").strip()
    return int(v) if v.isdigit() else default


def buffer_cache_bytes():
    """XFORMS_BUFFER_CACHE_MB (default 1024): memory that compiled CPU functions may keep
    between calls for their intermediates and large outputs (xforms/kernels/cpu/buffers.py); 0
    keeps none.  Read on each new buffer set, so a running program may change it."""
    v = os.environ.get("XFORMS_BUFFER_CACHE_MB", "").strip()
    try:
        mb = float(v) if v else 1024.0
    except ValueError:
        mb = 1024.0
    return int(max(mb, 0.0) * (1 << 20))


def cache_dir():
    d = os.environ.get("XFORMS_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "xforms")


def ir_cache_size(default=4096):
    """XFORMS_IR_CACHE_SIZE: traced and transformed programs each in-memory cache of the IR
    toolkit keeps (0 or less: no bound; xforms/core/memo.py)."""
    v = os.environ.get("XFORMS_IR_CACHE_SIZE", "").strip()
    try:
        return int(v) if v else default
    except ValueError:
        return default
