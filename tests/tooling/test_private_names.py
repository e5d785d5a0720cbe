"""No module imports another module's private names (`from x import _y`): a name shared
between modules is public in the module that defines it (`chunking.threads_pay`, not
`chunking._threads_pay`).  The allow-list below holds the imports that remain; it only
shrinks: an entry no module uses any more fails too, so that it is struck when its name
is made public.  Third-party modules (numba's, NumPy's) are not checked.
"""
import ast
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# module defining the names -> its private names other modules still import.  Helpers
# private to a package (lax/control_flow's common, scipy/special's
# _util, random's samplers) are the bulk; each one made public is struck here (numpy's _util
# module was: it is xforms/primitives/operands/).
ALLOWED = {
    "xforms.core.trace": {"_state"},
    "xforms.numpy.fft": {"_index", "_resize"},
    "xforms.tree_util": {"_UNSPECIFIED"},
}


def _module_name(path):
    name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    return name[:-len(".__init__")] if name.endswith(".__init__") else name


def private_imports(mod, is_package, source):
    """[(defining module, private name, line)] that `source` (module `mod`) imports."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            parts = (mod if is_package else mod.rpartition(".")[0]).split(".")
            base = ".".join(parts[:len(parts) - node.level + 1])
            origin = base + ("." + node.module if node.module else "")
        else:
            origin = node.module or ""
        if origin != "xforms" and not origin.startswith("xforms."):
            continue
        out += [(origin, a.name, node.lineno) for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")]
    return out


def all_private_imports():
    found = []
    for d, dirs, files in os.walk(os.path.join(ROOT, "xforms")):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                with open(path) as fh:
                    found += [(_module_name(path), *imp) for imp in
                              private_imports(_module_name(path), f == "__init__.py", fh.read())]
    return found


def test_no_module_imports_private_names():
    found = all_private_imports()
    new = sorted({(m, o, n, line) for m, o, n, line in found if n not in ALLOWED.get(o, ())})
    assert not new, "private names imported from another module (make them public there): " + \
        "; ".join(f"{m} line {line}: {o}.{n}" for m, o, n, line in new)
    stale = sorted({(o, n) for o, names in ALLOWED.items() for n in names}
                   - {(o, n) for _, o, n, _ in found})
    assert not stale, f"allow-list entries no module imports any more (strike them): {stale}"


def test_the_checker_finds_a_private_import():
    src = ("from ..chunking import _threads_pay, product_rows\n"
           "from . import _util\nfrom numba.np.ufunc.parallel import _launch_threads\n"
           "def f():\n    from xforms.kernels.cpu.buffers import ALIGN, _Pool\n")
    got = private_imports("xforms.kernels.cpu.llvm.threaded", False, src)
    assert ("xforms.kernels.cpu.chunking", "_threads_pay", 1) in got
    assert ("xforms.kernels.cpu.llvm", "_util", 2) in got
    assert ("xforms.kernels.cpu.buffers", "_Pool", 5) in got
    assert len(got) == 3          # (numba's private name: not ours to check)
