"""The fast call path: a small Python function generated per (executable, argument
structure) that checks the arguments, calls the compiled kernel and builds the output
structure, with no pytree flattening, no dict lookups and no per-call allocation beyond
the outputs.

    def call(a0, a1):                         # jit(f)(x: float, w: f64[3]) -> (y, [z])
        if type(a0) is not float or a1.shape != (3,): raise Miss
        r = kernel(a0, a1, c0)
        return (r[0], [r[1]])

Keyword arguments come in as `**kw` and are read by name (`f(x, lr=0.1)`); a kernel that
takes buffers kept across calls (xforms/kernels/cpu/buffers.py) gets them from an entry popped
from the pool's free list:

        try:
            w = pop()                         # this call's own buffers
        except IndexError:
            w = acquire()
        try:
            if not is_free(w, 1): claim(w, 1)  # the caller still holds output 0
            r = kernel(x0, w[0], w[1])
        finally:
            if w[-1]: push(w)
        return r.base.view(Array)             # a view of the buffer's read-only owner

Whatever it does not check, the kernel's Numba signature does (dtype, rank, contiguity,
writability of arrays): a mismatch raises Miss, TypeError, AttributeError, KeyError,
IndexError or ValueError before any work is done, and the caller falls back to the general
path (`MISSES`).  Trees with namedtuples or custom nodes get no fast path.
"""

import numpy as np

from ..codegen import output_accessor


class Miss(LookupError):
    """The arguments do not match the signature the fast path was made for (a LookupError,
    so that `xforms.jit` can catch it without importing this package)."""


MISSES = (TypeError, AttributeError, LookupError, ValueError)

_PY_SCALARS = {"f": "float", "i": "int", "b": "bool", "c": "complex"}


