"""Compiled kernels for one primitive called without `jit` (issue #31): an elementwise
primitive on complex arrays (x / y, exp, log, sqrt, |x|, ...), whose NumPy form is several
passes of XLA's formula (xforms/primitives/complex_arith/), or a real one declared with
`eager_kernel="f"` (erf_inv's ~75 passes, special functions where `jit`'s loop beats
scipy), runs as one shape-generic loop compiled once per (primitive, dtypes) by the CPU
backend (xforms/kernels/cpu/llvm/eager.py: the element function or loop body `jit`'s
loops run, so both tiers give the same bits).

The compiler sits above this layer: xforms/jit/backends.py installs `BUILD` (the backend's
builder) and `START` (where the build runs: on the background compile thread of
xforms/exec/tiered.py, `later`, while NumPy answers the calls; at once where tiering is
off, as `jit` compiles then); NumPy answers every call until the kernel is built (a later
call does not wait: the build's first part imports the compiler, ~0.25 s of CPU, which a
script of two or three such calls would not win back).  A call of fewer than MIN_ELEMENTS
elements starts no build (a kernel built already serves any size) -- but the
`eager_kernel_calls`-th call of a primitive declaring that fact (an integer kernel, so
NumPy's bits: the Threefry hash, ~100 NumPy passes on a key's two words); a refused or
failed build leaves the NumPy form.

    out = run(div_p, (x, y), lambda: numpy_divide(x, y))   # the kernel's, or NumPy's
    counts["kernel"]             # calls a kernel has answered
"""
import threading

import numpy as np

from ... import config

#: [fn(prim, dtypes) -> kernel or None], the backend's builder (xforms/jit/backends.py)
BUILD = []
#: [fn(job, head_start)]: runs `job()` now, or on the background compile thread once the
#: Event `head_start` is set (the asking call is over)
START = []
# a call this small starts no build: its NumPy passes cost microseconds
MIN_ELEMENTS = 4096
# calls a compiled kernel answered (tests read it: which path answered, never a timing)
counts = {"kernel": 0}

_MISSING = object()
_kernels = {}       # (prim, dtype, ...) -> kernel, an Event while built, None: refused
_small_calls = {}   # (prim, dtype, ...) -> calls below MIN_ELEMENTS (`_called_enough`)


def run(prim, xs, numpy_form, out=None):
    """`prim(*xs)` by its compiled kernel (written into `out` if given), or `numpy_form()`
    where there is none (yet) or the operands do not fit it."""
    try:
        key = (prim, *(x.dtype for x in xs))
    except AttributeError:           # (a Python scalar operand: NumPy's promotion decides)
        return numpy_form()
    k = _kernels.get(key, _MISSING)
    if k is _MISSING or type(k) is threading.Event:
        shape = _shape(xs)
        if shape is None or not BUILD or _size(shape) < MIN_ELEMENTS and not _called_enough(
                prim, key):
            return numpy_form()
        if type(k) is threading.Event:     # (being built: NumPy answers meanwhile)
            return numpy_form()
        k, head_start = _start(key)
        if head_start is not None:         # (the build waits for this call: `_start`)
            try:
                return numpy_form()
            finally:
                head_start.set()
    made = None if k is None else _call(k, xs, out)
    return numpy_form() if made is None else made


def _start(key):
    """Start building the kernel of `key` (START decides where) -> (the kernel if it is
    ready now, else None; an Event to set when this call is over, else None): a build on
    the compile thread waits for the call that asked for it, at most tiered's
    FIRST_CALL_HEAD_START, as a tiered `jit` compile waits for the first call (it holds
    the GIL while it translates: started beside the call, it slowed it 3x)."""
    if not config.eager_kernels():
        _kernels[key] = None
        return None, None
    done, head_start = threading.Event(), threading.Event()
    _kernels[key] = done

    def job():
        try:
            _kernels[key] = BUILD[0](key[0], key[1:])
        except BaseException:    # (a failed build costs speed, never a result)
            _kernels[key] = None
            raise
        finally:
            done.set()
    START[0](job, head_start)
    k = _kernels.get(key)
    return (None, head_start) if type(k) is threading.Event else (k, None)


def _called_enough(prim, key):
    """Whether this small call of `key` is the primitive's `eager_kernel_calls`-th (its
    kernel gives the NumPy form's bits, and that form is many passes at any size)."""
    limit = prim.facts.eager_kernel_calls
    if limit is None:
        return False
    n = _small_calls[key] = _small_calls.get(key, 0) + 1
    return n >= limit


def wait_built(timeout=None):
    """Wait for the builds started so far (at most `timeout` s each; None: no limit), as
    `jit(f).wait_compiled()` waits for a tiered compile: what a benchmark calls before it
    times the steady state (benchmarks/workloads/eager.py).

        >>> xnp.exp(z); wait_built(); state(exp_p, z.dtype)      # 'ready'
    """
    for k in list(_kernels.values()):
        if type(k) is threading.Event:
            k.wait(timeout)


def _call(k, xs, out):
    shape = _shape(xs)
    if shape is None:
        return None
    if out is not None and not (out.shape == shape and out.dtype == k.out_dtype
                                and out.flags.c_contiguous and out.flags.writeable):
        return None
    ops = []
    for x in xs:
        if not isinstance(x, np.ndarray):
            x = np.asarray(x)
        if x.shape != shape:            # (a rank-0 operand beside an array)
            x = np.full(shape, x, x.dtype)
        elif not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
        ops.append(x)
    counts["kernel"] += 1
    return k(out, *ops)


def _shape(xs):
    """The result's shape: the operands' one shape, rank-0 ones aside; None if they differ."""
    shape = ()
    for x in xs:
        s = np.shape(x)
        if s != ():
            if shape != () and s != shape:
                return None
            shape = s
    return shape


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def state(prim, *dtypes):
    """"ready", "building", "refused" or "not asked" for the kernel of `prim` on `dtypes`.

        >>> state(div_p, np.dtype(np.complex64), np.dtype(np.complex64))
        'ready'
    """
    key = (prim, *(np.dtype(d) for d in dtypes))
    if key not in _kernels:
        return "not asked"
    k = _kernels[key]
    return ("building" if type(k) is threading.Event else "refused" if k is None
            else "ready")


def forget():
    """Drop every kernel (and refusal): the next large call builds again (tests)."""
    _kernels.clear()
