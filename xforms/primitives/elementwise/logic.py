"""Comparisons and logic (boolean or integer outputs: their tangents are always zero), and
select_n(which, *cases): cases[which] elementwise, linear in the cases.

>>> select_n(lt(x, like(0, x)), x, neg(x))      # |x| for real x
"""
import numpy as np

from ...core import trace as core
from ...core.avals import ShapedArray
from ...core.trace import abstract_eval_rules, impl_rules
from ...core.facts import ELEMENTWISE, declare
from ...transforms.jvp import jvp_rules, Zero
from ...transforms.transpose import transpose_rules, unbroadcast, is_undefined
from ...transforms.vmap import align_batched, vmap_rules
from ...core.engine_prims import broadcast_to_aval
from ...core.registry import exempt, primitive
from .base import (BOOL, bcast_to, bind1, bind2, define, elementwise_aval, full_like_scalar,
                   inexact)


# --- comparisons and logic (boolean outputs: tangents are always zero) -------------------------
eq_p, ne_p, lt_p, le_p, gt_p, ge_p = (
    define(n, f, 2, out_dtype=lambda dt: BOOL, commutative=n in ("eq", "ne"), cheap=True,
         operator=op) for n, f, op in
    (("eq", np.equal, "=="), ("ne", np.not_equal, "!="), ("lt", np.less, "<"),
     ("le", np.less_equal, "<="), ("gt", np.greater, ">"), ("ge", np.greater_equal, ">=")))
eq, ne, lt, le, gt, ge = map(bind2, (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))
_intlike = lambda dt: dt.kind in "biu"
and_p = define("and", np.bitwise_and, 2, accept=_intlike, commutative=True, cheap=True,
             operator="&")
or_p = define("or", np.bitwise_or, 2, accept=_intlike, commutative=True, cheap=True,
            operator="|")
xor_p = define("xor", np.bitwise_xor, 2, accept=_intlike, commutative=True, operator="^")
not_p = define("not", lambda x: np.logical_not(x) if np.result_type(x) == BOOL else np.invert(x),
             accept=_intlike, cheap=True, operator="~")
and_, or_, xor = map(bind2, (and_p, or_p, xor_p))
not_ = bind1(not_p)
is_finite_p = define("is_finite", np.isfinite, out_dtype=lambda dt: BOOL, accept=inexact)
is_finite = bind1(is_finite_p)
for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p, not_p, is_finite_p):
    exempt(_p, "jvp", "boolean/integer output: tangent is a symbolic zero")

# --- select_n(which, *cases): cases[which] elementwise; linear in the cases -----------------
select_n_p = primitive("select_n")


def _select_n_aval(which, *cases):
    if which.dtype not in (BOOL, np.dtype(np.int32), np.dtype(np.int64)):
        # (lax.select_n reads an unsigned `which` as int64 first, and says JAX's words)
        raise TypeError(f"select `which` must be boolean or integer type, got "
                        f"{which.dtype.name} (xforms' select_n_p: bool, int32 or int64)")
    out = elementwise_aval("select_n", cases)[0]
    if which.shape not in ((), out.shape):
        raise TypeError(f"select_n: predicate shape {which.shape} does not match {out.shape}")
    return [ShapedArray(out.shape, out.dtype, out.weak_type)]


abstract_eval_rules[select_n_p] = _select_n_aval
impl_rules[select_n_p] = lambda which, *cases: [np.choose(np.asarray(which, np.int64), cases)
                                                if len(cases) > 2 else
                                                np.where(which, cases[1], cases[0])]
select_n = lambda which, *cases: select_n_p.bind(which, *cases)
declare(select_n_p, ELEMENTWISE, cheap=True)


def _select_n_vmap(args, dims):
    # like other elementwise ops, except a batched predicate needs a full-shape case
    (which, *cases), d = align_batched(args, dims)
    if core.get_aval(which).ndim and all(core.get_aval(c).ndim == 0 for c in cases):
        cases[0] = broadcast_to_aval(cases[0], core.get_aval(which).update(
            dtype=core.get_aval(cases[0]).dtype))
    return [select_n(which, *cases)], [d]


vmap_rules[select_n_p] = _select_n_vmap


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n(which, *cases)
    if all(isinstance(t, Zero) for t in tangents[1:]):
        return [ans], [Zero(core.get_aval(ans).strip_weak())]
    from ...transforms.jvp import instantiate
    ts = [bcast_to(instantiate(t), ans) for t in tangents[1:]]
    return [ans], [select_n(which, *ts)]


def _select_n_transpose(ct, which, *cases):
    if isinstance(ct, Zero):
        return [None] * (1 + len(cases))
    zeros = full_like_scalar(0, ct)
    outs = [None]
    for i, c in enumerate(cases):
        if is_undefined(c):
            branches = [ct if j == i else zeros for j in range(len(cases))]
            outs.append(unbroadcast(select_n(which, *branches), c.aval))
        else:
            outs.append(None)
    return outs


jvp_rules[select_n_p] = _select_n_jvp
transpose_rules[select_n_p] = _select_n_transpose
