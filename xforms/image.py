"""JAX's `jax.image`: `resize` and `scale_and_translate`.

Resampling is separable: along each resized axis the output is the input contracted with a
small dense (input size x output size) weight matrix, built from the method's kernel with
`xforms.numpy` operations, so the result is differentiable in the image and, for
`scale_and_translate`, in the scale and translation too. Nearest-neighbour resizing is a gather.

    >>> import xforms.numpy as xnp, xforms.image as image
    >>> image.resize(xnp.array([0., 1.]), (4,), "linear").tolist()
    [0.0, 0.25, 0.75, 1.0]
"""
import enum

import numpy as np

from . import lax, numpy as xnp
from .lax import Precision
from .primitives.operands import inexact_dtype


class ResizeMethod(enum.Enum):
    """The resampling kernels, as JAX names them (`from_string` reads the string aliases)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s):
        """`ResizeMethod.from_string("bilinear")` is `ResizeMethod.LINEAR`."""
        for method, names in _ALIASES.items():
            if s in names:
                return method
        raise ValueError(f'Unknown resize method "{s}"; use one of '
                         f'{sorted(n for names in _ALIASES.values() for n in names)}')


_ALIASES = {
    ResizeMethod.NEAREST: ("nearest",),
    ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
    ResizeMethod.LANCZOS3: ("lanczos3",),
    ResizeMethod.LANCZOS5: ("lanczos5",),
    ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
    ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
    ResizeMethod.AREA: ("area",),
}


def _triangle(x):
    return xnp.maximum(0., 1. - x)


def _keys_cubic(x, a=-0.5):
    # Keys' cubic convolution kernel; a = -0.75 is OpenCV's (and PyTorch's) choice
    near = ((a + 2.) * x - (a + 3.)) * x * x + 1.
    far = ((a * x - 5. * a) * x + 8. * a) * x - 4. * a
    return xnp.where(x >= 2., 0., xnp.where(x >= 1., far, near))


def _lanczos(radius):
    def kernel(x):
        y = radius * xnp.sin(np.pi * x) * xnp.sin(np.pi * x / radius)
        # the limit at 0 is 1; the safe denominator keeps the unused branch's gradient finite
        safe = xnp.where(x != 0, np.pi ** 2 * x ** 2, 1.)
        return xnp.where(x > radius, 0., xnp.where(x > 1e-3, y / safe, 1.))
    return kernel


# method -> (kernel radius, kernel of |distance| in input pixels; None: the area overlap)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, lambda x: _keys_cubic(x, -0.75)),
    ResizeMethod.AREA: (1, None),
}


def _raw_weights(n_in, n_out, scale, translation, kernel, kernel_scale, pad):
    """Unnormalised weights, (n_in + 2 pad) x n_out, and the output's sample positions."""
    inv = 1. / scale
    out_pos = xnp.arange(n_out, dtype=xnp.result_type(inv, np.float64))
    sample = (out_pos + 0.5) * inv - translation * inv - 0.5
    src = xnp.arange(-pad, n_in + pad, dtype=sample.dtype)
    if kernel is None:      # area: overlap of [i, i+1) with the output pixel's footprint
        left = out_pos * inv - translation * inv
        overlap = (xnp.minimum(left + inv, src[:, None] + 1.)
                   - xnp.maximum(left, src[:, None]))
        return xnp.maximum(0., overlap), sample
    return kernel(xnp.abs(sample[None, :] - src[:, None]) / kernel_scale), sample


def _normalise(w):
    # columns whose weights (nearly) cancel get zero rather than a blown-up quotient
    total = xnp.sum(w, axis=0, keepdims=True)
    tiny = 1000. * float(np.finfo(np.float32).eps)
    return xnp.where(xnp.abs(total) > tiny, w / xnp.where(total != 0, total, 1.), 0.)


def _edge_fold(n_in, pad):
    """A 0/1 matrix that adds the weights of the padded rows onto the edge pixels they repeat."""
    fold = np.zeros((n_in, n_in + 2 * pad))
    fold[np.clip(np.arange(-pad, n_in + pad), 0, n_in - 1), np.arange(n_in + 2 * pad)] = 1.
    return fold


