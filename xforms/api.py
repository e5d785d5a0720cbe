"""The public transforms: jvp, linearize, vjp, grad, value_and_grad, hvp, make_jaxpr,
stop_gradient.  (vmap and the Jacobians are in `batching_api.py`, jit in `jit/`.)

Each traces the user function on every call (its side effects run each time, as in JAX),
transforms and simplifies the program -- once per program structure, xforms/transforms/intern.py -- and
evaluates the result on the current trace, so transforms nest:

    >>> xf.grad(xf.grad(lambda x: x ** 3))(2.0)
    Array(12.)
"""
import functools

import numpy as np

from . import argnums as argnums_mod
from .core import trace as core
from .transforms.ad import linearize_jaxpr, vjp_jaxprs
from .core.avals import float0, is_complex, is_float, is_inexact
from .primitives.elementwise import stop_gradient  # noqa: F401  (public: xforms.stop_gradient)
from .core.source_info import describe_function
from .jit import eval_where_data, follows_data
from .transforms.tracing import Float0Zeros, flatten_args, float0_as_static, trace_flat
from .transforms.jvp import jvp_jaxpr
from .tree_util import (register_pytree_node, tree_flatten, tree_unflatten,
                        treedef_flatten_up_to)


def make_jaxpr(fun, static_argnums=()):
    """Trace `fun` with abstract values and return its IR.

    >>> print(xf.make_jaxpr(lambda x, y: x * y + xnp.sin(x))(0.5, 4.2))
    """
    argnums_mod.index_tuple(static_argnums, "static_argnums")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        nums = argnums_mod.resolve(static_argnums, len(args), "static_argnums", fun,
                                   allow_empty=True)
        statics, dyn = argnums_mod.split_static(args, nums)

        def f(*dyn_args, **kw):
            return fun(*argnums_mod.merge_static(statics, dyn_args, len(args)), **kw)
        flat, in_tree = flatten_args((tuple(dyn), kwargs), fun)
        call = lambda a, k: f(*a, **k)
        call.__wrapped__ = fun                  # so errors name the user's function
        closed, _, _ = trace_flat(call, flat, in_tree, with_values=False)
        return closed
    return wrapped


# ---- forward mode ---------------------------------------------------------------------
def _flat_tangents(p_flat, p_tree, tangents):
    """The tangent leaves, checked against the primals' (float0 ones as placeholders)."""
    tangents, was_float0 = _float0_placeholders(tangents)
    t_flat, t_tree = flatten_args(tangents)
    _check_tangents(p_flat, t_flat, p_tree, t_tree, was_float0)
    return t_flat


def _float0_placeholders(tangents):
    """-> (tangents with each float0 leaf -- JAX's tangent of an integer or boolean primal,
    which jvp never reads -- as a bool array of its shape, which leaves were float0)."""
    leaves, tree = tree_flatten(tangents)
    was = [np.dtype(getattr(t, "dtype", np.bool_)) == float0 for t in leaves]
    leaves = [np.zeros(np.shape(t), np.bool_) if w else t for t, w in zip(leaves, was)]
    return tree_unflatten(tree, leaves), was


def _check_tangents(primals_flat, tangents_flat, p_tree, t_tree, was_float0):
    if p_tree != t_tree:
        raise TypeError(f"jvp: primal and tangent arguments must have the same tree structure; "
                        f"primals have {p_tree}, tangents have {t_tree}")
    for p, t, f0 in zip(primals_flat, tangents_flat, was_float0):
        pa, ta = core.get_aval(p), core.get_aval(t)
        if f0 and is_inexact(pa.dtype):
            raise TypeError(f"jvp: a float0 tangent is the tangent of an integer or boolean "
                            f"primal, not of {pa.str_short()}: pass a {pa.dtype} tangent")
        if pa.shape != ta.shape:
            raise TypeError(f"jvp: primal and tangent shapes must match: primal "
                            f"{pa.str_short()} vs tangent {ta.str_short()}")
        if is_inexact(pa.dtype) and pa.dtype != ta.dtype and not ta.weak_type:
            raise TypeError(f"jvp: tangent dtype {ta.dtype} does not match primal dtype "
                            f"{pa.dtype} (primal {pa.str_short()}, tangent {ta.str_short()})")


