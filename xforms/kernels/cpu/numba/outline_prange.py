"""Move each top-level `prange` loop nest of a large generated kernel into its own function.

Numba's parfors passes (`parallel=True`) cost the whole function's lines x branches per
pass, so a kernel of thousands of lines with a few threaded nests (the per-example
gradients of JAX's DP-SGD example: 4,000 lines, 8 prange nests) took minutes to compile
threaded.  Outlined, the kernel itself compiles serially and only the nests go through
parfors (`codecache.compile_kernel` compiles the functions named in `__xforms_nests__`
with the kernel's `parallel` flag).  Only kernels above `cpu.PARFOR_MAX_COST` are
rewritten, so small kernels keep their source byte for byte.

The rewrite is textual: the nest's lines move unchanged (same indentation, comments kept)
into `def _xf_nest<k>(names it reads):` placed before the kernel, and the kernel calls it.
A nest whose writes the rest of the kernel may read is left in place.  Above
`cpu.SPLIT_LINES` lines, runs of the kernel's other statements become `_xf_part<k>`
functions the same way, returning the names later statements read (`outline(loops=True)`).

    >>> src = '''def kernel(A, B):
    ...     n = A.shape[0]
    ...     for ch in prange(n):
    ...         B[ch] = A[ch] * 2.0
    ...     return B
    ... '''
    >>> out, names = outline(src)
    >>> names
    ['_xf_nest0']
    >>> print(out)                                 # doctest: +NORMALIZE_WHITESPACE
    def _xf_nest0(A, B, n):
        for ch in prange(n):
            B[ch] = A[ch] * 2.0
    <BLANKLINE>
    def kernel(A, B):
        n = A.shape[0]
        _xf_nest0(A, B, n)
        return B
"""
import ast


class _Reads:
    """Names a statement list may read before writing them (flow order, conservative:
    a write inside a loop or branch body does not count after that body)."""

    def __init__(self):
        self.reads = set()

    def block(self, stmts, defined):
        defined = set(defined)
        for s in stmts:
            self.stmt(s, defined)
        return defined

    def expr(self, node, defined):
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in defined:
                self.reads.add(n.id)

    def stmt(self, s, defined):
        if isinstance(s, ast.Assign):
            self.expr(s.value, defined)
            for t in s.targets:
                self.target(t, defined)
        elif isinstance(s, ast.AugAssign):
            self.expr(s.value, defined)
            self.expr(s.target, defined)
            if isinstance(s.target, ast.Name):
                if s.target.id not in defined:
                    self.reads.add(s.target.id)
            else:
                self.target(s.target, defined)
        elif isinstance(s, ast.While):
            self.expr(s.test, defined)
            self.block(s.body, defined)
            self.block(s.orelse, defined)
        elif isinstance(s, ast.For):
            self.expr(s.iter, defined)
            inner = set(defined)
            self.target(s.target, inner)
            self.block(s.body, inner)
            self.block(s.orelse, defined)
        elif isinstance(s, ast.If):
            self.expr(s.test, defined)
            self.block(s.body, defined)
            self.block(s.orelse, defined)
        else:
            self.expr(s, defined)

    def target(self, t, defined):
        if isinstance(t, ast.Name):
            defined.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self.target(e, defined)
        else:                                # A[i] = ...: reads A and the index
            self.expr(t, defined)


def _reads(stmts):
    r = _Reads()
    r.block(stmts, set())
    return r.reads


