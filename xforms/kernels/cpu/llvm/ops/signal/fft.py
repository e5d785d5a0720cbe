"""The `fft` op on the direct LLVM path (issue #35, session 28): one call of rocket-fft's C
entry `rf_execute`, with the arguments the Numba kernel's helper passes it
(xforms/kernels/runtime/fft.py `fft_c2c`/`fft_r2c`/`fft_c2r` call rocket_fft.lowlevel's
c2c/r2c/c2r, which lower to that call), so the result is the Numba kernel's bit for bit.

    # b:c128[4,5] = fft[fft_type=RFFT, fft_lengths=(8,)] a
    rf_execute(&{R2C, FORWARD | UNIQUE_AXES | LENGTHS_FROM_OUTPUT, float64, complex128,
                 EXPLICIT, fct 1.0, 0, 0, workers 1, given 1},
               &a_struct, &b_struct, 2, &{-1, NULL, 0, 0}, &{1, [1], 8, int64})

An array crosses as Numba's array struct (meminfo, parent, nitems, itemsize, data, shape,
byte strides); its meminfo and parent are NULL (the library reads the data, shapes and
strides).  The library is the one rocket-fft loads (`library()`: its AVX2 build where the CPU
has AVX2 and FMA, as rocket_fft/_native.py picks it), opened with ctypes: no Numba import.
A non-zero status (valid arguments leave only an allocation failure) raises MemoryError.
"""
import ctypes
import importlib.machinery
import importlib.util
import os
import sys
import threading

import numpy as np

from ...memory import no_memory
from ...scalar import Refused, c_strides, llvm_const

# rocket_fft/_native.py's ABI (its Kind, Flag, Norm enums and DTYPE_CODES; ABI_VERSION 1)
_ABI_VERSION = 1
_KIND = {"FFT": 0, "IFFT": 0, "RFFT": 1, "IRFFT": 2}         # C2C, R2C, C2R
_FORWARD, _UNIQUE_AXES, _LENGTHS_FROM_OUTPUT = 1, 2, 4
_EXPLICIT = 3
_CODES = {np.dtype(np.float32): 9, np.dtype(np.float64): 10, np.dtype(np.complex64): 11,
          np.dtype(np.complex128): 12}
_INT64_CODE = 4
_OPTIONS = "{i64, i64, i64, i64, i64, double, i64, i64, i64, i64}"
_INT_SEQ = "{i64, ptr, i64, i64}"
_SYMBOL = "xf_rf_execute"
_state = {}
_lock = threading.Lock()


def takes(eqn):
    """Whether `eqn` is an `fft` whose library call this module writes (rocket-fft's
    library found and of the expected ABI)."""
    if eqn.prim.name != "fft":
        return False
    dts = [np.dtype(v.aval.dtype) for v in (*eqn.invars, *eqn.outvars)]
    return all(dt in _CODES for dt in dts) and bind()


def emit(m, eqn):
    """Write `eqn` (takes(eqn)) into kernel module `m` (operand and output: its arrays)."""
    x, out = eqn.invars[0], eqn.outvars[0]
    if not takes(eqn) or x not in m.arrays or out not in m.arrays:
        raise Refused("an fft of values that are no arrays of the module")
    if any(hasattr(m.arrays[v][1], "steps") for v in (x, out)):
        raise Refused("an fft into a concatenate's slot")
    if not out.aval.size:            # (the helper's `if out.size`)
        return
    kind, lengths = eqn.params["fft_type"], eqn.params["fft_lengths"]
    n = int(np.prod(lengths))
    fct = 1.0 if kind in ("FFT", "RFFT") or not n else 1.0 / float(n)
    flags = (_LENGTHS_FROM_OUTPUT | _UNIQUE_AXES
             | (_FORWARD if kind in ("FFT", "RFFT") else 0))
    ndim, k = len(x.aval.shape), len(lengths)
    opts = _global(m, _OPTIONS, [
        f"i64 {_KIND[kind]}", f"i64 {flags}", f"i64 {_CODES[np.dtype(x.aval.dtype)]}",
        f"i64 {_CODES[np.dtype(out.aval.dtype)]}", f"i64 {_EXPLICIT}",
        f"double {llvm_const(fct, 'double')}", "i64 0", "i64 0", "i64 1", "i64 1"])
    axes = _global(m, f"[{k} x i64]", [f"i64 {a}" for a in range(ndim - k, ndim)], "[]")
    seq_axes = _global(m, _INT_SEQ, [f"i64 {k}", f"ptr {axes}", "i64 8",
                                     f"i64 {_INT64_CODE}"])
    seq_none = _global(m, _INT_SEQ, ["i64 -1", "ptr null", "i64 0", "i64 0"])
    a, b = _array(m, x), _array(m, out)
    m.decls.add(f"declare i64 @{_SYMBOL}(ptr, ptr, ptr, i64, ptr, ptr)")
    status, failed = m.fresh(), m.fresh()
    m.emit(f"{status} = call i64 @{_SYMBOL}(ptr {opts}, ptr {a}, ptr {b}, i64 {ndim}, "
           f"ptr {seq_none}, ptr {seq_axes})")
    m.emit(f"{failed} = icmp ne i64 {status}, 0")
    no_memory(m, failed)


