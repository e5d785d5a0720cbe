"""A loop that the host would drive -- its body launching kernels every iteration, because a
step reads neighbours the previous step wrote (a stencil: no thread owns its element, so
control's lane-local kernels refuse it) -- as ONE launch: the host loop's own
text run inside a kernel, each launch of it a call of that kernel as a device function
followed by a barrier across every thread of the launch.

    for _i1 in range(200):                   # the host loop (heat equation: 6 launches/step)
        S1_AG = BR
        _K[1](S1_AG, _M[1])                  # k1 <<<3, 8>>>
        ...
becomes, launched once,
    def k7(BR, _M_1, ...):                   # one block: cuda.syncthreads() as the barrier
        for _i1 in range(200):
            S1_AG = BR
            _d_k1(S1_AG, _M_1)
            cuda.syncthreads()
            ...

Why it is exact: the host text assigns names to buffers and launches kernels in order on
one stream.  Run by every thread of the kernel, it makes the same assignments; a barrier
after each call orders the calls as the stream did (a block's writes to global memory are
visible to the block after `syncthreads`, a cooperative grid's after `grid.sync()`); every
captured kernel strides over its elements with `cuda.grid(1)` / `cuda.gridsize(1)` (checked
on its text), so it computes the same whatever the launch's shape.  A value the host waited
for (a `while` predicate, a trip count, a branch index) is read from its one-element
buffer by every thread, then a barrier, so all threads take the same path.

A buffer the host loop made per iteration (a sub-program's fresh output, a carry's copy) is
made once before the launch, in a loop without nested loops: there a value made in one
iteration is read at most in the next, through a carry, and every carry the host knows is
copied back into its own buffer at the end of the iteration (`_keep_buffers`).

A kernel whose blocks share nothing but the launch (`Kernel.blocks_apart`: a reduction's
tree, a matmul tile) is called as a device function running its grid's blocks in turn in
the loop's blocks (`_blocks_in_turn`): Newton-CG's loop of hvp is one launch.  A kernel
whose blocks take the grid's work in turn themselves (`Kernel.takes_turns`: a parallel
scan's chunks, a bitonic sort's tiles) is called as it is (`_taking_turns`); in a loop
those launch with the loop's block, `spec.block` threads (`in_loop`).  The called
functions' one-dimensional shared arrays become windows of one pool per dtype that the
loop's kernel declares (`_pool_shared`): the largest function's memory, not the sum.

A loop nested in a loop that runs as a cooperative grid runs as a grid too (the outer
loop's threads all call it).  A raise (a runtime check's) is a code stored in a flag and a
`return` of every thread; the host reads the flag after the launch and raises.

Refused (the host loop stays; a comment in the host code says why) when a line is one the
device cannot run: a library call (cuBLAS, cuFFT, cuSOLVER have no device-side API: a host
loop, a call a step), a raise in a nested loop, another kernel that uses its block otherwise
(`threadIdx` with a grid-stride loop; a block loop itself may be called from one), more
shared memory than `SHARED_MAX`, buffers made per iteration of a nested loop, or a name the
host reads after the loop that would be left bound to another buffer.

Sizes and products (loop_size.py): by the largest array a step touches (a scan's stacked
arrays by a row), one block, a cooperative grid or launches per step; a product small
enough by vendor.loop_gemm_max_work's rule stays in the tile kernel, so that the loop can
be one launch (an LSTM's scan), larger ones go to cuBLAS a step.  Such a loop refused all
the same (the tile wants more threads than the loop's block: the simulator's 8; shared
memory; another block-wide kernel) is emitted again from the emitter's checkpoint with its
products on cuBLAS: a host loop calls cuBLAS a step, not the slower tile.
"""
import re

import numpy as np

from .kernel_builder import KernelBuilder
from .loop_carries import (ASSIGN as _ASSIGN, NAME as _NAME, Refused as _Refused,
                           copy_lines as _copy, keep_buffers as _keep_buffers,
                           stores_first as _stores_first, through_scratch as _through_scratch,
                           tokens as _tokens)
