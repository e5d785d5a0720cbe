"""Host-side NumPy utilities that `jax.numpy` re-exports (printing, files, buffers): they
act on concrete arrays only and return NumPy results.

    >>> xnp.save("x.npy", xnp.arange(3))
"""
import numpy as np

array_repr, array_str = np.array_repr, np.array_str
get_printoptions, set_printoptions, printoptions = (np.get_printoptions, np.set_printoptions,
                                                    np.printoptions)
save, savez, load = np.save, np.savez, np.load
frombuffer, fromfile, fromiter, fromstring = np.frombuffer, np.fromfile, np.fromiter, \
    np.fromstring
from_dlpack = np.from_dlpack
einsum_path = np.einsum_path
ComplexWarning = np.exceptions.ComplexWarning
