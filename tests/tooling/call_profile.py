"""Which of the repository's files and functions the first `jit(grad(loss))` call of the
README program runs (issue #19's measure), from a profile of that call in a fresh process
with an empty xforms cache and tiering off (the synchronous compile path):

    python tests/tooling/call_profile.py            # files, functions, calls; origin, layers, knots
    python tests/tooling/call_profile.py --list     # ... and each function with its call count
    python tests/tooling/call_profile.py --pairs    # ... and the calls of each both-ways file pair
    python tests/tooling/call_profile.py --imported # the compiler package imported beforehand

Module bodies (`<module>`, run by the first call's imports) are counted apart.  Functions
are split by origin: the call's own path (reached from `Jitted.__call__` through our code),
imports the call runs (the compiler package is imported on the first compile), and our
patches that Numba's compiler calls while it compiles the generated module.  "Named"
functions exclude comprehensions and lambdas (on Python 3.11 each is a code object of its
own).  File pairs calling each other both ways are read from pstats' callers; since the
layers import only downward (tests/tooling/test_layering.py), one direction of each pair is a
call back through a function value passed down (a rule in a table, a traced function).
"""
import cProfile
import collections
import os
import pstats
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ANONYMOUS = ("<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>", "<lambda>")


def profile(imported=False):
    """pstats' table of the first jit(grad(loss))(w, x, y) call."""
    os.environ["XFORMS_CACHE_DIR"] = tempfile.mkdtemp()
    os.environ["XFORMS_TIERED"] = "0"
    sys.path.insert(0, ROOT)
    import numpy as np
    import xforms as xf
    import xforms.numpy as xnp

    def loss(w, x, y):
        return xnp.mean((xnp.tanh(x @ w) - y) ** 2)

    rng = np.random.default_rng(0)
    w, x, y = rng.normal(size=(3, 2)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    f = xf.jit(xf.grad(loss))
    if imported:
        import xforms.kernels.cpu.backend  # noqa: F401
    prof = cProfile.Profile()
    prof.enable()
    f(w, x, y)
    prof.disable()
    return pstats.Stats(prof).stats


def _mine(k):
    return k[0].startswith(ROOT + os.sep) and "/tests/" not in k[0]


def _rel(k):
    return os.path.relpath(k[0], ROOT)


def _edges(stats):
    """caller -> callees, looking through builtins (sorted, map, all, ...): a builtin's
    callee is credited to the builtin's callers in the callee's own file (its genexpr's
    function), else to all of them."""
    out = collections.defaultdict(set)
    for k, v in stats.items():
        for c in v[4]:
            if c[0] == "~":
                callers = stats.get(c, (0, 0, 0, 0, {}))[4]
                for c2 in [c2 for c2 in callers if c2[0] == k[0]] or callers:
                    out[c2].add(k)
            else:
                out[c].add(k)
    return out


def origins(stats):
    """function -> "path" | "numba" | "import" | "other" (see the module docstring)."""
    callees = _edges(stats)
    numba = lambda k: "/numba/" in k[0] or "/llvmlite/" in k[0]   # noqa: E731
    cat = {}

    def reach(starts, label, enter):
        todo = [k for k in starts if k not in cat]
        for k in todo:
            cat[k] = label
        while todo:
            k = todo.pop()
            for c in callees.get(k, ()):
                if c not in cat and enter(c):
                    cat[c] = label
                    todo.append(c)

    entry = [k for k in stats if k[0].endswith(os.path.join("xforms", "jit", "jitted.py"))
             and k[2] == "__call__"]
    reach(entry, "path", lambda c: c[2] != "<module>" and not numba(c))
    reach([k for k in stats if numba(k)], "numba", lambda c: c[2] != "<module>")
    reach([k for k in stats if k[2] == "<module>"], "import", lambda c: True)
    return {k: cat.get(k, "other") for k in stats if _mine(k) and k[2] != "<module>"}


def layer(path):
    """The layer (tests/tooling/test_layering.py) of a repository file."""
    from test_layering import LAYERS, layer_of
    mod = path[:-3].replace(os.sep, ".")
    mod = mod[:-len(".__init__")] if mod.endswith(".__init__") else mod
    k = layer_of(mod)
    return k, LAYERS[k][0]


def both_ways(stats):
    """{(file a, file b): (calls a->b, calls b->a)} for file pairs calling each other both
    ways, each call as (caller function, callee function)."""
    edges = collections.defaultdict(set)
    for k, v in stats.items():
        for c in v[4]:
            if _mine(k) and _mine(c) and c[0] != k[0]:
                edges[(_rel(c), _rel(k))].add((c[2], k[2]))
    return {(a, b): (sorted(edges[(a, b)]), sorted(edges[(b, a)]))
            for (a, b) in edges if a < b and (b, a) in edges}


def main(show=False, imported=False, pairs=False):
    stats = profile(imported)
    mine = {k: v for k, v in stats.items() if _mine(k)}
    files = {k[0] for k in mine}
    funcs = [k for k in mine if k[2] != "<module>"]
    calls = sum(v[1] for k, v in mine.items() if k[2] != "<module>")
    print(f"files {len(files)} functions {len(funcs)} (+{len(mine) - len(funcs)} module "
          f"bodies) calls {calls}")
    origin = origins(stats)
    print("by origin (named + comprehensions/lambdas):")
    for o, what in (("path", "the call's own path"), ("import", "imports the call runs"),
                    ("numba", "our patches called by Numba's compiler"), ("other", "other")):
        ks = [k for k in funcs if origin[k] == o]
        named = sum(k[2] not in ANONYMOUS for k in ks)
        print(f"  {len(ks):4d} = {named:3d} + {len(ks) - named:3d}  {what}")
    print("the call's own path by layer (files, named + anonymous functions):")
    by = collections.defaultdict(lambda: [set(), 0, 0])
    for k in funcs:
        if origin[k] == "path":
            row = by[layer(_rel(k))]
            row[0].add(_rel(k))
            row[1 if k[2] not in ANONYMOUS else 2] += 1
    for (_, name), (fs, named, anon) in sorted(by.items()):
        print(f"  {name:11s} {len(fs):3d} files {named:4d} + {anon:3d}")
    knots = both_ways(stats)
    print(f"file pairs calling each other both ways: {len(knots)}")
    for (a, b), (ab, ba) in sorted(knots.items()):
        if layer(a)[0] > layer(b)[0]:        # the lower file first: its calls go back up
            a, b, ab, ba = b, a, ba, ab
        same = layer(a)[0] == layer(b)[0]
        print(f"  {a} {'<->' if same else '<-'} {b}"
              f"{'  (one layer)' if same else '  (and calls back up)'}")
        if pairs:
            print(f"      {'->' if same else 'up'} {', '.join(f'{x}>{y}' for x, y in ab)}")
            print(f"      {'<-' if same else 'down'} {', '.join(f'{x}>{y}' for x, y in ba)}")
    if show:
        for k, v in sorted(mine.items(), key=lambda kv: -kv[1][1]):
            print(f"{v[1]:6d} {origin.get(k, 'module'):6s} {_rel(k)}:{k[1]} {k[2]}")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main("--list" in sys.argv, "--imported" in sys.argv, "--pairs" in sys.argv)