from .loop_size import BLOCK_MAX, GRID_MAX, largest, mode, tile_products  # noqa: F401

_LAUNCH = re.compile(r"^_K\[(\d+)\]\((.*)\)\s*#.*$")
_COPY_INTO = re.compile(r"^_rt\.copy_into\((.+)\)$")
_FETCH = re.compile(r"_rt\.fetch\((" + _NAME + r")\)")
_VIEW = re.compile(r"^(" + _NAME + r") = _rt\.view\(_M\[(\d+)\], (\d+), (\d+)\)$")
_ALLOC = re.compile(r"^" + _NAME + r" = _rt\.(copy|scalar|empty)\(")
_RAISE = re.compile(r"^raise RuntimeError\((.+)\)$")
_IN_LOOP_ALLOC = re.compile(r"^(" + _NAME + r") = _rt\.(empty|copy|scalar)\((.+)\)$")
_NESTING = re.compile(r"^(for .*|while True|if (?!not _f\d+:).*|elif .*|else):$")
_HEADER = re.compile(r"^(for " + _NAME + r" in range\(.*\)|while True|if .*|elif .*|else):$")
# a captured kernel indexes threads only by these (grid-stride loops, or thread 0 alone)
_STRIDE = "range(cuda.grid(1), "
_THREAD0 = "if cuda.grid(1) == 0:"
_BLOCKWISE = ("threadIdx", "blockIdx", "blockDim", "syncthreads", "shared", "cuda.grid(2)",
              "gridsize(2)", "this_grid")


# ... and a kernel run with its blocks in turn must not read its grid's shape or share memory
_GRIDWIDE = ("gridDim", "cuda.grid(", "gridsize", "this_grid", "blockDim", "threadIdx.z",
             "atomic")

_ONE_BLOCK = "block (block_loop.py)"
_GRID = "cooperative grid (block_loop.py)"


def in_loop(em):
    """Whether a loop's host text is being emitted, which this module may run as one kernel:
    a kernel that uses its block (a scan's chunks, a sort's tiles) then launches with
    `spec.block` threads, the loop's own block, so that the loop can call it as it is
    (`Kernel.takes_turns`); its host form launches the same kernels, so the same bits.

        in_loop(em)     # -> True while emit() writes a fori_loop's body
    """
    return em.loop_depth > 0


def emit(em, step, host_rule, tiles_here=True):
    """Emit control step `step`: its host loop (`host_rule`) rewritten as one kernel where it
    can be, else as the host rule wrote it.  A loop whose products were kept in the tile
    kernel for its one launch (loop_size.tile_products), then refused, is emitted again with
    them on cuBLAS (`tiles_here` False): a host loop would launch the slower tile a step."""
    if step.eqn.prim.name == "cond":       # (a branch runs once: nothing to save)
        host_rule(em, step)
        return
    how = mode(largest(step.eqn))
    outer, tiles = getattr(em, "loop_modes", []), getattr(em, "tile_products", False)
    if how == "block" and "grid" in outer:
        # nested in a loop that runs as a cooperative grid: a grid too, so that the outer
        # loop's every thread runs it (a one-block kernel there would leave the other
        # blocks' elements undone); its host form, if the outer is refused, is one
        # cooperative launch -- the same kernels, the same bits
        how = "grid"
    # its products in the tile kernel, fused into the launch, where the rule says a step's
    # launches cost more (loop_size.tile_products; else cuBLAS a step, a host loop)
    fused = how is not None and (tiles or tiles_here and tile_products(em.spec, step.eqn))
    # (its own choice, not an outer loop's: that one's refusal re-emits both)
    state = em.checkpoint() if fused and not tiles else None
    host, l0, k0 = em.host, len(em.host.lines), len(em.launches)
    em.loop_depth += 1          # (in_loop: the body's block-wide kernels take spec.block)
    em.loop_modes, em.tile_products = outer + [how], fused
    try:
        host_rule(em, step)
    finally:
        em.loop_depth -= 1
        em.loop_modes, em.tile_products = outer, tiles
    if how is None:
        host.lines.insert(l0, f"{'    ' * host.depth}# host loop: arrays past GRID_MAX elements")
        return
    captured = host.lines[l0:]
    errors = []
    try:
        pre, body, params, types = _translate(em, captured, k0, how, errors, bool(outer))
    except _Refused as e:       # (said in the host code, for whoever reads it)
        if state is not None:
            em.restore(state)
            emit(em, step, host_rule, tiles_here=False)
            return
        host.lines.insert(l0, f"{'    ' * host.depth}# host loop, not one kernel: {e}"[:120])
        return
    del host.lines[l0:]
    em.launch_sites -= len(em.launches) - k0
    del em.launches[k0:]
    host.lines.extend(pre)
    _kernel(em, body, params, types, how, step.eqn.prim.name)
    if errors:                  # (the kernel's raise: its code in the flag, said here)
        flag, k = errors[0][0], em.fresh("e")
        em.line(f"{k} = int(_rt.fetch({flag}))")
        with em.block(f"if {k}:"):
            em.line(f"raise RuntimeError(({', '.join(m for _, m in errors)},)[{k} - 1])")