def _global(m, ty, items, brackets="{}"):
    """A private constant of type `ty` holding `items` -> its name."""
    name = f"@fft{len(m.globals)}"
    m.globals.append(f"{name} = private unnamed_addr constant {ty} "
                     f"{brackets[0]}{', '.join(items)}{brackets[1]}")
    return name


def _array(m, v):
    """Numba's array struct of module array `v` (on the stack) -> its pointer."""
    data, shape = m.arrays[v]
    shape = [int(d) for d in shape]
    nd, item = len(shape), np.dtype(v.aval.dtype).itemsize
    ty = f"{{ptr, ptr, i64, i64, ptr, [{nd} x i64], [{nd} x i64]}}"
    p = f"%fftarr{m.fresh()[2:]}"
    m.allocas.append(f"{p} = alloca {ty}")
    fields = [("ptr", "null"), ("ptr", "null"), ("i64", int(np.prod(shape, dtype=np.int64))),
              ("i64", item), ("ptr", data)]
    fields += [("[%d x i64]" % nd, "[" + ", ".join(f"i64 {d}" for d in shape) + "]"),
               ("[%d x i64]" % nd, "[" + ", ".join(f"i64 {s * item}"
                                                    for s in c_strides(shape)) + "]")]
    for j, (fty, value) in enumerate(fields):
        q = m.fresh()
        m.emit(f"{q} = getelementptr {ty}, ptr {p}, i32 0, i32 {j}")
        m.emit(f"store {fty} {value}, ptr {q}")
    return p


def bind():
    """Whether rocket-fft's library is found and of the expected ABI; binds `rf_execute`'s
    address to the LLVM symbol the kernels call (once)."""
    with _lock:
        if "ok" not in _state:
            try:
                lib = ctypes.CDLL(library())
                _state["ok"] = lib.rf_abi_version() == _ABI_VERSION
                if _state["ok"]:
                    import llvmlite.binding as llvm
                    llvm.add_symbol(_SYMBOL, ctypes.cast(lib.rf_execute, ctypes.c_void_p).value)
            except Exception:           # (no rocket-fft, or another build: Numba's path)
                _state["ok"] = False
        return _state["ok"]


def library():
    """The path of the native library rocket-fft calls: its own choice where it is loaded,
    else the same choice made here (rocket_fft/_native.py `_select_library`: the AVX2
    build where it exists and the CPU supports it, unless ROCKET_FFT_SIMD says "generic").
    tests/kernels/llvm/ops/test_llvm_fft.py checks that the two agree."""
    native = sys.modules.get("rocket_fft._native")
    if native is not None:
        return native.LIBRARY_PATH
    spec = importlib.util.find_spec("rocket_fft")     # (found, not imported: Numba stays out)
    folder = spec.submodule_search_locations[0]
    generic, avx2 = (_extension(folder, name)
                     for name in ("_rocket_fft_numba", "_rocket_fft_numba_avx2"))
    choice = os.environ.get("ROCKET_FFT_SIMD", "auto").strip().lower()
    if generic is None or choice not in ("auto", "generic"):
        raise ImportError("rocket-fft's library: not the automatic choice")
    if choice == "auto" and avx2 is not None and ctypes.CDLL(generic).rf_cpu_supports_avx2():
        return avx2
    return generic


def _extension(folder, name):
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, name + suffix)
        if os.path.exists(path):
            return path
    return None
