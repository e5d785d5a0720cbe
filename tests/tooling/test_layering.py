"""The layers import only downward: an import graph of xforms/ built with `ast` (imports
inside functions included) has no edge from a lower layer to a higher one, and no cycle.

Layers, bottom to top (docs/DESIGN.md has the map).  Each entry is a package or a module; a
module belongs to the longest entry it starts with, so a new module sits in its folder's layer
(a new `xforms/primitives/<family>.py` with the primitives, a new `xforms/kernels/ops/<family>.py`
with the op families).  A module of the xforms root not listed here is API ("api": above the
compilers, which `xforms.jit.backends` reaches through the table `xforms.kernels.BACKENDS`).
"""
import ast
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

LAYERS = [
    ("base", ["xforms.version", "xforms.errors", "xforms.config", "xforms.tree_util"]),
    ("core", ["xforms.core"]),
    ("transforms", ["xforms.transforms"]),
    ("primitives", ["xforms.primitives"]),
    ("wrappers", ["xforms.extend", "xforms.numpy", "xforms.lax"]),
    ("exec", ["xforms.exec"]),
    ("kernel_base", ["xforms.kernels.numba_fixes", "xforms.kernels.libm", "xforms.kernels.runtime"]),
    ("kernel_shared", ["xforms.kernels.codegen", "xforms.kernels.user_prims"]),
    ("prepare", ["xforms.kernels.prepare"]),
    ("plan", ["xforms.kernels.plan"]),
    ("loops", ["xforms.kernels.loops"]),
    ("build", ["xforms.kernels.build"]),
    ("printers", ["xforms.kernels.cpu", "xforms.kernels.cuda"]),
    ("ops", ["xforms.kernels.ops"]),
    ("kernels", ["xforms.kernels"]),
    ("api", []),
    ("package", ["xforms"]),
]
PACKAGES = {"xforms": "package"}     # a package __init__ that is not in its folder's layer
DEFAULTS = {"xforms": "api"}         # unlisted modules


def _modules():
    out = {}
    for pkg in ("xforms",):
        for d, _, files in os.walk(os.path.join(ROOT, pkg)):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(d, f)
                    name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return out


def _targets(mod, path, node, mods):
    """Modules an import statement names (`from p import m` names module p.m if it is one)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
        if node.level:
            parts = base.split(".")
            base = ".".join(parts[:len(parts) - node.level + 1])
            full = base + ("." + node.module if node.module else "")
        else:
            full = node.module
        names = [f"{full}.{a.name}" if f"{full}.{a.name}" in mods else full
                 for a in node.names]
    for n in names:
        while n and n not in mods:
            n = n.rpartition(".")[0]
        if n and n != mod:
            yield n


def import_graph():
    """{module: {imported module: line}} over xforms/, function bodies too."""
    mods = _modules()
    graph = {}
    for mod, path in mods.items():
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        edges = graph.setdefault(mod, {})
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(mod, path, node, mods):
                    edges.setdefault(t, node.lineno)
    return graph


def layer_of(mod):
    names = [n for n, _ in LAYERS]
    if mod in PACKAGES:
        return names.index(PACKAGES[mod])
    best, level = None, None
    for k, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if p not in PACKAGES and (mod == p or mod.startswith(p + ".")) and (
                    best is None or len(p) > len(best)):
                best, level = p, k
    if best is None:
        return names.index(DEFAULTS[mod.split(".")[0]])
    return level


def upward_edges(graph):
    return sorted((a, b, line) for a, es in graph.items() for b, line in es.items()
                  if layer_of(b) > layer_of(a))


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_upward_imports():
    bad = upward_edges(import_graph())
    assert not bad, "imports that go up the layers (module, imported, line): " + "; ".join(
        f"{a} -> {b} (line {n}: {LAYERS[layer_of(a)][0]} below {LAYERS[layer_of(b)][0]})"
        for a, b, n in bad)


# inside one layer, a package whose modules have an order of their own (bottom to top; a
# module belongs to the longest entry it starts with): the direct LLVM path's op families
# (llvm/ops/) use the emitter's base -- Refused and constants (scalar), the JIT (engine),
# NumPy's ABI, OpenMP's team, heap buffers (memory), plain Python as IR (python_ir) -- and
# are used by the loops, control
# flow, threaded chunks, invariants and row reads above them
# The CPU backend's two paths, the Numba printer (cpu/numba/) and the direct LLVM path
# (cpu/llvm/), sit side by side above what both read (how a nest is cut, its cost, the
# vector-math tables, kept buffers, the fast call, float16's widening) and below the compile
# entry (cpu/backend.py), which chooses between them; neither imports the other (below).
LLVM = "xforms.kernels.cpu.llvm"
CPU = "xforms.kernels.cpu"
NUMBA = "xforms.kernels.cpu.numba"
CUDA = "xforms.kernels.cuda"
CPU_SHARED = [f"{CPU}.{m}" for m in ("buffers", "chunking", "dispatch", "float16", "loop_cost",
                                     "math_choice")]
INNER_LAYERS = {LLVM: [[f"{LLVM}.{m}" for m in ("scalar", "engine", "numpy_abi", "team",
                                                 "memory", "python_ir")],
                       [f"{LLVM}.ops"],
                       [LLVM]],
                CPU: [CPU_SHARED, [LLVM, NUMBA], [CPU]],
                # CUDA: what the device is (device/: availability, launch configuration, the
                # transfer guard) below what runs at call time (the runtime, packing, the pool,
                # launches, graphs, NVIDIA's libraries) below the kernel printer
                # (cuda/printer/), below the compile entry (cuda/backend.py)
                CUDA: [[f"{CUDA}.device"],
                       [f"{CUDA}.{m}" for m in ("packing", "pool", "runtime", "launch", "graph",
                                                "vendor")],
                       [f"{CUDA}.printer"],
                       [CUDA]]}


def inner_level(mod, layers):
    """The index of `mod`'s entry in `layers` (lists of prefixes, bottom to top)."""
    best, level = "", None
    for k, prefixes in enumerate(layers):
        for p in prefixes:
            if (mod == p or mod.startswith(p + ".")) and len(p) > len(best):
                best, level = p, k
    return level


