"""The translator's entry (`translate`) and its units: which functions a translation
defines, each Python function's definition read from its source.

    fn = translate("return f(a0)", [F64], F64, {"f": f}, ns)    # a Translated
"""
import ast
import collections
import hashlib
import inspect
import linecache
import textwrap

from .statements import Body, Widen
from .typed import Untranslatable

class Translated:
    """One translated function: its LLVM `symbol`, return type, definitions (its own and
    its callees', LLVM text) and the declarations they need (scalar.py's spelling)."""

    def __init__(self, symbol, ret, texts, decls):
        self.symbol, self.ret, self.texts, self.decls = symbol, ret, texts, decls


_cache = {}


def translate(body, args, ret, globs, ns, name="expr", vector=None):
    """The function `def <name>(a0, a1, ...): <body>` (its arguments of types `args`, its
    result cast to `ret`), names read from `globs`, the Python functions it calls translated
    with their globals `ns` (functions found in `globs` too).  Cached per process.

    `vector(name, type)`, if given, replaces `math.<name>` of a float: None keeps Numba's
    libm call, a Python function is translated in its place, a (declarations, definition,
    symbol) triple is called (the eager tier's vectorised complex formulas,
    cpu/llvm/vecmath.py's vector_math); its functions' symbols start `xf_pyv_`."""
    # the key names globs and ns by id: the entry keeps them alive, so no later dict takes
    # the id (a caller's temporary {"f": gammaincc} once found gammainc's translation)
    key = (body, tuple(args), ret, id(globs), id(ns), vector)
    if key not in _cache:
        params = ", ".join(f"a{k}" for k in range(len(args)))
        tree = ast.parse(f"def {name}({params}):\n{textwrap.indent(body, '    ')}\n").body[0]
        named = sorted((k, stable_name(v)) for k, v in globs.items())
        digest = hashlib.sha1(repr((*key[:3], named)).encode()).hexdigest()[:12]
        name = name if vector is None else "v" + name
        unit = Unit(ns, vector)
        fn = unit.function(tree, globs, tuple(args), f"xf_py_{name}_{digest}", ret)
        _cache[key] = (Translated(fn.symbol, fn.ret, unit.texts(fn), unit.decls), globs, ns)
    return _cache[key][0]


def stable_name(obj, depth=0):
    """A name for `obj` that is the same in every process (the IR's text keys the disk
    cache) and differs between the objects a translation may meet under one name: a
    function by module, qualified name, a digest of its code and its closure's cells
    (libm's gammainc and gammaincc are two closures of one factory, told apart by its
    `upper` cell; two `def f` of one factory's branches, by their code).

        >>> stable_name(math.exp)        # 'math.exp[]'
    """
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return repr(obj)
    if isinstance(obj, tuple) and depth < 3:
        return "(" + ",".join(stable_name(v, depth + 1) for v in obj) + ")"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        return f"{type(obj).__qualname__}@{id(obj)}"      # (named per process: still distinct)
    cells = getattr(obj, "__closure__", None) or ()
    inner = ",".join(stable_name(c.cell_contents, depth + 1) if depth < 3 else "..."
                     for c in cells)
    code = getattr(obj, "__code__", None)
    body = "" if code is None else "@" + hashlib.sha1(_code_text(code).encode()).hexdigest()[:8]
    return f"{getattr(obj, '__module__', None)}.{name}{body}[{inner}]"


def _code_text(code):
    """What a code object computes, as text that is the same in every process: its
    bytecode, names and constants (a frozenset's sorted: marshal's order follows the
    process's string hashes), nested code objects likewise."""
    consts = []
    for c in code.co_consts:
        if isinstance(c, type(code)):
            consts.append(_code_text(c))
        elif isinstance(c, frozenset):
            consts.append(repr(sorted(c, key=repr)))
        else:
            consts.append(repr(c))
    return repr((code.co_code.hex(), code.co_names, code.co_varnames, consts))