# ---- the host text, checked and translated ----------------------------------------------------
def _translate(em, lines, k0, how, errors, nested):
    """-> (host lines kept before the launch, kernel body lines, free names, their types).
    A `raise` (a runtime check's) becomes its code stored in a flag by thread 0 and a
    `return` of every thread (all read the same predicate after a barrier); `errors` gets
    (flag name, message) pairs, which the host reads after the launch -- not in a loop
    nested in another, whose `return` would leave only the inner loop."""
    base = min((len(s) - len(s.lstrip()) for s in lines if s.strip()), default=0)
    rel = [(s[base:] if s.strip() else "") for s in lines]
    start = 0
    while start < len(rel) and (not rel[start] or rel[start][0] == "#" or
                                _ALLOC.match(rel[start]) or rel[start].endswith("  # view")):
        start += 1
    views = _view_bindings(rel, start)     # (the host names them too: a later loop reads them)
    pre = [lines[i] for i in range(start)] + [lines[i] for i in views]
    body, fresh = ([], [0]) if how == "block" else (["_g = cuda.cg.this_grid()"], [0])
    barrier = "cuda.syncthreads()" if how == "block" else "_g.sync()"
    types, hoisted, nests, called = _name_types(em), [], 0, set()
    for s in [rel[i] for i in range(start, len(rel)) if i not in views]:
        if not s or s.lstrip().startswith("#"):
            continue
        ind, s = s[:len(s) - len(s.lstrip())], s.strip()
        s = s.replace("  # view", "")
        s = re.sub(r"_W\[(\d+)\]", r"_W_\1", s)
        m = _VIEW.match(s)
        if m:
            s = f"{m[1]} = _M_{m[2]}[{m[3]}:{int(m[3]) + int(m[4])}]"
        s = re.sub(r"_M\[(\d+)\]", r"_M_\1", s)
        for name in _FETCH.findall(s):
            fresh[0] += 1
            tmp = f"_f{fresh[0]}"
            body += [f"{ind}{tmp} = {name}[0]", f"{ind}{barrier}"]
            s = s.replace(f"_rt.fetch({name})", tmp)
        m = _LAUNCH.match(s)
        if m:
            name, grid, block = em.launches[int(m[1])]
            name = _check_kernel(em, name, grid, block, how)
            called.add(name)
            body += [f"{ind}_d_{name}({m[2]})", f"{ind}{barrier}"]
            continue
        m = _COPY_INTO.match(s)
        if m:
            dst, src = _split_args(m[1])
            if "_rt." in dst + src:
                raise _Refused(s)
            body += _copy(ind, dst, src, barrier)
            continue
        m = _RAISE.match(s)
        if m:
            if nested:
                raise _Refused("a raise in a loop nested in another")
            body += _raise(em, ind, m[1], errors, types, pre, lines[0][:base])
            continue
        m = _IN_LOOP_ALLOC.match(s)
        if m:              # a fresh buffer per iteration: one made before the launch
            body += _hoist(em, ind, m, types, hoisted, pre, lines[0][:base], barrier)
            continue
        if "_rt." in s or "_K[" in s or not (s == "break" or _HEADER.match(s) or
                                            _ASSIGN.match(s)):
            raise _Refused(s)
        nests += bool(_NESTING.match(s))
        body.append(ind + s)
    if hoisted and nests > 1:
        raise _Refused("buffers made per iteration of a nested loop")
    if errors:                 # the flag cleared by the thread that sets it
        body = [f"if cuda.grid(1) == 0:", f"    {errors[0][0]}[0] = 0"] + body
    body, called = _pool_shared(em, body, called)
    em.device_fns.update(called)
    shared = _shared_bytes("\n".join(body)) + \
        sum(_shared_bytes(_text_called(em, n)) for n in called)
    if shared > SHARED_MAX:
        raise _Refused(f"{shared} bytes of shared memory")
    params = _free_names(body)
    known = _host_names(em, pre)
    missing = [p for p in params if p not in types or
               p not in known and not p.startswith(("_W_", "_M_"))]
    if missing:
        raise _Refused(f"{missing} not bound on the host")
    try:
        return pre, _keep_buffers(body, params, barrier), params, types
    except _Refused as e:
        if "took the new carry" not in str(e):
            raise
    # a row store after the renames first; carries that take each other's buffers renamed
    # in parallel, through scratch buffers
    body = _through_scratch(_stores_first(body, params), params, types, pre, lines[0][:base],
                            lambda: em.fresh("sw"), barrier)
    params = _free_names(body)
    return pre, _keep_buffers(body, params, barrier), params, types


