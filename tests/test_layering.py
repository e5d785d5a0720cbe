"""The layers import only downward: an import graph of xforms/ and kernels/ built with `ast`
(imports inside functions included) has no edge from a lower layer to a higher one, except
the one backend hook, `xforms.jit` importing `kernels` when a function is first compiled.

Layers, bottom to top (README "Layers").  A module not listed sits in the layer of its
package (a new `xforms/primitives/<family>.py` with the primitives); a new top-level xforms
module or package with the API functions ("api"), a new kernels module with the emitters
("emitters": e.g. kernels/lower_<family>.py, registering rules that xforms/kernels/cpu/backend.py or
xforms/kernels/cuda/backend.py import).  The package `__init__`s of xforms, kernels and
xforms.kernels.cuda are the top of their trees.
"""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LAYERS = [
    ("base", ["xforms.version", "xforms.errors", "xforms.config", "xforms.core.memo", "xforms.core.pass_counts", "xforms.exec.gc_pause", "xforms.core.source_info", "xforms.core.avals",
              "xforms.tree_util", "xforms.tree_keys", "xforms.core.facts", "xforms.core.axis_env", "xforms.primitives.special.igamma_grad",
              "xforms.core.mpi_comm", "xforms.core.jit_switch"]),
    ("ir", ["xforms.core.ir", "xforms.core.eager_reuse"]),
    ("core", ["xforms.core.trace"]),
    ("registry", ["xforms.core.registry", "xforms.core.engine_prims"]),
    ("transforms", ["xforms.transforms"]),
    ("tracing", ["xforms.transforms.intern", "xforms.transforms.tracing"]),
    ("primitives", ["xforms.primitives"]),
    ("ad", ["xforms.transforms.ad", "xforms.extend"]),
    ("wrappers", ["xforms.numpy", "xforms.lax"]),
    ("api", ["xforms.api", "xforms.batching_api", "xforms.callbacks", "xforms.debug",
             "xforms.experimental", "xforms.custom", "xforms.nn", "xforms.exec.eager_cost",
             "xforms.test_util"]),
    ("jit", ["xforms.jit", "xforms.device", "xforms.pmap", "xforms.mpi", "xforms.runtime"]),
    ("package", ["xforms"]),
    ("kernel_base", ["xforms.kernels.numba_fixes.patches", "xforms.kernels.numba_fixes.vector_width", "xforms.kernels.numba_fixes.source", "xforms.kernels.numba_fixes.ssa", "xforms.kernels.numba_fixes.liveness", "xforms.kernels.numba_fixes.alloc", "xforms.kernels.numba_fixes.registry", "xforms.kernels.runtime.blas_threads", "xforms.kernels.runtime.blas_serial", "xforms.kernels.runtime.hugepages", "xforms.kernels.runtime.helper_cache", "xforms.kernels.libm.vecmath_base",
                     "xforms.kernels.libm.vecmath_trig", "xforms.kernels.libm.vecmath_f32", "xforms.kernels.libm.vecmath", "xforms.kernels.runtime.fft",
                     "xforms.kernels.runtime.cpu_runtime", "xforms.kernels.runtime.sort", "xforms.kernels.runtime.threads",
                     "xforms.kernels.runtime.conv_blocks", "xforms.kernels.runtime.conv",
                     "xforms.kernels.prepare.shape_symbols", "xforms.kernels.prepare.shape_roles", "xforms.kernels.codegen", "xforms.kernels.loops.scalar_rules",
                     "xforms.kernels.cpu.outline_prange",
                     "xforms.kernels.cuda.scalar_cuda",
                     "xforms.kernels.cuda.complex_cuda", "xforms.kernels.cuda.runtime", "xforms.kernels.cuda.pool",
                     "xforms.kernels.runtime.linalg", "xforms.kernels.runtime.mpi_calls"]),
    ("planning", ["xforms.kernels.user_prims", "xforms.kernels.prepare.passes", "xforms.kernels.cpu.float16", "xforms.kernels.fusion_classes",
                  "xforms.kernels.plan.index_maps", "xforms.kernels.plan.plan", "xforms.kernels.plan.groups",
                  "xforms.kernels.plan.products",
                  "xforms.kernels.plan.stencil", "xforms.kernels.plan.storage", "xforms.kernels.plan.fusion", "xforms.kernels.loops.ir",
                  "xforms.kernels.loops.lower_indexing", "xforms.kernels.loops.lower_loops",
                  "xforms.kernels.prepare.scalarize", "xforms.kernels.prepare.scalarize_loops"]),
    ("emitters", ["xforms.kernels.cpu.buffers", "xforms.kernels.loops.loop_print", "xforms.kernels.loops.control_print",
                  "xforms.kernels.cpu.printer",
                  "xforms.kernels.cuda.loop_cuda",
                  "xforms.kernels.cpu.scalar", "xforms.kernels.cpu.loop_cost", "xforms.kernels.cpu.accum",
                  "xforms.kernels.cpu.nest",
                  "xforms.kernels.cpu.emit", "xforms.kernels.cpu.ops",
                  "xforms.kernels.ops.mpi", "xforms.kernels.ops.conv", "xforms.kernels.ops.callbacks",
                  "xforms.kernels.cpu.control", "xforms.kernels.cpu.module",
                  "xforms.kernels.cuda.kernel_builder", "xforms.kernels.cuda.emit_cuda_pack",
                  "xforms.kernels.cuda.emit_cuda", "xforms.kernels.cuda.emit_cuda_reduce",
                  "xforms.kernels.cuda.emit_cuda_ops", "xforms.kernels.cuda.emit_cuda_control",
                  "xforms.kernels.ops.linalg", "xforms.kernels.ops.cumulative", "xforms.kernels.ops.sorting",
                  "xforms.kernels.cuda.lower_cumulative_cuda", "xforms.kernels.cuda.lower_conv_cuda",
                  "xforms.kernels.cuda.lower_sort_cuda", "xforms.kernels.cuda.lower_fft_cuda",
                  "xforms.kernels.cuda.lower_linalg_cuda"]),
    ("backends", ["xforms.kernels.build.codecache", "xforms.kernels.cpu.dispatch", "xforms.kernels.cpu.backend",
                  "xforms.kernels.cuda.backend", "xforms.kernels.build.worker"]),
    ("kernels", ["kernels", "xforms.kernels.cuda"]),
]
PACKAGES = {"xforms": "package", "kernels": "kernels", "xforms.kernels.cuda": "kernels"}
DEFAULTS = {"xforms": "api", "kernels": "emitters"}    # unlisted modules of these trees
HOOK = ("xforms.jit", "kernels")     # the backend hook (xforms/jit.py `_load_backends`)