def make_fast_call(kernel, in_tree, leaf_kinds, in_avals, consts, out_tree, out_avals,
                   statics=None, pool=None, output_slots=(), kw_tree=None, static_kw=None):
    """-> callable(*args, **kwargs) or None.  `in_tree` is the treedef of the positional-args
    tuple, `kw_tree` (or None) that of the dict of non-static keyword arguments;
    `leaf_kinds[k]` is "f"/"i"/"b"/"c" for Python scalars, else None (arrays and NumPy
    scalars, checked by shape and dtype).  0-d outputs come back from the kernel as scalars
    and are wrapped as 0-d xforms Arrays here.  `statics` ({position: value}) and
    `static_kw` ({name: value}) are static arguments: checked by identity or equality, not
    passed to the kernel.  `pool` (a cpu_buffers.BufferPool) supplies the kernel's trailing
    buffer arguments; outputs in `output_slots` are such buffers, returned as new views."""
    n_out = len(out_avals)
    env_outs, wraps = [], []
    for k, a in enumerate(out_avals):
        acc = output_accessor(k, n_out)
        if not a.shape or k in output_slots:
            # a new read-only Array (issue #31): a 0-d one of the scalar (np.array(v) without
            # a dtype argument is the fastest spelling) or a view of a pooled buffer; set
            # inline, positionally (a keyword costs 150 ns more per call)
            # (a pooled buffer's owner is read-only, and so is a view of it: buffers.py)
            dt = "" if a.dtype == np.float64 else f", odt{k}"
            if not a.shape:
                wraps += [f"o{k} = array({acc}{dt}).view(Array)", f"setflags(o{k}, False)"]
            else:
                wraps.append(f"o{k} = {acc}.base.view(Array)")
            env_outs.append(f"o{k}")
        else:       # (a kernel's own array reaches Python as a read-only Array already)
            env_outs.append(acc)
        if a.weak_type:        # a weakly typed output stays so (JAX's jit outputs do)
            env_outs[-1] = f"as_weak({env_outs[-1]})"
    from xforms.core.trace import Array, as_weak
    lines, env = [], {"kernel": kernel, "Miss": Miss, "array": np.array, "Array": Array,
                      "as_weak": as_weak, "setflags": np.ndarray.setflags}
    for k, a in enumerate(out_avals):
        env[f"odt{k}"] = a.dtype
    if in_tree.node is not tuple or (kw_tree is not None and kw_tree.node is not dict):
        return None
    statics = statics or {}
    static_kw = static_kw or {}
    kw_names = tuple(kw_tree.aux) if kw_tree is not None else ()
    if not all(type(n) is str and n.isidentifier() for n in kw_names + tuple(static_kw)):
        return None
    n_args = len(in_tree.children) + len(statics)
    params = [f"a{k}" for k in range(n_args)]
    dyn_params = [p for k, p in enumerate(params) if k not in statics]
    for k, v in statics.items():
        env[f"st{k}"] = v
        lines.append(f"if a{k} is not st{k} and not (type(a{k}) is type(st{k}) and "
                     f"a{k} == st{k}): raise Miss")
    if kw_names or static_kw:
        lines.append(f"if len(kw) != {len(kw_names) + len(static_kw)}: raise Miss")
        for j, (name, v) in enumerate(sorted(static_kw.items())):
            env[f"sk{j}"] = v
            lines.append(f"s{j} = kw[{name!r}]")
            lines.append(f"if s{j} is not sk{j} and not (type(s{j}) is type(sk{j}) and "
                         f"s{j} == sk{j}): raise Miss")
    leaves = []

    def walk(td, expr):
        node = td.node
        if node is None:
            leaves.append(expr)
            return True
        if node in (tuple, list):
            lines.append(f"if type({expr}) is not {node.__name__} or len({expr}) != "
                         f"{len(td.children)}: raise Miss")
            subs = []
            for k, c in enumerate(td.children):
                if c.node is None:
                    subs.append(f"{expr}[{k}]")
                else:
                    name = f"t{len(lines)}_{k}"
                    lines.append(f"{name} = {expr}[{k}]")
                    subs.append(name)
            return all(walk(c, s) for c, s in zip(td.children, subs))
        if node is dict:
            lines.append(f"if type({expr}) is not dict or len({expr}) != "
                         f"{len(td.children)}: raise Miss")
            if not all(type(key) in (str, int) for key in td.aux):
                return False
            return all(walk(c, f"{expr}[{key!r}]") for key, c in zip(td.aux, td.children))
        if node is type(None):
            lines.append(f"if {expr} is not None: raise Miss")
            return True
        return False

    for p, c in zip(dyn_params, in_tree.children, strict=True):
        if not walk(c, p):
            return None
    for j, (name, c) in enumerate(zip(kw_names, kw_tree.children if kw_names else ())):
        if c.node is None:
            if not walk(c, f"kw[{name!r}]"):
                return None
        else:
            lines.append(f"k{j} = kw[{name!r}]")
            if not walk(c, f"k{j}"):
                return None
    if len(leaves) != len(in_avals):
        return None
    args = []
    for k, (expr, kind, aval) in enumerate(zip(leaves, leaf_kinds, in_avals)):
        v = f"x{k}"
        lines.append(f"{v} = {expr}")
        if kind in _PY_SCALARS:
            lines.append(f"if type({v}) is not {_PY_SCALARS[kind]}: raise Miss")
            args.append(v)
        elif not aval.shape:
            env[f"dt{k}"] = aval.dtype
            lines.append(f"if {v}.shape != () or {v}.dtype != dt{k}: raise Miss")
            args.append(f"{v}[()]")
        else:
            lines.append(f"if {v}.shape != {tuple(aval.shape)!r}: raise Miss")
            args.append(v)
    for k, c in enumerate(consts):
        env[f"c{k}"] = c
        args.append(f"c{k}")
    if pool:
        _call_with_buffers(lines, env, pool, args)
    else:
        lines.append(f"r = kernel({', '.join(args)})")
    out = _build(out_tree, iter(env_outs))
    if out is None:
        return None
    lines += wraps
    lines.append(f"return {out}")
    if params:            # positional-only: f(x, a1=y) must not bind as f(x, y)
        params.append("/")
    if kw_names or static_kw:
        params.append("**kw")
    src = f"def call({', '.join(params)}):\n" + "".join(f"    {ln}\n" for ln in lines)
    exec(compile(src, "<xforms fast call>", "exec"), env)
    fn = env["call"]
    fn.source = src
    return fn


def _call_with_buffers(lines, env, pool, args):
    """The kernel call with the trailing buffer arguments of an entry of `pool`."""
    from .buffers import is_free
    env.update(pop=pool.free.pop, push=pool.free.append, acquire=pool.acquire,
               claim=pool.claim, is_free=is_free)
    bufs = ["w[0]"] if pool.ws_nbytes else []
    checks = []
    for j in range(len(pool.out_specs)):
        i = 1 + 2 * j
        checks.append(f"    if not is_free(w, {i}): claim(w, {i})")
        bufs.append(f"w[{i}]")
    lines += ["try:", "    w = pop()", "except IndexError:", "    w = acquire()", "try:",
              *checks, f"    r = kernel({', '.join(args + bufs)})", "finally:",
              "    if w[-1]: push(w)"]


def _build(td, it):
    node = td.node
    if node is None:
        return next(it)
    if node is tuple:
        parts = [_build(c, it) for c in td.children]
        if any(p is None for p in parts):
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if node is list:
        parts = [_build(c, it) for c in td.children]
        return None if any(p is None for p in parts) else "[" + ", ".join(parts) + "]"
    if node is dict:
        parts = [_build(c, it) for c in td.children]
        if any(p is None for p in parts):
            return None
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(td.aux, parts)) + "}"
    if node is type(None):
        return "None"
    return None
