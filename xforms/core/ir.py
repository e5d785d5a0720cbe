"""The IR: variables, literals, equations, jaxprs (with sub-jaxprs in params) and a printer.

An equation is `outvars = primitive[params](invars)`.  Params are hashable; higher-order
primitives (cond, while, scan, custom rules, checkpoint) carry `ClosedJaxpr`s in params.
Every equation keeps the `SourceInfo` of the user line that produced it.
"""
import itertools

import numpy as np

from .avals import ShapedArray

_ids = itertools.count()


class Var:
    __slots__ = ("aval", "id")

    def __init__(self, aval):
        self.aval = aval
        self.id = next(_ids)

    def __repr__(self):
        return f"Var{self.id}:{self.aval.str_short()}"


class Literal:
    """A scalar constant written inline in the IR."""
    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val, self.aval = val, aval

    def __repr__(self):
        return f"Literal({self.val})"


class Effect:
    """A side effect of an equation, as JAX's `jax._src.effects.Effect`: each kind is a
    subclass (xforms.debug.DebugEffect, OrderedDebugEffect, ...) with one instance, which
    a primitive's `effect` fact returns for its params (xforms/core/facts.py)."""


no_effects = frozenset()


class Eqn:
    __slots__ = ("prim", "invars", "outvars", "params", "source_info")
    primitive = property(lambda self: self.prim)      # JAX's name (eqn.primitive)

    @property
    def effects(self):
        """The equation's effects: its primitive's for these params, and those of the
        programs in its params (a loop body that prints).  The simplifier reads them: an
        equation with effects is never dropped or merged (transforms/simplify.py)."""
        own = self.prim.facts.effect
        effects = own(self.params) if own is not None else no_effects
        for v in self.params.values():
            for sub in (v if isinstance(v, tuple) else (v,)):
                sub = getattr(sub, "jaxpr", sub)          # ClosedJaxpr -> Jaxpr
                if isinstance(sub, Jaxpr):
                    inner = sub.effects
                    if inner:
                        effects = effects | inner
        return effects

    def __init__(self, prim, invars, outvars, params, source_info=None):
        self.prim, self.invars, self.outvars = prim, list(invars), list(outvars)
        self.params, self.source_info = params, source_info

    def replace(self, **kw):
        new = Eqn(self.prim, self.invars, self.outvars, self.params, self.source_info)
        for k, v in kw.items():
            setattr(new, k, v)
        return new


class Jaxpr:
    """`{ lambda constvars ; invars . let eqns in outvars }`"""

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars, self.invars = list(constvars), list(invars)
        self.eqns, self.outvars = list(eqns), list(outvars)

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    @property
    def effects(self):
        """The effects of its equations, sub-programs' included (JAX's `Jaxpr.effects`).

        >>> xf.make_jaxpr(lambda x: xf.debug.print("{}", x))(1.0).effects
        frozenset({Debug})
        """
        effects = no_effects
        for e in self.eqns:
            inner = e.effects
            if inner:
                effects = effects | inner
        return effects

    def __str__(self):
        return pp_jaxpr(self)


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars.  `str()` prints the listing."""

    def __init__(self, jaxpr, consts):
        assert len(jaxpr.constvars) == len(consts)
        self.jaxpr, self.consts = jaxpr, list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    effects = property(lambda self: self.jaxpr.effects)

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))

    # closed jaxprs live in params, so they are hashed by identity
    __hash__ = object.__hash__


# ---- printer ---------------------------------------------------------------------------
class Names:
    """Short letter names for Vars (a, b, ..., z, ba, ...) in order of first use; literals
    print as their value.  Shared by the IR printer and the generated code's comments."""

    def __init__(self):
        self.names = {}

    def __call__(self, v):
        if isinstance(v, Literal):
            return fmt_literal(v.val)
        if v not in self.names:
            n, s = len(self.names), ""
            while True:
                s = chr(ord("a") + n % 26) + s
                n = n // 26 - 1
                if n < 0:
                    break
            self.names[v] = s
        return self.names[v]


def split(seq, *sizes):
    """seq cut into pieces of `sizes` and the rest: a control equation's operand groups
    (consts, carry, xs ...), read alike by the rules and the compilers.

    >>> split("abcde", 1, 2)
    [['a'], ['b', 'c'], ['d', 'e']]
    """
    out, k = [], 0
    for s in sizes:
        out.append(list(seq[k:k + s]))
        k += s
    out.append(list(seq[k:]))
    return out


# ---- the one inliner ---------------------------------------------------------------------------
IDENTITY = "identity"      # `expand` answer: the equation forwards its first operand


