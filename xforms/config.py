"""Every environment flag xforms and kernels read, in one place (documented in docs/flags.md).

Flags read at import are constants; the functions read the environment on each call, so a
running program (or a test's monkeypatch) may change them.
"""
import contextlib
import os
import threading


def _flag(name, default="0"):
    return os.environ.get(name, default).strip().lower() in ("1", "true", "yes", "on")


ENABLE_CHECKS = _flag("XFORMS_ENABLE_CHECKS")      # type-check every IR a transform produces
DUMP = _flag("XFORMS_DUMP")                        # print fusion plans and generated file paths
DISABLE_JIT = _flag("XFORMS_DISABLE_JIT")          # run generated modules as plain Python
DISABLE_CACHE = _flag("XFORMS_DISABLE_CACHE")      # no on-disk compile cache
# XFORMS_SCALARIZE=0: keep small arrays as arrays in compiled CPU code (xforms/kernels/prepare/scalarize.py)
SCALARIZE = os.environ.get("XFORMS_SCALARIZE", "1").strip().lower() not in (
    "0", "false", "no", "off")
# XFORMS_VECMATH=0: libm instead of xforms/kernels/libm/vecmath/__init__.py in fused CPU loops (read at import)
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


def preload():
    """XFORMS_PRELOAD: whether `import xforms` starts importing the compiler package on a
    thread of its own (xforms/jit/backends.py `preload`): "1" always, "0" never, unset or
    "auto" where a core is idle (the 1-minute load below the cores less a half)."""
    v = os.environ.get("XFORMS_PRELOAD", "auto").strip().lower() or "auto"
    if v in ("0", "false", "no", "off"):
        return "never"
    return "auto" if v == "auto" else "always"


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
    machine's load (xforms/kernels/runtime/products/blas_threads.py)."""
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


def llvm_kernels():
    """XFORMS_LLVM_KERNELS=0: compile every CPU kernel with Numba; by default a program in the
    direct path's class (straight-line float32/float64 scalar code, fused loops, reductions
    and matrix products over float32/float64 arrays) is lowered to LLVM IR directly and
    compiled with llvmlite, skipping Numba's front end (xforms/kernels/cpu/llvm/).  Read per
    compile."""
    return _flag("XFORMS_LLVM_KERNELS", "1")


def llvm_parts():
    """XFORMS_LLVM_PARTS: the most modules a large direct-path kernel is cut into, compiled at
    once on as many threads (xforms/kernels/cpu/llvm/parts/); "auto": the cores this process
    may use (up to 4); default 1, every kernel compiled whole, until a quiet machine shows the
    parts' wall-clock gain (session 34 measured a loss with no idle core: block grad cold
    compile 0.92/1.04 s whole, 1.12/1.76 s cut, load 6 on 2 cores).  Read per compile."""
    v = os.environ.get("XFORMS_LLVM_PARTS", "1").strip().lower() or "1"
    if v == "auto":
        return None
    try:
        return max(1, int(v))
    except ValueError:
        raise ValueError(f"XFORMS_LLVM_PARTS must be a count or 'auto', got {v!r}") from None


def eager_kernels():
    """XFORMS_EAGER_KERNELS=0: un-jitted complex operations keep their NumPy formulas; by
    default a large one compiles one shape-generic kernel per primitive and dtypes
    (xforms/core/eager/kernels.py; off with XFORMS_LLVM_KERNELS=0 too).  Read per new kernel."""
    return _flag("XFORMS_EAGER_KERNELS", "1") and llvm_kernels()


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


def cuda_graphs():
    """Are CUDA graphs on in this thread (`use_cuda_graphs`, whose default is
    XFORMS_CUDA_GRAPHS=1 read once at import)?  The CUDA call path asks on every call: one
    global read while no setting turns them on (a benchmark compares both settings in one
    process through `xf.config.update("xforms_cuda_graphs", ...)` or a `with` block)."""
    return bool(cuda_graphs_on) and use_cuda_graphs.value


