"""vmap and the Jacobian transforms built on it: jacfwd, jacrev, hessian.

`vmap` traces the function once per example shape, batches the IR with
`transforms.vmap.vmap_jaxpr` (rules move batch axes, they never loop), and evaluates the
result on the current trace, so it nests with grad, jit and itself in any order.

`jacfwd` pushes every basis tangent through ONE batched jvp and `jacrev` pulls every basis
cotangent through ONE batched vjp; `hessian = jacfwd(jacrev(f))`.

    >>> xf.vmap(lambda x, y: x @ y, in_axes=(0, None))(xnp.ones((5, 3)), xnp.ones(3)).shape
    (5,)
    >>> xf.jacfwd(xnp.sin)(xnp.zeros(2))
    Array([[1., 0.], [0., 1.]])
"""
import functools
from contextlib import nullcontext
import inspect

import numpy as np

from . import argnums as argnums_mod
from .core import axis_env, trace as core
from .transforms.ad import vjp_jaxprs
from .core.avals import float0, is_complex, is_device_array, is_float, is_inexact
from .core.engine_prims import broadcast_in_dim, convert_element_type
from .core.memo import derived
from .primitives.elementwise import add, eq
from .primitives.structural import iota, reshape, slice as lax_slice
from .core.source_info import describe_function
from .jit import eval_where_data, follows_data
from .transforms.tracing import flatten_args, trace_program
from .transforms.jvp import Zero, instantiate, jvp_eval, tangent_aval
from .transforms.stage import stage
from .transforms.vmap import BatchedOutputError, vmap_jaxpr
from .tree_util import tree_flatten, tree_unflatten


# ---- axis specifications: pytree prefixes with int / None leaves ---------------------------
def _check_axes_spec(spec, what):
    leaves, _ = tree_flatten(spec)     # None is an empty node, so only ints remain
    for a in leaves:
        if not isinstance(a, (int, np.integer)) or isinstance(a, (bool, np.bool_)):
            raise TypeError(f"vmap {what} must be an int, None, or a (nested) tuple/list/dict "
                            f"of those, but got {spec!r}")


def _child_names(td, base):
    if td.node is dict:
        return [f"{base}[{k!r}]" for k in td.aux]
    if td.node == "namedtuple":
        return [f"{base}.{f}" for f in td.aux[0]._fields]
    return [f"{base}[{i}]" for i in range(len(td.children))]


def _broadcast_prefix(spec, td, name, what, out):
    """Append (axis, leaf name) for each leaf of `td`, reading `spec` as a tree prefix."""
    if spec is None or isinstance(spec, (int, np.integer)):
        if td.node is None:
            out.append((spec, name))
        else:
            for c, n in zip(td.children, _child_names(td, name)):
                _broadcast_prefix(spec, c, n, what, out)
        return
    children, spec_td = tree_flatten(spec, is_leaf=lambda x: x is not spec)
    if (td.node is None or spec_td.node != td.node or spec_td.aux != td.aux
            or len(children) != len(td.children)):
        raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                         f"corresponding value: got {spec!r} for {name}, whose structure is "
                         f"{td}")
    for s, c, n in zip(children, td.children, _child_names(td, name)):
        _broadcast_prefix(s, c, n, what, out)


def _arg_names(fun, n):
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(n):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                  params[i].POSITIONAL_OR_KEYWORD):
            names.append(f"argument {params[i].name}")
        else:
            names.append(f"args[{i}]")
    return names


def _in_dims(fun, in_axes, args, in_tree, names):
    """Per flat leaf (axis, name); in_axes covers the positional args, kwargs map at 0."""
    args_td, kw_td = in_tree.children
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError(
            f"vmap in_axes must be an int, None, or a tuple with one entry per positional "
            f"argument, but {describe_function(fun)} got len(in_axes)={len(in_axes)} "
            f"(in_axes={in_axes!r}) and {len(args)} positional arguments")
    out = []
    for i, (td, name) in enumerate(zip(args_td.children, names)):
        spec = in_axes[i] if isinstance(in_axes, tuple) else in_axes
        _broadcast_prefix(spec, td, name, "in_axes", out)
    for k, td in zip(kw_td.aux or (), kw_td.children):
        _broadcast_prefix(0, td, f"keyword argument {k}", "in_axes", out)
    return out


