"""The methods and properties of arrays as tools/jax_sweep.py's "methods" module: each public
method of jax.Array that xforms' eager Array (or a traced value, under jit) has too, called on
the sweep's array operand with the arguments a user passes (none, an axis, keepdims, a dtype,
a shape, bounds, indices), beside the argument mistakes a user makes (a float axis or size, an
out-of-range axis, an array where a static integer belongs), whose exception classes the sweep
compares.  The module "numpy" calls functions (xnp.sum); these are the methods' own paths
(xforms/numpy/arrays/methods.py, the Tracer's methods), which the function sweep never reaches.

Each case is a function of the operand named as it reads: "x.sum(axis=-1)", "x.astype(int8)",
"x.at[1].add(2.5)", "x.reshape(2.5)".  Two-operand cases take the sweep's second operand y.

    python tools/jax_sweep.py --module methods                   # every case
    python tools/jax_sweep.py --module methods --names 'x.T,x.mT' --dtypes float32
"""
import numpy as np

# method name -> the argument lists it is called with (a tuple of positional arguments and a
# dict of keywords); the empty call first
_AXES = [((), {"axis": -1}), ((), {"axis": 0}), ((), {"keepdims": True}),
         ((), {"axis": 1.0}), ((), {"axis": 5}), ((), {"axis": np.array([0, 1])})]
REDUCTIONS = ("all", "any", "max", "min", "mean", "prod", "sum", "std", "var", "ptp")
CALLS = {n: [((), {})] + _AXES for n in REDUCTIONS}
CALLS.update({
    "argmax": [((), {}), ((), {"axis": -1}), ((), {"axis": 0}), ((), {"keepdims": True}),
               ((), {"axis": 1.5})],
    "argmin": [((), {}), ((), {"axis": -1}), ((), {"axis": 1.5})],
    "argsort": [((), {}), ((), {"axis": 0}), ((), {"axis": None}), ((), {"axis": 2.0})],
    "sort": [((), {}), ((), {"axis": 0}), ((), {"axis": None}), ((), {"axis": 2.0})],
    "cumsum": [((), {}), ((), {"axis": -1}), ((), {"dtype": "float32"}), ((), {"axis": 1.0})],
    "cumprod": [((), {}), ((), {"axis": 0}), ((), {"axis": 1.0})],
    "astype": [((d,), {}) for d in ("int8", "uint8", "int32", "float16", "float32", "float64",
                                    "complex64", "bool")] + [(("not-a-dtype",), {})],
    "reshape": [((-1,), {}), (((7,),), {}), (((2, 3),), {}), ((1, -1), {}), ((2.5,), {}),
                ((np.float32(7.0),), {}), ((np.array([1, -1]),), {})],
    "clip": [((0, 1), {}), ((), {"min": -1}), ((), {"max": 0.5}), ((None, 1), {}),
             ((np.float32(0.25), 2), {})],
    "round": [((), {}), ((1,), {}), ((-1,), {}), ((0.5,), {})],
    "take": [(([0, 1],), {}), ((np.array([0, -1]),), {"axis": 0}), ((1.5,), {})],
    "repeat": [((2,), {}), ((2,), {"axis": 0}), ((2.5,), {})],
    "swapaxes": [((0, -1), {}), ((0, 1.0), {}), ((0, 5), {})],
    "transpose": [((), {}), (((1, 0),), {}), ((1.0, 0), {})],
    "squeeze": [((), {}), ((0,), {}), ((1.5,), {})],
    "diagonal": [((), {}), ((1,), {}), ((0.5,), {})],
    "trace": [((), {}), ((1,), {}), ((0.5,), {})],
    "flatten": [((), {})], "ravel": [((), {})], "nonzero": [((), {})],
    "conj": [((), {})], "conjugate": [((), {})], "copy": [((), {})],
    "item": [((), {}), ((0,), {}), ((1.5,), {})], "tolist": [((), {})],
    "searchsorted": [((0.5,), {}), ((0.5,), {"side": "right"}), ((0.5,), {"side": "middle"})],
    "view": [(("int32",), {}), (("uint8",), {})],
    "choose": [(([[0, 1, 2, 3, 4, 5, 6]] * 7,), {})],
    "compress": [(([True, False],), {}), (([True, False],), {"axis": 0})],
    "argpartition": [((1,), {}), ((1.5,), {})],
    "dot": [((2.0,), {})],
    "byteswap": [((), {})],
})
PROPERTIES = ("T", "mT", "real", "imag", "ndim", "shape", "size", "dtype", "nbytes",
              "itemsize", "flat")
AT = {"get": [((),)], "set": [((2.5,),)], "add": [((2.5,),)], "multiply": [((-2,),)],
      "divide": [((2,),)], "power": [((2,),)], "min": [((0,),)], "max": [((0,),)],
      "apply": []}
AT_INDICES = ("1", "-1", "(0, 1)", "[0, 0]", "1.5", "::2", "..., 0")


def _text(v):
    return repr(v) if not isinstance(v, np.ndarray) else f"np.array({v.tolist()})"


def _call_name(name, args, kw):
    parts = [_text(a) for a in args] + [f"{k}={_text(v)}" for k, v in kw.items()]
    return f"x.{name}({', '.join(parts)})"


def _index(text):
    """An at[] index from its text (the fixed texts of AT_INDICES, no input)."""
    return eval(f"np.s_[{text}]", {"np": np})


def cases(asarray):
    """{name: function of the sweep's arrays} for one library, `asarray` its conversion:
    the methods are the library's arrays' own."""
    out = {}
    for name, calls in CALLS.items():
        for args, kw in calls:
            out[_call_name(name, args, kw)] = (
                lambda x, name=name, args=args, kw=kw: getattr(asarray(x), name)(*args, **kw))
    for name in PROPERTIES:
        out[f"x.{name}"] = lambda x, name=name: _plain(getattr(asarray(x), name))
    for op, calls in AT.items():
        for text in AT_INDICES:
            for (args,) in calls:
                out[f"x.at[{text}].{op}({', '.join(map(_text, args))})"] = (
                    lambda x, op=op, text=text, args=args:
                    getattr(asarray(x).at[_index(text)], op)(*args))
    out["x.dot(y)"] = lambda x, y: asarray(x).dot(asarray(y))
    out["x.clip(y)"] = lambda x, y: asarray(x).clip(asarray(y))
    return out


def _plain(v):
    """A property's value as the sweep compares it: a dtype as its name, an iterator (flat)
    as the list of its items."""
    if isinstance(v, np.dtype):
        return np.asarray(v.name)
    if hasattr(v, "__next__") or type(v).__name__ in ("flatiter",):
        return np.asarray([np.asarray(e) for e in v])
    return v


def method_names(only=None):
    """[(name, xforms function, jax function)], in alphabetical order, of the names in `only`
    when given."""
    import jax.numpy as jnp
    import xforms.numpy as xnp
    xs, js = cases(xnp.asarray), cases(jnp.asarray)
    return [(n, xs[n], js[n]) for n in sorted(xs) if not only or n in only]
