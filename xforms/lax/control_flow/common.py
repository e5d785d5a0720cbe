"""What lax's control flow shares: pytrees of operands, tracing user functions into
sub-programs, and the carry type checks (weak types promoted as in JAX)."""
from ...core import trace as core, source_info
from ...core.avals import ShapedArray, promote_types
from ...core.source_info import describe_function
from ...core.trace import Tracer
from ...primitives.control import control_flow as cf
from ...primitives.elementwise import convert_element_type
from ...tree_util import tree_flatten


def flatten(tree):
    leaves, treedef = tree_flatten(tree)
    return [x if isinstance(x, Tracer) else core.canonical_value(x) for x in leaves], treedef


def call_site():
    info = source_info.current()
    return f" (called at {info})" if info else ""


def trace_fun(fun, in_avals, call):
    """Trace `call(args) -> pytree` (args: flat tracers); -> (jaxpr, consts, out treedef)."""
    store = {}

    def flat(*args):
        leaves, treedef = tree_flatten(call(list(args)))
        store["tree"] = treedef
        return leaves
    j, consts = cf.trace(flat, in_avals, fun_for_errors=fun)
    return j, consts, store["tree"]


def leaf_names(treedef, base=""):
    if treedef.node is None:
        return [base]
    if treedef.node is dict:
        keys = [f"[{k!r}]" for k in treedef.aux]
    elif treedef.node == "namedtuple":
        keys = [f".{f}" for f in treedef.aux[0]._fields]
    else:
        keys = [f"[{i}]" for i in range(len(treedef.children))]
    return [n for c, k in zip(treedef.children, keys) for n in leaf_names(c, base + k)]


def _join_carry(what, fun, in_tree, out_tree, in_avals, out_avals, where):
    """Check a body's output carry against its input.  Weakly typed (Python scalar) inputs are
    promoted to the body's dtype and weakly typed outputs cast to the carry's, as in JAX.
    -> (promoted input avals or None, per-output dtype casts)."""
    if in_tree != out_tree:
        raise TypeError(f"{what}: {describe_function(fun)} must return a carry with the same "
                        f"structure as its input, but the input is {in_tree} and the output is "
                        f"{out_tree}{where}")
    new_in, casts, bad = list(in_avals), [None] * len(in_avals), []
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.shape != b.shape:
            bad.append(k)
        elif a.dtype != b.dtype:
            if a.weak_type:   # a Python scalar init takes the join of both types, as in JAX
                dt, weak = promote_types((a.dtype, True), (b.dtype, b.weak_type))
                if dt != a.dtype:
                    new_in[k] = ShapedArray(a.shape, dt, weak)
                    continue
            if b.weak_type:
                casts[k] = a.dtype
            else:
                bad.append(k)
    if bad:
        names = leaf_names(in_tree, "carry")
        detail = "; ".join(f"{names[k]} is {in_avals[k].str_short()} on input but "
                           f"{out_avals[k].str_short()} on output" for k in bad)
        raise TypeError(f"{what}: {describe_function(fun)} changes the type of its carry: "
                        f"{detail}{where}. A loop carry must keep its shape and dtype; convert "
                        "the initial value or the body's result (e.g. with .astype).")
    return (new_in if new_in != list(in_avals) else None), casts


def cast_outs(j, consts, casts, offset=0):
    """Append dtype conversions to outputs offset+k where casts[k] is set."""
    if not any(c is not None for c in casts):
        return j, consts

    def f(*args):
        outs = cf.call(j, *args)
        return [o if k < offset or k - offset >= len(casts) or casts[k - offset] is None
                else convert_element_type(o, casts[k - offset]) for k, o in enumerate(outs)]
    j2, c2 = cf.trace(f, j.in_avals)
    assert not c2
    return j2, consts


def promote_leaves(leaves, avals):
    return [x if core.get_aval(x).dtype == a.dtype else convert_element_type(x, a.dtype)
            for x, a in zip(leaves, avals)]


def trace_carry(what, fun, tree, avals, call, make_in=lambda a: a, offset=0,
                 subtree=lambda t: t):
    """Trace a loop body `call(flat args) -> pytree` whose flat output holds the carry at
    [offset, offset + n) with structure `subtree(out treedef)`; the inputs are make_in(carry
    avals).  Repeats while weakly typed inputs get promoted.
    -> (jaxpr, consts, carry avals, out treedef)."""
    where = call_site()
    n = len(avals)
    for _ in range(n + 1):
        j, consts, out_tree = trace_fun(fun, make_in(list(avals)), call)
        new_in, casts = _join_carry(what, fun, tree, subtree(out_tree),
                                    avals, j.out_avals[offset:offset + n], where)
        if new_in is None:
            j, consts = cast_outs(j, consts, casts, offset)
            return j, consts, avals, out_tree
        avals = new_in
    raise AssertionError("carry promotion did not converge")
