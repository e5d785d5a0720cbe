"""The documentation: every Python block of the README and of the docs pages runs (its
asserts check its results), the README sections the pages include exist, and the docs site
builds with warnings as errors, its API pages listing every public name.  The build runs
where the `docs` extra is installed (`pip install -e '.[docs]'`) and is skipped otherwise.

A block preceded by a line `<!-- no-test: why -->` is not run (it needs a GPU or mpiexec)."""
import importlib
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCS = os.path.join(ROOT, "docs")
PAGES = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(DOCS) if f.endswith(".md"))

_BLOCK = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)\n```", re.S)


def python_blocks(text):
    """The ```python blocks of a Markdown text that are not marked `<!-- no-test ... -->`."""
    return [m.group("code") for m in _BLOCK.finditer("\n" + text)
            if not m.group("before").startswith("<!-- no-test")]


def _read(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return f.read()


def test_blocks_are_found_and_no_test_marks_skip():
    text = "x\n```python\na = 1\n```\n<!-- no-test: gpu -->\n```python\nb = 2\n```\n"
    assert python_blocks(text) == ["a = 1"]


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(_read(p))])
def test_page_examples_run(page, capsys):
    """A page's blocks run in order in one namespace, as a reader would paste them."""
    namespace = {"__name__": "__docs__"}
    for i, code in enumerate(python_blocks(_read(page))):
        exec(compile(code, f"{page}[block {i}]", "exec"), namespace)


def test_included_readme_sections_exist():
    readme = _read("README.md")
    included = set()
    for page in PAGES[1:]:
        included |= set(re.findall(r'^--8<-- "README\.md:(\w+)"$', _read(page), re.M))
    assert included, "the docs pages include README sections (getting started, sharp bits)"
    for name in included:
        assert f"--8<-- [start:{name}]" in readme and f"--8<-- [end:{name}]" in readme, name


def _api_hook():
    spec = importlib.util.spec_from_file_location(
        "mkdocs_api", os.path.join(ROOT, "tools", "mkdocs_api.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_hook_documents_xforms_names_and_lists_numpy_objects():
    hook = _api_hook()
    documented, listed = hook.public_names(importlib.import_module("xforms"))
    assert {"jit", "grad", "vmap", "custom_jvp", "Array"} <= set(documented)
    assert "numpy" not in documented + listed           # submodules get pages of their own
    documented, listed = hook.public_names(importlib.import_module("xforms.numpy"))
    assert "sin" in documented and "pi" in listed and "newaxis" in listed
    page = hook.on_page_markdown("# t\n\n<!-- api: xforms.random -->\n")
    assert "::: xforms.random\n" in page and " normal," in page


_HAVE_DOCS_TOOLS = all(importlib.util.find_spec(m) for m in ("mkdocs", "mkdocstrings",
                                                               "mkdocstrings_handlers"))


@pytest.mark.skipif(not _HAVE_DOCS_TOOLS, reason="the docs extra is not installed")
@pytest.mark.early
def test_site_builds_strict_with_every_public_name(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                          "--site-dir", str(site)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    hook = _api_hook()
    for page, module in [("numpy", "xforms.numpy"), ("xforms", "xforms"), ("lax", "xforms.lax")]:
        html = (site / "api" / page / "index.html").read_text(encoding="utf-8")
        documented, _ = hook.public_names(importlib.import_module(module))
        missing = [n for n in documented if f'id="{hook.anchor(module, n)}"' not in html]
        assert not missing, (page, missing)
    tour = (site / "getting-started" / "index.html").read_text(encoding="utf-8")
    assert "per_example" in tour                        # the README's tour, included


_API_MODULES = sorted(set(re.findall(r"<!-- api: ([\w.]+) -->", "".join(
    _read(os.path.join("docs", "api", f)) for f in os.listdir(os.path.join(DOCS, "api"))))))


@pytest.mark.parametrize("module", _API_MODULES)
def test_public_functions_are_found_by_their_qualified_names(module):
    """The API reference finds a function by `__module__` + `__qualname__`: functions made by
    a factory name themselves (`f.__qualname__ = name`), or they would drop out of it."""
    from xforms.unsupported import Unsupported     # (JAX names xforms lacks: not its API)
    mod = importlib.import_module(module)
    hook = _api_hook()
    lost = [n for n in dir(mod) if not n.startswith("_") and callable(getattr(mod, n))
            and not isinstance(getattr(mod, n), Unsupported)
            and (getattr(getattr(mod, n), "__module__", None) or "").startswith("xforms")
            and not hook.locatable(getattr(mod, n))]
    assert not lost, lost
