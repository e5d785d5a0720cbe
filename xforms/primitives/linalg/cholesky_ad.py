"""Cholesky's derivative as two linear primitives, so that reverse mode runs one cheap kernel.

`cholesky` reads the lower triangle of `a` (linalg.py).  Its tangent map, for the factor L,

    cholesky_tangent(L, dA) = L Phi(L^-1 H(dA) L^-H),

where H(dA) = tril(dA, -1) + tril(dA, -1)^H + Re diag(dA) is the Hermitian matrix the
lower triangle of dA stands for and Phi(X) = tril(X) with the diagonal halved, is linear in
dA.  For a Hermitian dA (jnp.linalg.cholesky symmetrises its input, as JAX does) it is
JAX's rule L Phi(L^-1 dA L^-H).  Its transpose is the second primitive,

    cholesky_cotangent(L, G) = H^T(L^-T Phi(L^T G) conj(L)^-1),
    H^T(Y) = tril(Y, -1) + tril(Y^H, -1) + Re diag(Y)     (lower triangular),

and each is the other's transpose.  Written with two triangular solves and a product, as the
tangent map is lowered (it is inlined), the cotangent costs 4 n^3 flops; the CPU kernel
(xforms/kernels/runtime/linalg.py `la_cholesky_rev`) runs instead the reverse of a blocked Cholesky
factorisation (I. Murray, "Differentiation of the Cholesky decomposition", 2016): 2/3 n^3
flops in BLAS-3 calls, so `grad` of a Gaussian-process likelihood costs one Cholesky and
twice its flops, less than the one Cholesky and an inverse of a hand-written gradient.
Both read the lower triangle of L (a Cholesky factor) only, and act on batches (..., n, n).

    >>> L = cholesky(a); dL = cholesky_tangent(L, da)
"""
import numpy as np

from ...core import trace as core
from ...core.avals import ShapedArray
from ...core.trace import abstract_eval_rules, impl_rules
from ...core.facts import CALL, declare
from ...transforms.jvp import Zero, add_tangents, jvp_rules, linear_primitives
from ...transforms.transpose import is_undefined, transpose_rules
from .. import elementwise as ew
from ...core.registry import primitive
from .factor import tri_impl, cholesky, cholesky_p, def_batched_vmap, triangular_solve
from .batched import conj, const_like, dtype, h, mm, mT, shape, tril

cholesky_tangent_p = primitive("cholesky_tangent")
# (eager_scale: its NumPy impl, one BLAS thread, n = 200 / 500 / 1000 / 2000: 3.3 / 29 /
# 136 / 905-934 ms, 3-5x a Cholesky's; estimated 4.0 / 28 / 135 / 720 ms,
# xforms/exec/eager_cost.py)
cholesky_cotangent_p = declare(primitive("cholesky_cotangent"), eager_work="matrix",
                               eager_scale=4.5)


# ---- the maps, composed of primitives (tangent's lowering; both jvps) -----------------------
def _phi(x):
    """tril(x) with the diagonal halved."""
    n = shape(x)[-1]
    return ew.mul(x, const_like(np.tri(n) - 0.5 * np.eye(n), x))


def _re(d):
    """The real part of d (d itself when real)."""
    if dtype(d).kind != "c":
        return d
    return ew.mul(ew.add(d, ew.conj(d)), const_like(0.5, d))


def hermitian(x):
    """H(x): the Hermitian matrix x's lower triangle stands for."""
    n = shape(x)[-1]
    low = tril(x, -1)
    return ew.add(ew.add(low, h(low)), _re(ew.mul(x, const_like(np.eye(n), x))))


def _hermitian_t(y):
    """H's transpose: lower triangular."""
    n = shape(y)[-1]
    return ew.add(tril(ew.add(y, h(y)), -1), _re(ew.mul(y, const_like(np.eye(n), y))))


def _rsolve_h(L, b):
    """b L^-H."""
    return triangular_solve(L, b, left_side=False, lower=True, transpose_a=True,
                            conjugate_a=True)


def _rsolve_conj(L, b):
    """b conj(L)^-1."""
    return triangular_solve(L, b, left_side=False, lower=True, conjugate_a=True)


def _lsolve(L, b, transpose_a=False):
    """L^-1 b, or L^-T b."""
    return triangular_solve(L, b, left_side=True, lower=True, transpose_a=transpose_a)


def _inner(L, x):
    """W = L^-1 H(x) L^-H, the tangent map before Phi and the product with L."""
    return _lsolve(L, _rsolve_h(L, hermitian(x)))


def tangent_composite(L, x):
    """cholesky_tangent from triangular solves and a product (how it is lowered)."""
    L = tril(L)
    return mm(L, _phi(_inner(L, x)))


def _outer(L, g):
    """Y = L^-T Phi(L^T g) conj(L)^-1, the cotangent map before H^T."""
    return _rsolve_conj(L, _lsolve(L, _phi(mm(mT(L), g)), transpose_a=True))


def cotangent_composite(L, g):
    """cholesky_cotangent from triangular solves and a product (its jvp, and a reference)."""
    return _hermitian_t(_outer(tril(L), g))


# ---- the primitives ---------------------------------------------------------------------------
def cholesky_tangent(L, x):
    return cholesky_tangent_p.bind(L, x)


def cholesky_cotangent(L, g):
    return cholesky_cotangent_p.bind(L, g)