def _raise(em, ind, message, errors, types, pre, host_ind):
    """Kernel lines for `raise RuntimeError(message)`: thread 0 stores the message's code
    (1, 2, ...) in a one-element flag made before the launch, every thread returns."""
    if not errors:
        flag = em.fresh("err")
        pre.append(f"{host_ind}{flag} = _rt.empty(1, np.int32)")
        types[flag] = ("array", np.dtype(np.int32), flag)
    else:
        flag = errors[0][0]
    errors.append((flag, message))
    return [f"{ind}if cuda.grid(1) == 0:", f"{ind}    {flag}[0] = {len(errors)}",
            f"{ind}return"]


def _hoist(em, ind, m, types, hoisted, pre, host_ind, barrier):
    """`X = _rt.empty / copy / scalar(...)` in the loop: the buffer made once on the host
    (`_hK`), the copy or the scalar's store done by the kernel.  Safe in a loop without
    nested loops: a buffer made in an iteration is read at most in the next one (through a
    carry, which `_keep_buffers` copies back into the carry's own buffer)."""
    x, fn, args = m[1], m[2], m[3]
    h = em.fresh("h")
    hoisted.append(h)
    if fn == "empty":
        _, dt = _split_args(args)
        pre.append(f"{host_ind}{h} = _rt.empty({args})")
        types[h] = ("array", np.dtype(dt[3:]), h)
        return [f"{ind}{x} = {h}"]
    if fn == "copy":
        if args not in types:
            raise _Refused(m[0])
        pre.append(f"{host_ind}{h} = _rt.empty({types[args][3]}, "
                   f"np.{types[args][1].name})")
        types[h] = ("array", types[args][1], h)
        return [f"{ind}{x} = {h}"] + _copy(ind, x, args, barrier)
    value, dt = _split_args(args)
    pre.append(f"{host_ind}{h} = _rt.empty(1, {dt})")
    types[h] = ("array", np.dtype(dt[3:]), h)
    return [f"{ind}{x} = {h}", f"{ind}if cuda.grid(1) == 0:", f"{ind}    {x}[0] = {value}",
            f"{ind}{barrier}"]


def _host_names(em, pre):
    """Names the host code has bound so far (left sides of its lines), and its inputs'."""
    out = set()
    for s in list(em.host.lines) + pre:
        m = _ASSIGN.match(s.strip())
        if m:
            out.update(m[1].split(", "))
    for v in em.top_plan.jaxpr.invars:
        out.update((em.A(v), em.s(v)))
    out.update(n for n, _ in em.const_params)
    return out


