"""The registry of built-in primitives: every one, by object and by name, and the rules each
deliberately lacks (with the reason); and of the array types of backends that take Python's
operators from xforms.numpy (`operator_type`).

Family modules (xforms/primitives/*.py) create their primitives with `primitive(name)` and
record a missing rule with `exempt(prim, kind, reason)`; tests/tooling/test_rule_coverage.py walks
`ALL_PRIMITIVES` through every layer and reads `EXEMPT`.  Kinds of exemption: "jvp",
"transpose", "vmap" (transforms) and "cuda" (no CUDA lowering: the CUDA backend raises a
`LoweringError` naming the primitive).

>>> p = primitive("my_op"); lookup("my_op") is p
True
"""
from .avals import DEVICE_ARRAY_TYPES
from .trace import Primitive

ALL_PRIMITIVES = []
EXEMPT = {"jvp": {}, "transpose": {}, "vmap": {}, "cuda": {}}
_BY_NAME = {}


def primitive(name, multiple_results=False, cls=Primitive):
    """A new built-in primitive, registered under its (unique) name (`cls`: a Primitive
    subclass whose bind fills in parameters JAX lets a caller omit)."""
    p = cls(name, multiple_results)
    ALL_PRIMITIVES.append(p)
    _BY_NAME.setdefault(name, p)
    return p


def exempt(prim, kind, reason):
    """Record that `prim` deliberately has no rule of `kind`, and why."""
    if not reason:
        raise ValueError(f"exempting {prim} from {kind} needs a reason")
    EXEMPT[kind][prim] = reason


def lookup(name):
    """The built-in primitive called `name`, or None."""
    return _BY_NAME.get(name)


class RuleTable(dict):
    """A registry of lowering code keyed by `Primitive`, which also accepts a primitive's
    name (resolved through xforms/core/registry.py), so `OP_RULES["pad"] = rule` and
    `OP_RULES[pad_p] = rule` are the same entry.  A name no built-in primitive has (yet)
    is kept as a string and still found by name.

    >>> t = RuleTable(); t["add"] = "r"; t[lookup("add")]
    'r'
    """

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.update(*args, **kwargs)

    def update(self, *args, **kwargs):
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    @staticmethod
    def _key(k):
        if isinstance(k, str):
            return lookup(k) or k
        return k

    def __setitem__(self, k, v):
        super().__setitem__(self._key(k), v)

    def __getitem__(self, k):
        k = self._key(k)
        if dict.__contains__(self, k):
            return dict.__getitem__(self, k)
        name = getattr(k, "name", None)
        if name is not None and dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise KeyError(k)

    def __contains__(self, k):
        try:
            self[k]
        except KeyError:
            return False
        return True

    def get(self, k, default=None):
        try:
            return self[k]
        except KeyError:
            return default

    def setdefault(self, k, default=None):
        if k not in self:
            self[k] = default
        return self[k]

    def __delitem__(self, k):
        k = self._key(k)
        super().__delitem__(k if dict.__contains__(self, k) else getattr(k, "name", k))

    def pop(self, k, *default):
        return super().pop(self._key(k), *default)

    def rule(self, k):
        """Decorator: the function is `k`'s rule in this table, registered where it is
        defined rather than in a table of names.

        >>> t = RuleTable()
        >>> @t.rule("add")
        ... def _add(m, eqn): ...
        >>> t[lookup("add")] is _add
        True
        """
        def register(fn):
            self[k] = fn
            return fn
        return register


# A backend's own array type (the CUDA backend's DeviceArray) takes Python's operators from
# xforms.numpy, a higher layer: `operator_type` registers the class, `install_operators`
# (xforms/numpy/arrays/methods.py) the functions, in either order.  x * y is xnp.multiply(x, y)
# then, computed eagerly, as on a JAX array (the operands' values are read to the host).
_OPERATOR_TYPES, _OPERATORS = [], {}


def operator_type(cls):
    """Class decorator: `cls` gets the operators of xforms.numpy (+, *, @, <, ...), and its
    instances are device arrays (core/avals.is_device_array: avals from shape and dtype)."""
    _OPERATOR_TYPES.append(cls)
    DEVICE_ARRAY_TYPES.add(cls)
    for name, fn in _OPERATORS.items():
        setattr(cls, name, fn)
    return cls


def install_operators(ops):
    """Give every `operator_type` class, now and later, the operator functions `ops`."""
    _OPERATORS.update(ops)
    for cls in _OPERATOR_TYPES:
        for name, fn in ops.items():
            setattr(cls, name, fn)
