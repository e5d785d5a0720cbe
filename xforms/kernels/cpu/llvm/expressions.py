"""The loop IR's expressions as LLVM values, for the direct path's kernel module
(`loops.Loops` extends `Expressions`): an `Eval`'s value, a scalar, a load at an affine,
clamped or guarded index of a C-ordered array (a concatenate's slot: strided), a block's or
a row's value read before the innermost loop, and the i64 index arithmetic (+ - *, floor
division by a constant, clamps) as the Numba path's printer spells them.

    x = m.expr(Load(a, (i, Bin("+", j, Const(1)))), "double")   # -> "%t12"
"""
import numpy as np

from ...loops.ir import Bin, Clamp, Const, Guarded, Load, Scalar, Value
from . import numpy_abi
from .ops import complexes, float16, integers
from .ops.linalg import blocks
from .scalar import Refused, ScalarModule, c_strides


class Expressions(ScalarModule):
    """Expressions and indices of the loop IR over the state `loops.Loops` keeps: `arrays`
    (Var -> data pointer, shape), `values` (the step's Evals), `names` (scalars), `syms` (loop
    indices), `hold` (the peeled middle's indices), `blocks`, `invariant`."""

    def _op(self, eqn, name, ty, args, r):
        """The scalar module's operations, and float16's rounding after each float16 result
        of a loop (ops/float16.py; a rank-0 float16 program stays with Numba)."""
        if name == "round_to_float16" and ty == "float" and len(args) == 1:
            return float16.round_float16(self, r, args[0])
        return super()._op(eqn, name, ty, args, r)

    # -- expressions ---------------------------------------------------------------------
    def expr(self, e, ty):
        """The LLVM value of loop-IR expression `e` as type `ty` (i1: a predicate)."""
        if isinstance(e, Value):
            return self._typed(e.var, self.values.get(e.var), ty)
        if isinstance(e, Scalar):
            if hasattr(e.atom, "val"):
                if ty in complexes.PAIRS:          # (a complex literal: a constant pair)
                    return complexes.constant(e.atom.val, ty)
                if ty == "i1" and np.ndim(e.atom.val) == 0 and isinstance(e.atom.val,
                                                                          (bool, np.bool_)):
                    return "true" if e.atom.val else "false"
                return self.value(e.atom, ty)
            return self._typed(e.atom, self.names.get(e.atom), ty)
        if isinstance(e, Guarded):
            return self._guarded(e, ty)
        if isinstance(e, Load) and e.var in self.blocks:
            return blocks.load(self, e, ty)
        if isinstance(e, Load) and e in self.invariant and self._element(e.var)[0] == ty:
            return self.invariant[e]        # (read before the innermost loop)
        if isinstance(e, Load) and e.var not in self.arrays and e.var in self.names \
                and not e.var.aval.shape:   # (a 0-d value the module holds as a value)
            return self._typed(e.var, self.names[e.var], ty)
        if isinstance(e, Load):
            data, shape = self.arrays.get(e.var, (None, None))
            if data is None or self._element(e.var)[0] != ty:
                raise Refused(e)
            mem, r = self._element(e.var)[1], self.fresh()
            self.emit(f"{r} = load {mem}, ptr {self._address(data, shape, e.index, mem)}")
            if mem != ty:               # (any nonzero byte is True, as NumPy reads it)
                b = self.fresh()
                self.emit(f"{b} = icmp ne i8 {r}, 0")
                r = b
            return r
        raise Refused(e)

    def _guarded(self, e, ty):
        """`e.expr` where every guard holds (read only there: it may lie out of bounds
        elsewhere), else `e.fill`, as the Numba path's `(x if lo <= i < hi else fill)`."""
        if any(i is None for i, _, _, _ in e.guards):
            return self.expr(e.fill, ty)
        cond = "true"
        for i, lo, hi, step in e.guards:
            x = self.index(i)
            tests = ([] if i in self.hold      # (the peeled middle: in range)
                     else [f"icmp sge i64 {x}, {int(lo)}", f"icmp slt i64 {x}, {int(hi)}"])
            if step != 1:        # (i - lo) % step == 0: a remainder's sign does not matter
                d, m = self.fresh(), self.fresh()
                self.emit(f"{d} = sub i64 {x}, {int(lo)}")
                self.emit(f"{m} = srem i64 {d}, {int(step)}")
                tests.append(f"icmp eq i64 {m}, 0")
            for t in tests:
                c, both = self.fresh(), self.fresh()
                self.emit(f"{c} = {t}")
                self.emit(f"{both} = and i1 {cond}, {c}")
                cond = both
        if cond == "true":
            return self.expr(e.expr, ty)
        k = self.fresh()[2:]
        self.emit(f"br i1 {cond}, label %gin{k}, label %gout{k}")
        self.label(f"gin{k}")
        inside, came = self.expr(e.expr, ty), self.block
        self.emit(f"br label %gjoin{k}")
        self.label(f"gout{k}")
        fill, came_fill = self.expr(e.fill, ty), self.block
        self.emit(f"br label %gjoin{k}")
        self.label(f"gjoin{k}")
        r = self.fresh()
        self.emit(f"{r} = phi {ty} [{inside}, %{came}], [{fill}, %{came_fill}]")
        return r

    def _element(self, var):
        """(value type, stored type) of array `var`'s elements: a float's twice, a bool's i1
        and i8, an integer's LLVM type (i8 ... i64, either sign) twice."""
        key = self.arg_ty(var.aval)
        ty = numpy_abi.llvm_type(key)
        return {"bool": ("i1", "i8")}.get(key, (ty, ty))

    def _typed(self, var, name, ty):
        if name is None or self.value_ty(var.aval) != ty:
            raise Refused(var)
        return name

    def value_ty(self, aval):
        """The LLVM type of one value of `aval`: a predicate i1, an integer's, a float's, a
        complex's pair (`m.ty` refuses the rest)."""
        return complexes.TYPES.get(np.dtype(aval.dtype)) or integers.scalar_ty(self, aval)

    def _address(self, data, shape, index, ty):
        """The element `index` of a C-ordered array of `shape` at `data` (a concatenate's
        slot: a `slots.Strided` shape, its elements `shape.steps` apart)."""
        steps = getattr(shape, "steps", None) or c_strides(shape)
        return self.address(ty, data, ((self.index(index[d]), steps[d])
                                       for d in reversed(range(len(shape)))))

    def index(self, e):
        """The i64 value of an index expression (loop indices, constants, + - *, clamps)."""
        if isinstance(e, Const):
            return str(int(e.value))
        if e in self.syms:
            return self.syms[e]
        if isinstance(e, Bin) and e.op in ("+", "-", "*"):
            a, b = self.index(e.a), self.index(e.b)
            r = self.fresh()
            op = {"+": "add", "-": "sub", "*": "mul"}[e.op]
            self.emit(f"{r} = {op} nsw i64 {a}, {b}")
            return r
        if isinstance(e, Bin) and e.op == "//" and isinstance(e.b, Const) and e.b.value > 0:
            return self._floordiv(self.index(e.a), int(e.b.value))
        if isinstance(e, Clamp) and e.wrap is None:
            if self._held(e.expr):      # (the peeled middle: in range, as the Numba path
                return self.index(e.expr)       # prints it; a chunk's bounds hide that)
            return self._clamp(self.index(e.expr), e.lo, e.hi)
        raise Refused(e)

    def _held(self, e):
        """Does index `e` read a sym of the peeled middle (`hold`)?"""
        if isinstance(e, Bin):
            return self._held(e.a) or self._held(e.b)
        return self._held(e.expr) if isinstance(e, Clamp) else e in self.hold

    def _floordiv(self, a, b):
        """Python's a // b for b > 0: the truncated quotient, less one below zero."""
        q, r, neg, down = self.fresh(), self.fresh(), self.fresh(), self.fresh()
        self.emit(f"{q} = sdiv i64 {a}, {b}")
        self.emit(f"{r} = srem i64 {a}, {b}")
        self.emit(f"{neg} = icmp slt i64 {r}, 0")
        self.emit(f"{down} = zext i1 {neg} to i64")
        out = self.fresh()
        self.emit(f"{out} = sub i64 {q}, {down}")
        return out

    def _clamp(self, x, lo, hi):
        for bound, pred in ((lo, "slt"), (hi, "sgt")):
            if bound is None:
                continue
            c, r = self.fresh(), self.fresh()
            self.emit(f"{c} = icmp {pred} i64 {x}, {int(bound)}")
            self.emit(f"{r} = select i1 {c}, i64 {int(bound)}, i64 {x}")
            x = r
        return x

    def label(self, name):
        """Start basic block `name` (`self.block`: the block code is emitted into)."""
        self.lines.append(f"{name}:")
        self.block = name