def inner_upward_edges(graph, package, layers):
    inside = [a for a in graph if a == package or a.startswith(package + ".")]
    return sorted((a, b, line) for a in inside for b, line in graph[a].items()
                  if inner_level(b, layers) is not None
                  and inner_level(b, layers) > inner_level(a, layers))


def test_no_upward_imports_inside_a_layer():
    graph = import_graph()
    bad = [e for pkg, layers in INNER_LAYERS.items()
           for e in inner_upward_edges(graph, pkg, layers)]
    assert not bad, "imports up a package's own order (module, imported, line): " + "; ".join(
        f"{a} -> {b} (line {n})" for a, b, n in bad)


# The wrappers, one layer with an order of its own (bottom to top): xforms.numpy is built on
# the parts of lax that JAX's numpy is built on too -- the control flow (gcd's while_loop,
# a ufunc's reduce by fori_loop), conv_general_dilated (convolve), slicing -- and the rest of
# lax (linalg, ragged, windowed, indices, ...) on numpy's functions, as JAX's lax/linalg and
# lax/other are on jnp.  What every wrapper needs of its operands (validation, promotion,
# eager results, asarray) is below them all, in the primitives layer
# (xforms/primitives/operands/).  So imports between the two packages go one way at each level.
LAX_BASE = ["xforms.lax.control_flow", "xforms.lax.convolution.dilated",
            "xforms.lax.slicing.slices"]
WRAPPERS = [LAX_BASE,
            ["xforms.extend", "xforms.numpy"],
            ["xforms.lax"]]


def wrapper_upward_edges(graph):
    """Edges that go up WRAPPERS' order (module, imported, line)."""
    def level(m):
        return inner_level(m, WRAPPERS)
    return sorted((a, b, line) for a, es in graph.items() if level(a) is not None
                  for b, line in es.items() if level(b) is not None and level(b) > level(a))


def test_numpy_imports_only_the_lax_it_is_built_on():
    bad = wrapper_upward_edges(import_graph())
    assert not bad, "imports up the wrappers' order (module, imported, line): " + "; ".join(
        f"{a} -> {b} (line {n})" for a, b, n in bad)


def _inside(m, prefixes):
    return any(m == p or m.startswith(p + ".") for p in prefixes)