class Fn:
    def __init__(self, symbol, ret, text, callees, decls):
        self.symbol, self.ret, self.text, self.callees, self.decls = (symbol, ret, text,
                                                                      callees, decls)


_FUNCTIONS = {}         # (py, id(ns), argtypes, vector) -> Fn, per process (ns: a module's)


class Unit:
    """The functions one translation defines (shared across translations: `_FUNCTIONS`)."""

    def __init__(self, ns, vector=None):
        self.ns, self.decls, self.vector = ns, set(), vector

    def texts(self, fn):
        seen, out, todo = set(), [], [fn]
        while todo:
            f = todo.pop()
            if f.symbol not in seen:
                seen.add(f.symbol)
                out.append(f.text)
                self.decls |= f.decls
                todo.extend(f.callees)
        return out

    def python(self, py, args):
        """The Fn of Python function `py` for argument types `args`."""
        key = (py, id(self.ns), args, self.vector)
        if key not in _FUNCTIONS:
            tree = definition(py)
            # (two functions of one name, e.g. one factory's closures, get two symbols: a
            # unit keeps one definition per symbol)
            tag = hashlib.sha1(repr((stable_name(py), sorted(self.ns))).encode()).hexdigest()
            tys = "_".join([tag[:8], *(t.name for t in args)])
            prefix = "xf_py" if self.vector is None else "xf_pyv"
            # names: a closure's cells (a factory's flags), the namespace, py's globals
            cells = dict(zip(py.__code__.co_freevars,
                             (c.cell_contents for c in py.__closure__ or ())))
            globs = collections.ChainMap(cells, self.ns, py.__globals__)
            _FUNCTIONS[key] = self.function(tree, globs, args, f"{prefix}_{py.__name__}_{tys}")
        return _FUNCTIONS[key]

    def function(self, tree, globs, args, symbol, ret=None):
        """Translate function `tree`: once to learn its returns' type (unless given), then
        with it."""
        fixed, widen = ret, {}
        if ret is None:
            body = self.body(tree, globs, args, symbol, None, widen)
            ret = body.returned
            if ret is None:
                raise Untranslatable(f"{tree.name} returns nothing")
        body = self.body(tree, globs, args, symbol, ret, widen)
        if fixed is None and body.returned != ret:
            raise Untranslatable(f"{tree.name}'s return type")
        text = "\n".join([str(g) for g in body.tables.values()] + [str(body.fn)])
        return Fn(symbol, ret, text, body.callees, body.decls)

    def body(self, tree, globs, args, symbol, ret, widen):
        """A Body, translated again while a loop widens a name (`Widen`: each try widens
        one name at one loop's head, so this ends)."""
        while True:
            try:
                return Body(self, tree, globs, args, symbol, ret, widen)
            except Widen:
                pass


def definition(py):
    """The `ast.FunctionDef` of Python function `py`, from its source lines.

        >>> definition(complex_arith.multiply.multiply_scalar).name     # 'multiply_scalar'

    Its lines are cut from the file by its code object's first and last lines, not found
    by `inspect.getsource`, whose tokenizer took ~4 of the MLP f's ~5 ms on vecmath's
    sources (#35, s29).  A cut that does not parse to `py`'s definition (a last statement
    on a line without code, a nested def last) falls back to `inspect.getsource`."""
    code = py.__code__
    end = max((line for _, _, line in code.co_lines() if line), default=0)
    lines = linecache.getlines(code.co_filename)[code.co_firstlineno - 1:end]
    try:
        tree = ast.parse(textwrap.dedent("".join(lines))).body[0]
        if isinstance(tree, ast.FunctionDef) and tree.name == code.co_name:
            return tree
    except (SyntaxError, IndexError):
        pass
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(py))).body[0]
    except (OSError, TypeError, SyntaxError) as e:      # (a function made at run time)
        raise Untranslatable(f"no source of {py.__name__}") from e

