"""`xforms.scipy.cluster`: JAX's jax.scipy.cluster, which holds one namespace, `vq`
(vector quantisation: assign observations to the nearest code).

    >>> from xforms.scipy.cluster.vq import vq
"""
from xforms.scipy import lazy_namespaces

__getattr__, __dir__ = lazy_namespaces(__name__, ("vq",))