def jvp(fun, primals, tangents, has_aux=False):
    """Forward-mode derivative: (fun(*primals), J @ tangents).

    >>> xf.jvp(xnp.sin, (0.0,), (1.0,))
    (Array(0.), Array(1.))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples of positional arguments, "
                        f"got {type(primals).__name__} and {type(tangents).__name__}")
    p_flat, p_tree = flatten_args(tuple(primals))
    t_flat = _flat_tangents(p_flat, p_tree, tuple(tangents))
    closed, ys = argnums_mod.trace_outputs(fun, fun, p_flat, p_tree, has_aux)
    n_out = ys.n_main
    diff = [is_inexact(core.get_aval(p).dtype) for p in p_flat]
    jv, out_nz = jvp_jaxpr(closed, ys.mask(diff), instantiate_out=[True] * n_out +
                           [False] * (len(closed.out_avals) - n_out))
    from .primitives.custom import check_forward_mode
    check_forward_mode(jv)   # a custom_vjp function has no forward mode
    t_in = [_cast_tangent(t, p) for t, p, d in zip(t_flat, p_flat, diff) if d]
    outs = eval_where_data(jv, [*ys.args(p_flat), *t_in])
    p_out = outs[:len(closed.out_avals)]
    t_out = _float0_tangents(outs[len(closed.out_avals):], closed.out_avals)
    if has_aux:
        return ys.main(p_out), ys.main(t_out), ys.aux(p_out)
    return ys.main(p_out), ys.main(t_out)


def _float0_tangents(tangents, out_avals):
    """An integer or boolean output's tangent is float0 zeros, as JAX gives it."""
    return [t if is_inexact(a.dtype) else _zero_cotangent(a.shape)
            for t, a in zip(tangents, out_avals)]


def _cast_tangent(t, p):
    dt = core.get_aval(p).dtype
    if core.get_aval(t).dtype != dt:
        from .primitives.elementwise import convert_element_type
        return convert_element_type(t, dt)
    return t


def linearize(fun, *primals, has_aux=False):
    """-> (fun(*primals), f_jvp[, aux]) where f_jvp(*tangents) is linear and reusable."""
    p_flat, p_tree = flatten_args(primals)
    closed, ys = argnums_mod.trace_outputs(fun, fun, p_flat, p_tree, has_aux)
    diff = [is_inexact(core.get_aval(p).dtype) for p in p_flat]
    n_all = ys.n_all
    primal, linear, n_res = linearize_jaxpr(closed, ys.mask(diff), ys.n_main)
    from .primitives.custom import check_forward_mode
    check_forward_mode(linear)   # a custom_vjp function has no forward mode
    outs = eval_where_data(primal, ys.args(p_flat), n_all)
    p_out, res = outs[:n_all], outs[n_all:]

    def f_jvp(*tangents):
        t_flat = _flat_tangents(p_flat, p_tree, tangents)
        t_in = [_cast_tangent(t, p) for t, p, d in zip(t_flat, p_flat, diff) if d]
        t_out = eval_where_data(linear, [*res, *t_in])
        return tree_unflatten(ys.main_tree, _float0_tangents(t_out, closed.out_avals))
    if has_aux:
        return ys.main(p_out), f_jvp, ys.aux(p_out)
    return ys.main(p_out), f_jvp


# ---- reverse mode ---------------------------------------------------------------------
def _vjp_flat(fun, call, args_flat, in_tree, diff_mask, has_aux):
    closed, ys = argnums_mod.trace_outputs(fun, call, args_flat, in_tree, has_aux)
    primal, transposed, n_res = vjp_jaxprs(closed, ys.mask(diff_mask), ys.n_main)
    outs = eval_where_data(primal, ys.args(args_flat), ys.n_all)
    return outs[:ys.n_all], outs[ys.n_all:], transposed, ys


