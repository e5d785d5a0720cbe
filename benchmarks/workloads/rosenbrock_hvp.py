"""rosenbrock_hvp: gradient and Hessian-vector product of the extended Rosenbrock function.

f(x) = sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2), n = 1e3..1e6, written with
slices (a stencil: the gradient pads shifted terms back to length n).
hvp: xforms uses ``xf.hvp(f, (x,), (v,))`` (forward-over-reverse); JAX the same
by ``jvp`` of ``grad``; autograd its ``hessian_vector_product`` (reverse over
reverse); PyTensor ``grad(grad(f) . v)``.  The Hessian is tridiagonal, so the
hand-written limits (NumPy slices, one Numba loop) cost a few flops per
element.  grad: ``jit(grad(f))`` against JAX and hand-written NumPy / Numba gradients.
``f`` is the Numba forward.

grad_strided, hvp_strided: the same for the form with strided slices (issue #37),
f(x) = sum(100*(a*a - b)**2 + (a - 1)**2) with a = x[0::2], b = x[1::2], n even: its
gradient scatters two half-length terms back to every other element (the transpose of
a strided slice is a pad with interior padding); the Hessian is 2x2 block diagonal.
"""
from __future__ import annotations

import functools

import numpy as np

from ..harness import Case

NAME = "rosenbrock_hvp"
SWEEP = "n"


def rosen(x, np_):
    return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_strided(x, np_):
    a, b = x[0::2], x[1::2]
    return np_.sum(100.0 * (a * a - b) ** 2 + (a - 1.0) ** 2)


def numpy_hvp(x, v):
    """Tridiagonal Hessian times v, by hand."""
    a, b, va, vb = x[:-1], x[1:], v[:-1], v[1:]
    out = np.zeros_like(x)
    out[:-1] = (1200.0 * a * a - 400.0 * b + 2.0) * va - 400.0 * a * vb
    out[1:] += 200.0 * vb - 400.0 * a * va
    return out


def numpy_grad(x):
    """The gradient by hand."""
    a, b = x[:-1], x[1:]
    t = b - a * a
    out = np.zeros_like(x)
    out[:-1] = -400.0 * t * a - 2.0 * (1.0 - a)
    out[1:] += 200.0 * t
    return out


def numpy_grad_strided(x):
    """The strided form's gradient by hand."""
    a, b = x[0::2], x[1::2]
    t = a * a - b
    out = np.empty_like(x)
    out[0::2] = 400.0 * t * a + 2.0 * (a - 1.0)
    out[1::2] = -200.0 * t
    return out


def numpy_hvp_strided(x, v):
    """The strided form's 2x2-block Hessian times v, by hand."""
    a, b, va, vb = x[0::2], x[1::2], v[0::2], v[1::2]
    out = np.empty_like(x)
    out[0::2] = (1200.0 * a * a - 400.0 * b + 2.0) * va - 400.0 * a * vb
    out[1::2] = 200.0 * vb - 400.0 * a * va
    return out


@functools.lru_cache(maxsize=None)
def _numba_kernels():
    from ..peers import load
    njit = load("numba").njit

    @njit
    def forward(x):
        s = 0.0
        for i in range(x.size - 1):
            s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
        return s

    @njit
    def hvp(x, v):
        n = x.size
        out = np.empty_like(x)
        out[0] = 0.0
        for i in range(n - 1):
            a, b = x[i], x[i + 1]
            out[i] += (1200.0 * a * a - 400.0 * b + 2.0) * v[i] - 400.0 * a * v[i + 1]
            out[i + 1] = 200.0 * v[i + 1] - 400.0 * a * v[i]
        return out

    @njit
    def grad(x):
        n = x.size
        out = np.empty_like(x)
        out[0] = 0.0
        for i in range(n - 1):
            a = x[i]
            t = x[i + 1] - a * a
            out[i] += -400.0 * t * a - 2.0 * (1.0 - a)
            out[i + 1] = 200.0 * t
        return out
    return forward, hvp, grad