def _resolve_in_dims(fun, in_axes, axis_size, args, flat, in_tree, names):
    """-> (per-leaf non-negative dims or None, batch size); ValueError on bad specs."""
    spec = _in_dims(fun, in_axes, args, in_tree, names)
    dims, sizes = [], []
    for x, (d, name) in zip(flat, spec):
        if d is None:
            dims.append(None)
            continue
        aval = core.get_aval(x)
        if not -aval.ndim <= d < aval.ndim:
            raise ValueError(
                f"vmap was asked to map {name} of {describe_function(fun)} along axis {d}, "
                f"which needs rank at least {d + 1 if d >= 0 else -d}, but it has rank "
                f"{aval.ndim} (shape {aval.shape}); in_axes={in_axes!r}")
        d = d % aval.ndim
        dims.append(d)
        sizes.append((aval.shape[d], d, name, aval))
    distinct = {s for s, *_ in sizes} | ({axis_size} if axis_size is not None else set())
    if len(distinct) > 1:
        lines = "\n".join(f"  * {name} (shape {aval.shape}) has size {s} along axis {d}"
                          for s, d, name, aval in sizes)
        extra = f"\n  * axis_size={axis_size}" if axis_size is not None else ""
        raise ValueError(f"vmap got inconsistent sizes for the axes to be mapped in "
                         f"{describe_function(fun)} (in_axes={in_axes!r}):\n{lines}{extra}")
    if not distinct:
        raise ValueError(f"vmap of {describe_function(fun)}: every in_axes entry is None, so "
                         "the batch size is unknown; pass axis_size=...")
    return dims, distinct.pop()


def _resolve_out_dims(fun, out_axes, out_tree, out_avals):
    spec = []
    _broadcast_prefix(out_axes, out_tree, "output", "out_axes", spec)
    dims = []
    for (d, name), aval in zip(spec, out_avals):
        if d is not None:
            r = aval.ndim + 1
            if not -r <= d < r:
                raise ValueError(f"vmap out_axes={out_axes!r}: axis {d} is out of range for "
                                 f"{name} of {describe_function(fun)}, which has rank {r} "
                                 f"with the batch axis (per-example shape {aval.shape})")
            d = d % r
        dims.append(d)
    return dims, [n for _, n in spec]