def _view_bindings(rel, start):
    """Indices of the lines from `start` that name a view of a buffer made before the loop
    (`L = _W[3]  # view`: a scan's stacked output laid out after its first row's copy) at the
    loop's own level, names bound nowhere else: the host binds them before the launch, so
    the host code after the loop (a gradient's reverse scan) reads them too."""
    found = {}
    for i, s in enumerate(rel):
        m = _ASSIGN.match(s)
        if m:
            found.setdefault(m[1], []).append(i)
    return {i for i in range(start, len(rel)) if rel[i].endswith("  # view")
            and (m := _ASSIGN.match(rel[i])) and found.get(m[1]) == [i]}


def _split_args(text):
    """The two arguments of a call, split at the top-level comma."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch in "([" and 1 or (-1 if ch in ")]" else 0)
        if ch == "," and depth == 0:
            return text[:i].strip(), text[i + 1:].strip()
    raise _Refused(text)


def _check_kernel(em, name, grid, block, how):
    """-> the device function to call for captured kernel `name`.  It must compute the same in
    any launch shape: 1-D, threads indexed only by grid-stride loops or `thread 0 alone`, no
    block-wide resources -- or be a block loop itself, called from one (all threads of the
    one block reach its barriers) -- or have blocks that share nothing (`_blocks_in_turn`)."""
    k = next(k for k in em.kernels if k.name == name)
    text = "\n".join(k.lines)
    if k.what.endswith(_ONE_BLOCK) and how == "block" and grid == (1,) and \
            block == (em.spec.block,):
        return name
    if k.what.endswith(_GRID) and how == "grid" and grid == (em.spec.sms,) and \
            block == (em.spec.block,):       # a grid loop nested in one: every thread calls
        return name                          # it, its grid.sync() is the outer grid's
    if k.blocks_apart:
        return _blocks_in_turn(em, k, grid, block)
    if k.takes_turns:
        return _taking_turns(em, k, grid, block)
    if len(grid) != 1 or len(block) != 1 or any(w in text for w in _BLOCKWISE):
        raise _Refused(f"{name} uses its block")
    if text.count("cuda.grid(1)") != text.count(_STRIDE) + text.count(_THREAD0):
        raise _Refused(f"{name} indexes threads otherwise")
    if grid[0] * block[0] == 1:       # one thread by design (in-order combines): only if trivial
        for n in re.findall(re.escape(_STRIDE) + r"([^,]+),", text):
            if not n.strip().isdigit() or int(n) > 1:
                raise _Refused(f"{name} runs in one thread")
    return name


_TURNS = re.compile(r"range\(cuda\.blockIdx\.x, [^,()]+, cuda\.gridDim\.x\)")


def _taking_turns(em, k, grid, block):
    """-> the name of kernel `k`, whose blocks take the grid's work in turn themselves (a
    scan's chunks, a sort's tiles), called as it is in the loop's blocks:

        for _g in range(cuda.blockIdx.x, 6, cuda.gridDim.x):     # 6 chunks, any grid
            ...                                  # the chunk in shared memory, barriers
            cuda.syncthreads()                   # (its shared memory free for the next)

    Exact: a chunk's work is the same whichever block takes it.  It needs the loop's block
    to have its threads (`in_loop`: it was emitted with `spec.block` of them) and must read
    the grid's shape only in that loop."""
    text = "\n".join(k.lines)
    if len(grid) != 1 or block != (em.spec.block,):
        raise _Refused(f"{k.name} wants {block} threads a block")
    turns = len(_TURNS.findall(text))
    if text.count("cuda.blockIdx") != turns or text.count("cuda.gridDim") != turns or \
            re.search(r"\breturn\b", text) or \
            any(w in text for w in ("cuda.grid(", "gridsize", "this_grid", "blockDim",
                                    "threadIdx.y", "threadIdx.z")):
        raise _Refused(f"{k.name} uses its grid")
    return k.name


_SHARED_1D = re.compile(r"^(\s*)(" + _NAME + r") = cuda\.shared\.array\((\d+), nbt\.(\w+)\)$")


