"""Move the body of each `prange` loop of a generated kernel into a serial function of its
own, which the loop calls once per chunk.

Numba compiles a prange body into a parfors gufunc, and LLVM did not vectorise the counted
loops inside it: float32 `log` over 10^6 elements took 0.52 ns an element on two threads,
against 0.47 ns for the same loop serially on one, while the same chunk loop as a function
called from the prange took 0.24 ns (2-core EPYC VM, quiet, 2026-11-25).  Outlined, the
body compiles as the serial loops do -- vectorised -- and the parfors passes see a loop of
one call, so a threaded kernel also compiles faster (their cost grows with the lines and
branches of the function they rewrite).

The rewrite is textual, as in kernels/outline_prange.py: the body's lines move unchanged
into `def _xf_chunk<k>(names it reads):` before the kernel; `codecache.compile_kernel`
compiles the functions named in `__xforms_chunks__` without `parallel`.  A body whose
assignments the rest of the kernel may read is left in place (a prange body's scalars are
private to it; the emitter stores partial sums by chunk into arrays).

    >>> src = '''def kernel(A, B):
    ...     n = A.shape[0]
    ...     for ch in prange(n):
    ...         v = A[ch] * 2.0
    ...         B[ch] = v
    ...     return B
    ... '''
    >>> out, names = outline_chunks(src)
    >>> names
    ['_xf_chunk0']
    >>> print(out)                                 # doctest: +NORMALIZE_WHITESPACE
    def _xf_chunk0(A, B, ch):
            v = A[ch] * 2.0
            B[ch] = v
    <BLANKLINE>
    def kernel(A, B):
        n = A.shape[0]
        for ch in prange(n):
            _xf_chunk0(A, B, ch)
        return B
"""
import ast

from .outline_prange import _Reads, _is_prange_nest, _reads, _writes


def _prange_loops(fn):
    """The prange loops in `fn`, outermost only (a prange inside a moved body moves with
    it and runs serially there, as Numba runs a nested prange)."""
    found = []

    def walk(stmts):
        for s in stmts:
            if _is_prange_nest(s) and isinstance(s.target, ast.Name):
                found.append(s)
                continue
            for field in ("body", "orelse"):
                walk(getattr(s, field, None) or [])
    walk(fn.body)
    return found


def _movable(fn, loop):
    """The body assigns no name that the kernel may read outside it (reads before writes,
    conservatively: a name assigned inside a loop or branch counts as unassigned after),
    and returns nothing."""
    body = loop.body
    loop.body = [ast.Pass()]
    try:
        outside = _Reads()
        outside.block(fn.body, {a.arg for a in fn.args.args})
    finally:
        loop.body = body
    return not (_writes(body) & outside.reads) and not any(
        isinstance(n, (ast.Return, ast.Yield)) for s in body
        for n in ast.walk(s))


def outline_chunks(source, kernel="kernel"):
    """(new source, names of the functions made) -- `source` unchanged and [] when no
    prange body can move."""
    tree = ast.parse(source)
    fn = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == kernel),
              None)
    if fn is None:
        return source, []
    local = {a.arg for a in fn.args.args} | _writes(fn.body)
    loops = [lp for lp in _prange_loops(fn) if _movable(fn, lp)]
    if not loops:
        return source, []
    lines = source.split("\n")
    defs, out, at, names = [], [], 0, []
    for k, lp in enumerate(loops):
        name = f"_xf_chunk{k}"
        names.append(name)
        args = ", ".join(sorted((_reads(lp.body) | {lp.target.id}) & local))
        first, last = lp.body[0].lineno, lp.body[-1].end_lineno
        indent = lines[first - 1][:lp.body[0].col_offset]
        defs.append(f"def {name}({args}):")
        defs.extend(lines[first - 1:last])
        defs.append("")
        out.extend(lines[at:first - 1])
        out.append(f"{indent}{name}({args})")
        at = last
    out.extend(lines[at:])
    start = (fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno) - 1
    out[start:start] = defs
    return "\n".join(out), names
