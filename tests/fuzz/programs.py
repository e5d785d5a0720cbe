"""Hypothesis strategies for random well-typed programs over xforms' primitive set.

`programs()` draws a `Program` (program_ast.py): elementwise ops with broadcasting,
reductions, contractions, reshapes/transposes, slicing, gathers and `.at[]` scatters,
`cond`/`switch`, `while_loop` with data-dependent trip counts, `fori_loop` (static and traced
bounds), `scan`, nested calls (plain, `jit`, `checkpoint`), pytree inputs and outputs.
Operands come from earlier results (biased to recent ones, so dataflow is deep) or are new
inputs of a suitable shape; every op's result shape is computed by NumPy itself.  Each
choice is a Hypothesis draw ordered simplest-first, so failures shrink to small programs.

    >>> programs().example()
    def f(p0):
        x0 = xnp.asarray(p0)
        v1 = xnp.sin(x0)
        return v1
"""
import itertools

import numpy as np
from hypothesis import strategies as st

from . import complex_loops as CX
from . import reference as R
from .accumulate import gen_accumulate
from .program_ast import (Block, Call, Cond, Fori, Leaf, Op, Program, Scan, While, _tuple,
                          out_shape)

UNARY = ["sin", "tanh", "cos", "exp_t", "log_sp", "sqrt_s", "recip", "square", "sigmoid",
         "neg", "affine", "arctan", "arcsinh", "gauss", "log1p_sq", "expm1_t", "arcsin_t",
         "cosh_t", "pow3", "abs", "relu", "clip", "floor", "softmax", "log_softmax", "softabs"]
BINARY = ["add", "mul", "sub", "mul_f", "div_s", "maximum", "minimum", "where_gt", "pow_s",
          "atan2_s", "logaddexp", "smooth_max"]
REDUCE = ["sum", "mean", "max", "min", "prod_s", "var", "logsumexp", "norm"]
DOT = ["matmul", "dot", "einsum", "tensordot", "matmul_op", "inner", "outer"]
STRUCT = ["reshape", "transpose", "expand_dims", "broadcast_to", "concatenate", "stack",
          "flip", "squeeze", "swapaxes", "moveaxis", "tile", "repeat", "pad", "split", "ravel",
          "concat_maps", "concat_maps"]
SCATTER = ["at_add", "at_set", "at_mul", "at_min", "at_max"]
DYN = ["dyn_index", "iscale", "dyn_add", "dyn_set", "dyn_slice"]
ALONG = ["cumsum", "cumprod_s", "sort", "spectrum", "fft_filter", "fft_c", "convolve",
         "spd_solve", "chol_logdet", "eigvalsh_tri"]
CONTROL = ["cond", "fori", "scan", "while_count", "call", "switch", "while_thresh",
           "fori_traced", "scan_acc", "fori_acc"]
FAMILIES = ["unary", "binary", "unary", "binary", "reduce", "dot", "struct", "index",
            "scatter", "along", "convert"]
SPECIAL = ["float('nan')", "float('inf')", "-float('inf')", "3e10", "-3e10", "1e20",
           "4294967295.5", "-0.5"]      # drawn into float -> int conversions
INT_DTYPES = ["int32", "int64", "uint32", "uint64"]
MAX_SIZE = 36           # elements per intermediate array (keeps evaluation cheap)
MAX_RANK = 4


class Scope:
    """Float arrays visible at a point of the program (a nested block also sees its
    enclosing scope, as a Python closure does), and the loop index if inside a loop body."""

    def __init__(self, parent=None, index=None):
        self.vars = list(parent.vars) if parent else []
        self.start = len(self.vars)          # where this block's own values begin
        self.index = index if index is not None else (parent.index if parent else None)