def cuda_vendor_threshold(name, default):
    """The size from which the CUDA backend hands an operation to NVIDIA's library rather
    than its own kernel (xforms/kernels/cuda/vendor/__init__.py, where the measured defaults
    live): XFORMS_CUDA_GEMM_MIN_WORK (multiply-adds, batch x M x N x K, of a dot_general) or
    XFORMS_CUDA_FFT_MIN_POINTS (elements an fft transforms) or XFORMS_CUDA_SOLVER_MIN_N (the
    order of a Cholesky's or LU's matrices) or XFORMS_CUDA_SPECTRAL_MIN_N (of a qr's, eigh's,
    svd's or eig's: the larger side); 0 sends every case the library takes.  Read at each compile."""
    v = os.environ.get(name, "").strip()
    return int(v) if v.isdigit() else default


def cuda_conv_path():
    """XFORMS_CUDA_CONV_PATH: "library" runs every convolution cuBLAS can take as im2col +
    GEMM, "own" none (the direct kernel); unset or anything else, the size rule of
    xforms/kernels/cuda/vendor/__init__.py decides.  Read at each compile."""
    return os.environ.get("XFORMS_CUDA_CONV_PATH", "").strip().lower()


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


# ---- JAX's configuration options (jax.config.update, jax.debug_nans(...), ...) ----------------
class State:
    """One of JAX's configuration options: `.value` is its setting in this thread (a `with
    state(v):` block's, else the global one, which `update(name, v)` sets); calling it
    gives that block.  Every state listed in `_STATES` is read where its docstring says.

        >>> with xf.debug_nans(True):
        ...     xf.config.debug_nans.value          # True in this thread only
    """

    def __init__(self, name, default, check, doc, counter=None, on=bool, traced=False):
        self.name, self._global, self._check = name, default, check
        self._default = default
        self._counter, self._on = counter, on      # (a module global counting "on" settings)
        self.traced = traced     # part of a trace's key (`trace_context`), as in JAX's jit
        self._local = threading.local()
        self.__doc__ = doc
        # (found by the API docs; jax2tf_associative_scan_reductions has no "jax_")
        self.__name__ = self.__qualname__ = name[4:] if name.startswith("jax_") else name

    @property
    def value(self):
        stack = getattr(self._local, "stack", None)
        return stack[-1] if stack else self._global

    def _set_global(self, value):
        old, self._global = self._global, self._check(self.name, value)
        _count(self, self._on(self._global) - self._on(old))
        if self.traced:
            _count_traced(self, old, self._global)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        new_val = self._check(self.name, new_val)
        stack = self._local.__dict__.setdefault("stack", [])
        stack.append(new_val)
        _count(self, self._on(new_val))
        if self.traced:
            _count_traced(self, self._default, new_val)
        try:
            yield
        finally:
            stack.pop()
            _count(self, -self._on(new_val))
            if self.traced:
                _count_traced(self, new_val, self._default)

    def __bool__(self):
        raise TypeError(f"bool() of the option {self.name}: read its setting as "
                        f"`.value` (`xf.{self.name[4:]}` is a context manager)")

    def __repr__(self):
        return f"State({self.name}={self.value!r})"


def _boolean(name, v):
    if not isinstance(v, (bool, int)) or v not in (0, 1):
        raise ValueError(f"{name} takes True or False, got {v!r}")
    return bool(v)


def _only(value, why):
    """A check for an option xforms supports at one setting: `why` says what it lacks."""
    def check(name, v):
        v = _boolean(name, v) if isinstance(value, bool) else v
        if v != value:
            raise NotImplementedError(f"{name}={v!r}: {why}")
        return v
    return check


def _one_of(*options):
    def check(name, v):
        v = None if v is None else str(v).lower() if isinstance(v, str) else v
        if v not in options:
            raise ValueError(f"{name} takes one of {options}, got {v!r}")
        return v
    return check


