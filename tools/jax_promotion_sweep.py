"""Dtype promotion sweep against JAX (issue #31): every binary function of xforms.numpy
that jax.numpy has under the same name (two required array operands), and the Python
operators, are called on every pair of operand kinds -- arrays of the 14 supported dtypes
and the Python scalars True, 2, 1.5, 1+2j (weakly typed) on either side -- by jax
(64-bit mode, `jax.eval_shape`: the dtype and weak type only), by xforms eagerly, by
`xforms.jit` (its fast tier) and, with --compiled, by its compiled tier (slow: one
Numba compile per case; narrow it with --names/--dtypes).  The result's dtype and weak type
are compared; values are tools/jax_sweep.py's business.

    python tools/jax_promotion_sweep.py                    # everything: each difference, a summary
    python tools/jax_promotion_sweep.py --names add,__add__ --compiled
    python tools/jax_promotion_sweep.py --table add        # JAX's table (kept in test_promotion.py)

A case where exactly one side raises is counted (and listed with -v), not a difference: the
values sweep reports refusals.  Needs jax installed (run by hand, not in CI).
Exit status 1 when a dtype or weak type differs, but for the cases in ALLOWED (each with why).
"""
import argparse
import collections
import operator
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# this checkout's xforms, not an installed one (a git worktree beside the installed tree)
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from jax_sweep import arity, public_names  # noqa: E402

DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
SCALARS = (True, 2, 1.5, 1 + 2j)
# NumPy scalars (--numpy-scalars): strongly typed in JAX, as a 0-d array of their dtype
NUMPY_SCALARS = tuple(np.dtype(d).type(1) for d in DTYPES)
OPERATORS = {f"__{n.rstrip('_')}__": getattr(operator, n) for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor", "lshift",
    "rshift", "eq", "ne", "lt", "le", "gt", "ge", "matmul")}
# names whose two operands are not both data (shapes, axes, counts, indices, conditions)
SKIP = {"reshape", "broadcast_to", "tile", "repeat", "full", "full_like", "take", "roll",
        "rot90", "moveaxis", "swapaxes", "expand_dims", "squeeze", "resize", "split",
        "array_split", "hsplit", "vsplit", "dsplit", "delete", "pad", "diag", "tril", "triu",
        "tri", "eye", "identity", "zeros", "ones", "empty", "arange", "linspace", "logspace",
        "geomspace", "take_along_axis", "astype", "asarray", "array", "result_type",
        "promote_types", "can_cast", "issubdtype", "isdtype", "unravel_index",
        "ravel_multi_index", "fill_diagonal", "diag_indices", "tril_indices", "triu_indices",
        "mask_indices", "indices", "partition", "argpartition", "choose", "compress",
        "extract", "select", "place", "put", "put_along_axis", "einsum", "apply_along_axis",
        "vectorize", "frompyfunc", "piecewise", "bincount", "digitize", "histogram",
        "histogram_bin_edges", "histogram2d", "histogramdd", "searchsorted", "unwrap",
        "lexsort", "trim_zeros", "insert", "where", "nonzero", "flatnonzero", "argwhere",
        "tensordot", "trapezoid", "gradient", "diff", "ediff1d", "fix", "ldexp", "around",
        "round", "round_", "zeros_like", "ones_like", "empty_like", "count_nonzero",
        "interp", "cov", "corrcoef", "percentile", "quantile", "nanpercentile",
        "nanquantile", "polyfit", "poly", "roots", "polyder", "polyint", "packbits",
        "unpackbits", "isin", "in1d", "setdiff1d", "setxor1d", "union1d", "intersect1d",
        "unique", "sort", "argsort", "clip", "broadcast_arrays", "meshgrid", "ix_",
        "vander", "block", "tril_indices_from", "triu_indices_from", "diag_indices_from",
        "iscomplexobj", "isrealobj", "isscalar", "ndim", "shape", "size", "result_type",
        "dtype", "finfo", "iinfo", "array_equal", "array_equiv", "allclose", "isclose"}


# differences that are not xforms' (case as printed -> why), counted as "allowed"
_CONCRETE_EXPONENT = (
    "jax.eval_shape traces the Python int exponent, so jnp.power takes its integer-power "
    "path (bool and a weak int promote to int64); called eagerly with a concrete int, "
    "jnp.power(bool_array, 2) is integer_pow of the bool promoted numeric, int32 -- what "
    "xforms gives (and under jit, where the exponent is traced, int64 as jax's)")
ALLOWED = {f"{name}(bool, int) [eager]": _CONCRETE_EXPONENT
           for name in ("power", "pow", "__pow__")}
# the same with a NumPy integer scalar exponent (--numpy-scalars): called concretely, jax's
# power is integer_pow (operator.index of the scalar), the base's dtype, as xforms' eagerly
# (tests/dtypes/test_numpy_scalar_matrix.py records jax's concrete answers)
ALLOWED.update({f"{name}({a}, np.{b}) [eager]": _CONCRETE_EXPONENT
                for name in ("power", "pow", "__pow__")
                for a in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                          "int64", "uint64")
                for b in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                          "uint64")})


def operand(kind):
    """An operand of the sweep: an array of dtype `kind` (values 1, 2, 1) or a scalar."""
    if isinstance(kind, str):
        return np.array([1, 2, 1], kind)
    return kind


def kind_name(kind):
    if isinstance(kind, np.generic):
        return f"np.{type(kind).__name__}"
    return kind if isinstance(kind, str) else type(kind).__name__


