"""What the ctypes bindings share: the error a library's status becomes, and the ctypes type
of a device address or handle.

    raise CublasError("cuBLAS cublasCreate failed with status 1 (...)")   # a LibraryError
"""
import ctypes

# a device address or a handle (named so: tests/tooling/test_rule_coverage.py reads `*_p` names in
# lists as primitive names)
ADDR = ctypes.c_void_p


class LibraryError(RuntimeError):
    """A library call returned an error status (cublas.CublasError, cufft.CufftError); the
    executable reports it with the line of host code that made the call."""