def _weight_matrix(n_in, n_out, scale, translation, method, antialias):
    """The (n_in x n_out) matrix that resamples one axis."""
    radius, kernel = _KERNELS[method]
    edge = method is ResizeMethod.CUBIC_PYTORCH and not antialias
    kernel_scale = xnp.maximum(1. / scale, 1.) if antialias else 1.
    w, sample = _raw_weights(n_in, n_out, scale, translation, kernel, kernel_scale,
                             radius if edge else 0)
    if edge:        # the edge pixels repeat outwards instead of weighing zero
        return _normalise(xnp.asarray(_edge_fold(n_in, radius), dtype=w.dtype) @ w)
    inside = (sample >= -0.5) & (sample <= n_in - 0.5)
    return xnp.where(inside[None, :], _normalise(w), 0.)


def _method(method):
    return ResizeMethod.from_string(method) if isinstance(method, str) else ResizeMethod(method)


def _check_shape(image, shape):
    shape = tuple(int(s) for s in shape)
    if len(shape) != xnp.ndim(image):
        raise ValueError("shape must have length equal to the number of dimensions of the "
                         f"image; {shape} vs {xnp.shape(image)}")
    return shape


def _resample(x, shape, dims, scales, translations, method, antialias, precision):
    """Contract each axis in `dims` with its weight matrix (JAX: one einsum)."""
    for d, scale, translation in zip(dims, scales, translations):
        w = _weight_matrix(x.shape[d], shape[d], scale, translation, method, antialias)
        y = lax.dot_general(x, w.astype(x.dtype), (((d,), (0,)), ((), ())),
                            precision=precision)
        x = xnp.moveaxis(y, -1, d)
    return x


def _inexact(x):
    # JAX's promote_dtypes_inexact: int64 -> float64, narrower integers and bool -> float32
    x = xnp.asarray(x)
    return x if xnp.issubdtype(x.dtype, xnp.inexact) else x.astype(inexact_dtype(x.dtype))


def _resize_nearest(x, shape):
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m != n:
            # float32 offsets, as JAX computes them (it avoids float64 there on purpose)
            pos = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m) / np.float32(n)
            idx = np.minimum(np.floor(pos).astype(np.int32), m - 1)
            x = xnp.take(x, idx, axis=d)
    return x


def resize(image, shape, method, antialias=True, precision=Precision.HIGHEST):
    """Resize `image` to `shape` (every axis, batch and channel axes included: leave those
    unchanged). Methods: "nearest", "linear" ("bilinear", "trilinear", "triangle"), "cubic"
    ("bicubic", "tricubic"), "cubic-pytorch", "lanczos3", "lanczos5", "area", or a
    `ResizeMethod`. `antialias` widens the kernel when downsampling.

        >>> import xforms.numpy as xnp
        >>> resize(xnp.array([1., 2., 3., 4.]), (2,), "linear", antialias=False).tolist()
        [1.5, 3.5]
    """
    shape = _check_shape(image, shape)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(xnp.asarray(image), shape)
    x = _inexact(image)
    # equal sizes are skipped: every kernel interpolates, so an identity warp is the identity
    dims = [d for d in range(x.ndim) if x.shape[d] != shape[d]]
    scales = [shape[d] / x.shape[d] if shape[d] else 1. for d in dims]
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    return _resample(x, shape, dims, scales, [0.] * len(dims), method, antialias, precision)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision=Precision.HIGHEST):
    """Resample `image` to `shape` so that input location `x` of axis `spatial_dims[i]` lands
    at `x * scale[i] + translation[i]` (pixel centres at `i + 0.5`); samples from outside the
    input are zero. Differentiable in the image, `scale` and `translation`.

        >>> import xforms.numpy as xnp
        >>> scale_and_translate(xnp.array([1., 2., 3., 4.]), (4,), (0,), xnp.array([1.]),
        ...                     xnp.array([1.]), "linear").tolist()
        [0.0, 1.0, 2.0, 3.0]
    """
    shape = _check_shape(image, shape)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not supported by "
                         "scale_and_translate; use resize(..., 'nearest') or another method")
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    x = _inexact(image)
    scale, translation = _inexact(scale), _inexact(translation)
    if scale.dtype != translation.dtype:
        common = xnp.result_type(scale, translation)
        scale, translation = scale.astype(common), translation.astype(common)
    dims = [d % x.ndim for d in spatial_dims]
    return _resample(x, shape, dims, [scale[i] for i in range(len(dims))],
                     [translation[i] for i in range(len(dims))], method, antialias, precision)


__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
