"""Adding a primitive of your own: an implementation, and the rules the transforms need.

A primitive is an operation the IR records as one equation.  Give it

* a NumPy implementation (`def_impl`), used by eager evaluation;
* a Numba implementation for `jit` (`def_numba`), one of
  - a *scalar* function `fn(*scalars, *params) -> scalar` (`elementwise=True`): the
    compilers fuse the primitive into loops like a built-in elementwise operation and call
    `fn` once per element, on the CPU (`numba.njit`) and on CUDA (an inlined device
    function), its result converted to the declared dtype.  Operands have the result's
    shape or rank 0;
  - an *array* function `fn(*arrays, *params) -> array` (a tuple for
    `multiple_results=True`), called once (CPU backend only), with C-contiguous arrays and
    scalars for rank-0 operands; its results, checked against the abstract evaluation,
    are copied into the program's buffers (it may return views; it must not write to its
    operands).
  Either way the params come after the operands as ordinary parameters (`def fn(x,
  delta)`: no keyword-only ones) and reach `fn` as literals, so they must be Python/NumPy
  scalars, strings or tuples of them;
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

    x = np.array([-3.0, 0.2, 2.0])
    xf.jit(lambda x: xnp.sum(huber(x)))(x)             # huber_scalar runs in the fused loop
    xf.jit(xf.grad(lambda x: xnp.sum(huber(x))))(x)    # transforms, then compiles
    xf.jit(xf.vmap(huber), backend="cuda")(x)          # a device function in the kernel

Params must be hashable (they key the compile caches).  Rules receive tangents and
cotangents as arrays (zeros where the transform knows them to be zero); in a transpose rule,
the operands being transposed are `UndefinedPrimal`s (test with `is_undefined(x)`; their
`.aval` has the shape and dtype).  Rules call primitives through ordinary functions (xnp,
lax, your own), so they are traced and transformed like user code.

For the compilers (xforms/kernels/user_prims.py): `numba_impls[prim]` is a `NumbaImpl(fn,
elementwise)`.  Under `jit`, a primitive without one raises `MissingRuleError` naming it and
saying to call `def_numba`; on CUDA an array implementation raises `LoweringError` (declare an
elementwise one, or use `backend="cpu"`).  The compile caches key on the function's code, its
defaults and closure and the globals it reads (following the functions it calls), so editing
the function recompiles; rules changed after a function was jitted are not seen by it.
Names of built-in primitives are taken (rules may be registered by name, e.g.
`register_scalar_rule("add", ...)`, so a name must say which primitive it is).
"""
import inspect
from typing import Callable, NamedTuple

import numpy as np

from .core import trace as core
from .core.avals import ShapedArray
from .core.trace import abstract_eval_rules, impl_rules
from .errors import MissingRuleError
from .core.facts import declare
from .transforms.jvp import Zero, instantiate, jvp_rules
from .transforms.transpose import UndefinedPrimal, is_undefined, transpose_rules
from .transforms.vmap import defbroadcasting, vmap_rules


class NumbaImpl(NamedTuple):
    """A Numba-compilable implementation: scalar (elementwise) or array function."""
    fn: Callable
    elementwise: bool


numba_impls = {}     # Primitive -> NumbaImpl


VECTORIZE_NS = 300.0     # ns per element of np.vectorize calling a scalar function


class Primitive(core.Primitive):
    """A user-defined primitive; fill in its rules with the `def_*` methods (the contract is
    in the module docstring).  `elementwise=True` gives it a batching rule.

    >>> p = Primitive("twice", elementwise=True)
    >>> p.def_numba(lambda x: 2 * x, elementwise=True)   # also the NumPy implementation
    >>> p.def_abstract_eval(lambda x: x)
    >>> p.bind(np.ones(2)), xf.jit(p.bind)(np.ones(2))   # eager; compiled (CPU or CUDA)
    (Array([2., 2.]), Array([2., 2.]))
    """

    def __init__(self, name, multiple_results=False, elementwise=False):
        builtin = {p.name for p in list(abstract_eval_rules) + list(impl_rules)
                   if not isinstance(p, Primitive)}
        if name in builtin:
            raise ValueError(f"'{name}' is the name of a built-in primitive, and lowering "
                             "rules may be registered by name: give yours another name")
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
        if getattr(self, "_vectorized", False):      # replaces def_numba's np.vectorize
            self._vectorized = False
            declare(self, eager_ns=None)
        impl_rules[self] = lambda *xs, **params: [np.asarray(o) for o in
                                                  self._as_list(fn(*xs, **params))]
        return fn

    def def_numba(self, fn, *, elementwise=False):
        """Register the implementation the compilers call (see the module docstring): a
        scalar function (`elementwise=True`) or a function of arrays; a Numba dispatcher
        (`@numba.njit`) is accepted too.  Without a `def_impl`, `fn` also serves as the
        NumPy one.  Returns `fn`."""
        py = getattr(fn, "py_func", fn)
        if elementwise and self.multiple_results:
            raise ValueError(f"primitive '{self.name}' has multiple results, and an elementwise "
                             "Numba implementation returns one scalar: give a function of "
                             "arrays returning a tuple (elementwise=False)")
        try:
            sig = inspect.signature(py)
        except (TypeError, ValueError):
            raise TypeError(f"the Numba implementation of primitive '{self.name}' must be a "
                            f"Python function; got {fn!r}") from None
        bad = [p.name for p in sig.parameters.values()
               if p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
        if bad:
            raise TypeError(f"the Numba implementation of primitive '{self.name}' has "
                            f"keyword-only parameters {bad}, which Numba cannot compile: take "
                            f"the params as ordinary parameters after the operands, e.g. "
                            f"def fn(x, delta)")
        numba_impls[self] = NumbaImpl(py, bool(elementwise))
        if impl_rules.get(self) == self._missing_impl:
            if elementwise:
                def impl(*xs, **params):
                    vec = np.vectorize(lambda *s: fn(*s, **params))
                    return np.asarray(vec(*xs), dtype=np.result_type(*xs))
                self.def_impl(impl)
                # a Python call per element eagerly (~220 ns measured): the fast tier's
                # cost model (xforms/exec/eager_cost.py) must not take it for a NumPy ufunc
                declare(self, eager_ns=VECTORIZE_NS)
                self._vectorized = True
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
                                    "(e.g. xforms.core.ir.ShapedArray(shape, dtype))")
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
