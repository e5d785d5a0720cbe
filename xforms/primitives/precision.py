"""JAX's `precision=` of the contractions (dot_general, conv_general_dilated): the Precision
enum, the named algorithms (DotAlgorithmPreset) and explicit ones (DotAlgorithm), the reading
of every form JAX accepts (`canonical_precision`), and the parameter the primitives carry
(`precision_param`): absent at DEFAULT, "high" or "highest" -- what CUDA's cuBLAS path reads
(TF32 or float32); the CPU computes in full precision at every setting, as JAX's does.

    >>> precision_param(canonical_precision(("default", "highest"), "dot_general"))
    'highest'
"""
import enum
from typing import NamedTuple, Sequence, Tuple, Union

import numpy as np


class Precision(enum.Enum):
    """JAX's matmul/convolution precision settings.  On the CPU every setting computes at the
    operands' full precision, as JAX's CPU backend does.  On CUDA, a dot_general (or a
    convolution) that goes to cuBLAS follows JAX's GPU rule: float32 and complex64 in TF32
    at DEFAULT (None) and HIGH, in float32 at HIGHEST; the tile kernel of small products and
    the direct convolution kernel compute in float32 always."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        name = _STRINGS.get(str(value).lower()) if isinstance(value, str) else None
        return None if name is None else cls[name]

    def __str__(self):
        return self.name


# JAX 0.10.2's precision strings (jax_default_matmul_precision's values but "tensorfloat32_3x",
# which JAX refuses as a precision= argument)
_STRINGS = {"default": "DEFAULT", "bfloat16": "DEFAULT", "fastest": "DEFAULT",
            "high": "HIGH", "bfloat16_3x": "HIGH", "tensorfloat32": "HIGH",
            "highest": "HIGHEST", "float32": "HIGHEST"}

# xf.default_matmul_precision's settings as the products' and convolutions' parameter (JAX's
# reading of them); DEFAULT's names are absent: no parameter
CONFIG_PRECISION = {"high": "high", "tensorfloat32": "high", "bfloat16_3x": "high",
                    "highest": "highest", "float32": "highest", "tensorfloat32_3x": "highest"}

# The type annotations JAX's lax exports for these arguments
DotDimensionNumbers = Tuple[Tuple[Sequence[int], Sequence[int]],
                            Tuple[Sequence[int], Sequence[int]]]
PrecisionLike = Union[None, str, Precision, Tuple[str, str], Tuple[Precision, Precision]]


class DotAlgorithmPreset(enum.Enum):
    """JAX's named dot algorithms (`precision=` of dot_general and conv_general_dilated).
    What JAX's CPU backend runs for dot_general and xforms runs the same way: DEFAULT;
    F32_F32_F32 and F64_F64_F64 (the product formed in that type, the result in the usual
    dtype); BF16_BF16_F32, _X3 and _X6 on float32 operands (there the float32 product).  The
    rest raise JAX's CPU error, or NotImplementedError where JAX rounds through a type xforms
    lacks (bfloat16 for float64 operands; float16).  A convolution takes every one as
    DEFAULT, as JAX lowers it (an algorithm is a dot's setting only).

        >>> lax.dot_general(a32, b32, (((1,), (0,)), ((), ())),
        ...                 precision=lax.DotAlgorithmPreset.F64_F64_F64)   # float32 result
    """
    DEFAULT = 1
    ANY_F8_ANY_F8_F32 = 2
    ANY_F8_ANY_F8_F32_FAST_ACCUM = 3
    ANY_F8_ANY_F8_ANY = 4
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = 5
    F16_F16_F16 = 6
    F16_F16_F32 = 7
    BF16_BF16_BF16 = 8
    BF16_BF16_F32 = 9
    BF16_BF16_F32_X3 = 10
    BF16_BF16_F32_X6 = 11
    BF16_BF16_F32_X9 = 12
    TF32_TF32_F32 = 13
    TF32_TF32_F32_X3 = 14
    F32_F32_F32 = 15
    F64_F64_F64 = 16

    def __str__(self):
        return self.name


class DotAlgorithm(NamedTuple):
    """An explicit dot algorithm (JAX's fields).  JAX's CPU backend runs none for a product,
    and neither does xforms: passing one to dot_general raises JAX's CPU error; a
    convolution takes one as DEFAULT, as JAX lowers it."""
    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


ALGORITHMS = (DotAlgorithmPreset, DotAlgorithm)


def canonical_precision(precision, name):
    """JAX's reading of `precision=` (its canonicalize_precision): None, a (lhs, rhs) pair of
    Precision, a DotAlgorithmPreset (also by name) or a DotAlgorithm; anything else is
    JAX's ValueError, naming the function.

        >>> canonical_precision("F64_F64_F64", "dot_general")   # DotAlgorithmPreset.F64_F64_F64
    """
    if precision is None or isinstance(precision, ALGORITHMS):
        return precision
    if isinstance(precision, Precision):
        return precision, precision
    if isinstance(precision, str):
        if precision in _STRINGS:
            return (Precision(precision),) * 2
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
    elif isinstance(precision, (tuple, list)) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return tuple(precision)
        if all(isinstance(p, str) and p in _STRINGS for p in precision):
            return tuple(Precision(p) for p in precision)
    raise ValueError(
        f"{name}: unknown precision {precision!r}; use None, a lax.Precision, one of "
        f"{list(_STRINGS)}, a pair of these, a lax.DotAlgorithmPreset (or its name) or a "
        "lax.DotAlgorithm")


def precision_param(canonical, algorithm_level=None):
    """The primitives' `precision` argument for a canonical precision: None (not given:
    xf.default_matmul_precision is read), "default" (given as DEFAULT: the setting is not
    read, as in JAX), "high" or "highest"; a pair counts as its higher, as XLA's GPU backend
    takes it.  An algorithm counts as `algorithm_level(it)` ("default" where that is None).

        >>> precision_param((Precision.DEFAULT, Precision.HIGHEST))        # "highest"
    """
    if canonical is None:
        return None
    if isinstance(canonical, ALGORITHMS):
        return (algorithm_level and algorithm_level(canonical)) or "default"
    return ("default", "high", "highest")[max(p.value for p in canonical)]


def given_precision(precision, config_value):
    """A primitive's stored `precision` for its binder's argument: None (the parameter is
    absent: DEFAULT), "high" or "highest"; an argument of None reads `config_value`
    (xf.default_matmul_precision's, or None outside a trace's options).

        >>> given_precision(None, "float32")                  # "highest"
    """
    if precision is None:
        return CONFIG_PRECISION.get(config_value)
    return None if precision == "default" else precision


# dot_general's algorithm rules (JAX's CPU backend)
_P = DotAlgorithmPreset
_IN_TYPE = {_P.F32_F32_F32: np.dtype(np.float32), _P.F64_F64_F64: np.dtype(np.float64)}
_BF16_ON_F32 = (_P.BF16_BF16_F32, _P.BF16_BF16_F32_X3, _P.BF16_BF16_F32_X6)


def dot_algorithm_level(algorithm):
    """A product's level for an algorithm: "highest" where it forms the product in float32
    or float64, else None (DEFAULT)."""
    return "highest" if algorithm in _IN_TYPE else None


def algorithm_dtype(precision, dtype, name):
    """The dtype a dot algorithm forms the product in (None: the operands' own), or the
    error JAX's CPU backend gives for it.

        >>> algorithm_dtype(DotAlgorithmPreset.F64_F64_F64, np.dtype("float32"), "dot")
        dtype('float64')
    """
    if not isinstance(precision, ALGORITHMS):
        return None
    if precision == _P.DEFAULT or (precision in _BF16_ON_F32 and dtype == np.float32):
        return None
    if precision in _IN_TYPE and dtype.kind == "f":
        return _IN_TYPE[precision]
    if precision in _IN_TYPE or precision in _BF16_ON_F32 or precision == _P.F16_F16_F16:
        raise NotImplementedError(
            f"{name}: precision {precision} on {dtype} operands rounds through a type "
            "xforms does not emulate bit for bit (bfloat16, float16, or a non-float operand); "
            "use precision=None or cast the operands yourself")
    raise ValueError(f"The precision '{precision}' is not supported by {name} on CPU")