# How many settings turn a float check (strict dtype promotion, ...) on: the global one and
# each open block in any thread.  The hot paths read these module globals first, and the
# states only while one is non-zero (as core/jit_switch.active).  `float_checks` also counts
# no_execution: both are checked where an eager or jitted call runs.
float_checks = 0
leak_checks = 0
key_reuse_checks = 0
strict_promotion = 0
trace_options = 0       # settings of the options that change what a function traces to
f16_refusals = 0        # settings of allow_f16_reductions=False (eager programs step aside)
CUDA_GRAPHS = _flag("XFORMS_CUDA_GRAPHS")          # (read once: use_cuda_graphs' default)
cuda_graphs_on = int(CUDA_GRAPHS)
_count_lock = threading.Lock()


def _count(state, delta):
    if delta and state._counter is not None:
        with _count_lock:
            globals()[state._counter] += delta


def _count_traced(state, old, new):
    """Keep `trace_options` = how many settings of traced options differ from their default."""
    delta = (new != state._default) - (old != state._default)
    if delta:
        global trace_options
        with _count_lock:
            trace_options += delta


def trace_context():
    """The settings of the options that change a trace (rank and dtype promotion, the default
    matmul precision), as a tuple for trace and executable cache keys: JAX keys jit's caches on
    them, so a function jitted under one setting is traced again under another.  `()` while
    every one is at its default (the common case costs one global read).

        >>> with xf.numpy_rank_promotion("raise"):
        ...     config.trace_context()          # (("jax_numpy_rank_promotion", "raise"),)
    """
    if not trace_options:
        return ()
    return tuple((s.name, s.value) for s in (*_STATES.values(), lowering_platform)
                 if s.traced and s.value != s._default)


debug_nans = State("jax_debug_nans", False, _boolean, counter="float_checks", doc="""\
Raise FloatingPointError("invalid value (nan) encountered in <primitive>") when a
computation produces a NaN: checked after every primitive evaluated eagerly (op by op, and
each equation of a program on jit's fast tier; an equation inside a scan/while/cond body is
checked through the loop's outputs), and on the outputs of every jitted call, whose program
is then re-run on the fast tier to name the equation (as JAX re-runs the de-optimized
version); inputs that are NaN already are not reported.""")
debug_infs = State("jax_debug_infs", False, _boolean, counter="float_checks", doc="""\
As debug_nans, for infinities ("invalid value (inf) encountered in <primitive>").""")
log_compiles = State("jax_log_compiles", False, _boolean, """\
Log (logger "xforms.jit", level WARNING; DEBUG while off) each compile jit starts: the
function's name, its argument shapes and the backend, on the first call of each signature
(also for a compile running in the background on the tiered CPU path).""")
default_matmul_precision = State(
    "jax_default_matmul_precision", None,
    _one_of(None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
            "bfloat16_3x", "tensorfloat32_3x", "fastest", "ANY_F8_ANY_F8_F32"),
    traced=True, doc="""\
The precision of products (`dot_general`) and convolutions that name none, as JAX's:
"default"/"bfloat16"/"fastest" are DEFAULT, "high"/"tensorfloat32"/"bfloat16_3x" HIGH,
"highest"/"float32"/"tensorfloat32_3x" HIGHEST.  It is read when a product is traced (jit
traces again under another setting).  The CPU backend computes every product in the
operands' full precision whatever it says, as JAX's CPU backend does; on CUDA, float32 and
complex64 products and convolutions that go to cuBLAS use TF32 tensor cores at DEFAULT and
HIGH and full float32 at HIGHEST (JAX's GPU rule).""")
numpy_rank_promotion = State("jax_numpy_rank_promotion", "allow",
                             _one_of("allow", "warn", "raise"), traced=True, doc="""\
What xforms.numpy's broadcasting does when the operands of one operation have different
ranks (non-scalar): "allow" (NumPy's rule), "warn" (a UserWarning) or "raise" (a
ValueError), as JAX's jax_numpy_rank_promotion.  Checked wherever xforms.numpy broadcasts
operands (its functions, and the operators of traced values under jit, grad or vmap); the
operators of eager arrays are NumPy's own (xforms' eager arrays are NumPy arrays) and follow
NumPy's rule.""")
numpy_dtype_promotion = State(
    "jax_numpy_dtype_promotion", "standard", _one_of("standard", "strict"),
    counter="strict_promotion", on=lambda v: v == "strict", traced=True, doc="""\
"standard" (JAX's promotion lattice) or "strict": operands of different dtypes raise
xf.dtypes.TypePromotionError, but for weakly typed Python scalars that fit (an int with any
number, a float with floats and complexes, a complex with complexes), as JAX's
jax_numpy_dtype_promotion.  Checked where xforms.numpy promotes operands (its functions and
the operators of traced values; not eager arrays' operators, which are NumPy's).""")

