"""Which bundled OpenBLAS computes compiled code's matrix-vector products (gemv).

NumPy and SciPy each ship an OpenBLAS of their own, often of different releases: here
NumPy 2.4's is 0.3.31 (64-bit integers, symbols `scipy_?gemv_64_`), SciPy 1.17's 0.3.30,
the one Numba's `np.dot` and both CPU paths called.  0.3.31 has a new AVX-512 `dgemv_n`
kernel: a product of a 10^4 x 100 row-major matrix's transpose with a vector (`x.T @ q`,
half of a Newton-CG iteration's work) takes 1.48x the cycles in SciPy's (perf samples,
one thread, 2026-11-29), the other shapes within 5% of each other.  `choice()` names the
newer build's gemv for each float type: NumPy's when its version is strictly higher, else
SciPy's (None: Numba's own call); both paths (cpu_runtime's `_blas_call` and
xforms/kernels/cpu/llvm/ops/linalg/products.py) call what it names, so their results stay equal bit
for bit.  NumPy's routines are bound as LLVM symbols `xf_blas64_sgemv` / `xf_blas64_dgemv`
whenever they exist, so that a kernel in Numba's disk cache that calls one links in any
process with the same NumPy.

    >>> choice("double")          # NumPy's OpenBLAS newer than SciPy's
    'xf_blas64_dgemv'
"""
import ctypes
import threading

import numpy as np

from ..threads import bundled_openblas

_SYM = "xf_blas64_{}gemv"
_KINDS = {"float": "s", "double": "d"}
_lock = threading.Lock()
_state = {}


def _version(lib, suffix):
    """OpenBLAS's release as a tuple of ints, from its config string, or None."""
    f = getattr(lib, f"scipy_openblas_get_config{suffix}", None)
    if f is None:
        return None
    f.restype = ctypes.c_char_p
    words = (f() or b"").decode(errors="replace").split()
    if len(words) < 2 or words[0] != "OpenBLAS":
        return None
    try:
        return tuple(int(p) for p in words[1].split(".")[:3])
    except ValueError:
        return None


def _load():
    """{kind: address of NumPy's ILP64 ?gemv}, NumPy's version, SciPy's version."""
    addresses, mine, theirs = {}, None, None
    for path in bundled_openblas("numpy", "*openblas64*.so*"):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        found = {k: getattr(lib, f"scipy_{c}gemv_64_", None) for k, c in _KINDS.items()}
        if all(f is not None for f in found.values()):
            addresses = {k: ctypes.cast(f, ctypes.c_void_p).value for k, f in found.items()}
            mine = _version(lib, "64_")
            break
    for path in bundled_openblas("scipy"):
        try:
            theirs = _version(ctypes.CDLL(path), "")
        except OSError:
            continue
        if theirs is not None:
            break
    return addresses, mine, theirs


def bind():
    """Bind NumPy's gemv routines as LLVM symbols (once); -> {kind: symbol}."""
    with _lock:
        if "symbols" not in _state:
            import llvmlite.binding as llvm
            addresses, mine, theirs = _load()
            for kind, address in addresses.items():
                llvm.add_symbol(_SYM.format(_KINDS[kind]), address)
            _state["symbols"] = {k: _SYM.format(_KINDS[k]) for k in addresses}
            _state["newer"] = prefers_numpy(mine, theirs)
    return _state["symbols"]


def prefers_numpy(numpy_version, scipy_version):
    """Whether NumPy's OpenBLAS (`numpy_version`, a tuple or None: unknown) is to compute
    gemv instead of SciPy's: only where both are known and NumPy's is the later release.

        >>> prefers_numpy((0, 3, 31), (0, 3, 30)), prefers_numpy((0, 3, 30), (0, 3, 30))
        (True, False)
    """
    return None not in (numpy_version, scipy_version) and numpy_version > scipy_version


def choice(kind):
    """The symbol of NumPy's ILP64 gemv for `kind` ("float"/"double") when that build is
    newer than SciPy's, else None (SciPy's, as Numba calls it)."""
    symbols = bind()
    return symbols.get(kind) if _state["newer"] else None


def kind_of(dtype):
    """"float"/"double" for a float32/float64 dtype (NumPy's or Numba's), else None."""
    return {"float32": "float", "float64": "double"}.get(str(dtype))
