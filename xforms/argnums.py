"""How every transform reads its argument-selection parameters, in one place.

`argnums` (grad, value_and_grad, jacfwd, jacrev, hessian), `static_argnums` /
`static_argnames` (jit, make_jaxpr, checkpoint), `nondiff_argnums` (custom_jvp/custom_vjp)
and `has_aux` mean the same thing everywhere, as in JAX:

  * an int selects one argument and the result is not wrapped; a sequence selects several
    and results come back in the sequence's order (`argnums=(1, 0)` gives (d/db, d/da));
  * negative indices count from the end of the positional arguments of the call;
  * arguments that are not differentiated may be any Python object (a function, a string);
    they are held fixed, like static arguments.

    >>> resolve((1, -2), 2, "grad", f)
    (1, 0)
"""
import inspect
import operator

import numpy as np

from .core import trace as core
from .core.trace import Tracer
from .core.source_info import describe_function
from .transforms.tracing import float0_as_static, trace_program
from .tree_util import tree_flatten, tree_unflatten, tuple_of_leaves


# ---- reading the parameters ----------------------------------------------------------------
def index_tuple(nums, what="argnums"):
    """An int or a sequence of ints -> tuple of ints (not yet resolved against a call)."""
    if nums is None:
        return ()
    if _is_index(nums):
        return (operator.index(nums),)
    try:
        out = tuple(nums)
    except TypeError:
        raise TypeError(f"{what} must be an int or a sequence of ints, got {nums!r}") from None
    for i in out:
        if not _is_index(i):
            raise TypeError(f"{what} must be an int or a sequence of ints, got {nums!r}")
    return tuple(operator.index(i) for i in out)


def _is_index(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_single(nums):
    """argnums=3 returns one result; argnums=(3,) a tuple of one."""
    return _is_index(nums)


def key(nums):
    """A hashable form that keeps int and 1-tuple apart (they return different structures)."""
    return ("int", operator.index(nums)) if _is_index(nums) else ("seq",) + index_tuple(nums)


def resolve(nums, n_args, what, fun, *, allow_empty=False, unique=True, transform=None):
    """-> the selected positions, non-negative, in the order given; errors name `fun`."""
    t = (nums,) if type(nums) is int else index_tuple(nums, what)
    if type(nums) is int and 0 <= nums < n_args:
        return t                          # (the common case: one argument, no checks left)
    what = f"{transform}: {what}" if transform else what
    if not t and not allow_empty:
        raise ValueError(f"{what} of {describe_function(fun)} must select at least one "
                         f"argument, got {nums!r}")
    out = []
    for i in t:
        if not -n_args <= i < n_args:
            raise TypeError(f"{what}={nums!r} selects argument {i}, but "
                            f"{describe_function(fun)} was called with {n_args} positional "
                            f"argument{'s' if n_args != 1 else ''}")
        out.append(i % n_args)
    if unique and len(set(out)) != len(out):
        raise ValueError(f"{what}={nums!r} of {describe_function(fun)} selects an argument "
                         "twice; list each argument once")
    return tuple(out)


def resolve_static(fun, static_argnums, static_argnames, n_args=None):
    """jit's static_argnums / static_argnames, each completed from the other through `fun`'s
    signature as JAX does -> (static positions (non-negative when resolvable), names).
    Negative positions count from the end of the signature's positional parameters, or of
    the call's positional arguments when `n_args` is given and the signature is unknown."""
    nums = index_tuple(static_argnums, "static_argnums")
    names = (static_argnames,) if isinstance(static_argnames, str) else \
        tuple(static_argnames or ())
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"static_argnames must be strings, got {static_argnames!r}")
    params = _positional_params(fun)
    if params is None:
        if n_args is not None:
            nums = tuple(i % n_args if -n_args <= i < 0 else i for i in nums)
        return nums, names
    n = len(params)
    bad = [i for i in nums if not -n <= i < n]
    if bad:
        raise ValueError(f"{describe_function(fun)} has static_argnums={static_argnums!r}, "
                         f"but takes {n} positional argument{'s' if n != 1 else ''}")
    unknown = [s for s in names if s not in _all_params(fun)]
    if unknown:
        raise ValueError(f"static_argnames={static_argnames!r} names {unknown}, which "
                         f"{describe_function(fun)} does not take")
    nums = tuple(i % n if -n <= i < 0 else i for i in nums)
    more_names = tuple(params[i] for i in nums if 0 <= i < n and params[i] not in names)
    more_nums = tuple(params.index(s) for s in names if s in params
                      and params.index(s) not in nums)
    return nums + more_nums, names + more_names


def _positional_params(fun):
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return None
    ps = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in ps):
        return None
    return [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _all_params(fun):
    ps = inspect.signature(fun).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in ps):
        return _Everything()
    return {p.name for p in ps}


class _Everything:
    def __contains__(self, _):
        return True


def split_static(args, positions):
    """-> (((position, value) for the static positions, sorted), the other args in order)."""
    pos = set(positions)
    statics = tuple((i, args[i]) for i in sorted(pos) if i < len(args))
    return statics, tuple(a for i, a in enumerate(args) if i not in pos)


