"""`lax.cond`, `lax.switch` and `lax.platform_dependent`: every branch traced into one `cond`
primitive."""
import numpy as np

from ... import config
from ...core import trace as core
from ...core.avals import promote_types
from ...core.source_info import describe_function
from ...primitives.control.cond import bind_cond
from ...primitives.elementwise import convert_element_type, max, min, ne
from ...tree_util import tree_unflatten
from .common import cast_outs, flatten, leaf_names, trace_fun, call_site


def cond(pred, true_fun, false_fun, *operands):
    """`true_fun(*operands)` if pred else `false_fun(*operands)`, as one branch in the IR.

    Both branches are traced; they must return the same structure, shapes and dtypes.

    >>> lax.cond(x > 0, lambda x: x * 2.0, lambda x: -x, x)
    """
    a = core.get_aval(pred)
    if a.shape != ():
        raise TypeError(f"cond: pred must be a scalar, got {a.str_short()}{call_site()}; use "
                        "lax.select or xnp.where for elementwise choice")
    if a.dtype != np.bool_:
        pred = ne(pred, a.dtype.type(0))
    index = convert_element_type(pred, np.int32)
    return _switch(index, (false_fun, true_fun), operands, "cond")


def switch(index, branches, *operands):
    """`branches[index](*operands)`, the index clamped into range as in JAX.

    >>> lax.switch(i, [lambda x: x, lambda x: x ** 2, lambda x: -x], x)
    """
    branches = tuple(branches)
    if not branches:
        raise ValueError("switch: branches must be a non-empty sequence of functions")
    a = core.get_aval(index)
    if a.shape != () or a.dtype.kind not in "iub":
        raise TypeError(f"switch: index must be an integer scalar, got {a.str_short()}{call_site()}")
    index = convert_element_type(index, np.int32)
    index = min(max(index, np.int32(0)), np.int32(len(branches) - 1))
    if len(branches) == 1:
        return branches[0](*operands)
    return _switch(index, branches, operands, "switch")


def _switch(index, branches, operands, what):
    where = call_site()
    leaves, tree = flatten(tuple(operands))
    avals = [core.get_aval(x) for x in leaves]
    traced = [trace_fun(b, avals, lambda args, b=b: b(*tree_unflatten(tree, args)))
              for b in branches]
    tree0 = traced[0][2]
    for b, (_, _, t) in zip(branches, traced):
        if t != tree0:
            raise TypeError(f"{what}: the branches must return the same structure, but "
                            f"{describe_function(branches[0])} returns {tree0} and "
                            f"{describe_function(b)} returns {t}{where}")
    outs_avals = [j.out_avals for j, _, _ in traced]
    casts = [[None] * len(outs_avals[0]) for _ in branches]
    for k in range(len(outs_avals[0])):
        col = [o[k] for o in outs_avals]
        shapes_ok = all(c.shape == col[0].shape for c in col)
        dt, _ = promote_types(*((c.dtype, c.weak_type) for c in col)) if shapes_ok else (None, 0)
        if shapes_ok and all(c.dtype == dt or c.weak_type for c in col):
            for b, c in enumerate(col):
                if c.dtype != dt:
                    casts[b][k] = dt
            continue
        name = leaf_names(tree0, "output")[k]
        detail = ", ".join(f"{describe_function(b)} gives {c.str_short()}"
                           for b, c in zip(branches, col))
        raise TypeError(f"{what}: the branches must return the same shapes and dtypes, but for "
                        f"{name} {detail}{where}")
    pairs = [cast_outs(j, c, cs) for (j, c, _), cs in zip(traced, casts)]
    return tree_unflatten(tree0, bind_cond(index, leaves, pairs))


def platform_dependent(*args, default=None, **per_platform):
    """`per_platform[p](*args)` for the platform p the program runs on -- "cpu" (eager code,
    the fast tier, the CPU backend) or "cuda" (a function jitted for the CUDA backend) --
    else `default(*args)`; every branch is traced (a `switch`), as JAX's.

    >>> lax.platform_dependent(x, cpu=lambda x: x * 2.0, cuda=lambda x: x + x)
    """
    if "gpu" in per_platform:
        raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    here = config.lowering_platform.value
    names = list(per_platform)
    branches = [per_platform[n] for n in names] + ([default] if default is not None else [])
    if here in per_platform:
        index = names.index(here)
    elif default is not None:
        index = len(names)
    else:
        raise NotImplementedError(
            f"lax.platform_dependent: no branch for platform {here!r} (branches for "
            f"{', '.join(names) or 'none'}) and no default")
    return switch(np.int32(index), branches, *args)
