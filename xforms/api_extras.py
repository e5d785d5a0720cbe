"""The rest of JAX's top-level transformation API: `eval_shape` with `ShapeDtypeStruct`,
`linear_transpose`, `closure_convert`, `custom_gradient`, `named_scope` / `named_call`,
`ensure_compile_time_eval`, `enable_x64`.

    >>> xf.eval_shape(lambda x: x @ x.T, xf.ShapeDtypeStruct((3, 2), xnp.float32))
    ShapeDtypeStruct(shape=(3, 3), dtype=float32)
"""
import contextlib
import functools

import numpy as np

from .core import trace as core
from .core import staging
from .api import conform_cotangents, vjp
from .core.avals import ShapedArray, aval_of_value, canonicalize_dtype, is_inexact
from .core.trace import Tracer
from .custom import custom_vjp
from .jit import jit
from .core.ir import ClosedJaxpr
from .core.source_info import describe_function
from .primitives.control import control_flow as cf
from .transforms.jvp import jvp_jaxpr
from .transforms.transpose import transpose_jaxpr
from .tree_util import tree_flatten, tree_unflatten


# ---- ShapeDtypeStruct, eval_shape ------------------------------------------------------------
class ShapeDtypeStruct:
    """A shape and dtype standing for an array: what `eval_shape` takes and returns.

    >>> xf.ShapeDtypeStruct((2, 3), xnp.float32)
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        if sharding is not None:
            raise NotImplementedError("ShapeDtypeStruct: sharding is not supported (xforms "
                                      "has no device shardings); leave sharding=None")
        self.shape = tuple(int(d) for d in shape)
        self.dtype = canonicalize_dtype(dtype)
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    sharding = property(lambda self: None)

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype,
                                                        self.weak_type) == (
            other.shape, other.dtype, other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d ShapeDtypeStruct")
        return self.shape[0]


def _leaf_aval(x):
    if isinstance(x, Tracer):
        return x.aval
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (np.ndarray,
                                                                         np.generic)):
        return ShapedArray(x.shape, canonicalize_dtype(x.dtype), getattr(x, "weak_type", False))
    if isinstance(x, (bool, int, float, complex)):
        return aval_of_value(x)                     # weakly typed, as in JAX
    return core.get_aval(core.canonical_value(x))


def _trace_abstract(fun, args, kwargs):
    """Trace fun(*args, **kwargs) on abstract values only -> (ClosedJaxpr, out treedef)."""
    leaves, in_tree = tree_flatten((args, kwargs))
    try:
        avals = [_leaf_aval(x) for x in leaves]
    except TypeError as e:
        raise TypeError(f"{e} (in the arguments of {describe_function(fun)})") from None
    store = {}

    def flat(*xs):
        a, k = tree_unflatten(in_tree, xs)
        out, store["tree"] = tree_flatten(fun(*a, **k))
        return out
    closed, _ = staging.trace_to_jaxpr(flat, avals, fun_for_errors=fun)
    return closed, store["tree"]


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of fun(*args, **kwargs), as a pytree of ShapeDtypeStruct,
    found by tracing `fun` with abstract values: nothing is computed.  Arguments may be
    arrays, scalars or anything with `.shape` and `.dtype` (a ShapeDtypeStruct).

    >>> xf.eval_shape(lambda x: {"y": x.sum(0)}, xf.ShapeDtypeStruct((4, 5), xnp.float64))
    {'y': ShapeDtypeStruct(shape=(5,), dtype=float64)}
    """
    closed, out_tree = _trace_abstract(fun, args, kwargs)
    return tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                                     for a in closed.out_avals])


def typeof(x):
    """The abstract value (shape, dtype, weak type) of an array, scalar or tracer.

    >>> xf.typeof(xnp.ones((2, 3), xnp.float32))             # ShapedArray(f32[2,3])
    """
    return _leaf_aval(x)


