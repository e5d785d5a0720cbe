"""`lax.custom_root` and `lax.custom_linear_solve`: solvers whose derivatives come from the
implicit function theorem (JAX's semantics), never from differentiating the solver's
iterations -- so `solve` may be a `while_loop`, a Python-level Newton method, anything.

    >>> def sqrt_newton(a):
    ...     f = lambda x: x ** 2 - a
    ...     newton = lambda f, x0: lax.fori_loop(0, 20, lambda i, x: x - f(x) / (2 * x), x0)
    ...     return lax.custom_root(f, 1.0, newton, lambda g, y: y / g(1.0))
    >>> xf.grad(sqrt_newton)(4.0)         # 1 / (2 sqrt(4))
    Array(0.25)

custom_root is a custom_jvp call (primitives/custom.py) whose rule solves the tangent system
with `tangent_solve`; custom_linear_solve is the `custom_linear_solve` primitive, whose
transpose solves with `transpose_solve` and the transposed operator.
"""
import numpy as np

from ...core import trace as core, source_info
from ...core.avals import is_inexact
from ...core.trace import Tracer
from ...primitives.control import control_flow as cf
from ...primitives.control.solves import linear_solve_p
from ...primitives.custom import LazyJaxpr, custom_jvp_call_p
from ...primitives.elementwise import convert_element_type, neg
from ...primitives.structural import zeros
from ...core.source_info import describe_function
from ...transforms.jvp import jvp_jaxpr, tangent_aval
from ...transforms.transpose import transpose_jaxpr
from ...tree_util import tree_flatten, tree_unflatten


def _where():
    info = source_info.current()
    return f" (called at {info})" if info else ""


def _flatten(tree):
    leaves, treedef = tree_flatten(tree)
    return [x if isinstance(x, Tracer) else core.canonical_value(x) for x in leaves], treedef


def _as_tree(tree, avals, who):
    """A Python function taking a pytree like the operand, for a flat leaf list."""
    def conform(x, a):
        if np.shape(x) != a.shape:
            raise ValueError(f"{who}: got an argument of shape {np.shape(x)}, expected "
                             f"{a.shape}")
        return _cast(x, a)

    def to_flat(value):
        leaves, t = tree_flatten(value)
        if t != tree:
            raise TypeError(f"{who}: got an argument of structure {t}, expected {tree}")
        return [conform(x, a) for x, a in zip(leaves, avals)]
    return to_flat


def _trace_checked(fun, in_tree, in_avals, what, tree, avals, expect, has_aux=False):
    """Trace `fun(pytree) -> pytree [, aux]` over flat in_avals; check that the (first)
    output has the structure `tree` and the shapes of `avals` (cast to their dtypes).
    -> (const-free jaxpr taking (*consts, *leaves), consts, aux treedef)."""
    where, store = _where(), {}

    def flat(*args):
        out = fun(tree_unflatten(in_tree, list(args)))
        aux = None
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"{what} must return a pair (solution, aux) when has_aux=True, "
                                f"got {type(out).__name__}{where}")
            out, aux = out
        leaves, t = tree_flatten(out)
        shapes = [np.shape(x) for x in leaves]
        want = [a.shape for a in avals]
        if t != tree or shapes != want:
            raise TypeError(f"{what} must return the structure and shapes of {expect} "
                            f"({tree}, shapes {want}), got {t}, shapes {shapes}{where}")
        aux_leaves, store["aux"] = tree_flatten(aux)
        return [_cast(x, a) for x, a in zip(leaves, avals)] + list(aux_leaves)
    j, consts = cf.trace(flat, in_avals, fun_for_errors=fun)
    return j, consts, store["aux"]


def _cast(x, aval):
    if not isinstance(x, Tracer):
        x = core.canonical_value(x)
    return x if core.get_aval(x).dtype == aval.dtype else convert_element_type(x, aval.dtype)


def _operand(value):
    """Flat leaves (weak types dropped: the solution has the operand's dtypes), treedef."""
    leaves, tree = _flatten(value)
    avals = [tangent_aval(core.get_aval(x)) for x in leaves]
    return [_cast(x, a) for x, a in zip(leaves, avals)], avals, tree


def _caller(closed, consts, tree, avals, who):
    """The traced program as a Python function of one pytree (what solvers are handed)."""
    to_flat = _as_tree(tree, avals, who)
    n = len(avals)

    def fun(x):
        return tree_unflatten(tree, cf.call(closed, *consts, *to_flat(x))[:n])
    return fun