def _pool_shared(em, body, called):
    """-> (body, names called): the one-dimensional shared arrays of the device functions
    the loop calls become windows of one pool per dtype that the loop's kernel declares and
    passes them, so they take the largest function's memory, not the sum (the calls run one
    after another, a barrier between; two scans and a sort fit where their own arrays would
    not):

        _d_k3(S1_A, S1_B)                 # k3: _s = cuda.shared.array(2048, nbt.float64)
    becomes
        _sh_float64 = cuda.shared.array(2048, nbt.float64)          # (the kernel's first line)
        _d_k3_s(S1_A, S1_B, _sh_float64)  # k3_s: _s = _shp_float64[0:2048]
    """
    pool, renamed = {}, {}
    for n in sorted(called):
        lines = em.device_defs.get(n) or next(k.lines for k in em.kernels if k.name == n)
        sizes, out = {}, []
        for ln in lines[1:]:
            m = _SHARED_1D.match(ln)
            if m:
                ind, x, size, dt = m[1], m[2], int(m[3]), m[4]
                at = sizes.get(dt, 0)
                sizes[dt] = at + size
                ln = f"{ind}{x} = _shp_{dt}[{at}:{at + size}]"
            out.append(ln)
        if not sizes:
            continue
        dts = sorted(sizes)
        name = f"{n}_s"
        params = re.match(r"^def \w+\((.*)\):$", lines[0])[1]
        params = ", ".join([params] * bool(params) + [f"_shp_{d}" for d in dts])
        em.device_defs[name] = [f"def {name}({params}):"] + out
        renamed[n] = (name, dts)
        for d in dts:
            pool[d] = max(pool.get(d, 0), sizes[d])
    if not renamed:
        return body, called
    call = re.compile(r"\b_d_(" + "|".join(map(re.escape, renamed)) + r")\((.*)\)$")

    def rename(ln):
        m = call.search(ln)
        if not m:
            return ln
        name, dts = renamed[m[1]]
        extra = ", ".join(f"_sh_{d}" for d in dts)
        return ln[:m.start()] + f"_d_{name}({m[2]}{', ' if m[2] else ''}{extra})"
    decls = [f"_sh_{d} = cuda.shared.array({pool[d]}, nbt.{d})" for d in sorted(pool)]
    return decls + [rename(ln) for ln in body], {renamed.get(n, (n,))[0] for n in called}


def _text_called(em, name):
    """The text of device function `name` and of the device functions it calls (a block
    loop's kernel calls its body's kernels): where their shared arrays are declared."""
    lines = em.device_defs.get(name) or next(k.lines for k in em.kernels if k.name == name)
    text = "\n".join(lines)
    inner = set(re.findall(r"\b_d_(" + _NAME + r")\(", text)) - {name}
    return "\n".join([text] + [_text_called(em, n) for n in sorted(inner)])