def vjp(fun, *primals, has_aux=False):
    """-> (fun(*primals), f_vjp[, aux]); f_vjp(ct) returns one cotangent per primal.

    >>> y, f_vjp = xf.vjp(xnp.sin, 0.0); f_vjp(1.0)
    (Array(1.),)
    """
    p_flat, p_tree = flatten_args(primals)
    diff = [is_inexact(core.get_aval(p).dtype) for p in p_flat]
    outs, res, transposed, ys = _vjp_flat(fun, fun, p_flat, p_tree, diff, has_aux)
    out_avals = tuple(core.get_aval(o) for o in outs[:ys.n_main])
    f_vjp = VJP(res, (transposed, ys.main_tree, out_avals, p_tree,
                      tuple(None if d else core.get_aval(p).shape for p, d in zip(p_flat, diff))))
    if has_aux:
        return ys.main(outs), f_vjp, ys.aux(outs)
    return ys.main(outs), f_vjp


class VJP:
    """vjp's backward function, as JAX's: a pytree whose leaves are the residuals, so that it
    can be returned from a jitted function and passed into one (`fwd_and_bwd`).  `static`:
    (transposed program, output tree, output avals, input tree, per input leaf None where it
    is differentiated, else its shape: an integer input's cotangent is float0 zeros)."""

    def __init__(self, residuals, static):
        self.residuals, self.static = list(residuals), static

    def __call__(self, ct):
        transposed, main_tree, out_avals, p_tree, fixed = self.static
        ct = float0_as_static(ct)      # (a float0 output's cotangent: out of the program too)
        ct_flat = treedef_flatten_up_to(main_tree, ct) if main_tree.node is not None else [ct]
        cts = conform_cotangents(ct_flat, out_avals, "vjp")
        g = iter(eval_where_data(transposed, [*self.residuals, *cts]))
        flat = [next(g) if shape is None else _zero_cotangent(shape) for shape in fixed]
        return tuple(tree_unflatten(p_tree, flat))


register_pytree_node(VJP, lambda f: (f.residuals, f.static), lambda st, res: VJP(res, st))


def conform_cotangents(cts, out_avals, who):
    """Each cotangent checked against its output's shape and cast to its dtype (vjp's
    f_vjp, linear_transpose)."""
    out = []
    for c, a in zip(cts, out_avals):
        if type(c) is Float0Zeros or getattr(c, "dtype", None) == float0:
            # an integer output's cotangent, as JAX asks for it
            c = core.as_array(np.zeros(c.shape, a.dtype))
        ca = core.get_aval(c)
        if ca.shape != a.shape:
            raise TypeError(f"{who}: cotangent of shape {ca.shape} does not match the "
                            f"output's shape {a.shape}")
        out.append(_cast_like(c, a))
    return out


def _cast_like(c, aval):
    if core.get_aval(c).dtype != aval.dtype:
        from .primitives.elementwise import convert_element_type
        return convert_element_type(c, aval.dtype)
    return c


def _zero_cotangent(shape):
    """The cotangent of an integer or boolean input, as JAX gives it: float0 zeros. They hold
    no data, so they are a constant even under a trace (jit returns them through its output
    tree, xforms/jit/jitted.py)."""
    return np.zeros(shape, float0)