# ---- linear_transpose ------------------------------------------------------------------------
def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function `fun`, at the shapes and dtypes of `primals`
    (their values are not used): a function from an output cotangent to the tuple of
    input cotangents.  A non-linear `fun` raises a TypeError.

    >>> t = xf.linear_transpose(lambda x: 2.0 * x.sum(), xnp.zeros(3))
    >>> t(1.0)                                      # (Array([2., 2., 2.]),)
    """
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported (JAX "
                                  "deprecated it); leave reduce_axes=()")
    fname = describe_function(fun)
    leaves, in_tree = tree_flatten(primals)
    in_avals = [_leaf_aval(x) for x in leaves]
    if not all(is_inexact(a.dtype) for a in in_avals):
        raise TypeError(f"linear_transpose: {fname} must take float or complex inputs, got "
                        f"{[a.str_short() for a in in_avals]} (JAX also transposes integer -> "
                        "integer functions; xforms does not)")
    closed, out_tree = _trace_abstract(fun, primals, {})
    if not all(is_inexact(a.dtype) for a in closed.out_avals):
        raise TypeError(f"linear_transpose: {fname} must return float or complex values, got "
                        f"{[a.str_short() for a in closed.out_avals]}")
    _check_linear(closed, fname)
    transposed = transpose_jaxpr(closed, [True] * len(in_avals))
    out_avals = closed.out_avals

    def transpose_fun(out_cotangent):
        ct_leaves, ct_tree = tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(f"linear_transpose of {fname}: the cotangent must have the "
                            f"output's structure {out_tree}, got {ct_tree}")
        cts = conform_cotangents(ct_leaves, out_avals, f"linear_transpose of {fname}")
        return tuple(tree_unflatten(in_tree, core.eval_jaxpr(transposed, *cts)))
    return transpose_fun


def _check_linear(closed, fname):
    """A linear function's jvp is the function itself applied to the tangents, so its
    output tangents must not depend on the primal inputs' values."""
    n = len(closed.in_avals)
    jv, out_nz = jvp_jaxpr(closed, [True] * n)
    deps = cf.depends_on(jv, [True] * n + [False] * n)[len(closed.out_avals):]
    if any(deps):
        raise TypeError(f"linear_transpose: {fname} is not linear in its inputs (its "
                        "derivative depends on their values); only a linear function has "
                        "a transpose")


# ---- closure_convert, custom_gradient ---------------------------------------------------------
def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """-> (fwd, bwd): `fwd(*args)` is `vjp` of `fun` in the arguments `argnums`, returning
    (fun(*args), residuals[, aux]); `bwd(residuals, ct)` the cotangents of those arguments
    (one, for an integer argnums). The residuals are a pytree, so with `jitted` (the default)
    each of the two is compiled once and reused across iterations, as JAX's.

    >>> fwd, bwd = xf.fwd_and_bwd(lambda x, w: x @ w, argnums=1)
    >>> y, res = fwd(xnp.ones(2), xnp.ones((2, 2))); bwd(res, xnp.ones(2))
    Array([[1., 1.], [1., 1.]])
    """
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def fwd(*args):
        def of_dynamic(*dyn):
            full = list(args)
            for i, d in zip(nums, dyn):
                full[i] = d
            return fun(*full)
        return vjp(of_dynamic, *[args[i] for i in nums], has_aux=has_aux)

    def bwd(f_vjp, ct):
        cts = f_vjp(ct)
        return cts[0] if single else cts
    functools.update_wrapper(fwd, fun)
    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)


def closure_convert(fun, *example_args):
    """(converted, consts): `converted(*args, *consts)` computes fun(*args), with the
    traced values `fun` closes over (those of an enclosing transformation) lifted into
    the explicit arguments `consts`, as custom_vjp rules need them.  Closed-over
    constants stay inside.

    >>> g, consts = xf.closure_convert(lambda x: x * y, 1.0)    # y traced: consts == [y]
    """
    closed, out_tree = _trace_abstract(fun, example_args, {})
    _, in_tree = tree_flatten(example_args)
    traced = [isinstance(c, Tracer) for c in closed.consts]
    hoisted = [c for c, t in zip(closed.consts, traced) if t]
    fname = describe_function(fun)

    def converted(*args):
        xs, lifted = args[:len(args) - len(hoisted)], args[len(args) - len(hoisted):]
        leaves, tree = tree_flatten(tuple(xs))
        if tree != in_tree:
            raise TypeError(f"closure_convert of {fname}: arguments of structure {tree}, "
                            f"but the example arguments were {in_tree}")
        it = iter(lifted)
        consts = [next(it) if t else c for c, t in zip(closed.consts, traced)]
        outs = core.eval_jaxpr(ClosedJaxpr(closed.jaxpr, consts), *leaves)
        return tree_unflatten(out_tree, outs)
    functools.update_wrapper(converted, fun)
    return converted, hoisted