def _modules():
    out = {}
    for pkg in ("xforms", "kernels"):
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
    """{module: {imported module: line}} over xforms/ and kernels/, function bodies too."""
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
                  if layer_of(b) > layer_of(a) and (a, b) != HOOK)


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


def test_the_backend_hook_is_the_only_way_up():
    graph = import_graph()
    assert HOOK[1] in graph[HOOK[0]], "the hook moved: update HOOK"
    into_kernels = [a for a, es in graph.items() if not a.startswith("kernels")
                    and any(b.startswith("kernels") for b in es)]
    assert into_kernels == [HOOK[0]]


def test_no_import_cycles():
    # function-level imports included, the backend hook too: kernels finds nothing of
    # xforms.jit (jit reads the table kernels.BACKENDS) nor of the xforms package
    assert cycles(import_graph()) == []


def test_the_cycle_checker_finds_a_cycle_through_the_hook():
    graph = {"xforms.jit": {"kernels": 1}, "kernels": {"xforms.kernels.cpu.backend": 2},
             "xforms.kernels.cpu.backend": {"xforms.jit": 3}, "xforms.core.trace": {}}
    assert cycles(graph) == [["kernels", "xforms.kernels.cpu.backend", "xforms.jit"]]


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
    assert layer_of("xforms.kernels.ops.linalg") < layer_of("xforms.kernels.cpu.backend")
    assert layer_of("xforms.kernels.cuda.lower_linalg") < layer_of("xforms.kernels.cuda.backend")
    assert layer_of("xforms.random") == layer_of("xforms.api") < layer_of("xforms.jit")