def merge_static(statics, dyn, n):
    """Inverse of `split_static`."""
    pos, it = dict(statics), iter(dyn)
    return [pos[i] if i in pos else next(it) for i in range(n)]


def split_call(fun, args, kwargs, nums, names):
    """A call of `fun` split by its static arguments (jit: positions `nums` from
    `resolve_static`, keywords `names`) -> (StaticCall, dynamic args, dynamic kwargs).
    Negative positions count from this call's end; static values must be hashable.

    >>> call, dyn, dkw = split_call(f, (x, "relu"), {}, (1,), ())
    >>> call(dyn, dkw)                       # f(x, "relu")
    """
    if any(i < 0 for i in nums):
        nums = tuple(i % len(args) if -len(args) <= i < 0 else i for i in nums)
    statics, dyn = split_static(args, nums)
    skw = tuple(sorted((k, v) for k, v in kwargs.items() if k in names))
    dkw = {k: v for k, v in kwargs.items() if k not in names}
    for _, v in statics + skw:
        try:
            hash(v)
        except TypeError:
            raise TypeError(f"static argument {v!r} of {describe_function(fun)} "
                            "must be hashable") from None
    return StaticCall(fun, statics, skw, len(args)), dyn, dkw


class StaticCall:
    """`fun` with its static arguments bound, called with the dynamic ones `(dyn, dkw)`.
    Equal when built from the same function and static values, so a trace keyed on it is
    shared by the calls that agree on them (jit traces once per static values)."""
    __slots__ = ("fun", "statics", "skw", "n", "_hash")

    def __init__(self, fun, statics, skw, n):
        self.fun, self.statics, self.skw, self.n = fun, statics, skw, n
        self._hash = hash((fun, statics, skw, n))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return (isinstance(other, StaticCall) and self.fun is other.fun and
                self.statics == other.statics and self.skw == other.skw and self.n == other.n)

    def __call__(self, dyn, dkw):
        return self.fun(*merge_static(self.statics, dyn, self.n), **dkw, **dict(self.skw))

    __code__ = property(lambda self: getattr(self.fun, "__code__", None))
    __name__ = property(lambda self: getattr(self.fun, "__qualname__", repr(self.fun)))


# ---- differentiated arguments --------------------------------------------------------------
class DiffArgs:
    """The arguments of one call of a differentiating transform, split for tracing.

    `flat`: the array leaves (all of them: those of other arguments are traced too, held
    fixed by `diff`), `in_tree` their structure, `diff` which leaves are differentiated,
    `groups`: per entry of argnums, in argnums order, (argument treedef, leaf positions in
    `flat`).  Leaves that are not arrays (functions, strings, ...) are bound into `call`,
    which takes the array leaves' tree and calls `fun(*args, **kwargs)`.
    """

    def __init__(self, what, fun, args, kwargs, argnums, check):
        self.positions = resolve(argnums, len(args), "argnums", fun, transform=what)
        leaves, tree = tree_flatten((tuple(args), dict(kwargs)))
        starts = [0]
        for t in tree.children[0].children:
            starts.append(starts[-1] + t.num_leaves)
        owner = [-1] * len(leaves)
        for i in self.positions:
            owner[starts[i]:starts[i + 1]] = [i] * (starts[i + 1] - starts[i])
        kept, bound = [], []
        for k, x in enumerate(leaves):
            t = type(x)
            if t is Tracer or ((t is np.ndarray or t is core.Array)
                               and x.dtype in core.OK_DTYPES):
                kept.append((k, x))      # (the common case, without further checks)
                continue
            v = _as_array_leaf(x)
            if v is None and owner[k] >= 0:
                raise TypeError(
                    f"{what} of {describe_function(fun)}: argument {owner[k]} is selected "
                    f"by argnums={argnums!r} but holds {type(x).__name__} {x!r:.60}, "
                    "which is not an array; only array arguments can be differentiated")
            if owner[k] < 0 and is_static_leaf(x):
                bound.append((k, x))     # passed as is, as in JAX (a jit inside may need it)
            else:
                kept.append((k, v))
        self.flat = [v for _, v in kept]
        self.in_tree = tuple_of_leaves(len(self.flat))
        self.call = BoundCall(fun, tree, tuple(bound), len(leaves))
        # (every leaf kept, the common case: a leaf's position is its index)
        index = None if not bound else {k: j for j, (k, _) in enumerate(kept)}
        self.diff = [False] * len(self.flat)
        self.groups = []
        for i in self.positions:
            pos = (list(range(starts[i], starts[i + 1])) if index is None else
                   [index[k] for k in range(starts[i], starts[i + 1])])
            for p in pos:
                check(self.flat[p])
                self.diff[p] = True
            self.groups.append((tree.children[0].children[i], pos))