class _Transformed:
    """A transformed function such as grad(f).  Two built from the same function and options
    compare equal (as static arguments and pytree leaves they are the same function); each
    call runs `f` (JAX's rule without jit)."""

    def __init__(self, impl, key, fun):
        functools.update_wrapper(self, fun)
        # (called with DeviceArrays, a transform of a jitted function runs jitted on their
        # device: xforms/jit/where_data.py)
        self._impl, self._key = follows_data(impl, fun), key
        self._xforms_transform_of = fun

    def __call__(self, *args, **kwargs):
        return self._impl(*args, **kwargs)

    def __eq__(self, other):
        return isinstance(other, _Transformed) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"<{self._key[0]} of {self.__wrapped__!r}>"

    __code__ = property(lambda self: getattr(self.__wrapped__, "__code__", None))


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """-> function returning (fun(*args), gradient w.r.t. args[argnums]).

    >>> xf.value_and_grad(lambda x: x ** 2)(3.0)
    (Array(9.), Array(6.))
    """
    argnums_mod.index_tuple(argnums)          # a bad argnums fails here, not at the call

    def check(x):
        dt = core.get_aval(x).dtype
        if not is_inexact(dt) and not allow_int:
            raise TypeError(
                f"grad requires real- or complex-valued inputs (float16, float32, float64, "
                f"complex64, complex128), but got {dt.name} in {describe_function(fun)}. "
                "Integer inputs are not differentiable: convert them with .astype(float), "
                "leave them out of argnums, use vjp, or pass allow_int=True (their "
                "gradient is then float0 zeros, as in JAX).")
        if holomorphic and not is_complex(dt):   # complex inputs need no flag (JAX)
            raise TypeError("grad with holomorphic=True requires inputs with complex dtype, "
                            f"but got {dt.name} in {describe_function(fun)}")

    def vg(*args, **kwargs):
        d = argnums_mod.DiffArgs("grad", fun, args, kwargs, argnums, check)
        flat = d.flat
        diff = [m and is_inexact(core.get_aval(x).dtype) for x, m in zip(flat, d.diff)]
        outs, res, transposed, ys = _vjp_flat(fun, d.call, flat, d.in_tree, diff, has_aux)
        y = outs[0]
        ya = core.get_aval(y)
        n_main = ys.n_main
        if holomorphic and n_main == 1 and not is_complex(ya.dtype):
            raise TypeError(f"grad with holomorphic=True requires {describe_function(fun)} to "
                            f"return a complex scalar, but it returned {ya.dtype}")
        if n_main != 1 or ya.shape != () or not (is_float(ya.dtype) or
                                                 (holomorphic and is_complex(ya.dtype))):
            what = (f"{n_main} outputs" if n_main != 1 else f"an output of shape {ya.shape} "
                    f"and dtype {ya.dtype}")
            hint = (" For a holomorphic function pass holomorphic=True; otherwise use vjp."
                    if is_complex(ya.dtype) else "")
            raise TypeError(f"grad requires {describe_function(fun)} to return a real scalar "
                            f"(shape () float), but it returned {what}. Use jacrev or vjp for "
                            f"non-scalar outputs, or reduce with xnp.sum.{hint}")
        one = ya.dtype.type(1)
        g = iter(eval_where_data(transposed, [*res, one]))
        wanted = {p for _, pos in d.groups for p in pos}
        gflat = [next(g) if m else
                 _zero_cotangent(core.get_aval(x).shape) if k in wanted else None
                 for k, (x, m) in enumerate(zip(flat, diff))]
        grads = argnums_mod.pick(d.groups, gflat, argnums_mod.is_single(argnums))
        return ys.with_aux(y, outs), grads
    return _Transformed(vg, ("value_and_grad", fun, argnums_mod.key(argnums), has_aux,
                             holomorphic, allow_int), fun)


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Gradient of a scalar-valued function.

    >>> xf.grad(lambda x: xnp.sin(x) * x)(0.0)
    Array(0.)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)._impl   # (one call less)

    def g(*args, **kwargs):
        (val, grads) = vg(*args, **kwargs)
        if has_aux:
            return grads, val[1]
        return grads
    return _Transformed(g, ("grad", fun, argnums_mod.key(argnums), has_aux, holomorphic,
                            allow_int), fun)


def hvp(fun, primals, tangents):
    """Hessian-vector product by forward-over-reverse; never forms the Hessian.

    >>> xf.hvp(lambda x: xnp.sum(x ** 3), (xnp.ones(2),), (xnp.ones(2),))
    (Array([6., 6.]),)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("hvp: primals and tangents must be tuples of positional arguments, as "
                        f"in jvp, got {type(primals).__name__} and {type(tangents).__name__}")
    g = grad(fun, argnums=tuple(range(len(primals))))
    return jvp(g, tuple(primals), tuple(tangents))[1]


