"""custom_linear_solve: a linear solve differentiated without looking inside the solver
(`xforms.lax.custom_linear_solve`; JAX keeps it with control flow too).

linear_solve(*matvec_consts, *vecmat_consts, *solve_consts, *transpose_solve_consts, *b;
             const_lengths, jaxprs) -> (*x, *aux)
    `custom_linear_solve`: x = solve(*solve_consts, *b).  `jaxprs` is the 4-tuple (matvec,
    vecmat, solve, transpose_solve) of const-free ClosedJaxprs each taking (*its consts,
    *vector); vecmat and transpose_solve are None when no transpose solve was given.
    The derivative never looks inside `solve`: jvp solves A x' = b' - A' x with the same
    primitive, and the transpose solves with the transposed operator (JAX's rules).
    LOWER: inline `solve` (the other operands unused).
"""
from ...core import trace as core
from ...core.facts import CALL, declare
from ...core.ir import ClosedJaxpr, Jaxpr, Var
from ...core.registry import primitive
from ...core.trace import abstract_eval_rules, impl_rules
from ...transforms.jvp import Zero, instantiate, jvp_jaxpr, jvp_rules
from ...transforms.transpose import is_undefined, transpose_rules
from ...transforms.vmap import bdim_to_front, vmap_jaxpr, vmap_rules
from ..custom import batch_size, batched_outputs, cast_to_aval, zero_like

linear_solve_p = primitive("custom_linear_solve", multiple_results=True)


def _split_solve_args(args, const_lengths):
    """-> ([matvec, vecmat, solve, transpose_solve consts], the vector operands)."""
    groups, k = [], 0
    for n in const_lengths:
        groups.append(list(args[k:k + n]))
        k += n
    return groups, list(args[k:])


def _transposed(groups):
    """Swap matvec <-> vecmat and solve <-> transpose_solve (a tuple of four)."""
    return type(groups)((groups[1], groups[0], groups[3], groups[2]))


abstract_eval_rules[linear_solve_p] = lambda *avals, jaxprs, **_: list(jaxprs[2].out_avals)


def _linear_solve_impl(*args, const_lengths, jaxprs):
    groups, b = _split_solve_args(args, const_lengths)
    return core.eval_jaxpr(jaxprs[2], *groups[2], *b)


def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
    # A x = b  =>  A x' = b' - A' x: the same solve, with a new right-hand side
    from ..elementwise import sub
    x = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    groups, b = _split_solve_args(primals, const_lengths)
    dgroups, db = _split_solve_args(tangents, const_lengths)
    nb = len(b)
    rhs = [cast_to_aval(instantiate(t), core.get_aval(p)) for t, p in zip(db, b)]
    nonzero = [not isinstance(t, Zero) for t in dgroups[0]]
    if any(nonzero):
        jv, _ = jvp_jaxpr(jaxprs[0], nonzero + [False] * nb, instantiate_out=True)
        ts = [cast_to_aval(t, core.get_aval(p)) for t, p in zip(dgroups[0], groups[0])
              if not isinstance(t, Zero)]
        dA_x = core.eval_jaxpr(jv, *groups[0], *x[:nb], *ts)[nb:]
        rhs = [sub(r, cast_to_aval(d, core.get_aval(r))) for r, d in zip(rhs, dA_x)]
    flat = [v for g in groups for v in g]
    dx = linear_solve_p.bind(*flat, *rhs, const_lengths=const_lengths, jaxprs=jaxprs)
    aux = [zero_like(a) for a in jaxprs[2].out_avals[nb:]]
    return x, list(dx[:nb]) + aux


def _linear_solve_transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs[3] is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve (or pass symmetric=True)")
    groups, b = _split_solve_args(args, const_lengths)
    if any(is_undefined(v) for g in groups for v in g):
        raise NotImplementedError("custom_linear_solve: transposing with respect to the "
                                  "operator's parameters (they are not linear inputs)")
    nb = len(b)
    x_ct = [instantiate(Zero(a.strip_weak())) if isinstance(c, Zero) else c
            for c, a in zip(cts[:nb], jaxprs[2].out_avals)]
    flat = [v for g in _transposed(tuple(groups)) for v in g]
    b_ct = linear_solve_p.bind(*flat, *x_ct, const_lengths=_transposed(const_lengths),
                               jaxprs=_transposed(jaxprs))
    return [None] * len(flat) + [c if is_undefined(v) else None
                                 for c, v in zip(b_ct[:nb], b)]


def _linear_solve_vmap(args, dims, *, const_lengths, jaxprs):
    # Every vector (b, x, aux) is batched at 0, unbatched right-hand sides broadcast: then
    # all four programs agree on which vectors are batched without a fixed-point search.
    size = batch_size(args, dims)
    groups, b = _split_solve_args(args, const_lengths)
    gdims, bdims = _split_solve_args(dims, const_lengths)
    b = [bdim_to_front(v, d, size) for v, d in zip(b, bdims)]
    out = []
    for j, gd in zip(jaxprs, gdims):
        out.append(None if j is None else
                   vmap_jaxpr(j, list(gd) + [0] * len(b), size, [0] * len(j.out_avals)))
    flat = [v for g in groups for v in g]
    outs = linear_solve_p.bind(*flat, *b, const_lengths=const_lengths, jaxprs=tuple(out))
    return outs, [0] * len(outs)


def _linear_solve_inline(eqn):
    """The solve program taking every operand of the equation (the other consts unused)."""
    lengths, solve = eqn.params["const_lengths"], eqn.params["jaxprs"][2]
    j = solve.jaxpr
    unused = [Var(v.aval) if isinstance(v, Var) else Var(core.get_aval(v))
              for v in eqn.invars]
    lo = lengths[0] + lengths[1]
    hi = lo + lengths[2]
    invars = unused[:lo] + j.invars[:lengths[2]] + unused[hi:hi + lengths[3]] + \
        j.invars[lengths[2]:]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.eqns, j.outvars), solve.consts)


batched_outputs[linear_solve_p] = \
    lambda in_b, jaxprs, **_: [any(in_b)] * len(jaxprs[2].out_avals)
impl_rules[linear_solve_p] = _linear_solve_impl
jvp_rules[linear_solve_p] = _linear_solve_jvp
transpose_rules[linear_solve_p] = _linear_solve_transpose
vmap_rules[linear_solve_p] = _linear_solve_vmap
declare(linear_solve_p, CALL, inline=_linear_solve_inline)