def custom_gradient(fun):
    """A function with its own gradient: `fun(*args)` returns `(output, vjp)` where
    `vjp(output_cotangent)` returns a tuple with one cotangent per argument.  Reverse
    mode only (forward mode raises, as in JAX).

    >>> @xf.custom_gradient
    ... def f(x):
    ...     return xnp.sin(x), lambda g: (g * 2.0,)
    >>> xf.grad(f)(0.3)                           # 2.0
    """
    rules = {}              # signature -> the vjp, closure-converted

    @custom_vjp
    def wrapped(*args):
        return _pair(fun(*args), fun)[0]

    def fwd(*args):
        out, vjp = _pair(fun(*args), fun)
        conv, hoisted = closure_convert(vjp, out)
        res = (args, hoisted)
        rules[_signature(res, out)] = conv
        return out, res

    def bwd(res, g):
        conv = rules[_signature(res, g)]
        cts = conv(g, *res[1])
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    wrapped.defvjp(fwd, bwd)
    return functools.wraps(fun)(lambda *args: wrapped(*args))


def _pair(result, fun):
    if not isinstance(result, (tuple, list)) or len(result) != 2 or not callable(result[1]):
        raise TypeError(f"custom_gradient: {describe_function(fun)} must return a pair "
                        "(output, vjp function)")
    return result


def _signature(res, out):
    leaves, tree = tree_flatten((res, out))
    return tree, tuple(_leaf_aval(x).strip_weak() for x in leaves)


# ---- name scopes -----------------------------------------------------------------------------
@contextlib.contextmanager
def named_scope(name):
    """A context in which JAX prefixes the names of staged operations with `name` (for
    profiles).  xforms's IR records each operation's source line instead, so the scope
    changes no program and no value.

    >>> with xf.named_scope("layer1"):
    ...     y = xnp.tanh(x @ w)
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: the name must be a str, got {type(name).__name__}")
    yield


def named_call(fun, *, name=None):
    """`fun`, run inside `named_scope(name or fun's name)` (see named_scope).

    >>> f = xf.named_call(lambda x: x * 2, name="double")
    """
    scope = name if name is not None else getattr(fun, "__name__", "named_call")

    @functools.wraps(fun)
    def call(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)
    return call


# ---- ensure_compile_time_eval ----------------------------------------------------------------
class _EagerWhenConcrete:
    """A trace that computes an operation at once when none of its operands is traced,
    and hands the others to the trace it wraps."""

    def __init__(self, inner):
        self.inner = inner
        self.parent = inner           # so nested traces see the wrapped one as an ancestor

    def process(self, prim, args, params):
        if any(isinstance(a, Tracer) for a in args):
            return self.inner.process(prim, args, params)
        return core.eval_trace.process(prim, args, params)

    def __getattr__(self, attr):
        return getattr(self.inner, attr)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Within the block, operations whose operands are all concrete (not traced) compute
    their values at once, even while `jit` or another transformation traces, so their
    results can drive Python control flow; operations on traced values are traced as
    usual.

    >>> @xf.jit
    ... def f(x):
    ...     with xf.ensure_compile_time_eval():
    ...         n = int(xnp.sin(xnp.ones(3)).sum() > 1)     # concrete under jit
    ...     return x * n
    """
    current = core.current_trace()
    if current is core.eval_trace:
        yield
        return
    with core.set_current_trace(_EagerWhenConcrete(current)):
        yield


# ---- 64-bit mode -----------------------------------------------------------------------------
@contextlib.contextmanager
def enable_x64(new_val=True):
    """xforms always computes in JAX's 64-bit mode (Python floats are float64, integers
    int64, as with jax_enable_x64), so `enable_x64(True)` is the mode already in force.
    JAX's 32-bit default mode is not available: `enable_x64(False)` raises.

    >>> with xf.enable_x64():
    ...     xnp.ones(2).dtype                         # float64
    """
    if not new_val:
        raise NotImplementedError("enable_x64(False): xforms has no 32-bit mode; it always "
                                  "follows JAX's 64-bit mode (jax_enable_x64=True). Cast "
                                  "explicitly with .astype(xnp.float32) instead")
    yield


__all__ = ["ShapeDtypeStruct", "eval_shape", "typeof", "linear_transpose", "closure_convert",
           "custom_gradient", "named_scope", "named_call", "ensure_compile_time_eval",
           "enable_x64"]