def _aval(L, x):
    if L.shape != x.shape or L.dtype != x.dtype or L.ndim < 2 or L.shape[-1] != L.shape[-2]:
        raise TypeError(f"cholesky derivative: expected a factor and a matrix of one shape "
                        f"(..., n, n) and dtype, got {L.str_short()} and {x.str_short()}")
    return [ShapedArray(x.shape, x.dtype)]


def _np_solve(L, b, **flags):
    kw = dict(left_side=False, lower=True, transpose_a=False, conjugate_a=False,
              unit_diagonal=False)
    kw.update(flags)
    return tri_impl(L, b, **kw)[0]


def _np_phi(x):
    n = x.shape[-1]
    return x * (np.tri(n) - 0.5 * np.eye(n))


def _np_h(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _np_re_diag(x):
    n = x.shape[-1]
    return np.real(x) * np.eye(n)


def _tangent_impl(L, x):
    L, x = np.tril(np.asarray(L)), np.asarray(x)
    low = np.tril(x, -1)
    w = _np_solve(L, low + _np_h(low) + _np_re_diag(x), transpose_a=True, conjugate_a=True)
    w = _np_solve(L, w, left_side=True)
    return [np.matmul(L, _np_phi(w)).astype(x.dtype)]


def _cotangent_impl(L, g):
    L, g = np.tril(np.asarray(L)), np.asarray(g)
    z = _np_solve(L, _np_phi(np.matmul(np.swapaxes(L, -1, -2), g)), left_side=True,
                  transpose_a=True)
    y = _np_solve(L, z, conjugate_a=True)
    return [(np.tril(y + _np_h(y), -1) + _np_re_diag(y)).astype(g.dtype)]


def _tangent_jvp(primals, tangents):
    """Linear in x; in L: dL Phi(W) - L Phi(L^-1 dL W + W dL^H L^-H), W = L^-1 H(x) L^-H."""
    (L, x), (dL, dx) = primals, tangents
    out = cholesky_tangent(L, x)
    t = Zero(core.get_aval(out).strip_weak()) if isinstance(dx, Zero) \
        else cholesky_tangent(L, dx)
    if not isinstance(dL, Zero):
        L, dL = tril(L), tril(dL)
        w = _inner(L, x)
        inner = ew.add(_lsolve(L, mm(dL, w)), _rsolve_h(L, mm(w, h(dL))))
        t = add_tangents(t, ew.sub(mm(dL, _phi(w)), mm(L, _phi(inner))))
    return [out], [t]


def _cotangent_jvp(primals, tangents):
    """Linear in g; in L: H^T(dY), dY = L^-T (Phi(dL^T g) conj(L)^-1 - dL^T Y)
    - Y conj(dL) conj(L)^-1 with Y = L^-T Phi(L^T g) conj(L)^-1."""
    (L, g), (dL, dg) = primals, tangents
    out = cholesky_cotangent(L, g)
    t = Zero(core.get_aval(out).strip_weak()) if isinstance(dg, Zero) \
        else cholesky_cotangent(L, dg)
    if not isinstance(dL, Zero):
        L, dL = tril(L), tril(dL)
        y = _outer(L, g)
        a = ew.sub(_rsolve_conj(L, _phi(mm(mT(dL), g))), mm(mT(dL), y))
        dy = ew.sub(_lsolve(L, a, transpose_a=True),
                    _rsolve_conj(L, mm(y, conj(dL))))
        t = add_tangents(t, _hermitian_t(dy))
    return [out], [t]


def _transpose_to(other):
    def rule(ct, L, x):
        if is_undefined(L):
            raise NotImplementedError(f"{other.name}: transposing with respect to the factor "
                                      "(the map is not linear in it)")
        if isinstance(ct, Zero):
            return [None, None]
        return [None, other.bind(L, ct)]
    return rule


def _cholesky_jvp(primals, tangents):
    """dL = cholesky_tangent(L, dA): JAX's L Phi(L^-1 dA L^-H) for Hermitian dA."""
    (a,), (da,) = primals, tangents
    L = cholesky(a)
    return [L], [cholesky_tangent(L, da)]


def _inline_tangent(eqn):
    """The tangent map's jaxpr (triangular solves and a product), inlined by the lowering."""
    from ...transforms.tracing import trace_cached
    avals = [v.aval for v in eqn.invars]
    closed, _ = trace_cached((cholesky_tangent_p, tuple(avals)),
                             lambda L, x: [tangent_composite(L, x)], avals)
    return closed


for _p, _impl, _jvp, _other in ((cholesky_tangent_p, _tangent_impl, _tangent_jvp,
                                 cholesky_cotangent_p),
                                (cholesky_cotangent_p, _cotangent_impl, _cotangent_jvp,
                                 cholesky_tangent_p)):
    abstract_eval_rules[_p] = _aval
    impl_rules[_p] = _impl
    jvp_rules[_p] = _jvp
    transpose_rules[_p] = _transpose_to(_other)
    linear_primitives.add(_p)        # linear in the second operand
    def_batched_vmap(_p)
jvp_rules[cholesky_p] = _cholesky_jvp
# the tangent map is lowered as what it is made of; the cotangent has kernels of its own
# (xforms/kernels/ops/linalg/factor.py, xforms/kernels/ops/linalg/factor.py)
declare(cholesky_tangent_p, CALL, inline=_inline_tangent)

__all__ = ["cholesky_tangent", "cholesky_cotangent", "tangent_composite",
           "cotangent_composite"]
