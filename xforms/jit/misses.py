"""explain_cache_misses: why a jitted call traces again, in JAX's words.

>>> explain_miss(f, key, seen)    # logs "TRACING CACHE MISS for f ...: never seen function"
"""
import logging

from ..core import trace as core
from ..core.source_info import describe_function

logger = logging.getLogger("xforms.jit")


def key_leaf_kinds(key):
    """The (shape, dtype) entries of a signature key's argument leaves."""
    return [k for k in _key_parts(key)["leaves"] if isinstance(k, tuple)]


def _key_parts(key):
    """A signature key of `Jitted._key` as {part: value}."""
    options = ()
    if isinstance(key[0], tuple):        # (key, trace_context) under non-default options
        key, options = key
    if isinstance(key[0], str):          # ("static", statics, static keywords, tree, leaves)
        _, statics, skw, tree, leaves = key
        return {"tree": tree, "leaves": leaves, "statics": dict(statics) | dict(skw),
                "options": options}
    return {"tree": key[0], "leaves": key[1], "statics": {}, "options": options}


def _describe_leaf(k):
    names = {"f": "Python float", "i": "Python int", "b": "Python bool"}
    if isinstance(k, tuple):
        return core.ShapedArray(k[0], k[1]).str_short()
    return names.get(k, getattr(k, "__name__", str(k)))


def _key_differences(old, new):
    """What differs between two signature keys, in words."""
    a, b = _key_parts(old), _key_parts(new)
    if a["tree"] != b["tree"]:
        return [f"different argument structure: now {b['tree']} and before {a['tree']}"]
    out = [f"argument leaf {i}: now {_describe_leaf(n)} and before {_describe_leaf(o)}"
           for i, (o, n) in enumerate(zip(a["leaves"], b["leaves"])) if o != n]
    sa, sb = a["statics"], b["statics"]
    out += [f"static argument {k!r}: now {sb.get(k)!r} and before {sa.get(k)!r}"
            for k in sorted(set(sa) | set(sb), key=str) if sa.get(k) != sb.get(k)]
    if a["options"] != b["options"]:
        out.append(f"traced options: now {b['options']} and before {a['options']}")
    return out


def explain_miss(fun, key, seen):
    """explain_cache_misses: log why this call of `fun` traces again (JAX's wording)."""
    if key is None:
        why = "its arguments form no cache key (an unhashable static argument)"
    elif not seen:
        why = "never seen function"
    else:
        closest = min((_key_differences(k, key) for k in seen), key=len)
        why = "all previously seen signatures differ; from the closest one:\n  * " + \
            "\n  * ".join(closest)
    logger.warning("TRACING CACHE MISS for %s: %s", describe_function(fun), why)