def test_the_lax_numpy_is_built_on_imports_nothing_of_numpy():
    # lax's control flow, convolution and slicing take their operands from
    # primitives/operands, never from xforms.numpy; and numpy reaches into lax only there
    graph = import_graph()
    down = sorted((a, b) for a, es in graph.items() if _inside(a, LAX_BASE)
                  for b in es if _inside(b, ["xforms.numpy"]))
    up = sorted({b for a, es in graph.items() if _inside(a, ["xforms.numpy"])
                 for b in es if _inside(b, ["xforms.lax"])})
    assert not down, f"lax's base imports xforms.numpy: {down}"
    assert all(_inside(b, LAX_BASE) for b in up), f"numpy imports of lax: {up}"
    # the operand handling both use is below both (the primitives layer)
    assert layer_of("xforms.primitives.operands") < layer_of("xforms.numpy")
    assert not any(_inside(b, ["xforms.numpy", "xforms.lax"])
                   for b in graph["xforms.primitives.operands.promotion"])


def test_the_wrapper_check_finds_numpy_importing_lax_and_its_control_flow_the_helpers():
    # session 34's arrows: numpy/mathfuncs took while_loop from the lax package (whose
    # helpers import numpy), and lax's control flow took collapse from helpers.py; and
    # session 35's: lax's control flow and convolution took their operand handling from
    # numpy (numpy/_util), which now sits below both
    graph = {"xforms.numpy.mathfuncs": {"xforms.lax": 208, "xforms.primitives.operands": 20},
             "xforms.numpy.ufunc_api": {"xforms.lax.control_flow": 95},
             "xforms.lax.control_flow.loops": {"xforms.lax.helpers": 18,
                                               "xforms.numpy._util": 78},
             "xforms.lax.convolution.dilated": {"xforms.numpy._util": 16,
                                                "xforms.primitives.operands": 16},
             "xforms.lax.helpers": {"xforms.numpy.indexing": 28}}
    assert wrapper_upward_edges(graph) == [
        ("xforms.lax.control_flow.loops", "xforms.lax.helpers", 18),
        ("xforms.lax.control_flow.loops", "xforms.numpy._util", 78),
        ("xforms.lax.convolution.dilated", "xforms.numpy._util", 16),
        ("xforms.numpy.mathfuncs", "xforms.lax", 208)]


def between_siblings(graph, a, b):
    """Edges from package `a`'s modules into package `b`'s, and back."""
    def inside(m, p):
        return m == p or m.startswith(p + ".")
    return sorted((x, y, line) for x, es in graph.items() for y, line in es.items()
                  if (inside(x, a) and inside(y, b)) or (inside(x, b) and inside(y, a)))


def test_the_cpu_paths_import_nothing_of_each_other():
    # the direct LLVM path compiles without the Numba printer (and its Numba import), and
    # the Numba printer knows nothing of llvmlite's path: what both need lives in cpu/
    bad = between_siblings(import_graph(), LLVM, NUMBA)
    assert not bad, "imports between cpu/llvm and cpu/numba (module, imported, line): " + \
        "; ".join(f"{a} -> {b} (line {n})" for a, b, n in bad)


def test_the_sibling_check_finds_the_direct_path_importing_the_numba_printer():
    graph = {f"{LLVM}.vecmath": {f"{NUMBA}.scalar": 33, f"{CPU}.math_choice": 34},
             f"{NUMBA}.nest": {f"{CPU}.chunking": 21}}
    assert between_siblings(graph, LLVM, NUMBA) == [(f"{LLVM}.vecmath", f"{NUMBA}.scalar", 33)]
    # and a shared module reaching up into a path goes against cpu's own order
    graph = {f"{CPU}.chunking": {f"{NUMBA}.scalar": 12}}
    assert inner_upward_edges(graph, CPU, INNER_LAYERS[CPU]) == [
        (f"{CPU}.chunking", f"{NUMBA}.scalar", 12)]


def test_the_inner_check_finds_the_cuda_runtime_importing_the_printer():
    graph = {f"{CUDA}.runtime": {f"{CUDA}.printer.emit": 40, f"{CUDA}.packing": 33},
             f"{CUDA}.printer.cas": {f"{CUDA}.runtime": 193}}
    assert inner_upward_edges(graph, CUDA, INNER_LAYERS[CUDA]) == [
        (f"{CUDA}.runtime", f"{CUDA}.printer.emit", 40)]


def test_the_inner_check_finds_an_op_family_importing_the_chunked_loops():
    # the arrow session 24 left: ops/blocks imported threaded, which imports ops/reductions
    graph = {f"{LLVM}.ops.blocks": {f"{LLVM}.threaded": 31, f"{LLVM}.team": 32},
             f"{LLVM}.threaded": {f"{LLVM}.ops.reductions": 30}}
    assert inner_upward_edges(graph, LLVM, INNER_LAYERS[LLVM]) == [
        (f"{LLVM}.ops.blocks", f"{LLVM}.threaded", 31)]


