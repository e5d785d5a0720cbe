"""The vector width of xforms' compiled CPU kernels: 512 bits where the CPU has AVX-512.

Why: LLVM tunes Intel's AVX-512 cores "prefer-256-bit" (Skylake-X lowered its clock for wide
instructions), so Numba's loops use 256-bit registers although 512-bit ones exist.  A
generated kernel is a long stream of arithmetic (the polynomials of kernels/vecmath*.py)
where twice the lanes per instruction pays.  Measured 2026-11-28 on the project's 2-core
Xeon VM (AVX-512, LLVM names it rocketlake), one thread, 4096 elements in L1, ns per element,
256 -> 512 bits: float64 tanh 0.86 -> 0.67, exp 0.90 -> 0.61, log 1.32 -> 0.92; float32
tanh 0.26 -> 0.21, exp 0.44 -> 0.30.  Upstream: Numba leaves LLVM's choice (its own tests
ask for `-prefer-256-bit` off to see zmm registers, numba/numba#5757).

How: while xforms compiles a kernel (`compiling()`: the kernel, its prange bodies and the
runtime helpers first compiled for it), every function of each LLVM module Numba builds gets
the attribute ``"prefer-vector-width"="512"``, which LLVM's X86 backend reads per function.
A user's own ``@njit`` code is compiled as Numba would.  The direct LLVM path asks its
target machine for the width instead (`tuning`), so that every function of its modules gets
it: the attribute on the kernel alone left the threaded chunks (functions of their own,
launched on OpenMP's team) at 256 bits on the Xeon VM (issue #37, session 32).  ``XFORMS_VECTOR_WIDTH`` chooses:
``auto`` (512 where AVX-512 is usable, else LLVM's choice), a width in bits, or ``native``
(LLVM's choice everywhere).  The choice is part of the kernel cache key (xforms/kernels/build/codecache.py).

Runtime alias checks: a fused loop that writes many arrays (a scan's forward sweep storing
each step's residuals: 16 outputs, 20 inputs) needs hundreds of pointer-overlap checks
before LLVM may vectorise it, above LLVM's cap of 128 (`-vectorize-memory-check-threshold`),
so the LSTM gradient's gate loop ran scalar: exp, tanh and the divisions one lane at a
time.  While a kernel compiles (`compiling()`, in any thread; the direct LLVM path's
engine: `alias_checks()`) the cap is `MEMORY_CHECKS`; the checks run once per entry of an
inner loop, against its whole trip.  The option is
LLVM's process-wide state: it is restored when the last kernel compile ends.

    >>> with compiling():
    ...     numba.njit("float64(float64[:])")(total)    # its loops may use zmm registers
"""
import contextlib
import threading

from xforms import config

_state = threading.local()


def _usable_avx512():
    """Whether Numba's target (the host, or NUMBA_CPU_FEATURES) has AVX-512F with 512-bit
    registers enabled.  Read as Numba reads them (`numba.core.config.CPU_FEATURES`, else
    the host's through llvmlite) without importing Numba: the direct LLVM path's kernels
    ask for this width too, and a program it compiles never loads Numba."""
    import os
    feats = os.environ.get("NUMBA_CPU_FEATURES")
    if feats is None and os.environ.get("NUMBA_CPU_NAME", "").lower() == "generic":
        feats = ""
    try:
        if feats is None:
            import llvmlite.binding as ll
            feats = ll.get_host_cpu_features().flatten()
    except Exception:           # no host features from this llvmlite: leave LLVM its choice
        return False
    feats = feats.split(",")
    return "+avx512f" in feats and "-evex512" not in feats


def _choose():
    v = config.vector_width()
    if v == "native":
        return None
    if v == "auto":
        return 512 if _usable_avx512() else None
    return int(v)


#: the width compiled kernels ask for, in bits; None: LLVM's own choice
WIDTH = _choose()
_ATTRIBUTE = None if WIDTH is None else f'"prefer-vector-width"="{WIDTH}"'