def _blocks_in_turn(em, k, grid, block):
    """-> the name of a device function running kernel `k`'s `grid` of blocks in the blocks
    of the launch that calls it, each taking every `gridDim`-th of them in turn:

        def k7_b(...):                            # k7 <<<(3, 2), 256>>>: 6 blocks
            _vt = cuda.threadIdx.x
            for _vb in range(cuda.blockIdx.x, 6, cuda.gridDim.x):
                _vbx = _vb % 3
                _vby = _vb // 3 % 2
                ...                               # k7's body, cuda.blockIdx.y -> _vby
                cuda.syncthreads()                # (its shared memory free for the next)

    Exact, and the same sums as the launch: a block of `k` (a reduction's rows, a matmul
    tile) reads `cuda.blockIdx` only to pick its part of the work and shares nothing with
    the others but what it writes, which the next call reads after the caller's barrier.
    A 2-D block (matmul's TS x TS) is the same threads numbered along x."""
    T = int(np.prod(block))
    body = k.lines[2:]
    text = "\n".join(body)
    if T != em.spec.block:
        raise _Refused(f"{k.name} wants {T} threads a block")
    if re.search(r"\breturn\b", text) or any(w in text for w in _GRIDWIDE):
        raise _Refused(f"{k.name} uses its grid")
    name = f"{k.name}_b"                 # (a kernel's text fixes its grid)
    if name in em.device_defs:
        return name
    g = list(grid) + [1] * (3 - len(grid))
    at = [f"        _vbx = _vb % {g[0]}", f"        _vby = _vb // {g[0]} % {g[1]}",
          f"        _vbz = _vb // {g[0] * g[1]}"][:len(grid)]
    rep = {"cuda.blockIdx.x": "_vbx", "cuda.blockIdx.y": "_vby", "cuda.blockIdx.z": "_vbz",
           "cuda.threadIdx.x": f"(_vt % {block[0]})" if len(block) > 1 else "_vt",
           "cuda.threadIdx.y": f"(_vt // {block[0]})"}
    for a, b in rep.items():
        text = text.replace(a, b)
    em.device_defs[name] = [
        k.lines[0].replace(f"def {k.name}(", f"def {name}("),
        f'    """{k.name} <<<{grid}, {block}>>>: its blocks in turn (block_loop.py)"""',
        "    _vt = cuda.threadIdx.x",
        f"    for _vb in range(cuda.blockIdx.x, {g[0] * g[1] * g[2]}, cuda.gridDim.x):"] + \
        at + ["    " + ln for ln in text.split("\n")] + ["        cuda.syncthreads()"]
    return name


_SHARED = re.compile(r"cuda\.shared\.array\(\(?([\d, ]+?)\)?, nbt\.(\w+)\)")
# static shared memory a kernel may have (48 KiB), less a margin for numba-cuda's own
SHARED_MAX = 40 * 1024


def _shared_bytes(text):
    """Bytes of the shared arrays declared in a kernel's text (all of them, if one's size is
    not spelled in numbers)."""
    if text.count("cuda.shared.array(") != len(_SHARED.findall(text)):
        return SHARED_MAX + 1
    return sum(int(np.prod([int(d) for d in dims.split(",") if d.strip()])) *
               np.dtype("bool" if t == "boolean" else t).itemsize
               for dims, t in _SHARED.findall(text))


def _free_names(body):
    """Names read before any assignment in text order (the host's values: parameters)."""
    assigned, free = set(), []
    for s in body:
        s = s.strip()
        m = _ASSIGN.match(s)
        targets, reads = ([], s)
        if m:
            targets, reads = m[1].split(", "), m[2]
        fm = re.match(r"^for (" + _NAME + r") in (.*):$", s)
        if fm:
            targets, reads = [fm[1]], fm[2]
        for t in _tokens(reads):
            if t not in assigned and t not in free and not t.startswith("_d_"):
                free.append(t)
        assigned.update(targets)
    return free


# ---- the kernel -------------------------------------------------------------------------------
def _kernel(em, body, params, types, how, what):
    kb = KernelBuilder(em, f"{what} as one " + (_ONE_BLOCK if how == "block" else _GRID))
    for p in params:
        kind, dt, host = types.get(p, (None, None, None, None))[:3]
        if kind is None:
            raise RuntimeError(f"block_loop: no type for {p}")   # (a bug: every name is a Var's)
        kb._param(p, host, kind, dt)
    for s in body:
        kb.line(s)
    T = em.spec.block
    kb.launch(em.spec.sms if how == "grid" else 1, T)


def _name_types(em):
    """name -> (kind, dtype, host expression) of every name the host code may pass."""
    out = {}
    for v in list(em.names):
        dt = np.dtype(v.aval.dtype)
        n = max(int(np.prod(v.aval.shape, dtype=np.int64)), 1)
        out[em.A(v)] = ("array", dt, em.A(v), n)
        out.setdefault(em.s(v), ("scalar", dt, em.s(v), 1))
    for k, (n, dt, _) in enumerate(em.ws):
        out[f"_W_{k}"] = ("array", dt, f"_W[{k}]", n)
    for dt, (k, _) in em.mem.items():
        out[f"_M_{k}"] = ("array", np.dtype(dt), f"_M[{k}]", None)
    return out
