"""stop_gradient: the identity whose tangent is zero (never linear: no transpose).

>>> grad(lambda x: x * stop_gradient(x))(3.0)      # 3.0
"""
from ...core.registry import exempt
from ...transforms.jvp import defjvp_zero
from ...tree_util import tree_map
from .base import define


# --- stop_gradient: identity whose tangent is zero ---------------------------------------------
stop_gradient_p = define("stop_gradient", lambda x: x, simplify=None, lowers_to_identity=True)
defjvp_zero(stop_gradient_p)
exempt(stop_gradient_p, "transpose", "never linear: its tangent is always zero")


def stop_gradient(x):
    """Identity whose derivative is zero (applied leafwise to pytrees)."""
    return tree_map(stop_gradient_p.bind, x)
