"""Adding a primitive of your own: an implementation, and the rules the transforms need.

A primitive is an operation the IR records as one equation.  Give it

* a NumPy implementation (`def_impl`), used by eager evaluation;
* a Numba implementation for the compilers (`def_numba`): either a *scalar* function
  `fn(*scalars, **params) -> scalar` for an elementwise primitive (fused into loops; called
  as `fn(x, y, delta=0.5)` with the params as compile-time constants), or an *array*
  function `fn(*arrays, **params) -> array`; either must compile with `numba.njit`;
* abstract evaluation (`def_abstract_eval`): `(*avals, **params) -> ShapedArray` (a list for
  `multiple_results=True`), giving output shapes and dtypes without computing anything;
* the rules of the transforms you use: `def_jvp` (forward and, through linearize and
  transpose, reverse mode), `def_transpose` (only for primitives linear in some operands),
  `def_batching` (vmap; `elementwise=True` gives it for free).

A transform that needs a rule the primitive lacks raises `xforms.errors.MissingRuleError`
naming the primitive and the rule.  Example (see examples/custom_rules.py)::

    import numpy as np, xforms as xf, xforms.numpy as xnp
    from xforms import extend

    def huber_scalar(x, delta):                 # Numba-compilable, one element at a time
        a = abs(x)
        return 0.5 * x * x if a <= delta else delta * (a - 0.5 * delta)

    huber_p = extend.Primitive("huber", elementwise=True)
    huber_p.def_impl(lambda x, *, delta: np.where(np.abs(x) <= delta, 0.5 * x * x,
                                                  delta * (np.abs(x) - 0.5 * delta)))
    huber_p.def_numba(huber_scalar, elementwise=True)
    huber_p.def_abstract_eval(lambda x, *, delta: x)
    huber_p.def_jvp(lambda primals, tangents, *, delta: (
        huber(primals[0], delta), tangents[0] * xnp.clip(primals[0], -delta, delta)))

    def huber(x, delta=1.0):
        return huber_p.bind(x, delta=float(delta))

Params must be hashable (they key the compile caches).  Rules receive tangents and
cotangents as arrays (zeros where the transform knows them to be zero); in a transpose rule,
the operands being transposed are `UndefinedPrimal`s (test with `is_undefined(x)`; their
`.aval` has the shape and dtype).  Rules call primitives through ordinary functions (xnp,
lax, your own), so they are traced and transformed like user code.

For the compilers: `numba_impls[prim]` is a `NumbaImpl(fn, elementwise)`; a backend that
finds no entry raises `MissingRuleError(prim.name, "Numba implementation (def_numba)")`.
"""
from typing import Callable, NamedTuple

import numpy as np

from . import core
from .avals import ShapedArray
from .core import abstract_eval_rules, impl_rules
from .errors import MissingRuleError
from .transforms.jvp import Zero, instantiate, jvp_rules
from .transforms.transpose import UndefinedPrimal, is_undefined, transpose_rules
from .transforms.vmap import defbroadcasting, vmap_rules


class NumbaImpl(NamedTuple):
    """A Numba-compilable implementation: scalar (elementwise) or array function."""
    fn: Callable
    elementwise: bool


numba_impls = {}     # Primitive -> NumbaImpl


class Primitive(core.Primitive):
    """A user-defined primitive; fill in its rules with the `def_*` methods.

    >>> p = Primitive("twice", elementwise=True)
    >>> p.def_impl(lambda x: 2 * x); p.def_abstract_eval(lambda x: x)
    >>> p.bind(np.ones(2))
    Array([2., 2.])
    """

    def __init__(self, name, multiple_results=False, elementwise=False):
        super().__init__(name, multiple_results)
        impl_rules[self] = self._missing_impl
        if elementwise:
            defbroadcasting(self)

    def _missing_impl(self, *args, **params):
        raise MissingRuleError(self.name, "NumPy implementation (def_impl)")

    def _as_list(self, out):
        return list(out) if self.multiple_results else [out]

    def def_impl(self, fn):
        """`fn(*np_arrays, **params) -> array` (a sequence for multiple_results)."""
        impl_rules[self] = lambda *xs, **params: [np.asarray(o) for o in
                                                  self._as_list(fn(*xs, **params))]
        return fn

    def def_numba(self, fn, *, elementwise=False):
        """Register the implementation the compilers call (see the module docstring).
        Without a `def_impl`, an elementwise scalar `fn` also serves as the NumPy one."""
        numba_impls[self] = NumbaImpl(fn, bool(elementwise))
        if impl_rules.get(self) == self._missing_impl:
            if elementwise:
                def impl(*xs, **params):
                    vec = np.vectorize(lambda *s: fn(*s, **params))
                    return np.asarray(vec(*xs), dtype=np.result_type(*xs))
                self.def_impl(impl)
            else:
                self.def_impl(fn)
        return fn

    def def_abstract_eval(self, fn):
        """`fn(*avals, **params) -> ShapedArray` (a sequence for multiple_results)."""
        def rule(*avals, **params):
            outs = self._as_list(fn(*avals, **params))
            for o in outs:
                if not isinstance(o, ShapedArray):
                    raise TypeError(f"abstract evaluation rule of primitive '{self.name}' "
                                    f"returned {type(o).__name__}; expected ShapedArray "
                                    "(e.g. xforms.ir.ShapedArray(shape, dtype))")
            return outs
        abstract_eval_rules[self] = rule
        return fn

    def def_jvp(self, fn):
        """`fn(primals, tangents, **params) -> (primal_out, tangent_out)`; the tangent output
        must be linear in the tangents (reverse mode transposes it)."""
        def rule(primals, tangents, **params):
            ts = [instantiate(t) for t in tangents]
            out, t_out = fn(list(primals), ts, **params)
            return self._as_list(out), self._as_list(t_out)
        jvp_rules[self] = rule
        return fn

    def def_transpose(self, fn):
        """`fn(ct, *operands, **params) -> one cotangent (or None) per operand`; operands
        being transposed are `UndefinedPrimal`s."""
        def rule(ct, *args, **params):
            if self.multiple_results:
                ct = [instantiate(c) for c in ct]
            elif isinstance(ct, Zero):
                return [None] * len(args)
            out = list(fn(ct, *args, **params))
            if len(out) != len(args):
                raise TypeError(f"transpose rule of primitive '{self.name}' returned "
                                f"{len(out)} cotangents for {len(args)} operands")
            return out
        transpose_rules[self] = rule
        return fn

    def def_batching(self, fn):
        """`fn(args, dims, **params) -> (out, out_dim)`; a dim is the batch axis of that
        operand, or None when it is not batched."""
        def rule(args, dims, **params):
            out, out_dim = fn(list(args), list(dims), **params)
            if self.multiple_results:
                return list(out), list(out_dim)
            return [out], [out_dim]
        vmap_rules[self] = rule
        return fn


__all__ = ["Primitive", "NumbaImpl", "numba_impls", "UndefinedPrimal", "is_undefined",
           "ShapedArray"]