def test_the_compilers_are_reached_only_through_jit():
    # xforms.jit's backend registry reads the table xforms.kernels.BACKENDS; nothing else
    # above imports kernels
    graph = import_graph()
    into_kernels = sorted(a for a, es in graph.items() if not a.startswith("xforms.kernels")
                          and any(b.startswith("xforms.kernels") for b in es))
    assert into_kernels == ["xforms.jit.backends"]


# modules of the xforms root that mirror a JAX module of the same name (jax.tree_util, ...)
JAX_MODULES = {"ad_checkpoint", "config", "custom_batching", "custom_derivatives", "debug",
               "dlpack", "dtypes", "errors", "extend", "flatten_util", "image", "monitoring",
               "ops", "profiler", "stages", "test_util", "tree", "tree_util", "typing",
               "version"}


def test_no_folder_is_a_drawer():
    # a folder of more than 15 modules becomes subpackages (not suffixed siblings), except the
    # namespaces that mirror JAX's; a file over 600 lines becomes a subpackage too
    mirrors = {"xforms/scipy/stats", "xforms/random"}
    big, long = [], []
    for d, dirs, files in os.walk(os.path.join(ROOT, "xforms")):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        rel = os.path.relpath(d, ROOT)
        mods = [f for f in files if f.endswith(".py") and f != "__init__.py"]
        if rel == "xforms":     # the root's own modules, less the ones named as JAX's are
            mods = [f for f in mods if f[:-3] not in JAX_MODULES]
        if len(mods) > 15 and rel not in mirrors:
            big.append(f"{rel} ({len(mods)})")
        for f in mods:
            with open(os.path.join(d, f)) as fh:
                n = sum(1 for _ in fh)
            if n > 600:
                long.append(f"{rel}/{f} ({n})")
    assert not big, f"folders over 15 modules: {big}"
    assert not long, f"files over 600 lines: {long}"


def test_the_layer_table_names_packages():
    assert sum(len(names) for _, names in LAYERS) <= 25


def test_no_import_cycles():
    # function-level imports included: the compilers find nothing of xforms.jit (jit reads
    # the table xforms.kernels.BACKENDS) nor of the xforms package
    assert cycles(import_graph()) == []


def test_the_cycle_checker_finds_a_cycle_through_a_backend_hook():
    graph = {"xforms.jit": {"xforms.kernels": 1},
             "xforms.kernels": {"xforms.kernels.cpu.backend": 2},
             "xforms.kernels.cpu.backend": {"xforms.jit": 3}, "xforms.core.trace": {}}
    assert cycles(graph) == [["xforms.jit", "xforms.kernels", "xforms.kernels.cpu.backend"]]


def test_the_checker_sees_function_level_imports(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from xforms.primitives import elementwise\n")
    tree = ast.parse(src.read_text())
    mods = {"xforms.primitives": "", "xforms.primitives.elementwise": "", "m": ""}
    node = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)][0]
    assert list(_targets("m", str(src), node, mods)) == ["xforms.primitives.elementwise"]
    assert upward_edges({"xforms.core.trace": {"xforms.primitives.elementwise": 3}}) == [
        ("xforms.core.trace", "xforms.primitives.elementwise", 3)]
    # where modules other sessions add land
    assert layer_of("xforms.primitives.linalg.factor") == layer_of("xforms.primitives.elementwise")
    assert layer_of("xforms.kernels.ops.newfamily") == layer_of("xforms.kernels.ops.linalg")
    assert layer_of("xforms.kernels.ops.linalg") > layer_of("xforms.kernels.cpu.numba.emit")
    assert layer_of("xforms.random") == layer_of("xforms.jit") > layer_of("xforms.kernels")


def test_no_numpy_or_lax_module_is_named_like_a_public_name():
    # a submodule named like a function of its package (numpy/convolve.py beside
    # xnp.convolve; a lax/fft.py beside lax.fft) is the function only while nothing imports
    # the module again by its path
    import importlib
    import pkgutil
    import xforms.lax as lax
    import xforms.numpy as xnp
    shadowed = []
    for pkg in (xnp, lax):
        for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            mod = importlib.import_module(m.name)
            parent, _, leaf = m.name.rpartition(".")
            if getattr(importlib.import_module(parent), leaf, mod) is not mod:
                shadowed.append(m.name)
    assert not shadowed, f"modules named like a public name of their package: {shadowed}"