# X86 tuning flags that set a target machine's preferred width for every function it compiles
_TUNING = {512: "-prefer-256-bit,-prefer-128-bit", 256: "+prefer-256-bit,-prefer-128-bit",
           128: "+prefer-128-bit"}


def tuning(features, width=WIDTH):
    """`features` (a target machine's, "+avx2,+fma,...") with the X86 tuning flags that make
    `width` the preferred vector width of every function the machine compiles -- the direct
    LLVM path's engine (xforms/kernels/cpu/llvm/engine.py): its kernels' threaded chunks and
    eager kernels are functions of their own, which a per-function attribute misses.
    Unchanged for LLVM's own choice (`width` None) and off X86 (no "+sse2").

        >>> tuning("+sse2,+avx512f", 512)
        '+sse2,+avx512f,-prefer-256-bit,-prefer-128-bit'
    """
    if width not in _TUNING or "+sse2" not in features.split(","):
        return features
    return f"{features},{_TUNING[width]}"


#: LLVM's cap on a loop's runtime alias checks while kernels compile (LLVM's own: 128)
MEMORY_CHECKS, _LLVM_MEMORY_CHECKS = 1024, 128
_compiles = {"n": 0}
_compiles_lock = threading.Lock()


@contextlib.contextmanager
def compiling():
    """Numba modules built inside this block (in this thread) get the kernel width; loops
    of any module built meanwhile may take up to `MEMORY_CHECKS` alias checks."""
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    try:
        with alias_checks():
            yield
    finally:
        _state.depth = depth


@contextlib.contextmanager
def alias_checks():
    """Loops of any LLVM module optimised inside this block may take up to `MEMORY_CHECKS`
    runtime alias checks (the direct LLVM path's engine optimises its kernels inside it:
    xforms/kernels/cpu/llvm/engine.py; `compiling` for Numba's).

        >>> with alias_checks():
        ...     optimise(module)        # a scan body storing 16 residuals: vectorised
    """
    _count_compile(+1)
    try:
        yield
    finally:
        _count_compile(-1)


def _count_compile(step):
    """Raise LLVM's alias-check cap when the first kernel compile starts, restore it when
    the last ends."""
    with _compiles_lock:
        before = _compiles["n"]
        _compiles["n"] = before + step
        if (before, step) in ((0, 1), (1, -1)):
            _set_memory_checks(MEMORY_CHECKS if step > 0 else _LLVM_MEMORY_CHECKS)


def _set_memory_checks(n):
    try:
        import llvmlite.binding as ll
        ll.set_option("", f"-vectorize-memory-check-threshold={n}")
    except Exception:           # another LLVM without the option: its own cap stays
        pass


def _tag(ir_module):
    """Give every function defined in `ir_module` the width attribute (llvmlite's attribute
    set only accepts LLVM's keyword attributes, hence `set.add`; it prints the string as is)."""
    for fn in ir_module.functions:
        if not fn.is_declaration:
            set.add(fn.attributes, _ATTRIBUTE)


def install():
    """Wrap Numba's CPU `add_ir_module`, the one door of every lowered module into a code
    library, to tag modules built inside `compiling()` (none while the width is LLVM's
    choice, `_ATTRIBUTE` None).  Nothing is wrapped if Numba's code no longer has that door."""
    from numba.core import codegen
    original = getattr(codegen.CPUCodeLibrary, "add_ir_module", None)
    if original is None or getattr(original, "_xforms_width", False):
        return

    def add_ir_module(self, ir_module):
        if _ATTRIBUTE is not None and getattr(_state, "depth", 0):
            _tag(ir_module)
        return original(self, ir_module)

    add_ir_module._xforms_width = True
    add_ir_module.__wrapped__ = original       # xforms/kernels/numba_fixes/registry.py reads it
    codegen.CPUCodeLibrary.add_ir_module = add_ir_module