def cases(numpy_scalars=False):
    """Every (left, right) operand kind pair: arrays x arrays, arrays x scalars, scalars x
    arrays; with `numpy_scalars`, arrays x NumPy scalars and NumPy scalars x arrays only."""
    scalars = NUMPY_SCALARS if numpy_scalars else SCALARS
    for a in DTYPES:
        for b in (() if numpy_scalars else DTYPES) + scalars:
            yield a, b
    for s in scalars:
        for b in DTYPES:
            yield s, b


def binary_functions(only=None):
    """[(name, xforms function, jax function)] of the sweep."""
    out = []
    for name, xfn, jfn in public_names("numpy"):
        if name in SKIP or (only and name not in only):
            continue
        n, _ = arity(jfn)
        if n == 2:
            out.append((name, xfn, jfn))
    for name, op in OPERATORS.items():
        if not only or name in only:
            out.append((name, op, op))
    return out


def jax_type(jfn, a, b):
    """(dtype name, weak) of each result leaf of jax (eval_shape), or None where jax raises."""
    import jax
    spec = [jax.ShapeDtypeStruct((3,), k) if isinstance(k, str) else k for k in (a, b)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = jax.eval_shape(jfn, *spec)
    except Exception:
        return None
    return tuple((np.dtype(o.dtype).name, bool(o.weak_type)) for o in jax.tree.leaves(out))


def xforms_type(fn, a, b, wrap=lambda x: x):
    """(dtype name, weak) of each result leaf of an xforms call, or None where it raises;
    `wrap` makes the array operands (xforms Arrays for the eager operators: those of two
    plain NumPy arrays are NumPy's)."""
    import jax
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*(wrap(operand(k)) if isinstance(k, str) else k for k in (a, b)))
    except Exception:
        return None
    return tuple((np.asarray(o).dtype.name, getattr(o, "weak_type", False) is True)
                 for o in jax.tree.leaves(out))


def runners(xf, compiled):
    out = [("eager", lambda f: f), ("jit", lambda f: xf.jit(f))]
    if compiled:
        out.append(("compiled", lambda f: xf.jit(f, tiered=False)))
    return out


def sweep(args):
    import jax
    jax.config.update("jax_enable_x64", True)
    import xforms as xf
    from xforms.exec import tiered
    tiered._submit = lambda exe: None          # the fast tier only: no background compiles
    counts, diffs, notes = collections.Counter(), [], []
    fns = binary_functions(args.names)
    for name, xfn, jfn in fns:
        for a, b in cases(args.numpy_scalars):
            if args.dtypes and not {kind_name(a), kind_name(b)} & args.dtypes:
                continue
            want = jax_type(jfn, a, b)
            for label, wrap in runners(xf, args.compiled):
                got = xforms_type(wrap(lambda x, y, f=xfn: f(x, y)), a, b,
                                  xf.numpy.asarray if name in OPERATORS else lambda x: x)
                case = f"{name}({kind_name(a)}, {kind_name(b)}) [{label}]"
                if want is None or got is None:
                    kind = "both raise" if want is got else \
                        "refused" if got is None else "accepted"
                    counts[kind] += 1
                    if kind != "both raise":
                        notes.append(f"{case}: {kind}")
                elif want == got:
                    counts["same"] += 1
                elif case in ALLOWED:
                    counts["allowed"] += 1
                    notes.append(f"{case}: {_show(got)}, jax {_show(want)} (allowed: "
                                 f"{ALLOWED[case]})")
                else:
                    counts["DIFF"] += 1
                    diffs.append(f"{case}: {_show(got)}, jax {_show(want)}")
    return len(fns), counts, diffs, notes


def _show(types):
    return ", ".join(f"{d}{' weak' if w else ''}" for d, w in types)


def table(name):
    """JAX's result dtypes of `name` as the rows tests/dtypes/test_promotion.py keeps: per left
    kind, the result over DTYPES then SCALARS ('-' where jax raises; a trailing '*' weak)."""
    import jax
    jax.config.update("jax_enable_x64", True)
    jfn = dict((n, j) for n, _, j in binary_functions({name}))[name]
    for a in DTYPES + SCALARS:
        row = []
        for b in DTYPES + SCALARS:
            t = jax_type(jfn, a, b) if isinstance(a, str) or isinstance(b, str) else None
            row.append("-" if t is None else t[0][0] + ("*" if t[0][1] else ""))
        print(f"    {a if isinstance(a, str) else repr(a)!r}: {' '.join(row)!r},")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", type=lambda s: set(s.split(",")), default=None)
    ap.add_argument("--dtypes", type=lambda s: set(s.split(",")), default=None,
                    help="only the cases with an operand of these kinds (int, float, ...)")
    ap.add_argument("--compiled", action="store_true", help="also jit's compiled tier")
    ap.add_argument("--table", help="print JAX's table of one name and stop")
    ap.add_argument("--numpy-scalars", action="store_true",
                    help="NumPy scalars (np.float32(1), ...) beside the arrays, not Python's")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.table:
        return table(args.table)
    n, counts, diffs, notes = sweep(args)
    for line in notes if args.verbose else ():
        print("  ", line)
    for line in diffs:
        print("DIFF", line)
    print(f"\nnames checked: {n}")
    for k, v in sorted(counts.items()):
        print(f"  {k}: {v}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