explain_cache_misses = State("jax_explain_cache_misses", False, _boolean, """\
Log (logger "xforms.jit", level WARNING) why a jitted function has no executable for a call
and traces it again: a function never called before, or how the call's signature differs
from the closest one seen (argument structure, an argument leaf's shape and dtype or Python
type, static arguments, traced options), as JAX's TRACING CACHE MISS.""")

no_tracing = State("jax_no_tracing", False, _boolean, """\
Raise RuntimeError when `jit` traces a function (a call whose signature has no trace yet), as
JAX's: a guard that a loop runs compiled code only. xforms' eager operations are NumPy calls,
not jitted ones, so they still run (in JAX they are traced too, and raise).""")

# ---- JAX's other top-level options: honoured where xforms has the mechanism, else accepted
# at the settings where JAX computes the same numbers (each doc says which) ----------------
enable_checks = State("jax_enable_checks", ENABLE_CHECKS, _boolean, doc="""\
Type-check every program a transform produces (core/trace.check_jaxpr after each simplify:
every equation's avals re-derived, each variable defined once), as JAX's invariant checks;
slower.  The default is XFORMS_ENABLE_CHECKS.""")
check_tracer_leaks = State("jax_check_tracer_leaks", False, _boolean, counter="leak_checks",
                           doc="""\
When a trace ends (jit, grad, vmap, make_jaxpr, ...: every trace of a user function), raise
UnexpectedTracerError("Leaked trace ...") naming the function and what holds its tracers if
one of them outlived it, as JAX's leak checker (it runs the garbage collector: slow).""")
debug_key_reuse = State("jax_debug_key_reuse", False, _boolean, counter="key_reuse_checks",
                        doc="""\
Raise errors.KeyReuseError when a typed key (random.key) that a random function has consumed
is passed to one again (or the same element of a key array is sliced out again), eagerly
and while tracing, as JAX's.  key_data and clone do not consume; raw uint32 keys are not
tracked (as in JAX).  Unlike JAX, a key passed into a jitted function is not marked
consumed outside it.""")
legacy_prng_key = State("jax_legacy_prng_key", "allow", _one_of("allow", "warn", "error"),
                        doc="""\
What random functions do with a raw uint32 key (random.PRNGKey's): "allow", "warn" (a
UserWarning) or "error" (ValueError), with JAX's message.""")
enable_custom_prng = State("jax_enable_custom_prng", False, _boolean, doc="""\
random.PRNGKey returns a typed key (as random.key), as in JAX; xforms has no custom PRNG
implementations to register.""")
default_prng_impl = State(
    "jax_default_prng_impl", "threefry2x32",
    _only("threefry2x32", "xforms has the threefry2x32 PRNG only (rbg, unsafe_rbg, "
          "threefry4x32 and philox would give other numbers)"), doc="""\
The PRNG of random.key/PRNGKey: "threefry2x32" only (JAX's default).""")
threefry_partitionable = State(
    "jax_threefry_partitionable", True,
    _only(True, "xforms implements the partitionable Threefry only (JAX's default since 0.5;"
          " the old one would give other numbers)"), doc="""\
True only: xforms' Threefry is the partitionable one, JAX's default.""")
softmax_custom_jvp = State("jax_softmax_custom_jvp", False, _boolean, doc="""\
Accepted; no effect: xforms.nn.softmax has one derivative rule, equal to both of JAX's
(they differ in rounding only).""")
allow_f16_reductions = State("jax_allow_f16_reductions", True, _boolean,
                             counter="f16_refusals", on=lambda v: not v, doc="""\
False: reduce_sum of a float16 operand raises ValueError, as JAX's (xnp.sum and xnp.mean
sum float16 in float32, and are not refused).""")
jax2tf_scan_reductions = State(          # (xf.jax2tf_associative_scan_reductions)
    "jax2tf_associative_scan_reductions", False, _boolean, doc="""\
Accepted; no effect (it chooses jax2tf's lowering of cumulative reductions; xforms has no
jax2tf).""")
# (the API docs find it by this module's name for it: `config.<JAX name>` reads the value)
jax2tf_scan_reductions.__name__ = jax2tf_scan_reductions.__qualname__ = "jax2tf_scan_reductions"
array_garbage_collection_guard = State(
    "jax_array_garbage_collection_guard", None, _one_of(None, "allow", "log", "fatal"), doc="""\
Accepted; no effect: xforms' arrays are NumPy arrays (or CUDA DeviceArrays) freed by
reference counting; no device buffer waits for the cyclic collector as JAX's may.""")
thread_guard = State("jax_thread_guard", False, _boolean, doc="""\
Accepted; no effect: xforms' multi-process operations (pmap over MPI) are not checked for
the thread that calls them.""")
no_execution = State("jax_no_execution", False, _boolean, counter="float_checks", doc="""\
Raise RuntimeError when a jitted function or an eager operation would run, as JAX's;
tracing (make_jaxpr, eval_shape, jit(...).lower) still works.""")
remove_size_one_mesh_axis_from_type = State(
    "jax_remove_size_one_mesh_axis_from_type", False, _boolean, doc="""\
Accepted; no effect: xforms' array types carry no sharding.""")

