"""Eager evaluation of loop bodies as generated Python: one line per equation.

Loops run eagerly (xforms' fast tier, `XFORMS_TIERED`, and plain eager calls) evaluate their
body sub-jaxpr once per iteration.  Binding each equation through `core.impl_rules` costs
~3 us (list building, keyword unpacking, a dtype check, NumPy's dispatch), which dominates
small-state loops: 1000 RK4 steps under `grad` execute ~230k equations.  `compile_body`
turns a sub-jaxpr into a Python function whose source has one statement per equation:

* add/sub/mul/neg of matching float dtypes are Python operators (NumPy's own ufuncs,
  without the call overhead; scalars stay NumPy scalars, ~60 ns instead of ~1 us);
* other elementwise primitives call their ufunc directly, reshapes/slices/pads/
  broadcasts/concatenations/sums are specialised to their static parameters;
* every other primitive calls its impl rule, as `core.eval_jaxpr` would.

Literals become NumPy scalars of their aval's dtype, so operators keep the IR's dtypes
(NumPy >= 2 promotion: a typed scalar is not weak).  Results are those of the impl rules:
the same ufuncs on the same values, bit for bit (sums use NumPy's own reduction).

    >>> f = compile_body(closed)     # closed: a const-free ClosedJaxpr
    >>> f(*args)                     # -> list of outputs, as call(closed, *args)
"""
import numpy as np

from ...core import trace as core
from ...core.ir import Literal

# inputs converted on entry: Python scalars (to their IR dtype), eager Arrays (to plain
# ndarrays: Array's Python-level __getitem__ costs ~4x NumPy's on every slice)
_FIX = frozenset((bool, int, float, complex, core.Array))


def compile_body(closed):
    """-> fn(*args) -> list, evaluating `closed` (consts first) as `core.eval_jaxpr` does."""
    return _Builder(closed).build()


class _Builder:
    def __init__(self, closed):
        self.closed = closed
        self.names = {}
        self.count = 0                 # not len(names): an input var may be listed twice
        self.glob = {"_np": np, "_FIX": _FIX, "_in": _input, "_cast": _cast, "_pad": _pad,
                     "_padt": _pad_template, "_fill": _fill}
        self.lines = []

    def const(self, value, stem="_k"):
        name = f"{stem}{len(self.glob)}"
        self.glob[name] = value
        return name

    def ref(self, a):
        if isinstance(a, Literal):
            return self.const(_typed(a.val, a.aval.dtype))
        return self.names[a]

    def bind(self, v):
        name = self.names[v] = f"v{self.count}"
        self.count += 1
        return name

    def build(self):
        j = self.closed.jaxpr
        params = [self.bind(v) for v in j.constvars + j.invars]
        for v, name in zip(j.constvars + j.invars, params):
            dt = self.const(v.aval.dtype, "_dt")
            self.lines.append(f"if {name}.__class__ in _FIX: {name} = _in({name}, {dt})")
        for e in j.eqns:
            self.eqn(e)
        outs = ", ".join(self.ref(a) for a in j.outvars)
        self.lines.append(f"return [{outs}]")
        src = f"def body({', '.join(params)}):\n    " + "\n    ".join(self.lines) + "\n"
        code = compile(src, "<xforms eager loop body>", "exec")
        exec(code, self.glob)
        fn = self.glob["body"]
        consts = list(self.closed.consts)
        if consts:
            return lambda *args: fn(*consts, *args)
        return fn

    def eqn(self, e):
        ins = [self.ref(a) for a in e.invars]
        special = _special(self, e, ins)
        if special is not None:
            out = self.bind(e.outvars[0])
            self.lines.append(f"{out} = {special}")
            return
        fn = self.const(core.impl_rules[e.prim], "_f")
        kw = self.const(dict(e.params), "_p")
        outs = [self.bind(v) for v in e.outvars]
        lhs = f"{', '.join(outs)}, = " if outs else ""     # (a debug callback has none)
        self.lines.append(f"{lhs}{fn}({', '.join(ins)}, **{kw})" if ins
                          else f"{lhs}{fn}(**{kw})")
        for v, o in zip(e.outvars, outs):
            self._check(o, v.aval.dtype)

    def _check(self, name, dtype):
        dt = self.const(dtype, "_dt")
        self.lines.append(f"if getattr({name}, 'dtype', None) != {dt}: "
                          f"{name} = _cast({name}, {dt})")


def _operator(op, ins):
    """`op` (a primitive's `operator` fact) applied to the operand names, as Python source."""
    return f"({ins[0]} {op} {ins[1]})" if len(ins) == 2 else f"({op}{ins[0]})"


