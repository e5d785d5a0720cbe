"""Shared helpers of the distributions: promotion, pdf from logpdf, standardising."""
import contextvars
import functools

from ... import numpy as xnp
from ...primitives.operands import aval, promote, returns_arrays


# The methods (as named to `floats`: a density's pdf is exp of its logpdf) whose JAX
# formula takes complex operands (jax 0.10.2).  Every other law's refuses them: it tests the
# support or the domain with lt/le/gt (which refuse complex: they have no order), or calls
# lgamma, igamma, betainc, erfc, floor (real only); laplace.logpdf fails in lax.div.
COMPLEX_OK = frozenset({"cauchy.logpdf", "cauchy.cdf", "cauchy.logcdf", "cauchy.sf",
                        "cauchy.logsf", "cauchy.ppf", "cauchy.isf", "logistic.logpdf",
                        "logistic.cdf", "logistic.sf", "logistic.ppf", "logistic.isf",
                        "norm.logpdf", "mvn.logpdf", "expon.ppf", "pareto.ppf", "uniform.ppf"})

# The methods whose JAX refusal of complex operands is not lax's TypeError but the ValueError
# of a jax.scipy.special function they call first ("betainc does not support complex-valued
# inputs"; xforms' special functions raise it too: special/_util.py real_operands), so that
# a user's `except ValueError` sees the same error.
COMPLEX_VALUE_ERROR = {"beta.cdf": "betainc", "beta.sf": "betainc"}


def floats(*xs, name):
    """Promote to one floating dtype and broadcast (JAX's promote_args_inexact); complex
    operands only where JAX's law takes them (COMPLEX_OK), else JAX's TypeError, raised
    before any formula can give a number (as logistic's took |z| once, session 35).

        >>> floats(1j, 0.0, 1.0, name="expon.logpdf")   # TypeError: ... complex128 ...
    """
    called = _CALLED.get() or name     # (the user's pdf, not the logpdf it exponentiates)
    out = promote(*xs, name=called, inexact=True)
    if out and name not in COMPLEX_OK and aval(out[0]).dtype.kind == "c":
        if name in COMPLEX_VALUE_ERROR:
            raise ValueError(f"{called} does not accept dtype {aval(out[0]).dtype.name}: as "
                             f"in jax.scipy.stats, whose {called} calls "
                             f"{COMPLEX_VALUE_ERROR[name]}, which does not support "
                             "complex-valued inputs; pass real values (x.real)")
        raise TypeError(f"{called} does not accept dtype {aval(out[0]).dtype.name}: as in "
                        f"jax.scipy.stats, whose {called} compares its operands or calls a "
                        "real-only function (lt does not accept dtype complex...); pass real "
                        "values (x.real)")
    return out


# the method the user called, while it runs (`public`), so that `floats`' errors name it
# where it runs another method (pdf runs logpdf)
_CALLED = contextvars.ContextVar("xforms_stats_called", default=None)


def exp_of(logf):
    """The density from a log-density: exp(logf(...))."""
    @functools.wraps(logf)
    def f(*args, **kwargs):
        return xnp.exp(logf(*args, **kwargs))
    f.__doc__ = f"exp({logf.__name__}(...))"
    # named as its distribution module binds it (logpdf -> pdf), where the docs look
    f.__name__ = f.__qualname__ = logf.__name__[3:] if logf.__name__.startswith("log") \
        else f"exp_{logf.__name__}"
    return public(f)


def public(f):
    """A law's method as users call it: arrays out, and, while it runs, its name
    ("expon.pdf") as the one `floats`' errors give, also where it runs another method (pdf
    runs logpdf, beta.logcdf runs cdf and sf)."""
    called = f"{f.__module__.rsplit('.', 1)[-1]}.{f.__name__}"

    @functools.wraps(f)
    def g(*args, **kwargs):
        if _CALLED.get() is not None:            # (inside another method: its name stays)
            return f(*args, **kwargs)
        token = _CALLED.set(called)
        try:
            return f(*args, **kwargs)
        finally:
            _CALLED.reset(token)
    return returns_arrays(g)


def _nan_at_nan(f):
    """f(x, ...) with JAX's NaN wherever x (or q) is NaN: the laws' support tests (x > 0,
    k == floor(k), ...) are False at NaN and picked a constant (0, 1, -inf), or a finite
    number through the stand-in value that keeps a formula's other branch in range."""
    @functools.wraps(f)
    def g(x, *args, **kwargs):
        return xnp.where(xnp.isnan(x), xnp.nan, f(x, *args, **kwargs))
    return g


def api(f):
    """A univariate law's method f(x, ...): arrays out, NaN where x is NaN."""
    return public(_nan_at_nan(f))


# the methods whose value at a NaN x is a number in JAX too (jax 0.10.2: gamma.logpdf -inf,
# binom/poisson.logpmf -inf, uniform.logpdf -0.0 and uniform.cdf 0): their support tests
# decide, as JAX's do (uniform.cdf's clip still gives NaN there)
api_as_jax_at_nan = public


multivariate = public     # (dirichlet, multinomial, multivariate_normal: x a vector)


def nan_where(bad, out):
    """out, with NaN where `bad`: JAX's laws answer NaN for parameters outside their domain
    (p outside [0, 1], a shape <= 0, a >= b, ...) where a formula alone gives a number (a
    support test's constant, a clip, a stand-in value).  `bad` is JAX's own test, so a NaN
    parameter counts as bad only where JAX's does.

        >>> nan_where((p < 0) | (p > 1), 1 - p)
    """
    return xnp.where(bad, xnp.nan, out)


