"""An eager `Array` is immutable, as a `jax.Array` is, although it is a NumPy array underneath.

Code written for JAX relies on it: `b = a; a += 1` leaves `b` as it was, `a.sort()` returns
a sorted copy, and `a[0] = 1` is refused (JAX's TypeError) rather than changing an array a
jitted function, a closure or a cache may also hold.  NumPy's own in-place methods that a
`jax.Array` lacks (`fill`, `put`, ...) are refused the same way.

    >>> a = xnp.arange(3.); b = a; a += 1; b       # Array([0., 1., 2.])

Underneath, every Array is also a read-only ndarray (issue #31): `np.asarray(a)[0] = 1`
raises NumPy's ValueError, as for a jax.Array, instead of writing through to `a` (or to the
array an eager slice views).  Each constructor clears the flag (`core.read_only`; Numba's
kernels box their outputs read-only, the direct LLVM path clears it where it allocates);
the kernels' own buffers stay writable to them, and take read-only inputs.  NumPy's own functions
(`np.sort`, `np.unique`, `np.gradient`, ...) sort, fill and assign into copies of their
operands, which for an Array would be Arrays: they run on plain views and give Arrays back.
"""
import numpy as np

from ...core.trace import Array
from .. import sorting
from .numpy_ufuncs import plain, wrap

_ADVICE = "instead of x[idx] = y, use x = x.at[idx].set(y) (or another .at[] method)"


def _refuse_item_assignment(self, idx, value):
    raise TypeError("xforms arrays are immutable and do not support in-place item "
                    f"assignment: {_ADVICE}")


def _rebinding(name):
    """`a op= b` as `a = a op b`: a new Array, `a`'s old value untouched (JAX's arrays have
    no in-place operators, so Python falls back to the binary one)."""
    binary = getattr(Array, name)

    def inplace(self, other):
        return binary(self, other)
    inplace.__name__ = name.replace("__", "__i", 1)
    return inplace


def _refused_method(name):
    def refused(self, *args, **kwargs):
        raise AttributeError(f"xforms arrays are immutable and have no {name}() (jax.Array "
                             f"has none either): build a new array, e.g. {_ADVICE}")
    refused.__name__ = name
    return refused


def _sort(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """JAX's `a.sort()`: a sorted copy (NumPy's sorts in place and returns None)."""
    return sorting.sort(self, axis, kind=kind, order=order, stable=stable,
                        descending=descending)


_ND, _VIEW = np.ndarray, np.ndarray.view


def _numpy_function(self, func, types, args, kwargs):
    """`np.sort(a)` and every other NumPy function of an Array: NumPy's implementation on
    plain views (it may sort or assign into its own copies), its arrays back as Arrays.

        >>> np.sort(xnp.array([2., 1.]))        # Array([1., 2.])"""
    args = [_VIEW(a, _ND) if type(a) is Array else
            (plain(a) if type(a) in _SEQUENCES else a) for a in args]
    if kwargs:
        kwargs = {k: plain(v) for k, v in kwargs.items()}
    out = func(*args, **kwargs)
    return wrap(out, _leaves(args, kwargs))


def _leaves(args, kwargs):
    """The ndarrays among NumPy's operands (in lists and tuples too): a result may view
    one of them, which `wrap` then copies rather than freeze (a user's array)."""
    out = []
    for a in (*args, *kwargs.values()):
        if type(a) in _SEQUENCES:
            out.extend(e for e in a if isinstance(e, _ND))
        elif isinstance(a, _ND):
            out.append(a)
    return out


_SEQUENCES = (list, tuple)
Array.__array_function__ = _numpy_function
Array.__setitem__ = _refuse_item_assignment
# (installed after xforms.numpy.arrays.methods, whose JAX-semantics binary operators these call)
for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
            "xor", "lshift", "rshift"):
    setattr(Array, f"__i{_op}__", _rebinding(f"__{_op}__"))
for _name in ("fill", "put", "partition", "resize", "itemset", "setfield"):
    setattr(Array, _name, _refused_method(_name))
Array.sort = _sort
