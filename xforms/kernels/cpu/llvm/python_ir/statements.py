"""Statements in translated functions: assignments (tuple unpacking too), `if`,
`return`; one `Body` per function and argument types.

    Body(unit, tree, globs, (F64,), "xf_py_f_float64", F64).fn    # the llvmlite function
"""
import ast

from llvmlite import ir

from .expressions import Expressions
from .typed import BOOL, Untranslatable, cast, unify


class Body(Expressions):
    """One function's translation (`ret` None: a first pass that learns `returned`)."""

    def __init__(self, unit, tree, globs, args, symbol, ret):
        if tree.args.vararg or tree.args.kwarg or tree.args.defaults or tree.decorator_list:
            raise Untranslatable(tree.name)
        self.unit, self.globs, self.ret, self.returned = unit, globs, ret, None
        self.callees, self.decls, self.slots, self.static = [], set(), {}, {}
        # (straight-line code binds values to names: no allocas for LLVM to promote)
        self.straight = not any(isinstance(n, ast.If) for n in ast.walk(tree))
        self.values = {}
        params = [a.arg for a in tree.args.args]
        if len(params) != len(args):
            raise Untranslatable(f"{tree.name}: {len(args)} arguments")
        dynamic = [t for t in args if t.llvm is not None]
        module = ir.Module()
        self.fn = ir.Function(module, ir.FunctionType(
            ret.llvm if ret is not None else ir.VoidType(), [t.llvm for t in dynamic]), symbol)
        self.fn.linkage = "internal"
        self.entry = self.fn.append_basic_block("entry")
        self.b = ir.IRBuilder(self.fn.append_basic_block("body"))
        values = iter(self.fn.args)
        for p, t in zip(params, args):
            self.assign(p, (None if t.llvm is None else next(values), t))
        self.block(tree.body)
        if self.b is not None:
            raise Untranslatable(f"{tree.name} may return None")
        ir.IRBuilder(self.entry).branch(self.fn.blocks[1])

    # -- statements --------------------------------------------------------------------
    def block(self, stmts):
        for s in stmts:
            if self.b is None:          # (after a return: unreachable)
                return
            self.stmt(s)

    def stmt(self, s):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return                                          # (a docstring)
        if isinstance(s, ast.Pass):
            return
        if isinstance(s, ast.Return) and s.value is not None:
            v, t = self.expr(s.value)
            self.returned = unify(self.returned, t)
            if self.ret is None:
                self.b.ret_void()
            else:
                self.b.ret(cast(self.b, v, t, self.ret))
            self.b = None
        elif (isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Tuple) and isinstance(s.value, ast.Tuple)
              and len(s.targets[0].elts) == len(s.value.elts)):     # (a, b = x, y: no struct)
            for t, v in zip(s.targets[0].elts, [self.expr(v) for v in s.value.elts]):
                self.target(t, v)
        elif isinstance(s, ast.Assign) and len(s.targets) == 1:
            self.target(s.targets[0], self.expr(s.value))
        elif isinstance(s, ast.If):
            self.branch(s)
        else:
            raise Untranslatable(type(s).__name__)

    def branch(self, s):
        cond, t = self.expr(s.test)
        if t != BOOL:
            raise Untranslatable("a condition that is no bool")
        fn = self.fn
        yes, no = fn.append_basic_block(), fn.append_basic_block()
        self.b.cbranch(cond, yes, no)
        ends = []
        for blk, body in ((yes, s.body), (no, s.orelse)):
            self.b = ir.IRBuilder(blk)
            self.block(body)
            if self.b is not None:
                ends.append(self.b)
        if not ends:
            self.b = None
            return
        join = fn.append_basic_block()
        for e in ends:
            e.branch(join)
        self.b = ir.IRBuilder(join)

    def target(self, t, val):
        if isinstance(t, ast.Tuple):
            v, ty = val
            items = getattr(ty, "items", None)
            if items is None or len(items) != len(t.elts):
                raise Untranslatable("unpacking")
            for k, (e, it) in enumerate(zip(t.elts, items)):
                self.target(e, (None if it.llvm is None else self.b.extract_value(v, k), it))
            return
        if not isinstance(t, ast.Name):
            raise Untranslatable("an assignment to " + type(t).__name__)
        self.assign(t.id, val)

    def assign(self, name, val):
        v, t = val
        if t.llvm is None:                  # (known now: a type, a module, a function)
            if self.static.get(name, t) != t:
                raise Untranslatable(f"{name} rebound")
            self.static[name] = t
            return
        if self.straight:
            if name in self.values and self.values[name][1] != t:
                raise Untranslatable(f"{name} changes type")
            self.values[name] = val
            return
        slot = self.slots.get(name)
        if slot is None:
            slot = self.slots[name] = (ir.IRBuilder(self.entry).alloca(t.llvm), t)
        elif slot[1] != t:                  # (Numba would version the variable)
            raise Untranslatable(f"{name} changes type")
        self.b.store(v, slot[0])