def log_prob(p, q, shapes=()):
    """log(p) given p and q = 1 - p, each computed directly: log1p(-q) where p > 1/2
    (there q is the accurate one).  Where p == 0 (outside the support) it is -inf with a
    zero derivative in x, loc and scale but a NaN one in each shape parameter of `shapes`,
    as JAX's log(cdf) gives: d cdf/d shape / cdf = 0/0 (chi2.logcdf's df at x <= 0)."""
    big = (p > 0.5) & ~xnp.isnan(q)       # (q NaN, p a number: gamma.sf's 1 below the
    zero = p == 0                          # support at a <= 0, where JAX's log(sf) is 0)
    off = -xnp.inf
    for s in shapes:      # log(0 * s): -inf, derivative 0 * (1/0) in s, only where zero
        # (s in p's dtype: an int32 shape would promote a float32 p to float64)
        off = off + xnp.log(xnp.where(zero, 0.0 * xnp.asarray(s, p.dtype), 1.0))
    small = xnp.where(zero, off, xnp.log(xnp.where(big | zero, 1.0, p)))
    return xnp.where(big, xnp.log1p(-xnp.where(big, q, 0.0)), small)


def on_support(y, fn, outside):
    """fn(y) where y > 0, else `outside`.  fn sees 1.0 off the support, so that no
    derivative of any order leaks from there as 0 * inf (a clamp at 0 gave NaN second
    derivatives: gammainc's at 0); JAX's are 0 there."""
    pos = y > 0
    return xnp.where(pos, fn(xnp.where(pos, y, 1.0)), outside)


def _loc_scale(args, kwargs, nshape, name):
    """(shape parameters, loc, scale) from f(x, *shape, loc=0, scale=1)'s arguments."""
    if len(args) > nshape + 2:
        raise TypeError(f"{name}: takes at most {nshape + 3} positional arguments "
                        f"(x, {nshape} shape parameter(s), loc, scale), got {len(args) + 1}")
    extra = set(kwargs) - {"loc", "scale"}
    if extra:
        raise TypeError(f"{name}: unexpected keyword argument(s) {sorted(extra)}")
    rest = list(args[nshape:]) + [kwargs.get("loc", 0), kwargs.get("scale", 1)][
        len(args) - nshape:]
    return list(args[:nshape]), rest[0], rest[1]


def standardized(dist, method, fn, *, nshape=0, density=False, reflect=False, at_nan=api):
    """A location-scale method f(x, *shape, loc=0, scale=1) = fn(z, *shape) with
    z = (x - loc) / scale, or (loc - x) / scale with `reflect` (the survival functions of
    symmetric laws); a log-density (`density`) subtracts log(scale).  Arguments promote and
    broadcast together (floats).  `at_nan=api_as_jax_at_nan` leaves a NaN x to fn, for
    the methods whose JAX value there is a number.

        >>> cdf = standardized("norm", "cdf", special.ndtr)
    """
    name = f"{dist}.{method}"

    def f(x, *args, **kwargs):
        shape, loc, scale = _loc_scale(args, kwargs, nshape, name)
        x, *shape, loc, scale = floats(x, *shape, loc, scale, name=name)
        z = (loc - x) / scale if reflect else (x - loc) / scale
        out = fn(z, *shape)
        if not density:
            return out
        # a zero density stays -inf with a zero derivative in scale too (as JAX's laws)
        return xnp.where(out == -xnp.inf, out, out - xnp.log(scale))
    _home(f, dist, method)
    f.__doc__ = f"{name}(x, {'shape, ' * nshape}loc=0, scale=1) (jax.scipy.stats)"
    return at_nan(f)


def quantile(dist, method, fn, *, nshape=0, reflect=False):
    """A location-scale quantile f(q, *shape, loc=0, scale=1) = loc + scale fn(q, *shape)
    (loc - scale fn(q, *shape) with `reflect`: isf of symmetric laws)."""
    name = f"{dist}.{method}"

    def f(q, *args, **kwargs):
        shape, loc, scale = _loc_scale(args, kwargs, nshape, name)
        q, *shape, loc, scale = floats(q, *shape, loc, scale, name=name)
        v = fn(q, *shape) * scale
        return loc - v if reflect else loc + v
    _home(f, dist, method)
    f.__doc__ = f"{name}(q, {'shape, ' * nshape}loc=0, scale=1) (jax.scipy.stats)"
    return public(_nan_at_nan(f))


def _home(f, dist, method):
    """Name a method made here as its distribution's module binds it (`norm.cdf` is `cdf` of
    xforms.scipy.stats.norm), so that tracebacks and the API reference find it there."""
    f.__name__ = f.__qualname__ = method
    f.__module__ = f"xforms.scipy.stats.{dist}"


def log1mexp(a):
    """log(1 - exp(a)) for a <= 0, accurate at both ends (log(-expm1(a)) near 0,
    log1p(-exp(a)) below -log 2)."""
    near = a > -0.6931471805599453
    return xnp.where(near, xnp.log(-xnp.expm1(xnp.where(near, a, -1.0))),
                     xnp.log1p(-xnp.exp(xnp.where(near, -1.0, a))))
