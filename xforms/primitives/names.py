"""`name`: the identity that labels a value for the checkpoint policies
(`xforms.ad_checkpoint.checkpoint_name`, JAX's `name_p`).

name(x; name) -> x
    Identity.  LOWER: identity.  Its tangent passes through unnamed (as in JAX): only
    primal values are candidates for saving.  Under `checkpoint`, partial evaluation asks
    the policy about each equation, so `save_only_these_names` sees this one's `name`.
    The simplifier keeps it (simplify=None) so that the label survives until then.
"""
from ..transforms.jvp import defjvp
from ..transforms.transpose import deflinear_transpose
from .elementwise.base import define

name_p = define("name", lambda x, **_: x, simplify=None, lowers_to_identity=True)
defjvp(name_p, lambda t, ans, x, name: t)
deflinear_transpose(name_p, lambda ct, aval, name: ct)


def name(x, label):
    """x labelled `label` (a str) for the checkpoint policies."""
    return name_p.bind(x, name=str(label))