# xforms' own (not a JAX option): the platform a trace is for, which lax.platform_dependent
# reads; jit sets "cuda" while it traces for the CUDA backend (a traced option: such traces
# are cached apart from the CPU's)
lowering_platform = State("xforms_lowering_platform", "cpu", _one_of("cpu", "cuda"),
                          traced=True, doc="""\
The platform the program being traced will run on: "cpu" (eager code, the fast tier and the
CPU backend) or "cuda" (set by jit while it traces for the CUDA backend).""")

# xforms' own: replay a jitted CUDA call's launches as one CUDA graph (xforms/kernels/cuda/graph/)
use_cuda_graphs = State("xforms_cuda_graphs", CUDA_GRAPHS, _boolean, counter="cuda_graphs_on",
                        doc="""\
Replay a jitted CUDA call's launches as one CUDA graph once it has run
(xforms/kernels/cuda/graph/).  The default is XFORMS_CUDA_GRAPHS=1, read once at import;
`config.update("xforms_cuda_graphs", True)` or `with xf.config.use_cuda_graphs(True):`
change it in a running program.  Off by default until measured on a real GPU.""")

def _cache_bytes(name, v):
    if isinstance(v, bool) or not isinstance(v, int) or v < -1:
        raise ValueError(f"{name} takes a number of bytes, or -1 for no bound; got {v!r}")
    return v


def _cache_bytes_default():
    v = os.environ.get("XFORMS_CACHE_MAX_SIZE", "").strip()
    try:
        return _cache_bytes("XFORMS_CACHE_MAX_SIZE", int(v)) if v else 2 ** 30
    except ValueError:
        return 2 ** 30


# JAX's option; its default there is -1 (no bound) because JAX's disk cache is off until a
# folder is set, while xforms' is on by default: 1 GiB (about 10,000 kernels)
compilation_cache_max_size = State(
    "jax_compilation_cache_max_size", _cache_bytes_default(), _cache_bytes, doc="""\
Bytes the disk compile cache may hold (xforms/kernels/build/cache_size.py); past it the
entries used least recently are deleted.  -1: no bound.  The default is
XFORMS_CACHE_MAX_SIZE (bytes), else 1 GiB.""")