@functools.lru_cache(maxsize=None)
def _numba_strided_kernels():
    from ..peers import load
    njit = load("numba").njit

    @njit
    def forward(x):
        s = 0.0
        for i in range(x.size // 2):
            a, b = x[2 * i], x[2 * i + 1]
            s += 100.0 * (a * a - b) ** 2 + (a - 1.0) ** 2
        return s

    @njit
    def hvp(x, v):
        out = np.empty_like(x)
        for i in range(x.size // 2):
            a, b, va, vb = x[2 * i], x[2 * i + 1], v[2 * i], v[2 * i + 1]
            out[2 * i] = (1200.0 * a * a - 400.0 * b + 2.0) * va - 400.0 * a * vb
            out[2 * i + 1] = 200.0 * vb - 400.0 * a * va
        return out

    @njit
    def grad(x):
        out = np.empty_like(x)
        for i in range(x.size // 2):
            a = x[2 * i]
            t = a * a - x[2 * i + 1]
            out[2 * i] = 400.0 * t * a + 2.0 * (a - 1.0)
            out[2 * i + 1] = -200.0 * t
        return out
    return forward, hvp, grad


# the two forms: f(x, np_), NumPy hvp, NumPy grad, Numba kernels (forward, hvp, grad)
FORMS = {"": (rosen, numpy_hvp, numpy_grad, _numba_kernels),
         "_strided": (rosen_strided, numpy_hvp_strided, numpy_grad_strided,
                      _numba_strided_kernels)}


def _systems(ctx, form):
    fun, np_hvp, _, kernels = FORMS[form]

    def xforms(d):
        p = ctx.peer("xforms")
        f = lambda x: fun(x, p.xnp)  # noqa: E731
        return ctx.xjit(lambda x, v: p.xf.hvp(f, (x,), (v,))), ctx.xput(*d)

    def jax(d):
        p = ctx.peer("jax")
        f = lambda x: fun(x, p.jnp)  # noqa: E731
        return ctx.jax_call(lambda x, v: p.jax.jvp(p.jax.grad(f), (x,), (v,))[1]), d

    def pytensor(d):
        p = ctx.peer("pytensor")
        X, V = p.pt.vector("x", dtype="float64"), p.pt.vector("v", dtype="float64")
        g = p.pytensor.grad(fun(X, p.pt), X)
        return p.pytensor.function([X, V], p.pytensor.grad(p.pt.sum(g * V), X)), d

    def autograd(d):
        p = ctx.peer("autograd")
        return p.ag.hessian_vector_product(lambda x: fun(x, p.anp)), d

    def numba(d):
        return kernels()[1], d

    def f(d):
        return kernels()[0], d[:1]

    return dict(xforms=xforms, jax=jax, pytensor=pytensor, autograd=autograd,
                numpy=lambda d: (np_hvp, d), numba=numba, f=f)


def _grad_systems(ctx, form):
    fun, _, np_grad, kernels = FORMS[form]

    def xforms(d):
        p = ctx.peer("xforms")
        return ctx.xjit(p.xf.grad(lambda x: fun(x, p.xnp))), ctx.xput(*d[:1])

    def jax(d):
        p = ctx.peer("jax")
        return ctx.jax_call(p.jax.grad(lambda x: fun(x, p.jnp))), d[:1]

    return dict(xforms=xforms, jax=jax, numpy=lambda d: (np_grad, d[:1]),
                numba=lambda d: (kernels()[2], d[:1]),
                f=lambda d: (kernels()[0], d[:1]))


def _make(n, seed):
    def make():
        rng = np.random.default_rng(seed)
        return rng.uniform(-1.5, 1.5, n), rng.standard_normal(n)
    return make


def cases(ctx):
    sizes = [10 ** 3] if ctx.quick else [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6]
    return [Case(task + form, {"n": n}, systems(ctx, form), make=_make(n, ctx.seed),
                 unit="ns/elem", per=n, limit="numba", rtol=1e-9)
            for form in FORMS
            for task, systems in (("hvp", _systems), ("grad", _grad_systems)) for n in sizes]
