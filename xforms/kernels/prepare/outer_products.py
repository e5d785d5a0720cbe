"""Products without a contracted dimension as the elementwise products they are.

``dot_general(x, y)`` with no contracting dimensions (``jnp.outer``, an outer product of a
Jacobian, a batched one) multiplies each pair once.  XLA rewrites it to a ``multiply`` of
two broadcasts, so ``-0.0 * 2.0`` stays -0.0; a product loop or BLAS (``acc = 0; acc +=
x * y``, gemm with beta = 0) adds it to +0.0 and gives +0.0.  Here it becomes that multiply
before planning (both backends), which also fuses into its consumers.

    >>> # dot_general[(((), ()), ((), ()))] b a  ->  mul(broadcast(b, (0,)), broadcast(a, (1,)))
"""
from xforms.core.ir import Jaxpr, Literal, Var
from xforms.core.registry import lookup


def expand_outer_products(jaxpr):
    """`jaxpr` with each float/complex/integer dot_general that contracts nothing replaced by
    a mul of broadcasts (transposed and converted first where its layout or dtype asks)."""
    eqns, changed = [], False
    for e in jaxpr.eqns:
        new = _as_mul(e)
        changed |= new is not None
        eqns.extend([e] if new is None else new)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars) if changed else jaxpr


def _as_mul(e):
    if e.prim.name != "dot_general" or "out_permutation" in e.params:
        return None
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    out = e.outvars[0]
    if lc or rc or out.aval.dtype.kind == "b" or any(isinstance(a, Literal) for a in e.invars):
        return None
    x, y = e.invars
    nb = len(lb)
    xf = [d for d in range(x.aval.ndim) if d not in lb]
    yf = [d for d in range(y.aval.ndim) if d not in rb]
    pre = []
    # the output's axes: batch (in lb's order), x's free axes, then y's
    bx = _broadcast(e, pre, x, list(lb) + xf, tuple(range(nb + len(xf))))
    by = _broadcast(e, pre, y, list(rb) + yf,
                    tuple(range(nb)) + tuple(range(nb + len(xf), out.aval.ndim)))
    return pre + [e.replace(prim=lookup("mul"), invars=[bx, by], params={})]


def _broadcast(like, pre, a, perm, dims):
    """`a` with its axes in `perm`'s order, in the output's dtype, broadcast to the output
    shape along `dims`; the equations appended to `pre`."""
    out = like.outvars[0].aval

    def step(name, params, aval):
        nonlocal a
        v = Var(aval)
        pre.append(like.replace(prim=lookup(name), invars=[a], params=params, outvars=[v]))
        a = v
    if a.aval.dtype != out.dtype:
        step("convert_element_type", {"new_dtype": out.dtype, "weak_type": False},
             a.aval.update(dtype=out.dtype, weak_type=False))
    if perm != sorted(perm):
        step("transpose", {"permutation": tuple(perm)},
             a.aval.update(shape=tuple(a.aval.shape[d] for d in perm)))
    step("broadcast_in_dim", {"shape": out.shape, "broadcast_dimensions": dims},
         a.aval.update(shape=out.shape, weak_type=out.weak_type))
    return a