def use_counts(jaxpr):
    """-> {Var: how many times the equations and the outputs of `jaxpr` read it} (a rewrite
    that drops a producer may only do so when its value has one reader).

        >>> use_counts(make_jaxpr(lambda x: x * x + x)(1.0).jaxpr)[x]     # 3
    """
    uses = {}
    for a in [a for e in jaxpr.eqns for a in e.invars] + list(jaxpr.outvars):
        if isinstance(a, Var):
            uses[a] = uses.get(a, 0) + 1
    return uses


def inline(jaxpr, env, out, *, fresh=True, expand=None, hoist=None):
    """Append `jaxpr`'s equations to the list `out`, reading each variable through `env`
    (Var -> the atom that stands for it; a variable not in it stands for itself), which is
    updated with the equations' outputs.  -> the atoms of `jaxpr`'s outputs.

    `fresh`: outputs get new variables (a body inlined into another jaxpr, maybe twice).
    `expand(eqn)` -> None (copy it), `IDENTITY` (forward its first operand), or a
    ClosedJaxpr to inline in its place (recursively, fresh); that jaxpr's constants become
    `hoist(constvar, value)` (the atom standing for it).  Used by the partial-evaluation
    rules of loops (a body inlined between equations) and by the backends'
    `kernels/passes.prepare` (call-like primitives).

    >>> env = dict(zip(body.jaxpr.invars, args)); eqns = []
    >>> outs = inline(body.jaxpr, env, eqns)
    """
    read = env.get          # (atoms hash by identity: a Literal or an unmapped Var is itself)
    for eqn in jaxpr.eqns:
        invars = [read(a, a) for a in eqn.invars]
        sub = expand(eqn) if expand is not None else None
        if sub is IDENTITY:
            env[eqn.outvars[0]] = invars[0]
        elif sub is not None:
            assert hoist is not None or not sub.consts, "inline: constants need `hoist`"
            inner = {v: hoist(v, c) for v, c in zip(sub.jaxpr.constvars, sub.consts)}
            inner.update(zip(sub.jaxpr.invars, invars, strict=True))
            outs = inline(sub.jaxpr, inner, out, expand=expand, hoist=hoist)
            env.update(zip(eqn.outvars, outs, strict=True))
        else:
            outvars = eqn.outvars
            if fresh:
                outvars = [Var(v.aval) for v in eqn.outvars]
                env.update(zip(eqn.outvars, outvars))
            out.append(eqn.replace(invars=invars, outvars=outvars))
    return [read(a, a) for a in jaxpr.outvars]


def fmt_literal(val):
    """A literal's value as the IR printer shows it."""
    val = val.item() if isinstance(val, np.generic) else val
    if isinstance(val, float):
        return repr(val)
    return str(val)


def _fmt_param(v, names, indent):
    if isinstance(v, ClosedJaxpr):
        inner = pp_jaxpr(v.jaxpr, Names(), indent + 4)
        return "\n" + inner
    if isinstance(v, Jaxpr):
        return "\n" + pp_jaxpr(v, Names(), indent + 4)
    if isinstance(v, tuple) and v and all(isinstance(x, (ClosedJaxpr, Jaxpr)) for x in v):
        return "(" + ",".join(_fmt_param(x, names, indent) for x in v) + ")"
    if isinstance(v, np.dtype):
        return v.name
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return str(v)


def _is_subjaxpr(v):
    return isinstance(v, (ClosedJaxpr, Jaxpr)) or (
        isinstance(v, tuple) and bool(v) and isinstance(v[0], (ClosedJaxpr, Jaxpr)))


def pp_eqn(eqn, names, indent=0):
    lhs = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in eqn.outvars) or "_"
    params = ""
    shown = {k: v for k, v in eqn.params.items() if not k.startswith("_")}
    # sub-jaxprs last, so short params stay next to the primitive's name
    shown = dict(sorted(shown.items(), key=lambda kv: _is_subjaxpr(kv[1])))
    if shown:
        params = "[" + " ".join(f"{k}={_fmt_param(v, names, indent)}" for k, v in shown.items())
        params += "]"
    args = " ".join(names(v) for v in eqn.invars)
    return f"{lhs} = {eqn.prim.name}{params} {args}".rstrip()


def pp_jaxpr(jaxpr, names=None, indent=0):
    names = names or Names()
    pad = " " * indent
    consts = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in jaxpr.constvars)
    ins = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in jaxpr.invars)
    lines = [f"{pad}{{ lambda {consts + ' ' if consts else ''}; {ins}. let"]
    for eqn in jaxpr.eqns:
        lines.append(f"{pad}    {pp_eqn(eqn, names, indent + 4)}")
    outs = ", ".join(names(v) for v in jaxpr.outvars)
    lines.append(f"{pad}  in ({outs}{',' if len(jaxpr.outvars) == 1 else ''}) }}")
    return "\n".join(lines)


# ---- type checker (check_jaxpr lives in core/trace.py, beside the rule table it reads) --------
class IRTypeError(TypeError):
    pass
