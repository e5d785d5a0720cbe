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
A nest whose writes the rest of the kernel may read is left in place.

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


def outline(source, kernel="kernel"):
    """(new source, names of the outlined functions) -- `source` unchanged and [] when
    the kernel has no prange nest that can move."""
    tree = ast.parse(source)
    fn = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == kernel),
              None)
    if fn is None:
        return source, []
    body = fn.body
    params = {a.arg for a in fn.args.args}
    local = params | _writes(body)
    lines = source.split("\n")
    moves = []                               # (first line, last line, name, args) 1-based
    defined = set(params)                    # definitely assigned before statement k
    for k, s in enumerate(body):
        before, defined = defined, _Reads().block(body[k:k + 1], defined)
        if not _is_prange_nest(s) or any(isinstance(n, (ast.Return, ast.Yield))
                                         for n in ast.walk(s)):
            continue
        if _writes([s]) & _reads(body[k + 1:]):
            continue                         # the rest of the kernel reads what it writes
        reads = _reads([s]) & local
        if reads - before - _writes([s]):
            continue                         # reads a name not surely assigned yet
        args = sorted(reads & before)
        moves.append((s.lineno, s.end_lineno, f"_xf_nest{len(moves)}", args))
    if not moves:
        return source, []
    indent = lines[fn.body[0].lineno - 1][:fn.body[0].col_offset]
    defs, out, at = [], [], 0
    start = (fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno) - 1
    for first, last, name, args in moves:
        defs.append(f"def {name}({', '.join(args)}):")
        defs.extend(lines[first - 1:last])
        defs.append("")
        out.extend(lines[at:first - 1])
        out.append(f"{indent}{name}({', '.join(args)})")
        at = last
    out.extend(lines[at:])
    out[start:start] = defs
    return "\n".join(out), [m[2] for m in moves]


def texts(source, names):
    """The source text of each outlined function `names` of an outlined `source`."""
    lines, out = source.split("\n"), []
    for name in names:
        first = lines.index(next(ln for ln in lines if ln.startswith(f"def {name}(")))
        last = next(i for i in range(first + 1, len(lines)) if lines[i].startswith("def "))
        out.append("\n".join(lines[first:last]))
    return out
