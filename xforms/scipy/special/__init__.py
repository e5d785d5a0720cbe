"""`xforms.scipy.special`: jax.scipy.special's functions (plus scipy's erfcinv).

Primitives (xforms/primitives/special/functions.py, compiled from xforms/kernels/libm/special.py on the CPU and
on CUDA): gammaln, digamma, zeta, erf, erfc, erfinv, erfcinv, gammainc, gammaincc, betainc,
i0e, i1e, bessel_jn, bessel_yn, bessel_iv, bessel_ive.  Everything else is composed from them and the elementwise primitives, so it fuses
and differentiates like user code.  Arguments broadcast and promote as in JAX (integers
become floating).  Accuracy: see xforms/kernels/libm/special.py (errors against scipy.special).

    >>> import xforms.scipy.special as xsp
    >>> xsp.gammaln(xnp.array([0.5, 10.0]))

Composed too: wofz (and dawsn, fresnel from it), sici, expn, owens_t, hyp1f1, hyp2f1,
sph_harm_y -- all 53 of jax.scipy.special's names.
Derivatives in shape parameters (zeta's s, gammainc's a, betainc's a and b) raise
NotImplementedError.
"""
from .bessel import (bessel_jn, i0, i0e, i1, i1e, iv, ive, j0, j1, jn, y0, y1, yn)
from .error import (erf, erfc, erfcinv, erfcx, erfinv, log_ndtr, ndtr, ndtri, owens_t)
from .faddeeva import dawsn, fresnel, wofz
from .harmonics import sph_harm_y
from .hypergeometric import hyp1f1, hyp2f1
from .gamma import (bernoulli, beta, betainc, betaln, comb, digamma, factorial, gamma, gammainc,
                    gammaincc, gammaln, gammasgn, loggamma, multigammaln, poch, polygamma, psi,
                    zeta)
from .integrals import exp1, expi, expn, sici, spence
from .logistic import (boxcox, boxcox1p, entr, expit, kl_div, log_softmax, logit, rel_entr,
                       softmax, xlog1py, xlogy)
from ...nn import logsumexp

__all__ = ["bessel_jn", "iv", "ive", "j0", "j1", "jn", "y0", "y1", "yn", "beta", "betainc",
           "betaln", "comb", "digamma", "entr", "erf", "erfc", "erfcinv", "erfinv", "expit",
           "factorial", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn", "i0", "i0e", "i1",
           "i1e", "kl_div", "log_ndtr", "log_softmax", "logit", "loggamma", "logsumexp",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "rel_entr", "softmax", "xlog1py",
           "xlogy", "zeta", "poch", "boxcox", "boxcox1p", "bernoulli", "erfcx", "exp1", "expi",
           "spence", "dawsn", "expn", "fresnel", "owens_t", "sici", "wofz", "sph_harm_y",
           "hyp1f1", "hyp2f1"]