# ---- custom_linear_solve --------------------------------------------------------------------
def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """`solve(matvec, b)`, differentiated as the solution x of `matvec(x) == b` (JAX's
    semantics): jvp solves again with the same `solve`, reverse mode with `transpose_solve`
    applied to the transposed operator (`solve` itself when `symmetric=True`).

    >>> A = xnp.array([[4.0, 1.0], [1.0, 3.0]])
    >>> lax.custom_linear_solve(lambda x: A @ x, xnp.ones(2),
    ...                         lambda mv, b: xnp.linalg.solve(A, b), symmetric=True)
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    leaves, avals, tree = _operand(b)
    name = describe_function(matvec)

    def traced(fun, what, aux=False):
        return _trace_checked(fun, tree, avals, f"custom_linear_solve: {what}", tree, avals,
                              "b", aux)
    mv_j, mv_c, _ = traced(matvec, f"matvec {name}")
    mv = _caller(mv_j, mv_c, tree, avals, f"custom_linear_solve: matvec {name}")
    s_j, s_c, aux_tree = traced(lambda x: solve(mv, x), f"solve {describe_function(solve)}",
                                has_aux)
    vm_j = ts_j = None
    vm_c = ts_c = []
    if transpose_solve is not None:
        vm_j, vm_c = mv_j, mv_c
        if not symmetric:   # the transposed operator: matvec transposed in its vector input
            vm_j = transpose_jaxpr(mv_j, [False] * len(mv_c) + [True] * len(avals))
        vm = _caller(vm_j, vm_c, tree, avals, f"custom_linear_solve: the transpose of {name}")
        ts_j, ts_c, _ = traced(lambda x: transpose_solve(vm, x),
                               f"transpose_solve {describe_function(transpose_solve)}", has_aux)
    groups = (mv_c, vm_c, s_c, ts_c)
    outs = linear_solve_p.bind(*[v for g in groups for v in g], *leaves,
                               const_lengths=tuple(len(g) for g in groups),
                               jaxprs=(mv_j, vm_j, s_j, ts_j))
    x = tree_unflatten(tree, outs[:len(avals)])
    return (x, tree_unflatten(aux_tree, outs[len(avals):])) if has_aux else x


# ---- custom_root ----------------------------------------------------------------------------
def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """`solve(f, initial_guess)`, a root of `f`, differentiated with respect to the values
    `f` closes over by the implicit function theorem (JAX's semantics):
    d root = -tangent_solve(g, df) with g the linearization of f at the root.  The
    derivative with respect to `initial_guess` is zero.

    >>> lax.custom_root(lambda x: x ** 3 - a, 1.0, my_solver, lambda g, y: y / g(1.0))
    """
    leaves, avals, tree = _operand(initial_guess)
    n, fname = len(avals), describe_function(f)

    def traced(fun, what, in_tree=tree, in_avals=avals, aux=False):
        return _trace_checked(fun, in_tree, in_avals, f"custom_root: {what}", tree, avals,
                              "initial_guess", aux)
    f_j, f_c, _ = traced(f, f"f {fname}")
    f_call = _caller(f_j, f_c, tree, avals, f"custom_root: f {fname}")
    s_j, s_c, aux_tree = traced(lambda x: solve(f_call, x),
                                f"solve {describe_function(solve)}", aux=has_aux)
    # g = f linearized at x: the jvp of f's program in its input, at fixed consts
    f_lin, _ = jvp_jaxpr(f_j, [False] * len(f_c) + [True] * n, instantiate_out=True)
    lin_flat = _as_tree(tree, avals, f"custom_root: the linearization of {fname}")

    def linearize_and_solve(pair):
        x = tree_flatten(pair[0])[0]

        def g(t):
            return tree_unflatten(tree, cf.call(f_lin, *f_c, *x, *lin_flat(t))[n:])
        return tangent_solve(g, pair[1])
    pair_tree = tree_flatten((tree_unflatten(tree, [0] * n),) * 2)[1]
    ls_j, ls_c, _ = traced(linearize_and_solve,
                           f"tangent_solve {describe_function(tangent_solve)}",
                           pair_tree, avals * 2)
    outs = _bind_root(fname, n, (f_j, s_j, ls_j), (f_c, s_c, ls_c), leaves)
    x = tree_unflatten(tree, outs[:n])
    return (x, tree_unflatten(aux_tree, outs[n:])) if has_aux else x


def _bind_root(fname, n, jaxprs, consts, guess):
    """A custom_jvp call of (*f consts, *solve consts, *tangent_solve consts, *guess) whose
    rule is the implicit function theorem: f(p, x*(p)) = 0 gives
    dx* = -(d_x f)^-1 (d_p f . dp), the inverse applied by tangent_solve."""
    f_j, s_j, ls_j = jaxprs
    lengths = [len(c) for c in consts]
    params = [v for c in consts for v in c]
    p_avals = [core.get_aval(v) for v in params]
    in_avals = p_avals + [core.get_aval(v) for v in guess]
    k = len(params)

    def split(ps):
        return ps[:lengths[0]], ps[lengths[0]:lengths[0] + lengths[1]], ps[k - lengths[2]:k]

    def primal(*args):
        return cf.call(s_j, *split(args[:k])[1], *args[k:])
    call, c1 = cf.trace(primal, in_avals)

    f_nonzero = [is_inexact(a.dtype) for a in p_avals[:lengths[0]]]
    f_dp, _ = jvp_jaxpr(f_j, f_nonzero + [False] * n, instantiate_out=True)

    name = f"custom_root({fname})"

    def bind(*args):
        return custom_jvp_call_p.bind(*args, call_jaxpr=call, jvp_jaxpr_thunk=thunk,
                                      num_consts=0, name=name)

    def rule(*args):
        ps, guess_ = args[:k], args[k:k + len(guess)]
        dps = args[k + len(guess):2 * k + len(guess)]
        fp, _, lp = split(ps)
        outs = bind(*ps, *guess_)     # the root again, so higher derivatives use this rule
        x = outs[:n]
        ts = [t for t, nz in zip(dps[:lengths[0]], f_nonzero) if nz]
        rhs = cf.call(f_dp, *fp, *x, *ts)[n:]           # d_p f(p, x*) . dp
        dx = [neg(v) for v in cf.call(ls_j, *lp, *x, *rhs)]
        aux_t = [_zeros_like(a) for a in outs[n:]]
        return list(outs) + dx + aux_t

    def make_rule():
        t_avals = [tangent_aval(a) for a in in_avals]
        closed, c2 = cf.trace(rule, in_avals + t_avals)
        assert not c2, "custom_root's rule takes every value as an operand"
        return closed
    assert not c1, "custom_root's programs take every value as an operand"
    thunk = LazyJaxpr(make_rule, f"custom_root rule for {fname}")
    return bind(*params, *guess)


def _zeros_like(x):
    a = core.get_aval(x)
    return zeros(a.shape, a.dtype)
