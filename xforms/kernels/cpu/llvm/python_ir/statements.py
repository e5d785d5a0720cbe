"""Statements in translated functions: assignments (tuple unpacking, `x += y` too), `if`,
`while`, `for i in range(...)` (or over a constant tuple), `break`, `continue`, `return`; one `Body` per function
and argument types.

    Body(unit, tree, globs, (F64,), "xf_py_f_float64", F64).fn    # the llvmlite function

Variables as Numba's SSA types them: an assignment makes a new version of the name, of
its value's type; where paths meet (after an `if`, at a loop's head, after a loop) a
name's versions unify (float32 and float64: float64) -- so `x = 1.0 - x` of a float32
argument is float64 from there on, while what read `x` before read the float32.  A
function without branches binds values to names; one with them keeps each version in an
alloca (SROA makes them registers).  A loop's head learns its names' types from its
back edges: a name the body widens (float32 -> float64) restarts the translation with
that name widened at that head (`Widen`), as Numba's type inference iterates to its
fixed point.
"""
import ast

from llvmlite import ir

from .expressions import Expressions
from .typed import BOOL, F64, I64, Static, Untranslatable, cast, unify

_BRANCHES = (ast.If, ast.While, ast.For)


class Widen(Exception):
    """A loop's back edge brings a name of a wider type than its head had: translate again
    with it widened there (`Body.widen`)."""


class _Loop:
    """A loop being translated: its head block and names (`head`), the exits of its
    `break`s."""

    def __init__(self, node, head_block, head):
        self.node, self.block, self.head, self.breaks = node, head_block, head, []