# ---- vmap ------------------------------------------------------------------------------
def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorise `fun` over an axis of its inputs (JAX semantics).

    `in_axes`: an int, None, or a tuple with one entry per positional argument, each a
    pytree prefix of that argument; keyword arguments are mapped over axis 0.  `out_axes`
    likewise for the output.  `axis_size` is needed when no input is mapped.  `axis_name`
    names the mapped axis for collectives inside `fun` (`lax.psum(x, axis_name)`...);
    `spmd_axis_name` only guides JAX's sharding and does not change results: accepted.

    >>> xf.vmap(xnp.dot, in_axes=(0, None))(xnp.ones((4, 3)), xnp.ones(3))
    Array([3., 3., 3., 3.])
    """
    if isinstance(in_axes, list):     # JAX accepts a list for the top-level tuple
        in_axes = tuple(in_axes)
    if not (in_axes is None or isinstance(in_axes, (int, np.integer, tuple))):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries, one per "
                        f"positional argument, but got {in_axes!r}")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if axis_size is not None:
        axis_size = int(axis_size)

    def call(a, k):          # one stable function object per vmap, so traces are cached
        return fun(*a, **k)
    call.__wrapped__ = fun   # errors name the user's function

    arg_names = functools.lru_cache(maxsize=8)(lambda n: _arg_names(fun, n))

    @functools.wraps(fun, updated=())
    def batched(*args, **kwargs):
        flat, in_tree = flatten_args((args, kwargs))
        dims, size = _resolve_in_dims(fun, in_axes, axis_size, args, flat, in_tree,
                                      arg_names(len(args)))
        # unmapped Python/NumPy scalars are passed as they are (as in JAX: a jit inside may
        # take them as static arguments); other leaves are traced
        bind = [d is None and argnums_mod.is_static_leaf(x) for x, d in zip(flat, dims)]
        f = call
        if any(bind):
            f = argnums_mod.BoundCall(fun, in_tree, tuple(
                (k, x) for k, (x, b) in enumerate(zip(flat, bind)) if b), len(flat))
            flat = [x for x, b in zip(flat, bind) if not b]
            dims = [d for d, b in zip(dims, bind) if not b]
            in_tree = tree_flatten(tuple(flat))[1]
        avals = []
        for x, d in zip(flat, dims):
            a = core.get_aval(x)
            avals.append(a if d is None else
                         a.update(shape=a.shape[:d] + a.shape[d + 1:]))
        # mapped leaves are traced abstractly; unmapped ones keep their known values
        known = [x if d is None else None for x, d in zip(flat, dims)]
        with _bind(axis_name, size):       # traced on every call (JAX's rule), interned
            closed, consts, out_tree, float0s = trace_program(f, known, in_tree,
                                                               post=_float0_placeholders,
                                                               in_avals=avals)
        out_dims, out_names = _resolve_out_dims(fun, out_axes, out_tree, closed.out_avals)
        try:
            batched_jaxpr = vmap_jaxpr(closed, [None] * len(consts) + dims, size, out_dims,
                                       axis_name=axis_name)
        except BatchedOutputError as e:
            raise ValueError(f"vmap of {describe_function(fun)}: out_axes={out_axes!r} asks "
                             f"for {out_names[e.index]} to be unmapped (None), but it depends "
                             "on a mapped input; give it an integer out_axes") from None
        outs = eval_where_data(batched_jaxpr, [*consts, *flat])
        return tree_unflatten(out_tree, [np.zeros(core.get_aval(o).shape, float0) if z
                                         else _as_result(o) for o, z in zip(outs, float0s)])
    batched._xforms_transform_of = fun
    return follows_data(batched, fun)   # (of a jitted fun, with DeviceArrays: on their device)


def _float0_placeholders(out):
    """A float0 output (grad's cotangent of an integer input) is traced as a bool array of
    its shape, batched as any output, and made float0 again after: -> (outputs, which)."""
    leaves, tree = tree_flatten(out)
    which = [getattr(x, "dtype", None) == float0 for x in leaves]
    return tree_unflatten(tree, [np.zeros(x.shape, np.bool_) if z else x
                                 for x, z in zip(leaves, which)]), which


def _bind(axis_name, size):
    return axis_env.bind_axis(axis_name, size) if axis_name is not None else nullcontext()


def _as_result(x):
    """Eager outputs are `Array`s even when an output is an input passed straight through."""
    if isinstance(x, (core.Tracer, core.Array)) or is_device_array(x):   # (stays there)
        return x
    return core.as_array(np.asarray(x))


# ---- Jacobians -------------------------------------------------------------------------
def _check_input(name, fun, x, holomorphic, allow_int=False, rev=False):
    dt = core.get_aval(x).dtype
    if allow_int and not is_inexact(dt):
        return          # (its Jacobian is zeros of its own dtype, as JAX's jacrev gives)
    if rev and not holomorphic and is_complex(dt):
        return          # (reverse mode takes complex inputs of a real function, as JAX's)
    if holomorphic:
        if not is_complex(dt):
            raise TypeError(f"{name} with holomorphic=True requires complex inputs, but got "
                            f"{dt.name} in {describe_function(fun)}")
    elif not is_float(dt):
        hint = (" For holomorphic functions pass holomorphic=True." if is_complex(dt) else
                " Convert integer inputs with .astype(float) or leave them out of argnums.")
        raise TypeError(f"{name} requires real-valued (float) inputs, but got {dt.name} in "
                        f"{describe_function(fun)}.{hint}")


def _diff_args(name, fun, args, kwargs, argnums, holomorphic, allow_int=False):
    rev = name == "jacrev"
    return argnums_mod.DiffArgs(name, fun, args, kwargs, argnums,
                                lambda x: _check_input(name, fun, x, holomorphic, allow_int,
                                                       rev))


def _seeds(avals):
    """The identity seed split per leaf, built from primitives: avals[i] has shape (n,) + S_i
    with n the total size, and leaf i's block is the rows [off_i, off_i + size_i) of eye(n),
    reshaped.  The square block is the form identity_basis recognises; a single row is ones."""
    out, off = [], 0
    n = avals[0].shape[0] if avals else 0
    for a in avals:
        size = int(np.prod(a.shape[1:], dtype=np.int64))
        if n == 1:
            out.append(broadcast_in_dim(np.ones((), a.dtype), a.shape, ()))
            continue
        rows = iota(np.int32, (n, size), 0)
        cols = iota(np.int32, (n, size), 1)
        if off:
            cols = add(cols, np.int32(off))
        e = convert_element_type(eq(rows, cols), a.dtype)
        out.append(e if a.shape == (n, size) else reshape(e, a.shape))
        off += size
    return out


def _seeded(batched, n_args):
    """`batched(args..., seeds...)` as a jaxpr of `args` alone that builds its identity seeds
    itself (xforms/transforms/identity_basis.py), simplified: a product with a seed becomes a
    copy, a transpose or a scaling, and the seed is only computed where it is the answer."""
    seed_avals = list(batched.in_avals[n_args:])

    def fun(*args):
        return core.eval_jaxpr(batched, *args, *_seeds(seed_avals))
    return stage(fun, list(batched.in_avals[:n_args]))[0]


def _assemble(out_tree, blocks, groups, argnums, diff_positions):
    """blocks[i][j]: Jacobian of main output leaf i w.r.t. differentiated leaf j, shape
    out_shape + in_shape.  -> JAX's layout: the output tree with each leaf replaced by the
    argument tree (or a tuple of them, in argnums order, for sequence argnums)."""
    index = {p: j for j, p in enumerate(diff_positions)}
    single = argnums_mod.is_single(argnums)
    per_out = [argnums_mod.pick(groups, {p: row[j] for p, j in index.items()}, single)
               for row in blocks]
    return tree_unflatten(out_tree, per_out)


def _split_block(x, axis, off, n, out_shape, in_shape, inputs):
    """Cut [off, off+n) of the basis axis of `x` and reshape to out_shape + in_shape."""
    shape = core.get_aval(x).shape
    start, limit = [0] * len(shape), list(shape)
    start[axis], limit[axis] = off, off + n
    if (off, off + n) != (0, shape[axis]):
        x = lax_slice(x, start, limit)
    x = reshape(x, tuple(out_shape) + tuple(in_shape))
    if isinstance(x, np.ndarray) and any(isinstance(b, np.ndarray) and np.may_share_memory(x, b)
                                         for b in inputs):
        x = core.as_array(x.copy())     # jacfwd(lambda x, W: W @ x) is W: never alias it
    return x


def _jacfwd_jaxpr(closed, diff, n_main, n_basis):
    """primals -> (primal outs, tangents of main outs with the basis axis last): the jvp of
    `closed`, batched over the identity seed it builds itself.  Cached."""
    return derived.lookup(closed, ("jacfwd", tuple(diff), n_main, n_basis),
                          _jacfwd_build, closed, diff, n_main, n_basis)


def _jacfwd_build(closed, diff, n_main, n_basis):
    in_avals = closed.in_avals
    n = len(in_avals)
    t_avals = [tangent_aval(a) for a, d in zip(in_avals, diff) if d]

    def jvp_fun(*args):
        ts = iter(args[n:])
        tangents = [next(ts) if d else Zero(tangent_aval(a)) for a, d in zip(in_avals, diff)]
        p_out, t_out = jvp_eval(closed.jaxpr, closed.consts, args[:n], tangents)
        return list(p_out) + [instantiate(t) for t in t_out[:n_main]]

    jv, _ = stage(jvp_fun, list(in_avals) + t_avals)
    n_all = len(closed.out_avals)
    batched = vmap_jaxpr(jv, [None] * n + [0] * len(t_avals), n_basis,
                         [None] * n_all + [-1] * n_main, axis_name=None)
    return _seeded(batched, n)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by forward mode: all basis tangents go through one batched jvp.

    Output layout as in JAX: for output leaf shape S_out and input leaf shape S_in the
    block has shape S_out + S_in, arranged as the output tree of argument trees.

    >>> xf.jacfwd(lambda x: x ** 2)(xnp.arange(2.0))
    Array([[0., 0.], [0., 2.]])
    """
    argnums_mod.index_tuple(argnums)

    @functools.wraps(fun, updated=())
    def jacfun(*args, **kwargs):
        d = _diff_args("jacfwd", fun, args, kwargs, argnums, holomorphic)
        flat, diff, groups = d.flat, d.diff, d.groups
        closed, ys = argnums_mod.trace_outputs(fun, d.call, flat, d.in_tree, has_aux)
        n_all, n_main = ys.n_all, ys.n_main
        diff_pos = [p for p, d in enumerate(diff) if d]
        in_avals = [core.get_aval(flat[p]) for p in diff_pos]
        n = sum(a.size for a in in_avals)
        batched = _jacfwd_jaxpr(closed, ys.mask(diff), n_main, n)
        outs = core.eval_jaxpr(batched, *ys.args(flat))
        tangents = outs[n_all:]
        offs = np.cumsum([0] + [a.size for a in in_avals])
        blocks = []
        for t, o in zip(tangents, closed.out_avals[:n_main]):
            blocks.append([_split_block(t, o.ndim, offs[j], a.size, o.shape, a.shape, flat)
                           for j, a in enumerate(in_avals)])
        return ys.with_aux(_assemble(ys.main_tree, blocks, groups, argnums, diff_pos), outs)
    return jacfun


def _jacrev_jaxpr(transposed, n_res, n_ct, n_basis):
    return derived.lookup(transposed, ("jacrev", n_res, n_ct, n_basis), _jacrev_build,
                          transposed, n_res, n_ct, n_basis)


def _jacrev_build(transposed, n_res, n_ct, n_basis):
    n_out = len(transposed.out_avals)
    return _seeded(vmap_jaxpr(transposed, [None] * n_res + [0] * n_ct, n_basis,
                              [0] * n_out, axis_name=None), n_res)


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian by reverse mode: all basis cotangents go through one batched vjp.

    Same output layout as `jacfwd`. With `allow_int`, integer and boolean inputs get a
    Jacobian of zeros of their own dtype (JAX's jacrev; grad gives float0 there).

    >>> xf.jacrev(lambda x: xnp.sum(x ** 2))(xnp.arange(3.0))
    Array([0., 2., 4.])
    """
    argnums_mod.index_tuple(argnums)

    @functools.wraps(fun, updated=())
    def jacfun(*args, **kwargs):
        d = _diff_args("jacrev", fun, args, kwargs, argnums, holomorphic, allow_int)
        flat, groups = d.flat, d.groups
        wanted = [p for p, m in enumerate(d.diff) if m]
        diff = [m and is_inexact(core.get_aval(x).dtype) for x, m in zip(flat, d.diff)]
        closed, ys = argnums_mod.trace_outputs(fun, d.call, flat, d.in_tree, has_aux)
        n_all, n_main = ys.n_all, ys.n_main
        out_avals = closed.out_avals[:n_main]
        for a in out_avals:
            ok = is_complex(a.dtype) if holomorphic else is_float(a.dtype)
            if not ok:
                raise TypeError(
                    f"jacrev requires {'complex' if holomorphic else 'real'}-valued outputs, "
                    f"but {describe_function(fun)} returned {a.str_short()}"
                    + ("" if holomorphic or not is_complex(a.dtype) else
                       "; pass holomorphic=True for holomorphic functions or use xf.vjp"))
        primal, transposed, n_res = vjp_jaxprs(closed, ys.mask(diff), n_main)
        outs = core.eval_jaxpr(primal, *ys.args(flat))
        m = sum(a.size for a in out_avals)
        batched = _jacrev_jaxpr(transposed, n_res, n_main, m)
        cts = core.eval_jaxpr(batched, *outs[n_all:])
        diff_pos = [p for p, d in enumerate(diff) if d]
        in_avals = [core.get_aval(flat[p]) for p in diff_pos]
        offs = np.cumsum([0] + [a.size for a in out_avals])
        blocks = [[_split_block(ct, 0, offs[i], o.size, o.shape, a.shape, flat)
                   for ct, a in zip(cts, in_avals)] for i, o in enumerate(out_avals)]
        if wanted != diff_pos:          # allow_int: zeros for the integer inputs
            blocks = [_with_int_zeros(row, o, flat, wanted, diff_pos)
                      for row, o in zip(blocks, out_avals)]
        return ys.with_aux(_assemble(ys.main_tree, blocks, groups, argnums, wanted), outs)
    return jacfun


def _with_int_zeros(row, out_aval, flat, wanted, diff_pos):
    """One output's Jacobian blocks for every wanted input: the computed ones, and zeros of
    shape out + in in the input's dtype for the integer inputs that allow_int let in."""
    computed = dict(zip(diff_pos, row))
    zeros = lambda a: core.as_array(np.zeros(out_aval.shape + a.shape, a.dtype))
    return [computed[p] if p in computed else zeros(core.get_aval(flat[p])) for p in wanted]


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """Hessian as forward-over-reverse: jacfwd(jacrev(fun)).

    >>> xf.hessian(lambda x: xnp.sum(x ** 3))(xnp.ones(2))
    Array([[6., 0.], [0., 6.]])
    """
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


__all__ = ["vmap", "jacfwd", "jacrev", "hessian"]
