"""Derived AD machinery on closed jaxprs: linearize (jvp + partial evaluation) and vjp
(linearize + transpose), each cached per jaxpr so repeated calls never re-transform."""
from ..core import axis_env
from ..core.memo import derived
from .jvp import Zero, instantiate, jvp_eval, tangent_aval
from .partial_eval import partial_eval_jaxpr, partial_eval_rules
from .simplify import simplify
from .stage import stage
from .transpose import transpose_jaxpr


def linearize_jaxpr(closed, diff_mask, n_diff_out):
    """Split `closed` into
      primal:  (all inputs) -> (all outputs, residuals)
      linear:  (residuals, tangents of diff inputs) -> tangents of the first n_diff_out outputs.
    -> (primal, linear, n_res); cached.
    """
    return derived.lookup(closed, ("linearize", tuple(diff_mask), n_diff_out),
                          _linearize_jaxpr, closed, diff_mask, n_diff_out)


def _linearize_jaxpr(closed, diff_mask, n_diff_out):
    in_avals = closed.in_avals
    n = len(in_avals)
    t_avals = [tangent_aval(a) for a, d in zip(in_avals, diff_mask) if d]

    def jvp_fun(*args):
        primals, ts = args[:n], iter(args[n:])
        tangents = [next(ts) if d else Zero(tangent_aval(a)) for a, d in zip(in_avals, diff_mask)]
        p_out, t_out = jvp_eval(closed.jaxpr, closed.consts, primals, tangents)
        return list(p_out) + [instantiate(t) for t in t_out[:n_diff_out]]

    jv, _ = stage(jvp_fun, list(in_avals) + t_avals)
    n_out = len(closed.out_avals)
    unknowns = [False] * n + [True] * len(t_avals)
    inst = [False] * n_out + [True] * n_diff_out
    known, unknown, out_unk, n_res = partial_eval_jaxpr(jv, unknowns, inst)
    assert not any(out_unk[:n_out]), "primal outputs cannot depend on tangents"
    if any(e.prim in partial_eval_rules for e in jv.jaxpr.eqns):
        # a rule may have split a loop or a branch into new equations: clean both halves
        known, unknown = simplify(known), simplify(unknown)
    # else partial evaluation only partitioned `jv`, which is simplified: every equation
    # of either half is live there (a known value the other half reads is a residual
    # output), none is new, and each sees the producers it saw before (or an input)
    return known, unknown, n_res


def vjp_jaxprs(closed, diff_mask, n_diff_out):
    """-> (primal jaxpr, transposed jaxpr (residuals, cts) -> cts of diff inputs, n_res)."""
    names = axis_env.vma_axes()
    if names:
        # JAX types each value in such a body as varying or not over the mesh axis and
        # sums the cotangents of invariant values over it (a psum where an invariant value
        # meets a varying one); without that typing the numbers would differ from JAX's
        raise NotImplementedError(
            f"reverse-mode differentiation (grad, vjp, jacrev) inside shard_map with "
            f"check_vma=True over mesh axis {names[-1]!r}: JAX's typing of values that vary "
            "over the axis is not implemented; pass check_vma=False to shard_map (xforms then "
            "gives JAX's check_vma=False numbers), or differentiate outside the shard_map")
    return derived.lookup(closed, ("vjp", tuple(diff_mask), n_diff_out),
                          _vjp_jaxprs, closed, diff_mask, n_diff_out)


def _vjp_jaxprs(closed, diff_mask, n_diff_out):
    primal, linear, n_res = linearize_jaxpr(closed, diff_mask, n_diff_out)
    n_t = sum(diff_mask)
    transposed = transpose_jaxpr(linear, [False] * n_res + [True] * n_t)
    return primal, transposed, n_res
