"""`xnp.ufunc` and `xnp.frompyfunc`, as jax.numpy's (jax/_src/numpy/ufunc_api.py).

`xnp.add`, `xnp.multiply`, `xnp.maximum`, ... (JAX's fourteen) are ufuncs with `outer`,
`reduce`, `accumulate`, `at` (functional: `inplace=False`) and `reduceat`:

    >>> xnp.add.reduce(xnp.arange(4.0))                       # 6.0, as xnp.sum
    >>> xnp.maximum.accumulate(xnp.array([1, 3, 2]))          # [1, 3, 3]
    >>> xnp.frompyfunc(lambda x, y: x * y + 1, 2, 1).outer(xnp.ones(2), xnp.arange(3.0))

Calling a named ufunc calls the public function directly: each is the one instance of its
own subclass whose `__call__` is that function (a staticmethod), so Python's call slot runs it
with no frame in between; eagerly it answers from a cached program per signature, as xnp's
other functions (../eager_programs.py).  Methods JAX gives a dedicated implementation (add.reduce is sum,
add.at a scatter-add, ...) use the xnp function; the others, and every method of a
`frompyfunc`, use JAX's generic loops: a left fold for `reduce` (fori_loop: the function need
not be associative), a scan for `accumulate`, one update per index for `at`.
"""
import numpy as np

from ..indexing import subscripts as indexing
from ..manipulation import joining, shapes as man
from ..reductions import aggregates as red, cumulative
from .. import array_api
from ..eager_programs import as_program
from . import mathfuncs, ufuncs as uf
from ...primitives.operands import (asarray_operand, aval, canon_axis, canon_axes, convert,
                                    dtype_arg, locate_public_error, returns_arrays, wrap_result)


