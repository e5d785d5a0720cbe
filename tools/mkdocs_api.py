"""MkDocs hook: the API reference lists every public name of a module, from the module itself.

A page line `<!-- api: xforms.numpy -->` becomes a mkdocstrings block for that module whose
members are the module's public names (`dir()`, no leading underscore) that xforms defines,
so a name added to a module appears without editing the page. mkdocstrings finds an object
by its `__module__` and `__qualname__`; a function made by a factory that does not set its
`__qualname__` cannot be found that way, and is listed by name with the names xforms
re-exports from NumPy (dtypes, constants), in one line after the block.

    mkdocs build --strict        # mkdocs.yml: hooks: [tools/mkdocs_api.py]
"""
import importlib
import inspect
import re
import sys

_MARKER = re.compile(r"^<!-- api: ([\w.]+) -->$", re.M)


def locatable(obj):
    """Does `obj.__module__` + `obj.__qualname__` name `obj` (or the function it wraps)?"""
    home = getattr(obj, "__module__", None) or ""
    if home.split(".")[0] != "xforms":
        return False
    found = importlib.import_module(home)
    for part in getattr(obj, "__qualname__", "<>").split("."):
        found = getattr(found, part, None)
    while obj is not None and obj is not found:
        obj = getattr(obj, "__wrapped__", None)
    return obj is not None


def public_names(module):
    """-> (documented, listed): xforms' functions and classes, other public non-module names.

    >>> public_names(importlib.import_module("xforms.tree_util"))[0][:2]
    ['DictKey', 'FlattenedIndexKey']
    """
    documented, listed = [], []
    for name in sorted(n for n in dir(module) if not n.startswith("_")):
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            continue
        is_code = callable(obj) or inspect.isclass(obj)
        (documented if is_code and locatable(obj) else listed).append(name)
    return documented, listed


def anchor(module, name):
    """The identifier a documented name is rendered under: `module.name`, or where the name is
    also a submodule's (`xforms.jit`), the function's own path."""
    if sys.modules.get(f"{module}.{name}") is None:
        return f"{module}.{name}"
    obj = getattr(sys.modules[module], name)
    return f"{obj.__module__}.{obj.__qualname__}"


def _block(match):
    path = match.group(1)
    documented, listed = public_names(importlib.import_module(path))
    plain = [n for n in documented if anchor(path, n) == f"{path}.{n}"]
    lines = [f"::: {path}", "    options:", f"      members: [{', '.join(plain)}]"]
    for name in documented:
        if name not in plain:           # shadowed by a submodule of the same name
            lines += ["", f"::: {anchor(path, name)}"]
    if listed:
        lines += ["", f"Also in `{path}`: "
                  + ", ".join(f"`{n}`" for n in listed) + "."]
    return "\n".join(lines)


def on_page_markdown(markdown, **kwargs):
    return _MARKER.sub(_block, markdown)
