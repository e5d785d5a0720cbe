"""The derivative of a scatter-max / scatter-min (x.at[i].max/min, lax.scatter_max/min,
ops.segment_max/min) as JAX defines it: where several values tie for a position's result
-- the operand's and any number of updates -- each gets an equal share of the tangent.

The value is combined by a chain of elementwise max/min (numpy/indexing.py), whose own
derivative would split a tie by halves along the chain (1/4, 1/4, 1/2 for three); so the
combine is wrapped in a custom_jvp call whose rule is JAX's `_scatter_extremal_jvp`,
written on flat positions:

    out' = x' * (1 if no update reaches p, else [x ties] / (ties at p))
         + scatter_add(u' * [u ties] / (ties at its p))

>>> xf.grad(lambda u: xnp.ones(1).at[xnp.zeros(2, int)].max(u).sum())(xnp.ones(2))
Array([0.33333333, 0.33333333])
"""
import numpy as np

from ..core import trace as core
from ..primitives import elementwise as ew
from ..primitives import indexing as ix
from ..primitives import structural as st
from ..primitives.control import control_flow as cf
from ..primitives.custom import LazyJaxpr, custom_jvp_call_p


def with_tie_rule(combine, flat, fv, pos, name):
    """combine(flat, fv, pos) -- `pos` a NumPy array (known positions) or traced -- bound as
    a custom_jvp call with JAX's tie rule; eagerly (no derivative asked) just the value."""
    if core.current_trace() is core.eval_trace:
        return combine(flat, fv, pos)
    known = isinstance(pos, np.ndarray)
    pos_arg = core.as_array(pos) if known else pos
    avals = [core.get_aval(a) for a in (flat, fv, pos_arg)]
    # known positions stay NumPy inside the value (its rounds need them); the rule reads
    # the same positions as an argument
    call, consts = cf.trace(lambda f, v, p: [combine(f, v, pos if known else p)], avals)
    c_avals = [core.get_aval(c) for c in consts]

    def bind(*args):
        return custom_jvp_call_p.bind(*args, call_jaxpr=call, jvp_jaxpr_thunk=thunk,
                                      num_consts=len(consts), name=name)[0]

    def rule():
        def jvp(*args):
            cs, (f, v, p, df, dv, _) = args[:len(consts)], args[len(consts):]
            out = bind(*cs, f, v, p)    # the value again: higher derivatives use this rule
            return [out, _tangent(f, v, p, out, df, dv)]
        closed, c = cf.trace(jvp, c_avals + avals * 2)
        assert not c, "the tie rule takes no constants"
        return closed
    thunk = LazyJaxpr(rule, name)
    return bind(*consts, flat, fv, pos_arg)


def _tangent(flat, fv, pos, out, dflat, dfv):
    """JAX's equal shares of a tie, on flat positions (pos -1: a dropped update)."""
    dtype = core.get_aval(flat).dtype
    size, n = core.get_aval(flat).shape[0], core.get_aval(fv).shape[0]
    zero, one = st.full((size,), dtype.type(0), dtype), dtype.type(1)
    ones = st.full((n,), one, dtype)
    won = ew.and_(ew.ge(pos, np.int64(0)), ew.eq(fv, ix.gather(out, [pos], (0,))))
    ties = ix.scatter_add(zero, ew.select_n(won, st.full((n,), dtype.type(0), dtype), ones),
                          [pos], (0,), "drop")
    kept = ew.select_n(ew.eq(flat, out), zero, st.full((size,), one, dtype))
    shared = ew.max(ew.add(ties, kept), st.full((size,), one, dtype))   # (no 0/0)
    reached = ew.gt(ix.scatter_add(zero, ones, [pos], (0,), "drop"), dtype.type(0))
    x_share = ew.select_n(reached, st.full((size,), one, dtype), ew.div(kept, shared))
    u_share = ew.select_n(won, st.full((n,), dtype.type(0), dtype),
                          ew.div(ones, ix.gather(shared, [pos], (0,))))
    return ew.add(ew.mul(dflat, x_share),
                  ix.scatter_add(zero, ew.mul(dfv, u_share), [pos], (0,), "drop"))