class ufunc:
    """A universal function: a scalar function broadcast over arrays, with NumPy's methods.

        >>> u = xnp.ufunc(lambda x, y: x - y, 2, 1)          # (xnp.frompyfunc makes these)
        >>> u.reduce(xnp.array([10.0, 1.0, 2.0]))            # (10 - 1) - 2 = 7.0
    """

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None,
                 reduce=None, accumulate=None, at=None, reduceat=None):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._func, self._call = func, call
        self._nin, self._nout = int(nin), int(nout)
        self._nargs, self._identity = int(nargs or nin), identity
        self._methods = {"reduce": reduce, "accumulate": accumulate, "at": at,
                         "reduceat": reduceat}

    nin = property(lambda self: self._nin)
    nout = property(lambda self: self._nout)
    nargs = property(lambda self: self._nargs)
    identity = property(lambda self: self._identity)

    def _key(self):
        return (self._func, self.__name__, self._identity, self._nin, self._nout, self._nargs)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self):
        return f"<xnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        _no_out_where(self.__name__, out, where)
        if self._call is not None:
            return self._call(*args)
        if len(args) != self._nin:
            raise TypeError(f"ufunc {self.__name__!r} ({self._func.__qualname__}) takes "
                            f"{self._nin} array arguments, got {len(args)}")
        return wrap_result(_vectorize(self._func)(*args))

    def _binary(self, method):
        """The checks JAX makes before every method of a binary ufunc."""
        if self._nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self._nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    @returns_arrays
    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """Reduce `a` along `axis` (None: all; a tuple only where the ufunc has a dedicated
        reduction) with this binary function, starting from `initial` or the identity."""
        self._binary("reduce")
        _no_out(f"{self.__name__}.reduce", out)
        if where is not None:
            if self._identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 "identity, so to use a where mask one has to specify 'initial'.")
            if aval(where).dtype != np.bool_:
                raise ValueError(f"where argument must have dtype=bool; got "
                                 f"dtype={aval(where).dtype}")
        fn = self._methods["reduce"] or self._reduce_by_loop
        return fn(asarray_operand(a), axis=axis, dtype=dtype, keepdims=keepdims,
                  initial=initial, where=where)

    def _reduce_by_loop(self, a, axis, dtype, keepdims, initial, where):
        """JAX's generic reduce: a left fold over the axis (fori_loop)."""
        from ...lax.control_flow import fori_loop
        initial = self._identity if initial is None else initial
        dtype = _result_dtype(self._func, aval(a).dtype, aval(a).dtype) if dtype is None \
            else dtype_arg(dtype)
        if isinstance(axis, (tuple, list)):
            raise NotImplementedError(f"{self.__name__}.reduce: a tuple of axes")
        final = _reduced_shape(aval(a).shape, axis, keepdims)
        if where is not None:
            where = man.broadcast_to(where, aval(a).shape)
        a, where = (_front(v, axis) for v in (a, where))
        if aval(a).shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return _full(final, initial, dtype)

        def body(i, acc):
            new = convert(self(acc, convert(_get(a, i), dtype)), dtype)
            return new if where is None else uf.where(_get(where, i), new, acc)
        start = (1, _get(a, 0)) if initial is None else (0, initial)
        acc = man.broadcast_to(convert(asarray_operand(start[1]), dtype), aval(a).shape[1:])
        return man.reshape(fori_loop(start[0], aval(a).shape[0], body, acc), final)

    @returns_arrays
    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running reduction along `axis`: out[i] = f(out[i-1], a[i])."""
        self._binary("accumulate")
        _no_out(f"{self.__name__}.accumulate", out)
        fn = self._methods["accumulate"] or self._accumulate_by_scan
        return fn(asarray_operand(a), axis=axis, dtype=dtype)

    def _accumulate_by_scan(self, a, axis, dtype):
        from ...lax.control_flow import scan
        dtype = _result_dtype(self._func, aval(a).dtype, aval(a).dtype) if dtype is None \
            else dtype_arg(dtype)
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("accumulate does not allow multiple axes")
        axis = canon_axis(axis, aval(a).ndim)
        if aval(a).size == 0:
            return _full(aval(a).shape, 0, dtype)
        a = convert(man.moveaxis(a, axis, 0), dtype)

        def step(acc, x):
            acc = convert(self(acc, x), dtype)
            return acc, acc
        _, rest = scan(step, _get(a, 0), _get(a, slice(1, None)))
        return man.moveaxis(joining.append(_get(a, slice(0, 1)), rest, axis=0), 0, axis)

    @returns_arrays
    def at(self, a, indices, b=None, /, *, inplace=True):
        """`a` with f(a[indices], b) written at `indices`, once per occurrence of an index
        (NumPy's unbuffered `ufunc.at`), as a new array: pass `inplace=False`."""
        if inplace:
            raise NotImplementedError(
                f"{self.__name__}.at: xforms arrays are immutable, so the update cannot happen "
                f"in place; use `a = xnp.{self.__name__}.at(a, indices, ..., inplace=False)`.")
        args = () if b is None else (b,)
        fn = self._methods["at"] or self._at_by_loop
        return fn(asarray_operand(a), indices, *args)

    def _at_by_loop(self, a, indices, *args):
        """JAX's generic `at`: one read-modify-write per (broadcast) index."""
        from ...lax.control_flow import fori_loop
        dtype = _result_dtype(self._func, aval(a).dtype, *(aval(v).dtype for v in args))
        a = convert(a, dtype)
        args = tuple(convert(asarray_operand(v), dtype) for v in args)
        indices = indices if isinstance(indices, tuple) else (indices,)
        if not indices:
            return a
        arrays = [asarray_operand(i) for i in indices if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*(aval(i).shape for i in arrays)) if arrays else ()
        if not shape:
            return _update(a, indices, self(_get(a, indices), *args))
        n = int(np.prod(shape))
        if args:
            tail = aval(args[0]).shape[len(shape):]
            args = (man.reshape(man.broadcast_to(args[0], (*shape, *tail)), (n, *tail)),)
        flat = [i if isinstance(i, slice) else man.reshape(man.broadcast_to(i, shape), (n,))
                for i in indices]

        def body(k, x):
            idx = tuple(i if isinstance(i, slice) else _get(i, k) for i in flat)
            return _update(x, idx, self(_get(x, idx), *(_get(v, k) for v in args)))
        return fori_loop(0, n, body, a)

    @returns_arrays
    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions over the slices [indices[i], indices[i+1]) along `axis` (NumPy's rule:
        a single element where indices[i] >= indices[i+1])."""
        from ...lax.control_flow import fori_loop
        self._binary("reduceat")
        _no_out(f"{self.__name__}.reduceat", out)
        a, indices = asarray_operand(a), asarray_operand(indices)
        if aval(a).ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={()}")
        if aval(indices).ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got "
                             f"indices.shape={aval(indices).shape}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = canon_axis(axis, aval(a).ndim)
        if dtype is not None:
            a = convert(a, dtype_arg(dtype))
        n = aval(a).shape[axis]
        bounds = joining.append(indices, n)
        others = [d for d in range(aval(a).ndim) if d != axis]
        start = man.expand_dims(_get(bounds, slice(0, -1)), others)
        end = man.expand_dims(_get(bounds, slice(1, None)), others)

        def body(i, acc):
            row = indexing.take(a, man.expand_dims(i, 0), axis=axis)
            return uf.where(uf.logical_and(uf.greater(i, start), uf.less(i, end)),
                            self(acc, row), acc)
        return fori_loop(0, n, body, indexing.take(a, indices, axis=axis))

    @returns_arrays
    def outer(self, A, B, /):
        """f(A[i, j, ...], B[k, l, ...]) for every pair of elements: shape A.shape + B.shape."""
        self._binary("outer")
        A, B = asarray_operand(A), asarray_operand(B)
        sa, sb = aval(A).shape, aval(B).shape
        out = self(man.reshape(A, (int(np.prod(sa)), 1)), man.reshape(B, (int(np.prod(sb)),)))
        return man.reshape(out, (*sa, *sb))


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ufunc from a Python function of scalars (written with xnp/lax operations).

        >>> hyp = xnp.frompyfunc(lambda x, y: xnp.sqrt(x * x + y * y), 2, 1, identity=0.0)
        >>> hyp.reduce(xnp.array([3.0, 4.0, 12.0]))          # 13.0
    """
    return ufunc(func, nin, nout, identity=identity)


def _vectorize(func):
    from ..functional import vectorize
    return vectorize(func)


def _no_out(what, out):
    if out is not None:
        raise NotImplementedError(f"{what}: the out argument is not supported (xforms arrays "
                                  "are immutable, as JAX's); use the returned array")


def _no_out_where(name, out, where):
    _no_out(name, out)
    if where is not None:
        raise NotImplementedError(f"{name}: the where argument is not supported (as in JAX); "
                                  f"use xnp.where(mask, xnp.{name}(...), other)")


def _result_dtype(func, *dtypes):
    """The dtype func gives for operands of these dtypes (JAX: eval_shape on ones)."""
    return aval(func(*(np.ones((), dt) for dt in dtypes))).dtype


def _full(shape, value, dtype):
    from ..creation.constructors import full
    return full(shape, value, dtype)


def _reduced_shape(shape, axis, keepdims):
    if axis is None:
        return (1,) * len(shape) if keepdims else ()
    axis = canon_axis(axis, len(shape))
    return shape[:axis] + ((1,) if keepdims else ()) + shape[axis + 1:]


def _front(x, axis):
    """x with `axis` first (None: flattened)."""
    if x is None:
        return None
    return man.ravel(x) if axis is None else man.moveaxis(x, axis, 0)


def _get(x, idx):
    """x[idx] for a traced index too (x may be a NumPy array)."""
    return indexing.getitem(x, idx)


def _update(x, idx, v):
    return indexing.IndexUpdateRef(x, idx).set(v)


# ---- the named ufuncs -----------------------------------------------------------------------
_UNARY = object()      # (the second operand of a one-operand call)


def _public_call(fn, name):
    """`fn` as a public xnp function (as `returns_arrays`) that takes JAX's out=None and
    where=None: the named ufunc's `__call__`.  Its operands are positional parameters, not
    *args, so the call slot's argument tuple is not copied again (measured: this call through
    the instance is as fast as the plain function before)."""
    def call(x, y=_UNARY, /, *, out=None, where=None):
        if out is not None or where is not None:
            _no_out_where(name, out, where)
        try:
            return wrap_result(fn(x) if y is _UNARY else fn(x, y))
        except (TypeError, ValueError, IndexError) as e:
            locate_public_error(name, e, (x, y), {})
            raise
    call.__name__ = call.__qualname__ = name
    call.__doc__ = fn.__doc__
    return call


def _named(fn, nin, identity=None, **methods):
    """The ufunc `xnp.<name>`: the one instance of its own subclass, whose `__call__` is the
    public function itself (special-method lookup then calls it with no extra frame)."""
    name = fn.__name__
    call = as_program(_public_call(fn, name))   # (eager: a cached program per signature)
    cls = type(name, (ufunc,), {"__call__": staticmethod(call), "__module__": __name__})
    u = cls(fn, nin, 1, name=name, identity=identity, call=call, **methods)
    u.__qualname__ = name                # (the API reference finds it as ufunc_api.<name>)
    return u


def _initial_like(initial, x):
    """The initial value as a scalar of x's dtype (JAX's _reduction)."""
    init = asarray_operand(initial)
    if aval(init).shape != ():
        raise ValueError(f"initial value must be a scalar. Got array of shape "
                         f"{aval(init).shape}")
    return convert(init, aval(x).dtype)


def _apply_initial(op, initial, out):
    """op(initial, result), as JAX applies `initial` after the reduction."""
    return out if initial is None else op(_initial_like(initial, out), out)


def _as_dtype(out, dtype):
    return out if dtype is None else convert(out, dtype_arg(dtype))


def _summing(reducer, op):
    """add.reduce and multiply.reduce: xnp.sum / xnp.prod, then the initial value."""
    def reduce(a, axis, dtype, keepdims, initial, where):
        return _apply_initial(op, initial, reducer(a, axis, dtype, keepdims, where))
    return reduce


def _extremum(reducer):
    """maximum.reduce and minimum.reduce: xnp.max / xnp.min (initial in a's dtype)."""
    def reduce(a, axis, dtype, keepdims, initial, where):
        initial = None if initial is None else _initial_like(initial, a)
        return _as_dtype(reducer(a, axis, keepdims, initial, where), dtype)
    return reduce


def _logical(reducer, op):
    """logical_and.reduce and logical_or.reduce: xnp.all / xnp.any of the truth values."""
    def reduce(a, axis, dtype, keepdims, initial, where):
        out = _apply_initial(op, initial, reducer(a, axis, keepdims, where))
        return _as_dtype(out, dtype)
    return reduce


def _folding(op, identity, to_bool=False):
    """Reductions with no primitive (bitwise_and/or/xor, logical_xor): the axis halved until
    one element is left, f(first half, second half) each time (log2(n) vectorised steps;
    these functions are associative and commutative, so the order is free)."""
    def reduce(a, axis, dtype, keepdims, initial, where):
        a = convert(a, np.bool_) if to_bool else _integer(a)
        ident = convert(identity, aval(a).dtype)
        if where is not None:
            a = uf.where(where, a, ident)
        axes = canon_axes(axis, aval(a).ndim)
        for ax in axes:
            a = _halve(op, a, ax, ident)
        out = a if keepdims else man.squeeze(a, axes) if axes else a
        return _as_dtype(_apply_initial(op, initial, out), dtype)
    return reduce


def _integer(a):
    if aval(a).dtype.kind not in "biu":
        raise ValueError(f"integer argument required; got dtype={aval(a).dtype}")
    return a


def _halve(op, a, axis, ident):
    """`a` reduced along `axis` to length 1 by pairing its halves."""
    n = aval(a).shape[axis]
    if n == 0:
        shape = aval(a).shape[:axis] + (1,) + aval(a).shape[axis + 1:]
        return _full(shape, ident, aval(a).dtype)
    lead = (slice(None),) * axis
    while n > 1:
        h = n // 2
        pair = op(a[lead + (slice(0, h),)], a[lead + (slice(h, 2 * h),)])
        a = pair if n == 2 * h else man.concatenate([pair, a[lead + (slice(2 * h, n),)]], axis)
        n = n - h
    return a


def _logsumexp(a, axis, dtype, keepdims, initial, where, scale=1.0):
    """logaddexp.reduce (scale 1) and logaddexp2.reduce (scale ln 2, in and out) as JAX's:
    the maximum taken out (without its derivative), exp-sum-log of the rest; `dtype` unused,
    as in JAX."""
    from ...primitives.elementwise import stop_gradient
    a = uf.multiply(red._inexact(a, None), scale) if scale != 1.0 else red._inexact(a, None)
    amax = red.max(a, axis=axis, keepdims=True, where=where, initial=-np.inf)
    amax = stop_gradient(uf.where(uf.isfinite(amax), amax, uf.multiply(amax, 0)))
    total = red.sum(uf.exp(uf.subtract(a, amax)), axis=axis, keepdims=True, where=where)
    out = uf.add(uf.log(total), amax)
    out = out if keepdims else man.squeeze(out, canon_axes(axis, aval(a).ndim) or None)
    if initial is not None:
        out = uf.logaddexp(uf.multiply(initial, scale), out)
    return uf.true_divide(out, scale) if scale != 1.0 else out


def _logsumexp2(a, axis, dtype, keepdims, initial, where):
    return _logsumexp(a, axis, dtype, keepdims, initial, where, scale=float(np.log(2)))


def _scatter(op):
    """add.at, multiply.at and subtract.at: one scatter (bool a: as int32, as JAX)."""
    def at(a, indices, b):
        ref = indexing.IndexUpdateRef
        if aval(a).dtype == np.bool_ and op != "subtract":
            a, b = convert(a, np.int32), convert(convert(asarray_operand(b), np.bool_), np.int32)
            return convert(getattr(ref(a, indices), op)(b), np.bool_)
        if op == "subtract":
            return ref(a, indices).add(uf.negative(convert(asarray_operand(b), aval(a).dtype)))
        return getattr(ref(a, indices), op)(b)
    return at


def _sum(a, axis, dtype, keepdims, where):
    return red.sum(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)


def _prod(a, axis, dtype, keepdims, where):
    return red.prod(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)


def _cumulative(fn):
    return lambda a, axis, dtype: fn(a, axis=axis, dtype=dtype)


add = _named(uf.add, 2, 0, reduce=_summing(_sum, uf.add), at=_scatter("add"),
             accumulate=_cumulative(cumulative.cumsum))
multiply = _named(uf.multiply, 2, 1, reduce=_summing(_prod, uf.multiply), at=_scatter("mul"),
                  accumulate=_cumulative(cumulative.cumprod))
subtract = _named(uf.subtract, 2, at=_scatter("subtract"))
negative = _named(uf.negative, 1)
maximum = _named(uf.maximum, 2, reduce=_extremum(red.max))
minimum = _named(uf.minimum, 2, reduce=_extremum(red.min))
logaddexp = _named(uf.logaddexp, 2, -np.inf, reduce=_logsumexp)
logaddexp2 = _named(mathfuncs.logaddexp2, 2, -np.inf, reduce=_logsumexp2)
logical_and = _named(uf.logical_and, 2, True, reduce=_logical(red.all, uf.logical_and))
logical_or = _named(uf.logical_or, 2, False, reduce=_logical(red.any, uf.logical_or))
logical_xor = _named(uf.logical_xor, 2, False, reduce=_folding(uf.logical_xor, False, True))
bitwise_and = _named(uf.bitwise_and, 2, -1, reduce=_folding(uf.bitwise_and, -1))
bitwise_or = _named(uf.bitwise_or, 2, 0, reduce=_folding(uf.bitwise_or, 0))
bitwise_xor = _named(array_api.bitwise_xor, 2, 0, reduce=_folding(array_api.bitwise_xor, 0))
