"""`xforms.scipy.stats.gaussian_kde` (jax.scipy.stats.gaussian_kde): a Gaussian kernel
density estimate, a pytree (so it passes through jit, vmap and grad), with JAX's methods.

    >>> kde = gaussian_kde(xnp.array([0.0, 1.0, 1.5, 4.0]))
    >>> kde.evaluate(xnp.array([1.0, 2.0]))
"""
import numpy as np

from ... import numpy as xnp
from ...tree_util import register_pytree_node_class
from .. import linalg as _sl
from .. import special as _sp

_LOG_2PI = float(np.log(2 * np.pi))


@register_pytree_node_class
class gaussian_kde:
    """A Gaussian KDE of `dataset` ((n,) or (d, n)), bandwidth by `bw_method` ("scott"
    (default), "silverman", a scalar factor, or a callable of the estimate) and optional
    `weights`, as SciPy's and JAX's.

    >>> gaussian_kde(data, bw_method="silverman").logpdf(x)
    """

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = xnp.atleast_2d(xnp.asarray(dataset))
        if dataset.dtype.kind == "c":
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        if dataset.dtype.kind not in "f":
            dataset = dataset.astype(np.float64)
        d, n = dataset.shape
        if weights is None:
            weights = xnp.full(n, 1.0 / n, dtype=dataset.dtype)
        else:
            weights = xnp.atleast_1d(xnp.asarray(weights))
            dt = np.result_type(dataset.dtype, weights.dtype, np.float32)
            dataset, weights = dataset.astype(dt), weights.astype(dt)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
            weights = weights / xnp.sum(weights)
        self.dataset, self.weights = dataset, weights
        self.neff = 1 / xnp.sum(weights ** 2)
        factor = self._factor("scott" if bw_method is None else bw_method, d)
        data_cov = xnp.atleast_2d(xnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        self.covariance = data_cov * factor ** 2
        self.inv_cov = xnp.linalg.inv(data_cov) / factor ** 2

    def _factor(self, bw_method, d):
        if isinstance(bw_method, str):
            if bw_method == "scott":
                return xnp.power(self.neff, -1.0 / (d + 4))
            if bw_method == "silverman":
                return xnp.power(self.neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif callable(bw_method):
            return bw_method(self)
        elif np.ndim(bw_method) == 0:
            return bw_method
        raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                         "callable.")

    # a pytree: the arrays are its leaves
    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        return kde

    @property
    def d(self):
        return self.dataset.shape[0]

    @property
    def n(self):
        return self.dataset.shape[1]

    def _points(self, points):
        points = xnp.atleast_2d(xnp.asarray(points))
        if points.dtype.kind == "c":
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return xnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def _log_terms(self, points):
        """log(weight_i) + log N(x_j; data_i, covariance): shape (n, m)."""
        x = self._points(points)
        whiten = xnp.linalg.cholesky(self.inv_cov)          # inv_cov = L L^T
        a = xnp.matmul(whiten.T, self.dataset)              # (d, n)
        b = xnp.matmul(whiten.T, x.astype(a.dtype))         # (d, m)
        sq = xnp.sum((a[:, :, None] - b[:, None, :]) ** 2, axis=0)
        log_norm = xnp.sum(xnp.log(xnp.diag(whiten))) - 0.5 * self.d * _LOG_2PI
        return xnp.log(self.weights)[:, None] + log_norm - 0.5 * sq

    def evaluate(self, points):
        """The density at points ((d, m), or (m,) when d == 1)."""
        return xnp.sum(xnp.exp(self._log_terms(points)), axis=0)

    def __call__(self, points):
        return self.evaluate(points)

    def pdf(self, x):
        return self.evaluate(x)

    def logpdf(self, x):
        """log of the density, without underflow far from the data."""
        return _sp.logsumexp(self._log_terms(x), axis=0)

    def _convolve(self, chol, data, weights, mean):
        """sum_i w_i N(mean; data_i, C) given C's Cholesky factor."""
        diff = data - mean[:, None]
        alpha = _sl.cho_solve(chol, diff)
        norm = xnp.sqrt(2 * np.pi) ** self.d * xnp.prod(xnp.diag(chol[0]))
        return xnp.sum(xnp.exp(-0.5 * xnp.sum(diff * alpha, axis=0)) * weights) / norm

    def integrate_gaussian(self, mean, cov):
        """The integral of the estimate times the Gaussian N(mean, cov)."""
        mean = xnp.atleast_1d(xnp.squeeze(xnp.asarray(mean)))
        cov = xnp.atleast_2d(xnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = _sl.cho_factor(self.covariance + cov)
        return self._convolve(chol, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low, high):
        """The mass of a one-dimensional estimate between low and high."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = xnp.squeeze(xnp.sqrt(self.covariance))
        lo = xnp.squeeze((low - self.dataset) / sigma)
        hi = xnp.squeeze((high - self.dataset) / sigma)
        return xnp.sum(self.weights * (_sp.ndtr(hi) - _sp.ndtr(lo)))

    def integrate_kde(self, other):
        """The integral of the product of two estimates."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = _sl.cho_factor(self.covariance + other.covariance)
        small, large = (self, other) if self.n < other.n else (other, self)
        per = [self._convolve(chol, large.dataset, large.weights, small.dataset[:, i])
               for i in range(small.n)]
        return xnp.sum(xnp.stack(per) * small.weights)

    def resample(self, key, shape=()):
        """Samples of the estimate, shape (d, *shape): a data point drawn by weight plus
        Gaussian noise of the kernel's covariance (JAX's draws for the same key)."""
        from ... import random
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, xnp.zeros(self.d, self.covariance.dtype),
                                         self.covariance, shape=shape,
                                         dtype=self.dataset.dtype).T
        return self.dataset[:, ind] + eps

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("dynamically changing the bandwidth method is not "
                                  "supported")


__all__ = ["gaussian_kde"]