_GUARD_LEVELS = _one_of(None, "allow", "log", "disallow", "log_explicit", "disallow_explicit")
_GUARD_DOC = """\
The transfer guard for {} copies: "allow", "log" (log implicit copies), "disallow"
(refuse implicit ones), "log_explicit", "disallow_explicit" (all copies); None: the
overall jax_transfer_guard's.  Honoured by the CUDA backend: implicit copies are a NumPy
argument of a jitted call and np.asarray/float/repr of a DeviceArray; explicit ones are
device_put and device_get.  On the CPU backend arrays live in host memory and no copy
happens."""
transfer_guard_host_to_device = State("jax_transfer_guard_host_to_device", None,
                                      _GUARD_LEVELS, doc=_GUARD_DOC.format("host-to-device"))
transfer_guard_device_to_host = State("jax_transfer_guard_device_to_host", None,
                                      _GUARD_LEVELS, doc=_GUARD_DOC.format("device-to-host"))
transfer_guard_device_to_device = State("jax_transfer_guard_device_to_device", None,
                                        _GUARD_LEVELS,
                                        doc=_GUARD_DOC.format("device-to-device"))
_transfer_guard = State("jax_transfer_guard", None, _GUARD_LEVELS, doc=_GUARD_DOC.format("all"))


def check_execution(what):
    """RuntimeError under xf.no_execution(True): `what` ("jit(f)", "jit(sin)") would run."""
    if no_execution.value:
        raise RuntimeError(f"xforms tried to execute function {what}, but the no_execution "
                           "config option is set")


def checking_leaks():
    """`check_tracer_leaks(True)`, as JAX's `jax.checking_leaks()`.

        >>> with xf.checking_leaks():
        ...     xf.jit(f)(x)
    """
    return check_tracer_leaks(True)


@contextlib.contextmanager
def transfer_guard(new_val):
    """Set the transfer guard of every direction in this block, as `jax.transfer_guard`.

        >>> with xf.transfer_guard("disallow"):
        ...     y = f_on_cuda(xf.device_put(x, backend="cuda"))   # explicit: allowed
    """
    with contextlib.ExitStack() as stack:
        for state in (transfer_guard_host_to_device, transfer_guard_device_to_device,
                      transfer_guard_device_to_host, _transfer_guard):
            stack.enter_context(state(new_val))
        yield


def transfer_level(state):
    """The guard level in force for one direction's state: its own, else the overall one."""
    v = state.value
    return v if v is not None else (_transfer_guard.value or "allow")


_STATES = {s.name: s for s in (
    debug_nans, debug_infs, log_compiles, default_matmul_precision, numpy_rank_promotion,
    numpy_dtype_promotion, explain_cache_misses, no_tracing, enable_checks,
    check_tracer_leaks, debug_key_reuse, legacy_prng_key, enable_custom_prng,
    default_prng_impl, threefry_partitionable, softmax_custom_jvp, allow_f16_reductions,
    jax2tf_scan_reductions, array_garbage_collection_guard, thread_guard,
    no_execution, remove_size_one_mesh_axis_from_type, use_cuda_graphs,
    compilation_cache_max_size,
    transfer_guard_host_to_device,
    transfer_guard_device_to_host, transfer_guard_device_to_device, _transfer_guard)}


def __getattr__(name):
    """`xf.config.jax_debug_nans`: an option's setting in this thread, as `jax.config.X`."""
    if name in _STATES:
        return _STATES[name].value
    raise AttributeError(f"module 'xforms.config' has no attribute {name!r}")


def update(name, value):
    """Set JAX's option `name` ("jax_debug_nans", ...) globally, as `jax.config.update`.

        >>> xf.config.update("jax_debug_nans", True)
    """
    if name == "jax_enable_x64":
        if not value:
            raise NotImplementedError("jax_enable_x64=False: xforms has no 32-bit mode; it "
                                      "always follows JAX's 64-bit mode")
        return
    state = _STATES.get(name)
    if state is None:
        known = ", ".join(sorted(_STATES) + ["jax_enable_x64"])
        raise AttributeError(f"xforms.config.update: unknown or unsupported option {name!r} "
                             f"(xforms has: {known})")
    state._set_global(value)
