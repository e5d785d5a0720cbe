"""What a GPU run records about its machine: the GPU's model, compute capability and memory,
the driver's and CUDA's versions, the versions of the NVIDIA libraries the CUDA backend loads
(cuBLAS, cuFFT, cuSOLVER: xforms/kernels/cuda/vendor/) and of the Python packages around it.
Written into the benchmark JSON's meta (`"gpu"`, under --backend cuda) and printed by
benchmarks/on_gpu.sh into versions.txt.  Every probe that fails says why instead of raising.

    python -m benchmarks.gpu_info          # one JSON object
    {"nvidia_smi": {"name": "NVIDIA H200", "driver_version": "570.124.06", ...},
     "device": {"name": "NVIDIA H200", "compute_capability": "9.0",
                "cuda_driver_version": "12.8", ...},
     "libraries": {"cublas": "12.8.4 (libcublas.so.12)", ...}, "packages": {...}}
"""
from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

# the distributions whose versions decide the GPU figures (NVIDIA's wheels by prefix)
_PACKAGES = ("numba", "numba-cuda", "llvmlite", "numpy", "jax", "jaxlib", "cupy", "nvmath-python")
_PREFIXES = ("nvidia-", "cuda-", "jax-cuda", "cupy-cuda")
_SMI_FIELDS = ("name", "driver_version", "memory.total", "clocks.max.sm", "clocks.max.mem",
               "power.limit", "pci.bus_id")


def _why(e: BaseException) -> str:
    return f"unavailable ({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''})"


def nvidia_smi() -> dict | str:
    """nvidia-smi's fields of GPU 0 (`name`, `driver_version`, ...), or why there are none."""
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(_SMI_FIELDS)}",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        return _why(e)
    lines = out.stdout.strip().splitlines()
    if out.returncode or not lines:
        return f"unavailable (nvidia-smi exited {out.returncode}: {out.stderr.strip()[:200]})"
    return dict(zip(_SMI_FIELDS, (v.strip() for v in lines[0].split(","))))


def _version(v: int) -> str:
    """CUDA's integer version (12080) as "12.8"."""
    return f"{v // 1000}.{v % 1000 // 10}"


def device() -> dict:
    """The device numba-cuda runs on, and the versions of the CUDA driver and of the NVRTC
    numba-cuda compiles with."""
    out: dict = {"simulator": os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"}
    try:
        from numba import cuda
        dev = cuda.get_current_device()
        name = getattr(dev, "name", "SIMULATOR" if out["simulator"] else "?")
        out["name"] = name.decode() if isinstance(name, bytes) else str(name)
        out["compute_capability"] = "%d.%d" % tuple(dev.compute_capability)
        out["multiprocessors"] = getattr(dev, "MULTIPROCESSOR_COUNT", None)
    except Exception as e:
        out["device"] = _why(e)
        return out
    for key, probe in (("cuda_driver_version", _driver_version),
                       ("nvrtc_version", lambda: cuda.runtime.get_version())):
        try:
            v = probe()
            out[key] = ".".join(map(str, v)) if isinstance(v, tuple) else _version(int(v))
        except Exception as e:
            out[key] = _why(e)
    return out


def _driver_version() -> int:
    """The driver's CUDA version (12080), asked through cuda-bindings, as the graph capture
    does (not numba-cuda's internal driver object)."""
    from cuda.bindings import driver
    err, v = driver.cuDriverGetVersion()
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuDriverGetVersion failed: {err!r}")
    return int(v)


def libraries() -> dict:
    """The versions of cuBLAS, cuFFT and cuSOLVER as the backend loads them (`<lib>GetProperty`:
    major.minor.patch), with the file loaded; "absent" where the backend found none."""
    out = {}
    try:
        from xforms.kernels.cuda import vendor
    except Exception as e:
        return {"vendor": _why(e)}
    for name, fn in (("cublas", "cublasGetProperty"), ("cufft", "cufftGetProperty"),
                     ("cusolver", "cusolverGetProperty")):
        try:
            lib = vendor.load(name)
            if lib is None:
                out[name] = "absent (the backend uses its own kernels)"
                continue
            parts = []
            for prop in range(3):       # libraryPropertyType: MAJOR, MINOR, PATCH_LEVEL
                v = ctypes.c_int(-1)
                status = getattr(lib, fn)(ctypes.c_int(prop), ctypes.byref(v))
                if status:
                    raise RuntimeError(f"{fn} returned status {status}")
                parts.append(str(v.value))
            out[name] = ".".join(parts) + f" ({getattr(lib, '_name', '?')})"
        except Exception as e:
            out[name] = _why(e)
    return out


def packages() -> dict:
    """Installed versions of the packages that the GPU figures depend on."""
    from importlib import metadata
    out = {}
    for dist in metadata.distributions():
        name = (dist.metadata.get("Name") or "").lower()
        if name in _PACKAGES or name.startswith(_PREFIXES):
            out[name] = dist.version
    return dict(sorted(out.items()))


def gpu_info() -> dict:
    """Everything above, as one dict for a benchmark JSON's meta."""
    return {"nvidia_smi": nvidia_smi(), "device": device(), "libraries": libraries(),
            "packages": packages(), "python": sys.version.split()[0]}


if __name__ == "__main__":
    print(json.dumps(gpu_info(), indent=1, default=str))