class _Gen:
    def __init__(self, draw, max_stmts, max_depth, control, block_stmts, control_kinds,
                 control_weight, affine=None, lead_control=False, dtype="float64"):
        self.draw, self.max_stmts, self.max_depth = draw, max_stmts, max_depth
        self.dtype = dtype       # of the inputs; the ops' templates keep it (program_ast.py)
        self.complex = CX.is_complex(dtype)     # draws from complex_loops.py's ops
        self.lead_control = lead_control     # the program's first statement is control flow
        self.control, self.block_stmts = control, block_stmts
        self.control_kinds, self.control_weight = control_kinds, control_weight
        self.affine = affine     # fori bodies start with an affine step: None, drawn
        self.ids = itertools.count()
        self.inputs = []
        self.empty_outs = []     # outputs of no elements (a scan of no steps stacks none)

    # ---- drawing helpers ----------------------------------------------------------------
    def ctl(self, kind):
        return CX.complex_kind(kind, self.dtype)

    def fresh(self, prefix="v"):
        return f"{prefix}{next(self.ids)}"

    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def integer(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def flag(self):
        return self.draw(st.booleans())

    def shape(self, min_rank=0, max_rank=3):
        return tuple(self.integer(1, 3) for _ in range(self.integer(min_rank, max_rank)))

    def new_input(self, shape):
        name = self.fresh("x")
        self.inputs.append(Leaf(name, tuple(shape)))
        return name

    def pick(self, scope, ok=lambda s: True, make=None):
        """An earlier array satisfying `ok` (recent ones first), else a new input."""
        cands = [v for v in scope.vars if ok(v[1])]
        if cands and self.integer(0, 5) < 5:
            return cands[-1 - self.integer(0, len(cands) - 1)]
        shape = make() if make is not None else self.shape()
        name = self.new_input(shape)
        scope.vars.append((name, shape))
        return name, shape

    def pick_exact(self, scope, shape):
        return self.pick(scope, lambda s: s == tuple(shape), lambda: tuple(shape))[0]

    def emit(self, scope, out, kind, args, params=(), shapes=None, index=None, exact=False):
        """An Op whose result shape NumPy computes; oversized results are summed down unless
        `exact` (the caller needs `out` itself, of a shape some value already has)."""
        shapes = shapes if shapes is not None else [dict(scope.vars)[a] for a in args]
        shape = out_shape(kind, shapes, params, 0 if index else None)
        stmts = [Op(out, shape, kind, tuple(args), tuple(params), index)]
        while not exact and (int(np.prod(shape)) > MAX_SIZE or len(shape) > MAX_RANK):
            prev, out = out, self.fresh()
            shape = shape[1:]
            stmts.append(Op(out, shape, "sum", (prev,), ("0", "False")))
        scope.vars.append((out, shape))
        return stmts

    # ---- shapes related to a given one ------------------------------------------------------
    def bcast_shape(self, s):
        """A shape that broadcasts with s (same, suffix, some dims 1, or an extra axis)."""
        how = self.integer(0, 3)
        if how == 0:
            return s
        if how == 1:
            return s[self.integer(0, len(s)):]
        if how == 2:
            return tuple(1 if self.flag() else d for d in s)
        return (self.integer(1, 3),) + s if len(s) < 3 else s

    def bcast_to_shape(self, t):
        """A shape that broadcasts *to* t (for .at[] updates)."""
        t = t[self.integer(0, len(t)):] if self.flag() else t
        return tuple(1 if self.flag() else d for d in t) if self.flag() else t

    def axis_param(self, nd, allow_none=True, allow_tuple=True):
        how = self.integer(0 if allow_none else 1, 2 if allow_tuple and nd > 1 else 1)
        if how == 0:
            return "None"
        if how == 1:
            k = self.integer(0, nd - 1)
            return str(k - nd if self.flag() else k)
        axes = self.draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd,
                                  unique=True))
        return _tuple([str(a) for a in axes])

    # ---- statements ------------------------------------------------------------------------------
    def stmt(self, scope, depth):
        fams = FAMILIES + (["dyn", "dyn"] if scope.index else [])
        if self.complex:
            fams = [f for f in fams if f not in CX.LEFT_OUT]
        if self.control and depth < self.max_depth:
            fams = fams + ["control"] * self.control_weight
        return getattr(self, "gen_" + self.choice(fams))(scope, depth)

    def gen_unary(self, scope, depth):
        a, sa = self.pick(scope)
        kind = self.choice(CX.UNARY if self.complex else UNARY)
        params = ()
        if kind in ("softmax", "log_softmax"):
            if not sa:
                kind = "tanh"
            else:
                params = (str(self.integer(-len(sa), len(sa) - 1)),)
        elif kind == "affine":
            params = (self.choice(["0.5", "-1.5", "2.0"]), self.choice(["0.25", "-1.0", "0.0"]))
        return self.emit(scope, self.fresh(), kind, (a,), params)

    def gen_along(self, scope, depth):
        """Ops with kernels of their own: cumulative, sort, FFTs, convolve, solve/cholesky."""
        kind = self.choice(CX.ALONG if self.complex else ALONG)
        if kind == "convolve":
            a, _ = self.pick(scope, lambda s: len(s) == 1, lambda: self.shape(1, 1))
            b, _ = self.pick(scope, lambda s: len(s) == 1, lambda: self.shape(1, 1))
            if not self.complex and self.flag():    # infinities in the kernel (padding
                # adds nothing)
                inf = self.choice(["float('inf')", "-float('inf')"])
                return self.emit(scope, self.fresh(), "convolve_inf", (a, b), (inf,))
            return self.emit(scope, self.fresh(), kind, (a, b))
        if kind in ("spd_solve", "chol_logdet", "eigvalsh_tri"):
            a, sa = self.pick(scope, lambda s: len(s) >= 2, lambda: self.shape(2, 3))
            return self.emit(scope, self.fresh(), kind, (a,), (str(sa[-2]),))
        a, sa = self.pick(scope, lambda s: len(s) >= 1, lambda: self.shape(1))
        if kind == "fft_filter":
            n = sa[-1]
            return self.emit(scope, self.fresh(), kind, (a,), (str(n // 2 + 1), str(n)))
        if kind == "fft_c":
            return self.emit(scope, self.fresh(), kind, (a,))
        return self.emit(scope, self.fresh(), kind, (a,), (str(self.integer(-len(sa),
                                                                          len(sa) - 1)),))

    def gen_convert(self, scope, depth):
        """A float -> int conversion where some elements are a special value."""
        a, _ = self.pick(scope)
        params = (self.choice(SPECIAL), self.choice(INT_DTYPES), self.choice(["3.0", "1e9"]))
        return self.emit(scope, self.fresh(), "to_int", (a,), params)

    def gen_binary(self, scope, depth):
        a, sa = self.pick(scope)
        b, sb = self.pick(scope, lambda s: _broadcasts(s, sa), lambda: self.bcast_shape(sa))
        if self.flag():
            a, b = b, a
        return self.emit(scope, self.fresh(), self.choice(CX.BINARY if self.complex else BINARY),
                         (a, b))

    def gen_reduce(self, scope, depth):
        a, sa = self.pick(scope, lambda s: len(s) >= 1, lambda: self.shape(1))
        kind = self.choice(CX.REDUCE if self.complex else REDUCE)
        if kind == "norm":
            return self.emit(scope, self.fresh(), kind, (a,))
        params = (self.axis_param(len(sa)), str(self.flag()))
        return self.emit(scope, self.fresh(), kind, (a,), params)

    def gen_dot(self, scope, depth):
        kind = self.choice(DOT)
        a, sa = self.pick(scope, lambda s: 1 <= len(s) <= 3, lambda: self.shape(1))
        k = sa[-1]
        params = ()
        if kind in ("matmul", "matmul_op"):
            if len(sa) == 1:
                tb = self.choice([(k,), (k, self.integer(1, 3)), (2, k, self.integer(1, 3))])
            else:
                batch = sa[:-2]
                tb = self.choice([(k,), (k, self.integer(1, 3)),
                                  tuple(1 if self.flag() else d for d in batch) +
                                  (k, self.integer(1, 3))])
        elif kind == "dot":
            tb = self.choice([(k,), (k, self.integer(1, 3)), (2, k, self.integer(1, 3))])
        elif kind == "inner":
            tb = self.choice([(k,), (self.integer(1, 3), k)])
        elif kind == "outer":
            tb = self.shape(0, 2)
        elif kind == "tensordot":
            n = self.integer(0, min(2, len(sa)))
            axes_a = self.draw(st.permutations(range(len(sa))))[:n]
            extra = [self.integer(1, 3) for _ in range(self.integer(0, 1))]
            dims = [("c", j) for j in range(n)] + [("e", d) for d in extra]
            order = self.draw(st.permutations(range(len(dims))))
            tb = tuple(sa[axes_a[dims[o][1]]] if dims[o][0] == "c" else dims[o][1]
                       for o in order)
            axes_b = [order.index(j) for j in range(n)]
            params = (f"({list(axes_a)}, {axes_b})",)
        else:   # einsum: shared letters are contracted or batched, others kept or summed
            la = "abc"[:len(sa)]
            shared = [c for c in la if self.flag()]
            new = "xy"[:self.integer(0, 2)]
            lb = list(shared) + list(new)
            lb = [lb[o] for o in self.draw(st.permutations(range(len(lb))))]
            sizes = dict(zip(la, sa))
            sizes.update({c: self.integer(1, 3) for c in new})
            tb = tuple(sizes[c] for c in lb)
            union = sorted(set(la) | set(lb))
            out = [c for c in union if self.flag()]
            out = [out[o] for o in self.draw(st.permutations(range(len(out))))]
            params = (repr(f"{la},{''.join(lb)}->{''.join(out)}"),)
        b = self.pick_exact(scope, tb)
        return self.emit(scope, self.fresh(), kind, (a, b), params)

    def gen_struct(self, scope, depth):
        kind = self.choice(STRUCT)
        need = {"transpose": 2, "swapaxes": 2, "moveaxis": 2, "concatenate": 1, "flip": 1,
                "split": 1, "squeeze": 1, "concat_maps": 1}.get(kind, 0)
        if kind == "squeeze":
            a, sa = self.pick(scope, lambda s: 1 in s, lambda: self.shape(1) + (1,))
        else:
            a, sa = self.pick(scope, lambda s: len(s) >= need, lambda: self.shape(need))
        nd, args, p = len(sa), (a,), ()
        if kind == "reshape":
            p = (repr(self.factor_shape(int(np.prod(sa)))),)
        elif kind == "transpose":
            p = (repr(tuple(self.draw(st.permutations(range(nd))))),)
        elif kind == "expand_dims":
            p = (str(self.integer(-nd - 1, nd)),)
        elif kind == "squeeze":
            p = (str(self.choice([i for i, d in enumerate(sa) if d == 1])),)
        elif kind == "broadcast_to":
            lead = tuple(self.integer(1, 3) for _ in range(self.integer(0, 3 - min(nd, 3))))
            p = (repr(lead + tuple(self.integer(1, 3) if d == 1 else d for d in sa)),)
        elif kind in ("concatenate", "stack", "concat_maps"):
            ax = self.integer(0, nd - 1) if kind != "stack" else self.integer(0, nd)
            tb = list(sa)
            if kind != "stack":
                tb[ax] = self.integer(1, 3)
            args = (a, self.pick_exact(scope, tb))
            p = (str(ax - (nd + (kind == "stack")) if self.flag() else ax),)
        elif kind == "flip":
            p = (self.axis_param(nd),)
        elif kind in ("swapaxes", "moveaxis"):
            p = (str(self.integer(-nd, nd - 1)), str(self.integer(-nd, nd - 1)))
        elif kind == "tile":
            p = (repr(tuple(self.integer(1, 2) for _ in range(self.integer(1, nd + 1)))),)
        elif kind == "repeat":
            p = (str(self.integer(1, 3)), self.axis_param(nd, allow_tuple=False)
                 if nd else "None")
        elif kind == "pad":
            p = (repr(tuple((self.integer(0, 1), self.integer(0, 1)) for _ in range(nd))),)
            if not nd:
                kind, p = "ravel", ()
        elif kind == "split":
            ax = self.integer(0, nd - 1)
            n = self.choice([q for q in (1, 2, 3) if sa[ax] % q == 0])
            p = (str(n), str(ax), str(self.integer(0, n - 1)))
        return self.emit(scope, self.fresh(), kind, args, p)

    def factor_shape(self, size):
        primes, n, q = [], size, 2
        while n > 1:
            while n % q == 0:
                primes.append(q)
                n //= q
            q += 1
        rank = self.integer(1 if primes else 0, 3)
        rank = max(rank, 1) if primes else rank
        dims = [1] * rank
        for pr in primes:
            dims[self.integer(0, rank - 1)] *= pr
        if dims and self.flag():
            dims[self.integer(0, rank - 1)] = -1
        return tuple(dims)

    def index_expr(self, shape, unique, oob=False):
        """Source of a NumPy index into an array of `shape` selecting a non-empty part:
        ints, slices (negative steps too), None, and integer-list (gather) entries; `oob`:
        list entries may be out of bounds either way (below -n too: JAX's semantics)."""
        entries, adv_len = [], None
        for d in shape:
            how = self.integer(0, 4)
            if how == 0:
                entries.append(":")
            elif how == 1:
                k = self.integer(0, d - 1)
                entries.append(str(k - d if self.flag() else k))
            elif how == 2:
                entries.append(self.slice_src(d))
            elif how == 3 and self.flag():
                entries.append("None")
                entries.append(":")
            else:
                if adv_len is None:
                    adv_len = self.integer(1, 3)
                lo, hi = (-d - 2, d + 1) if oob and self.flag() else (0, d - 1)
                idx = self.draw(st.lists(st.integers(lo, hi), min_size=adv_len,
                                         max_size=adv_len, unique=unique and adv_len <= d))
                if len(idx) < adv_len:
                    idx = idx + [idx[0]] * (adv_len - len(idx))
                entries.append(repr([k - d if self.flag() else k for k in idx]))
        if entries and entries[0] == ":" and self.flag():
            entries[0] = "..."       # stands for exactly one axis while no entry is dropped
        else:
            while entries and entries[-1] == ":" and self.flag():
                entries.pop()
        src = ", ".join(entries) if entries else "..."
        if len(entries) == 1 and entries[0].startswith("["):
            src += ","      # (a list alone is refused as JAX refuses it: in a tuple it gathers)
        if unique:   # .at[].set/min/max with repeated positions would be order-dependent
            pos = R.jax_positions(shape, eval(f"np.s_[{src}]"), drop=True)
            pos = pos[pos >= 0]
            if len(np.unique(pos)) != np.size(pos):
                return ":"
        return src

    def slice_src(self, d):
        step = self.choice([1, -1, 2, -2])
        start = self.choice([None, self.integer(-d, d - 1)])
        stop = self.choice([None, self.integer(-d - 1, d)])
        if not len(range(*slice(start, stop, step).indices(d))):
            return ":"
        s = f"{'' if start is None else start}:{'' if stop is None else stop}"
        return s + ("" if step == 1 else f":{step}")

    def gen_index(self, scope, depth):
        a, sa = self.pick(scope, lambda s: len(s) >= 1, lambda: self.shape(1))
        how = self.integer(0, 5)
        if how == 0:
            ax = self.integer(-len(sa), len(sa) - 1) if self.integer(0, 4) else None
            d = sa[ax] if ax is not None else int(np.prod(sa))
            lo, hi = (-d - 2, d + 1) if self.flag() else (-d, d - 1)    # out of bounds too
            idx = [self.integer(lo, hi) for _ in range(self.integer(1, 3))]
            return self.emit(scope, self.fresh(), "take", (a,),
                             (repr(idx), str(ax), self.choice(["0.5", "-2.0"])))
        if how == 1:
            return self.emit(scope, self.fresh(), "at_get_clip", (a,),
                             (self.index_expr(sa, unique=False, oob=True),))
        if how == 2:
            return self.emit(scope, self.fresh(), "at_get_fill", (a,),
                             (self.index_expr(sa, unique=False, oob=True), "0.5"))
        return self.emit(scope, self.fresh(), "getitem", (a,),
                         (self.index_expr(sa, unique=False),))

    def gen_scatter(self, scope, depth):
        a, sa = self.pick(scope, lambda s: len(s) >= 1, lambda: self.shape(1))
        kind = self.choice(CX.SCATTER if self.complex else SCATTER)
        idx = self.index_expr(sa, unique=kind in ("at_set", "at_min", "at_max", "at_mul"),
                               oob=True)
        target = R.jax_positions(sa, eval(f"np.s_[{idx}]"), drop=True).shape
        b = self.pick_exact(scope, self.bcast_to_shape(target))
        return self.emit(scope, self.fresh(), kind, (a, b), (idx,))

    def gen_dyn(self, scope, depth):
        kind = self.choice(DYN)
        a, sa = self.pick(scope, lambda s: len(s) >= 1, lambda: self.shape(1))
        i, n = scope.index, sa[0]
        if kind == "iscale":
            return self.emit(scope, self.fresh(), kind, (a,), index=i)
        # (an offset up to 2n: the index or start is negative, or below -n, where JAX clamps
        # a start and drops an update)
        off = str(self.integer(0, 2 * n) if self.flag() else 0)
        if kind == "dyn_slice":
            return self.emit(scope, self.fresh(), kind, (a,),
                             (str(n), str(self.integer(1, n)), off), index=i)
        if kind == "dyn_index":
            return self.emit(scope, self.fresh(), kind, (a,), (str(n),), index=i)
        b = self.pick_exact(scope, self.bcast_to_shape(sa[1:]))
        return self.emit(scope, self.fresh(), kind, (a, b), (str(n), off), index=i)

    # ---- control flow ------------------------------------------------------------------------------
    def block(self, scope, depth, in_vars, out_shapes, index=None, lead=False):
        """Statements of a nested function body; -> (stmts, scope, output names).  Output
        shapes are given (carries, second branches) or chosen from what the body computed.
        `lead`: the body starts with an affine `istep` of a carry (see `affine_step`)."""
        inner = Scope(scope, index)
        inner.vars += in_vars
        stmts = self.affine_step(inner, in_vars) if lead else []
        first = stmts[-1].out if lead else None
        for _ in range(self.integer(1, self.block_stmts)):
            stmts += self.stmt(inner, depth + 1)
        if out_shapes is None:
            n_out = self.integer(1, 2)
            outs = [inner.vars[-1 - self.integer(0, min(2, len(inner.vars) - 1))][0]
                    for _ in range(n_out)]
        else:
            outs = [self.coerce(inner, s, stmts) for s in out_shapes]
        if lead:          # (the stepped carry's new value: the affine step, kept to the end)
            k = [v for v, _ in in_vars].index(stmts[0].args[0])
            outs[k] = first
        return stmts, inner, outs

    def affine_step(self, scope, carries):
        """`c * w(i) + b * i` of a carry c and a value b from outside the loop (an input, or
        the carry itself): a body affine in its carry, so that its gradient is a plain
        transposed loop counting down (with traced bounds, a reverse for_loop), whose steps
        do not commute.  (The direct LLVM path once ran that loop forwards: no other body
        drawn here showed it.)"""
        a, sa = carries[self.integer(0, len(carries) - 1)]
        outer = Scope()
        # (b = c makes the step a product, whose order never shows: not with `affine=True`)
        outer.vars = scope.vars[:scope.start] + ([] if self.affine else [(a, sa)])
        b = self.pick_exact(outer, self.bcast_to_shape(sa))
        return self.emit(scope, self.fresh(), "istep", (a, b), shapes=[sa, dict(outer.vars)[b]],
                         index=scope.index, exact=True)

    def coerce(self, scope, shape, stmts):
        """A name of the given shape, preferring the block's own values (recent first) and
        mixing in the latest value computed there, so outputs depend on the body."""
        local = scope.vars[scope.start:]
        cands = [v for v, s in local if s == tuple(shape)] or \
            [v for v, s in scope.vars if s == tuple(shape)]
        latest, s_latest = local[-1] if local else scope.vars[-1]
        if not cands:
            out = self.fresh()
            stmts += self.emit(scope, out, "fit", (latest,), (repr(tuple(shape)),), exact=True)
            return out
        out = cands[-1 - self.integer(0, min(2, len(cands) - 1))]
        if out == latest or self.integer(0, 2) == 0:
            return out
        if np.broadcast_shapes(*[tuple(shape)] * 2) != _bshape(shape, s_latest):
            fitted = self.fresh()
            stmts += self.emit(scope, fitted, "fit", (latest,), (repr(tuple(shape)),),
                               exact=True)
            latest = fitted
        mixed = self.fresh()
        stmts += self.emit(scope, mixed, self.choice(CX.MIX if self.complex else
                                                   ["add", "mul", "div_s", "maximum"]),
                           (out, latest), exact=True)
        return mixed

    def operands(self, scope, lo=1, hi=2):
        names = []
        for _ in range(self.integer(lo, hi)):
            v = self.pick(scope)[0]
            if v not in names:
                names.append(v)
        return names

    def params_for(self, ops, scope):
        shapes = [dict(scope.vars)[v] for v in ops]
        names = [self.fresh("a") for _ in ops]
        return names, shapes, list(zip(names, shapes))

    def finish(self, scope, stmt, shapes, out_names=None):
        names = out_names or [self.fresh() for _ in shapes]
        stmt.outs = names
        stmt.shapes = list(shapes)
        scope.vars += list(zip(names, map(tuple, shapes)))
        return stmt

    def gen_control(self, scope, depth):
        kind = self.choice(self.control_kinds)
        if kind in ("scan_acc", "fori_acc"):
            return gen_accumulate(self, scope, depth, kind)
        pre = []
        src = self.pick(scope)[0]
        if kind in ("cond", "switch"):
            ops = self.operands(scope)
            idx = self.fresh("p" if kind == "cond" else "k")
            if kind == "cond":
                pre = [Op(idx, (), self.ctl("pred"), (src,),
                          (self.choice(["0.0", "0.5", "-0.5"]),))]
            else:
                pre = [Op(idx, (), self.ctl("branch_index"), (src,))]
            branches, shapes = [], None
            for j in range(2 if kind == "cond" else self.integer(2, 3)):
                names, in_shapes, in_vars = self.params_for(ops, scope)
                name = self.fresh("false_" if kind == "cond" and j == 0 else
                                  "true_" if kind == "cond" else f"branch{j}_")
                stmts, inner, outs = self.block(scope, depth, in_vars, shapes)
                shapes = shapes or [dict(inner.vars)[o] for o in outs]
                branches.append(Block(name, names, [], stmts, _tuple(outs)))
            return pre + [self.finish(scope, Cond([], idx, kind, ops, branches), shapes)]
        if kind in ("while_count", "while_thresh", "fori", "fori_traced"):
            ops = self.operands(scope)
            names, shapes, in_vars = self.params_for(ops, scope)
            counter, name = self.fresh("i"), self.fresh("body")
            if kind.startswith("while"):
                trip = self.fresh("n")
                pre = [Op(trip, (), self.ctl("trip_count" if kind == "while_count" else "limit"),
                          (src,))]
                stmts, inner, outs = self.block(
                    scope, depth, in_vars, shapes, counter if kind == "while_count" else None)
                if kind == "while_count":
                    ret = _tuple([f"{counter} + 1"] + outs)
                    t_out = "_"
                else:
                    # (a complex program's outputs are complex: its real time stays inside)
                    t_new, t_out = self.fresh("t"), "_" if self.complex else self.fresh("t")
                    stmts.append(Op(t_new, (), self.ctl("tstep"), (counter, outs[0])))
                    ret = _tuple([t_new] + outs)
                body = Block(name, ["c"], [f"{_unpack([counter] + names)} = c"], stmts, ret)
                stmt = While([], kind[6:], trip, ops, body, t_out)
                out = pre + [self.finish(scope, stmt, shapes)]
                if kind == "while_thresh" and t_out != "_":
                    scope.vars.append((t_out, ()))
                return out
            lo = self.integer(0, 1)
            if kind == "fori":
                hi = str(lo + self.integer(0, 3))
            else:
                hi = self.fresh("n")
                pre = [Op(hi, (), self.ctl("trip_count_int"), (src,))]
            # (one body in two starts with an order-dependent affine step of a carry)
            stmts, inner, outs = self.block(scope, depth, in_vars, shapes, counter,
                                            lead=self.affine or self.flag())
            body = Block(name, [counter, "c"], [f"{_unpack(names)} = c"], stmts, _tuple(outs))
            return pre + [self.finish(scope, Fori([], lo, hi, ops, body), shapes)]
        if kind == "scan":
            x0, sx = self.pick(scope, lambda s: len(s) >= 1, lambda: self.shape(1))
            xs = [x0]
            if self.flag():
                x1 = self.pick(scope, lambda s: len(s) >= 1 and s[0] == sx[0],
                               lambda: (sx[0],) + self.shape(0, 2))[0]
                xs += [x1] if x1 not in xs else []
            ops = self.operands(scope)
            names, shapes, in_vars = self.params_for(ops, scope)
            xnames, _, x_vars = self.params_for(xs, scope)
            x_vars = [(n, s[1:]) for n, s in x_vars]
            name = self.fresh("step")
            stmts, inner, outs = self.block(scope, depth, in_vars + x_vars, shapes)
            # a stacked output may be a new carry too (an RNN's h: the CPU steps it from
            # row to row of that output, xforms/kernels/cpu/numba/control.py `keep_carries`)
            ys = [self.choice(outs) if self.integer(0, 2) == 2 else
                  inner.vars[-1 - self.integer(0, min(2, len(inner.vars) - 1))][0]
                  for _ in range(self.integer(0, 2))]
            steps = [None, None, None, 1, 0][self.integer(0, 4)]
            n = sx[0] if steps is None else min(steps, sx[0])
            y_shapes = [(n,) + dict(inner.vars)[y] for y in ys]
            body = Block(name, ["c", "x"], [f"{_unpack(names)} = c", f"{_unpack(xnames)} = x"],
                         stmts, f"{_tuple(outs)}, {_tuple(ys)}")
            stmt = Scan([], [], ops, xs, self.flag(), body, steps=steps)
            self.finish(scope, stmt, shapes)
            stmt.ys = [self.fresh() for _ in ys]
            if n:
                scope.vars += list(zip(stmt.ys, y_shapes))
            elif depth == 0:   # empty rows feed nothing (a max over them has no value):
                self.empty_outs += stmt.ys       # program outputs only
            return [stmt]
        # call: a nested function, called plainly or through jit / checkpoint
        ops = self.operands(scope, 1, 3)
        names, shapes, in_vars = self.params_for(ops, scope)
        name = self.fresh("g")
        stmts, inner, outs = self.block(scope, depth, in_vars, None)
        out_shapes = [dict(inner.vars)[o] for o in outs]
        fn = Block(name, names, [], stmts, _tuple(outs))
        return [self.finish(scope, Call([], fn, ops, self.choice([None, "jit", "checkpoint"])),
                            out_shapes)]

    # ---- whole programs ------------------------------------------------------------------------------
    def program(self):
        scope = Scope()
        stmts = []
        for k in range(self.integer(1, self.max_stmts)):
            lead = k == 0 and self.lead_control and self.control
            stmts += self.gen_control(scope, 0) if lead else self.stmt(scope, 0)
        defined = [o for s in stmts for o in _outs(s)]
        used = set().union(*(s.uses() for s in stmts))
        sinks = [o for o in defined if o not in used and o != "_"]
        outs = sinks[-3:] if sinks else [defined[-1]]
        outs += [o for o in self.empty_outs if o not in outs]
        extra = self.integer(0, 9)   # rarely: an output twice, an input returned as is, or
        if extra == 9:               # an input nothing reads (aliasing, zero cotangents)
            outs.append(self.choice(outs))
        elif extra == 8:
            outs.append(self.choice([leaf.name for leaf in self.inputs]))
        elif extra == 7:
            self.new_input(self.shape())
        return Program(self.arrange(self.inputs, as_args=True), stmts,
                       self.arrange(outs, as_args=False), self.dtype)

    def arrange(self, leaves, as_args):
        """Group leaves into pytrees: positional args (as_args) or one output tree."""
        leaves = list(leaves)
        if as_args:
            n = self.integer(1, min(3, len(leaves)))
            cuts = sorted(self.draw(st.lists(st.integers(1, len(leaves) - 1), min_size=n - 1,
                                             max_size=n - 1, unique=True))) \
                if len(leaves) > 1 else []
            groups = [leaves[i:j] for i, j in zip([0] + cuts, cuts + [len(leaves)])]
            return [self.container(g) for g in groups]
        return self.container(leaves)

    def container(self, items):
        how = self.integer(0, 3)
        if len(items) == 1 and how == 0:
            return items[0]
        if how <= 1:
            return tuple(items)
        if how == 2:
            return [items[0], tuple(items[1:])] if len(items) > 1 else list(items)
        return {f"k{j}": v for j, v in enumerate(items)}


def _unpack(names):
    return ", ".join(names) + ("," if len(names) == 1 else "")


def _outs(s):
    if isinstance(s, Op):
        return [s.out]
    extra = [s.t_out] if isinstance(s, While) else []
    return extra + list(s.outs) + list(getattr(s, "ys", []))


def _bshape(s, t):
    try:
        return np.broadcast_shapes(tuple(s), tuple(t))
    except ValueError:
        return None


def _broadcasts(s, t):
    try:
        np.broadcast_shapes(s, t)
        return True
    except ValueError:
        return False


@st.composite
def programs(draw, max_stmts=6, max_depth=2, control=True, block_stmts=3,
             control_kinds=tuple(CONTROL), control_weight=2, affine=None, lead_control=False,
             dtype="float64"):
    """A random well-typed `Program` (see the module docstring); `control_kinds`: the
    control flow drawn (`("scan_acc",)`: only accumulating scans), `control_weight` how
    often (against 11 for the other families); `affine=True`: every fori_loop body starts
    with an affine step of a carry (`_Gen.affine_step`; else one in two does), whose other
    term is not the carry; `lead_control=True`: the first statement is control flow;
    `dtype`: the inputs' float dtype (the program computes in it)."""
    return _Gen(draw, max_stmts, max_depth, control, block_stmts, control_kinds,
                control_weight, affine, lead_control, dtype).program()
