"""The hints that leave the numbers alone: optimization_barrier, composite (a named
decomposition) and pcast (shard_map's varying type).

xforms has no backend that swaps a composite for a fused
kernel, so the decomposition is what runs; it differentiates and batches as ordinary code
(JAX's composite has neither a jvp nor a batching rule: xforms accepts more programs here,
never different numbers).

    >>> lax.composite(lambda x: x * 2.0, name="my.double")(xnp.ones(3))
"""
import functools

from ...core import axis_env


def optimization_barrier(operand):
    """The operand (any pytree), unchanged: xforms's compilers do not move work across
    program points the way XLA does, so there is nothing to prevent."""
    return operand


_PCAST_TO = ("reduced", "unreduced", "varying")


def composite(decomposition, name, version=0):
    """`decomposition` under a composite `name` (and `version`): calling the result calls
    `decomposition(*args, **attributes)`.

        >>> lax.composite(lambda x: x * 2.0, name="my.double")(xnp.ones(3))
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"composite: name must be a non-empty string, got {name!r}")
    if not isinstance(version, int) or version < 0:
        raise ValueError(f"composite: version must be a non-negative int, got {version!r}")

    @functools.wraps(decomposition)
    def call(*args, **attributes):
        return decomposition(*args, **attributes)
    return call


def _shard_map_axes(names):
    """The names, each bound by an enclosing shard_map (or vmap/pmap with an axis name)."""
    for n in names:
        try:
            axis_env.lookup(n)
        except NameError:
            raise ValueError(f"pcast over axis {n!r} should be called under "
                             "xforms.shard_map (no enclosing map binds that name)") from None


def pcast(x, axis_name, *, to):
    """x (a pytree) cast to vary over `axis_name` inside shard_map: the values are unchanged.

        >>> xf.shard_map(lambda v: lax.pcast(v, "i", to="varying") * 2, mesh=mesh,
        ...              in_specs=P(), out_specs=P("i"))(x)

    xforms does not type varying values (shard_map's check finds what varies from the
    program), so the cast is the identity; only to='varying' exists here, as the 'reduced'
    and 'unreduced' types of JAX have no counterpart.
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not axis_name:
        return x
    if to not in _PCAST_TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {set(_PCAST_TO)}")
    if to != "varying":
        raise NotImplementedError(f"pcast(to={to!r}): xforms has no {to} array type; only "
                                  "to='varying' (an identity here) is supported")
    _shard_map_axes(names)
    return x