def is_static_leaf(x):
    """A leaf a transform passes through untraced where it is not transformed: anything that
    is not an array (a function, a string, a Python or NumPy scalar).  Scalars stay
    hashable this way, so a jit(static_argnums=...) inside still accepts them."""
    return not isinstance(x, (Tracer, np.ndarray)) and not core.is_device_array(x)


def _as_array_leaf(x):
    if isinstance(x, Tracer):
        return x
    try:
        return core.canonical_arg(x)
    except TypeError:
        return None


class BoundCall:
    """fun(*args, **kwargs) from the traced leaves, with the other leaves bound.  Equal when
    built from the same function, structure and bound values, so traces are shared."""
    __slots__ = ("fun", "tree", "bound", "n", "_k", "_h")

    def __init__(self, fun, tree, bound, n):
        self.fun, self.tree, self.bound, self.n = fun, tree, bound, n
        # the bound values' types too: 1.0, 1 and True trace differently
        self._k = (fun, tree, tuple((k, type(v), v) for k, v in bound))
        self._h = None                   # computed when asked (un-jitted calls never ask)

    def __call__(self, *arrays):
        leaves = arrays
        if self.bound:                   # (else every leaf is an array: the common case)
            it, fixed = iter(arrays), dict(self.bound)
            leaves = [fixed[k] if k in fixed else next(it) for k in range(self.n)]
        args, kwargs = tree_unflatten(self.tree, leaves)
        return self.fun(*args, **kwargs)

    def __eq__(self, other):
        return isinstance(other, BoundCall) and self._k == other._k

    def __hash__(self):
        if self._h is None:
            try:
                self._h = hash(self._k)
            except TypeError:            # unhashable bound values: traces are not cached
                raise TypeError("unhashable bound arguments") from None
        return self._h

    __code__ = property(lambda self: getattr(self.fun, "__code__", None))
    __name__ = property(lambda self: getattr(self.fun, "__qualname__", repr(self.fun)))
    __wrapped__ = property(lambda self: self.fun)


def pick(groups, flat_values, single):
    """Per argnums entry, the argument's tree of `flat_values` (indexed like DiffArgs.flat);
    one tree for an int argnums, a tuple in argnums order otherwise."""
    trees = tuple(tree_unflatten(td, [flat_values[p] for p in pos]) for td, pos in groups)
    return trees[0] if single else trees


# ---- has_aux ---------------------------------------------------------------------------------
def aux_splitter(has_aux, fun):
    """For trace_flat's `post`: with has_aux, `fun` returns (output, aux); the main output's
    tree and leaf count ride along (they come first among the flat outputs)."""
    if not has_aux:
        return None

    def post(out):
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"{describe_function(fun)} was declared has_aux=True, so it must "
                            f"return a pair (output, aux); got {type(out).__name__}")
        main_leaves, main_tree = tree_flatten(out[0])
        return (out[0], out[1]), (main_tree, len(main_leaves))
    return post


class Outputs:
    """The flat outputs of a traced function split by `has_aux`: the main output (what is
    differentiated, first) and the aux tree (carried along); and the trace's constants,
    which the interned program takes as its leading inputs (xforms/transforms/intern.py).

    >>> closed, o = trace_outputs(fun, call, flat, in_tree, has_aux=True)
    >>> core.eval_jaxpr(closed, *o.args(flat))  # the constants, then the arguments
    >>> o.with_aux(jacobian, flat_outs)          # (jacobian, aux) with has_aux, else jacobian
    """

    def __init__(self, has_aux, out_tree, aux, n_all, consts=()):
        self.has_aux, self.tree, self.n_all = has_aux, out_tree, n_all
        self.main_tree, self.n_main = aux if has_aux else (out_tree, n_all)
        self.consts = list(consts)

    def args(self, flat):
        """The program's inputs: the constants, then the arguments' leaves."""
        return self.consts + list(flat)

    def mask(self, diff):
        """A per-argument mask extended over the constants (never differentiated)."""
        return [False] * len(self.consts) + list(diff)

    def main(self, flat):
        return tree_unflatten(self.main_tree, list(flat[:self.n_main]))

    def aux(self, flat):
        return tree_unflatten(self.tree.children[1], list(flat[self.n_main:self.n_all]))

    def with_aux(self, result, flat):
        return (result, self.aux(flat)) if self.has_aux else result


def trace_outputs(fun, call, flat, in_tree, has_aux):
    """Trace `call` (the user's `fun`, maybe with bound arguments) at `flat` now, through the
    one tracing entry; -> (interned ClosedJaxpr taking `Outputs.args(flat)`, Outputs).  With
    has_aux, `fun` must return (output, aux); the error names `fun`."""
    def no_float0(*a, **k):       # a float0 output (a vjp's cotangent) stays out of it
        return float0_as_static(call(*a, **k))
    no_float0.__wrapped__ = getattr(call, "__wrapped__", call)   # (errors name `fun`)
    closed, consts, out_tree, aux = trace_program(no_float0, flat, in_tree,
                                                  post=aux_splitter(has_aux, fun))
    return closed, Outputs(has_aux, out_tree, aux, len(closed.out_avals), consts)