def _writes(stmts):
    return {n.id for s in stmts for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _is_prange_nest(s):
    return (isinstance(s, ast.For) and isinstance(s.iter, ast.Call)
            and isinstance(s.iter.func, ast.Name) and s.iter.func.id == "prange")


def _loop(s):
    return isinstance(s, (ast.For, ast.While)) and not any(
        isinstance(n, (ast.Return, ast.Yield)) for n in ast.walk(s))


def _groups(body, params, loops, max_lines):
    """[(k, m, kind, outs)]: runs body[k:m] to move, each as one function returning the
    names `outs` that later statements read; kind "nest" (one prange nest, no outs) or
    "part" (with `loops`: any statements up to `max_lines`, at least one loop among them)."""
    local = params | _writes(body)
    n = len(body)
    reads_of = [_reads([s]) for s in body]
    writes_of = [_writes([s]) for s in body]
    sure = [_Reads().block([s], set()) for s in body]     # names s surely assigns
    after = [set() for _ in range(n + 1)]                # read before written in body[k:]
    for k in range(n - 1, -1, -1):
        after[k] = reads_of[k] | (after[k + 1] - sure[k])
    before = [set(params)]                               # surely assigned before body[k]
    for k in range(n):
        before.append(before[k] | sure[k])

    stop = [_is_prange_nest(s) or any(isinstance(x, (ast.Return, ast.Yield))
                                      for x in ast.walk(s)) for s in body]
    loop_at = [None] * (n + 1)                           # the first loop in body[k:]
    for k in range(n - 1, -1, -1):
        loop_at[k] = k if _loop(body[k]) and not stop[k] else loop_at[k + 1]
    facts = (reads_of, writes_of, sure, after, before, stop, loop_at)
    out, k = [], 0
    while k < n:
        if _is_prange_nest(body[k]):
            if _loop(body[k]) and not writes_of[k] & after[k + 1] and not (
                    reads_of[k] & local) - before[k] - writes_of[k]:
                out.append((k, k + 1, "nest", []))
            k += 1
            continue
        m, run = _part(body, k, max_lines, local, facts) if loops else (k, None)
        if run is None:
            k += 1
            continue
        out.append((k, m, "part", run))
        k = m
    return out, before, local


def _part(body, k, max_lines, local, facts):
    """(m, outs) of the longest run body[k:m] (from body[k], up to `max_lines`, no prange
    nest, no return) that can be a function: it reads only names surely assigned before
    it or in it, and every name it writes that later statements read is surely assigned
    by its end (returned).  (k, None) when there is none with a loop in it."""
    reads_of, writes_of, sure, after, before, stop, loop_at = facts
    if loop_at[k] is None or body[loop_at[k]].end_lineno - body[k].lineno >= max_lines:
        return k, None                               # straight-line code stays (no scan)
    reads, writes, assigned = set(), set(), set()
    best = (k, None)
    for m in range(k, len(body)):
        if stop[m] or body[m].end_lineno - body[k].lineno >= max_lines:
            break
        reads |= reads_of[m] - assigned
        writes |= writes_of[m]
        assigned |= sure[m]
        if (reads & local) - before[k] - writes:
            break                                    # reads a name that may be unassigned
        outs = writes & after[m + 1]
        if m >= loop_at[k] and not outs - assigned - before[k]:
            best = (m + 1, sorted(outs))
    return best


def outline(source, kernel="kernel", loops=False, max_lines=400):
    """(new source, names of the functions made) -- `source` unchanged and [] when
    nothing can move.  Each top-level prange nest of `kernel` becomes `_xf_nest<k>`;
    with `loops`, runs of its other top-level statements (up to `max_lines`, with a loop
    among them) become `_xf_part<k>`, which return the names later statements read
    (`a, b = _xf_part0(A, n)`), so that no one Numba function is huge (LLVM's mem2reg
    costs a function's blocks x variables) and there are few of them (each is a Numba
    compile of its own, and is compiled again linked into the kernel)."""
    tree = ast.parse(source)
    fn = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == kernel),
              None)
    if fn is None:
        return source, []
    body = fn.body
    if not any(isinstance(s, (ast.For, ast.While)) for s in body):
        return source, []     # straight-line code (a long scalar gradient): nothing moves
    groups, before, local = _groups(body, {a.arg for a in fn.args.args}, loops, max_lines)
    if not groups:
        return source, []
    lines = source.split("\n")
    indent = lines[body[0].lineno - 1][:body[0].col_offset]
    defs, out, at, names = [], [], 0, []
    start = (fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno) - 1
    count = {"nest": 0, "part": 0}
    for k, m, kind, outs in groups:
        name = f"_xf_{kind}{count[kind]}"
        count[kind] += 1
        names.append(name)
        # a returned name the run may leave unassigned was assigned before: pass it in
        kept = set(outs) - _Reads().block(body[k:m], set())
        args = ", ".join(sorted((_reads(body[k:m]) | kept) & local & before[k]))
        first, last = body[k].lineno, body[m - 1].end_lineno
        defs.append(f"def {name}({args}):")
        defs.extend(lines[first - 1:last])
        result = ", ".join(outs)
        if outs:
            defs.append(f"{indent}return {result}")
        defs.append("")
        out.extend(lines[at:first - 1])
        out.append(f"{indent}{result + ' = ' if outs else ''}{name}({args})")
        at = last
    out.extend(lines[at:])
    out[start:start] = defs
    return "\n".join(out), names


def texts(source, names):
    """The source text of each outlined function `names` of an outlined `source`."""
    lines, out = source.split("\n"), []
    for name in names:
        first = lines.index(next(ln for ln in lines if ln.startswith(f"def {name}(")))
        last = next(i for i in range(first + 1, len(lines)) if lines[i].startswith("def "))
        out.append("\n".join(lines[first:last]))
    return out