class Body(Expressions):
    """One function's translation (`ret` None: a first pass that learns `returned`);
    `widen` ((loop node, name) -> type) carries what earlier tries learnt."""

    def __init__(self, unit, tree, globs, args, symbol, ret, widen=None):
        if tree.args.vararg or tree.args.kwarg or tree.args.defaults or tree.decorator_list:
            raise Untranslatable(tree.name)
        self.unit, self.globs, self.ret, self.returned = unit, globs, ret, None
        self.callees, self.decls, self.static, self.env = [], set(), {}, {}
        self.widen, self.loops, self.tables = {} if widen is None else widen, [], {}
        # (straight-line code binds values to names: no allocas for LLVM to promote)
        self.straight = not any(isinstance(n, _BRANCHES) for n in ast.walk(tree))
        params = [a.arg for a in tree.args.args]
        if len(params) != len(args):
            raise Untranslatable(f"{tree.name}: {len(args)} arguments")
        dynamic = [t for t in args if t.llvm is not None]
        module = ir.Module()
        self.fn = ir.Function(module, ir.FunctionType(
            ret.llvm if ret is not None else ir.VoidType(), [t.llvm for t in dynamic]), symbol)
        self.fn.linkage = "internal"
        if unit.vector is not None:    # (a vectorised formula: whole in the loop, wherever
            self.fn.attributes.add("alwaysinline")   # it is called twice: `jit`'s redo)
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
            if self.b is None:          # (after a return, break or continue: unreachable)
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
        elif isinstance(s, ast.Assign):             # (a = b = 0.0: one value, each target)
            val = self.expr(s.value)
            for t in s.targets:
                self.target(t, val)
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            load = ast.Name(s.target.id, ast.Load())        # (x += y: Numba's x = x + y
            self.assign(s.target.id, self.expr(ast.BinOp(load, s.op, s.value)))  # on floats)
        elif isinstance(s, ast.If):
            self.branch(s)
        elif isinstance(s, (ast.While, ast.For)) and not s.orelse:
            self.loop(s)
        elif isinstance(s, (ast.Break, ast.Continue)) and self.loops:
            if isinstance(s, ast.Break):
                self.loops[-1].breaks.append((self.b, self.env))
            else:
                self.back(self.loops[-1])
            self.b = None
        else:
            raise Untranslatable(type(s).__name__)

    def branch(self, s):
        cond, t = self.expr(s.test)
        if t != BOOL:
            raise Untranslatable("a condition that is no bool")
        if isinstance(cond, ir.Constant):       # (a closure's flag: Numba prunes the arm)
            self.block(s.body if cond.constant else s.orelse)
            return
        yes, no = self.fn.append_basic_block(), self.fn.append_basic_block()
        self.b.cbranch(cond, yes, no)
        before, ends = self.env, []
        for blk, body in ((yes, s.body), (no, s.orelse)):
            self.b, self.env = ir.IRBuilder(blk), dict(before)
            self.block(body)
            if self.b is not None:
                ends.append((self.b, self.env))
        self.join(ends)

    def join(self, ends):
        """Continue where the paths `ends` ([(builder, names)], each still open) meet: each
        name all of them know, unified."""
        if not ends:
            self.b = None
            return
        env = {}
        # in the first path's order, never a set's: a set of names iterates by their string
        # hashes, which differ between processes, and so did the IR, whose text keys the
        # disk cache (every process compiled complex_arith's kernels again)
        for name in [n for n in ends[0][1] if all(n in e for _, e in ends[1:])]:
            kept = list(dict.fromkeys(e[name] for _, e in ends))
            if len(kept) == 1:
                env[name] = kept[0]
                continue
            t = None
            for _, ty in kept:
                t = unify(t, ty)
            slot = next((s for s, ty in kept if ty == t), None) or self.alloca(t)
            for b, e in ends:
                if e[name][0] is not slot:
                    b.store(cast(b, b.load(e[name][0]), e[name][1], t), slot)
            env[name] = (slot, t)
        block = self.fn.append_basic_block()
        for b, _ in ends:
            b.branch(block)
        self.b, self.env = ir.IRBuilder(block), env

    def loop(self, s):
        """`while c:` or `for i in range(...)`: a head block (the test), the body, back
        edges to the head; `break`s and the failed test meet after it."""
        step = seq = None
        if isinstance(s, ast.For):
            seq = self.sequence(s.iter)
            first, stop, step = self.range(s.iter) if seq is None else (
                ir.Constant(I64.llvm, 0), ir.Constant(I64.llvm, len(seq)), 1)
            count = self.alloca(I64)
            self.b.store(first, count)
        head = {}
        for name, (slot, t) in self.env.items():    # (the head's versions: widened ones)
            wide = self.widen.get((id(s), name), t)
            if wide != t:
                wide_slot = self.alloca(wide)
                self.b.store(cast(self.b, self.b.load(slot), t, wide), wide_slot)
                slot = wide_slot
            head[name] = (slot, wide)
        top = self.fn.append_basic_block()
        self.b.branch(top)
        self.b, self.env = ir.IRBuilder(top), dict(head)
        if step is None:
            more, t = self.expr(s.test)
            if t != BOOL:
                raise Untranslatable("a condition that is no bool")
        else:
            i = self.b.load(count)
            more = self.b.icmp_signed("<" if step > 0 else ">", i, stop)
        body, done = self.fn.append_basic_block(), self.fn.append_basic_block()
        self.b.cbranch(more, body, done)
        loop = _Loop(s, top, head)
        self.loops.append(loop)
        self.b = ir.IRBuilder(body)
        if step is not None:        # (the target, then the count's next value)
            self.b.store(self.b.add(i, ir.Constant(I64.llvm, step)), count)
            self.target(s.target, (i, I64) if seq is None else self.item(seq, i, I64))
        self.block(s.body)
        if self.b is not None:
            self.back(loop)
        self.loops.pop()
        self.join([(ir.IRBuilder(done), dict(head))] + loop.breaks)

    def back(self, loop):
        """The back edge from here to `loop`'s head: each name the head has stored in its
        slot (cast to its type), or `Widen` where this path's type is wider."""
        for name, (slot, t) in loop.head.items():
            now, tn = self.env[name]
            if now is slot:
                continue
            if unify(t, tn) != t:
                self.widen[id(loop.node), name] = unify(t, tn)
                raise Widen(name)
            self.b.store(cast(self.b, self.b.load(now), tn, t), slot)
        self.b.branch(loop.block)

    def sequence(self, e):
        """The Python tuple a `for` loop runs over (a literal tuple or list of numbers, or a
        name bound to a constant tuple: Numba's homogeneous UniTuple, its items read from a
        constant array by the loop's index, `item`), or None for a range()."""
        if (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "range"):
            return None
        if isinstance(e, (ast.Tuple, ast.List)):
            vals = [self.expr(x) for x in e.elts]
            if not all(isinstance(v, ir.Constant) and t in (I64, F64) for v, t in vals):
                raise Untranslatable("a for loop over a tuple of no constants")
            return tuple(v.constant for v, _ in vals)
        _, t = self.expr(e)
        if not (isinstance(t, Static) and isinstance(t.obj, tuple) and t.obj):
            raise Untranslatable("a for loop over no range or constant tuple")
        return t.obj

    def range(self, e):
        """(first, stop, step) of `range(...)`: i64 values, the step a nonzero constant."""
        if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Name)
                and e.func.id == "range" and 1 <= len(e.args) <= 3 and not e.keywords):
            raise Untranslatable("a for loop over no range")
        vals = []
        for a in e.args:
            v, t = self.expr(a)
            if t not in (I64, BOOL):
                raise Untranslatable("range() of no integer")
            vals.append(cast(self.b, v, t, I64))
        if len(vals) == 1:
            vals.insert(0, ir.Constant(I64.llvm, 0))
        step = 1 if len(vals) < 3 else getattr(vals[2], "constant", 0)
        if not isinstance(step, int) or step == 0:
            raise Untranslatable("range() of a step that is no nonzero constant")
        return vals[0], vals[1], step

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
        """A new version of `name`: a value (straight code) or the name's slot of that
        type (a new slot where the type changes)."""
        v, t = val
        if t.llvm is None:                  # (known now: a type, a module, a function)
            if self.static.get(name, t) != t:
                raise Untranslatable(f"{name} rebound")
            self.static[name] = t
            return
        if self.straight:
            self.env[name] = val
            return
        slot = self.env.get(name)
        if slot is None or slot[1] != t:
            slot = (self.alloca(t), t)
        self.b.store(v, slot[0])
        self.env[name] = slot

    def table(self, vals, t):
        """A constant global array of LLVM constants `vals` (type `t`), one per tuple."""
        key = tuple(str(v) for v in vals)
        if key not in self.tables:
            arr = ir.ArrayType(t.llvm, len(vals))
            g = ir.GlobalVariable(self.fn.module, arr, f"{self.fn.name}.k{len(self.tables)}")
            g.global_constant, g.linkage, g.initializer = True, "internal", ir.Constant(arr, vals)
            self.tables[key] = g
        return self.tables[key]

    def alloca(self, t):
        return ir.IRBuilder(self.entry).alloca(t.llvm)

    def read(self, name):
        """(value, type) of variable `name` here, or None."""
        if name not in self.env:
            return None
        v, t = self.env[name]
        return (v, t) if self.straight else (self.b.load(v), t)