def _special(b, e, ins):
    """A specialised expression for one-output equation `e`, or None (call the impl)."""
    if len(e.outvars) != 1:
        return None
    name, p, out = e.prim.name, e.params, e.outvars[0].aval
    in_avals = [a.aval for a in e.invars]
    facts = e.prim.facts                 # numpy_fn, operator: declared by elementwise.define
    if facts.numpy_fn is not None and not p:
        same = all(a.dtype == out.dtype and a.shape == out.shape or a.shape == ()
                   for a in in_avals) and all(a.dtype == out.dtype for a in in_avals)
        var_in = any(not isinstance(a, Literal) for a in e.invars)
        # floats only: NumPy's scalar complex multiply rounds differently from its ufunc,
        # and its scalar integer arithmetic warns on overflow (the ufunc wraps silently)
        if facts.operator and same and var_in and out.dtype.kind == "f":
            return _operator(facts.operator, ins)
        fn = facts.numpy_fn           # (no operand a kernel takes: the NumPy form, no check)
        if not any(a.dtype.kind in getattr(fn, "kernel_kinds", "") for a in in_avals):
            fn = getattr(fn, "numpy_form", fn)
        b.lines.append(f"_t = {b.const(fn, '_u')}({', '.join(ins)})")
        b._check("_t", out.dtype)
        return "_t"
    if facts.loop_spelling is None:      # (a primitive spelled below declares how: its facts)
        return None
    x = ins[0] if ins else None
    x_aval = in_avals[0] if in_avals else None
    if name == "slice" and x_aval.ndim:
        idx = tuple(slice(s, l, st) for s, l, st in
                    zip(p["start_indices"], p["limit_indices"], p["strides"]))
        return f"{x}[{b.const(idx, '_i')}]"
    if name in ("squeeze", "reshape") and x_aval.size == out.size:
        if out.shape == ():
            return f"{x}[{b.const((0,) * x_aval.ndim, '_i')}]"
        return f"{x}.reshape({b.const(tuple(out.shape), '_s')})"
    if name == "broadcast_in_dim" and x_aval.shape == ():
        return f"_fill({b.const(tuple(out.shape), '_s')}, {x}, {b.const(out.dtype, '_dt')})"
    if (name == "convert_element_type" and out.dtype.kind == "f" and x_aval.dtype.kind in "biuf"
            and not (x_aval.dtype == np.float64 and out.dtype == np.float16)):
        # (convert_value's exceptions: complex, float -> int, float64 -> float16; the rest
        # is NumPy's cast, as there; a scalar's by its type: 0.3 us, astype 1.2, the impl ~2)
        if out.shape == ():
            return f"{b.const(out.dtype.type, '_c')}({x})"
        return f"{x}.astype({b.const(out.dtype, '_dt')})"
    if name == "concatenate":
        return f"_np.concatenate(({', '.join(ins)},), {int(p['dimension'])})"
    if name == "pad" and all(lo >= 0 and hi >= 0 and it == 0
                             for lo, hi, it in p["padding_config"]):
        idx = tuple(slice(lo, lo + n) for n, (lo, _, _) in zip(x_aval.shape,
                                                               p["padding_config"]))
        if isinstance(e.invars[1], Literal):      # a template filled with the literal
            tmpl = np.full(out.shape, e.invars[1].val, out.dtype)
            return f"_padt({x}, {b.const(tmpl, '_z')}, {b.const(idx, '_i')})"
        return (f"_pad({x}, {ins[1]}, {b.const(tuple(out.shape), '_s')}, "
                f"{b.const(idx, '_i')}, {b.const(out.dtype, '_dt')})")
    if (name == "reduce_sum" and x_aval.dtype == out.dtype and out.dtype.kind in "fc"
            and out.dtype != np.float16):      # float16 accumulates in float32 (its impl)
        if x_aval.size == 1 and out.shape == ():
            return f"{x}[{b.const((0,) * x_aval.ndim, '_i')}]"
        return f"_np.add.reduce({x}, {b.const(tuple(p['axes']), '_a')})"
    return None


def _typed(val, dtype):
    """A literal as a NumPy scalar of its IR dtype (operators then keep that dtype)."""
    return np.asarray(val, dtype)[()] if np.ndim(val) == 0 else np.asarray(val, dtype)


def _cast(x, dtype):
    return np.asarray(x).astype(dtype)


def _input(x, dtype):
    return x.view(np.ndarray) if isinstance(x, np.ndarray) else _cast(x, dtype)


def fixed_inputs(closed, values, start=0):
    """`values`, inputs `start`.. of `closed`, converted as its generated body converts its
    inputs on entry (`_FIX`: Python scalars, eager Arrays), so that a loop converts its
    invariant ones once rather than on every trip (the body then leaves them as they are).

        >>> fixed_inputs(closed, [2.0])            # closed's first input: f64[]
        [array(2.)]
    """
    invars = closed.jaxpr.invars[start:start + len(values)]
    return [_scalar(_input(x, v.aval.dtype) if x.__class__ in _FIX else x)
            for x, v in zip(values, invars)]


def _scalar(x):
    """A 0-d real float array as a NumPy scalar: the body's operators take scalars at ~0.1 us
    and a 0-d array at ~1 us (NumPy's scalar arithmetic: the same IEEE operations, the same
    bits; complex and integer values are left as they are, see `_special`)."""
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind == "f":
        return x[()]
    return x


def _fill(shape, x, dtype):
    out = np.empty(shape, dtype)
    out.fill(x)
    return out


def _pad_template(x, template, idx):
    out = template.copy()
    out[idx] = x
    return out


def _pad(x, v, shape, idx, dtype):
    out = _fill(shape, v, dtype)
    out[idx] = x
    return out
