"""JAX's `jax.dlpack`: arrays of other libraries taken in through the DLPack protocol.

xforms' arrays live in host memory (NumPy's), so `from_dlpack` reads buffers that are in host
memory, through NumPy's DLPack support, and shares them unless `copy=True`; an xforms array
has `__dlpack__` itself (it is a NumPy array), so other libraries take it with their own
`from_dlpack`. (jax 0.10.2 has no `to_dlpack` either.)

    >>> import numpy as np
    >>> from_dlpack(np.arange(3.0))
    Array([0., 1., 2.])
"""
import numpy as np

from .core import trace as core
from .core.avals import SUPPORTED_DTYPES

# DLPack's device types whose memory the host reads: kDLCPU, kDLCUDAHost (pinned)
_HOST_DEVICE_TYPES = (1, 3)


def is_supported_dtype(dtype):
    """Whether arrays of `dtype` can come in through `from_dlpack` (as JAX's, less bfloat16,
    which xforms does not have).

    >>> is_supported_dtype(np.float32), is_supported_dtype(np.str_)
    (True, False)
    """
    if dtype is None:       # NumPy would read None as float64
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in SUPPORTED_DTYPES


def from_dlpack(external_array, device=None, copy=None):
    """An xforms array of `external_array` (any object with `__dlpack__` and
    `__dlpack_device__` whose buffer is in host memory), sharing its memory unless `copy` is
    True; `copy=False` never copies. `device`: None or a CPU device (xforms.devices("cpu")).
    """
    if not (hasattr(external_array, "__dlpack__")
            and hasattr(external_array, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        "__dlpack_device__ methods.")
    dev_type, _ = external_array.__dlpack_device__()
    if int(dev_type) not in _HOST_DEVICE_TYPES:
        raise TypeError(
            f"from_dlpack reads buffers in host memory, but this array is on DLPack device "
            f"type {int(dev_type)} (2 is CUDA): copy it to the host first (its library's "
            "host copy, e.g. `.cpu()` or `copy_to_host()`), then pass that")
    if device is not None and getattr(device, "platform", None) != "cpu":
        raise ValueError(f"from_dlpack places arrays on the CPU device; got device={device!r} "
                         "(move the result with xforms.device_put(x, 'cuda'))")
    x = np.from_dlpack(external_array, copy=copy)
    if x.dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"from_dlpack: dtype {x.dtype} is not supported by xforms; "
                        f"supported: {', '.join(sorted(str(d) for d in SUPPORTED_DTYPES))}")
    return core.as_array(x)


__all__ = ["from_dlpack", "is_supported_dtype"]
