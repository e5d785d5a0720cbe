"""The AST of a random fuzz program, rendered as readable Python source in two dialects.

A program is straight-line SSA code over float64 (or float32, complex128, complex64:
`Program.dtype`) arrays with
structured control flow; its templates create no array of another float dtype, so a float32
program stays float32 as JAX would keep it:

    Program(args=[pytrees of Leaf], stmts=[Op | Cond | While | Fori | Scan | Call], out=pytree)

`render(prog, "xnp")` writes it with `xforms.numpy` / `xforms.lax` (the code under test) and
`render(prog, "np")` with plain NumPy and Python loops (`R.*` helpers from reference.py: the
non-smooth ones record how close their inputs came to a kink or a singular derivative).
`build(prog, dialect)` executes the source and returns the function; the source is what a
shrunk failure prints, so it can be pasted into a regression test as is:

    >>> print(render(Program([Leaf("x0", (3,))], [Op("v1", (3,), "sin", ("x0",))], "v1")))
    def f(p0):
        x0 = xnp.asarray(p0)
        v1 = xnp.sin(x0)
        return v1
"""
import itertools
import linecache
from dataclasses import dataclass, field

import numpy as np

from . import reference as R

# ---- operation templates: kind -> (xnp source, NumPy source); {a} {b} operands, {i} a loop
# index, {p0} {p1} ... parameters (already Python source) ----------------------------------
OPS = {
    # unary, each safe on all of R (log/sqrt/division see only positive arguments)
    "sin": ("xnp.sin({a})", "np.sin({a})"),
    "cos": ("xnp.cos({a})", "np.cos({a})"),
    "tanh": ("xnp.tanh({a})", "np.tanh({a})"),
    "arctan": ("xnp.arctan({a})", "np.arctan({a})"),
    "arcsinh": ("xnp.arcsinh({a})", "np.arcsinh({a})"),
    "exp_t": ("xnp.exp(xnp.tanh({a}))", "np.exp(np.tanh({a}))"),
    "gauss": ("xnp.exp(-{a} * {a})", "np.exp(-{a} * {a})"),
    "log_sp": ("xnp.log(xf.nn.softplus({a}) + 0.1)", "np.log(np.logaddexp({a}, 0.0) + 0.1)"),
    "sqrt_s": ("xnp.sqrt({a} * {a} + 0.5)", "np.sqrt({a} * {a} + 0.5)"),
    "recip": ("1.0 / (1.0 + {a} * {a})", "1.0 / (1.0 + {a} * {a})"),
    "square": ("xnp.square({a})", "np.square({a})"),
    "pow3": ("{a} ** 3", "{a} ** 3"),
    "sigmoid": ("xf.nn.sigmoid({a})", "R.sigmoid({a})"),
    "neg": ("xnp.negative({a})", "np.negative({a})"),
    "affine": ("{p0} * {a} + {p1}", "{p0} * {a} + {p1}"),
    "log1p_sq": ("xnp.log1p({a} * {a})", "np.log1p({a} * {a})"),
    "expm1_t": ("xnp.expm1(xnp.tanh({a}))", "np.expm1(np.tanh({a}))"),
    "arcsin_t": ("xnp.arcsin(0.9 * xnp.tanh({a}))", "np.arcsin(0.9 * np.tanh({a}))"),
    "cosh_t": ("xnp.cosh(xnp.tanh({a}))", "np.cosh(np.tanh({a}))"),
    "abs": ("xnp.abs({a})", "R.abs({a})"),
    "relu": ("xf.nn.relu({a})", "R.relu({a})"),
    "clip": ("xnp.clip({a}, -0.5, 0.7)", "R.clip({a}, -0.5, 0.7)"),
    "floor": ("xnp.floor({a})", "R.floor({a})"),
    "softabs": ("C.softabs({a})", "np.sqrt({a} * {a} + 0.1)"),      # custom_jvp
    "softmax": ("xf.nn.softmax({a}, axis={p0})", "R.softmax({a}, axis={p0})"),
    "log_softmax": ("xf.nn.log_softmax({a}, axis={p0})", "R.log_softmax({a}, axis={p0})"),
    # binary, NumPy broadcasting
    "add": ("{a} + {b}", "{a} + {b}"),
    "sub": ("xnp.subtract({a}, {b})", "np.subtract({a}, {b})"),
    "mul": ("{a} * {b}", "{a} * {b}"),
    "mul_f": ("xnp.multiply({a}, {b})", "np.multiply({a}, {b})"),
    "div_s": ("{a} / (1.0 + {b} * {b})", "{a} / (1.0 + {b} * {b})"),
    "maximum": ("xnp.maximum({a}, {b})", "R.maximum({a}, {b})"),
    "minimum": ("xnp.minimum({a}, {b})", "R.minimum({a}, {b})"),
    "where_gt": ("xnp.where({a} > {b}, {a} * {b}, {a} - {b})",
                 "np.where(R.gt({a}, {b}), {a} * {b}, {a} - {b})"),
    "pow_s": ("({a} * {a} + 0.5) ** xnp.tanh({b})", "({a} * {a} + 0.5) ** np.tanh({b})"),
    "atan2_s": ("xnp.arctan2({a}, 1.0 + {b} * {b})", "np.arctan2({a}, 1.0 + {b} * {b})"),
    "logaddexp": ("xnp.logaddexp({a}, {b})", "np.logaddexp({a}, {b})"),
    "smooth_max": ("C.smooth_max({a}, {b})", "np.logaddexp({a}, {b})"),  # custom_jvp
    # reductions: p0 axis, p1 keepdims
    "sum": ("xnp.sum({a}, axis={p0}, keepdims={p1})", "np.sum({a}, axis={p0}, keepdims={p1})"),
    "mean": ("xnp.mean({a}, axis={p0}, keepdims={p1})",
             "np.mean({a}, axis={p0}, keepdims={p1})"),
    "max": ("xnp.max({a}, axis={p0}, keepdims={p1})", "R.max({a}, axis={p0}, keepdims={p1})"),
    "min": ("xnp.min({a}, axis={p0}, keepdims={p1})", "R.min({a}, axis={p0}, keepdims={p1})"),
    "prod_s": ("xnp.prod(1.0 + 0.5 * xnp.tanh({a}), axis={p0}, keepdims={p1})",
               "np.prod(1.0 + 0.5 * np.tanh({a}), axis={p0}, keepdims={p1})"),
    "var": ("xnp.var({a}, axis={p0}, keepdims={p1})", "np.var({a}, axis={p0}, keepdims={p1})"),
    "logsumexp": ("xf.nn.logsumexp({a}, axis={p0}, keepdims={p1})",
                  "R.logsumexp({a}, axis={p0}, keepdims={p1})"),
    "norm": ("xnp.linalg.norm({a})", "R.norm({a})"),
    # contractions
    "matmul": ("xnp.matmul({a}, {b})", "np.matmul({a}, {b})"),
    "matmul_op": ("{a} @ {b}", "{a} @ {b}"),
    "dot": ("xnp.dot({a}, {b})", "np.dot({a}, {b})"),
    "tensordot": ("xnp.tensordot({a}, {b}, axes={p0})", "np.tensordot({a}, {b}, axes={p0})"),
    "einsum": ("xnp.einsum({p0}, {a}, {b})", "np.einsum({p0}, {a}, {b})"),
    "outer": ("xnp.outer({a}, {b})", "np.outer({a}, {b})"),
    "inner": ("xnp.inner({a}, {b})", "np.inner({a}, {b})"),
    # shapes
    "reshape": ("xnp.reshape({a}, {p0})", "np.reshape({a}, {p0})"),
    "transpose": ("xnp.transpose({a}, {p0})", "np.transpose({a}, {p0})"),
    "expand_dims": ("xnp.expand_dims({a}, {p0})", "np.expand_dims({a}, {p0})"),
    "squeeze": ("xnp.squeeze({a}, axis={p0})", "np.squeeze({a}, axis={p0})"),
    "broadcast_to": ("xnp.broadcast_to({a}, {p0})", "np.broadcast_to({a}, {p0})"),
    "concatenate": ("xnp.concatenate([{a}, {b}], axis={p0})",
                    "np.concatenate([{a}, {b}], axis={p0})"),
    # operands made by loops that only the concatenate reads: written in their slot of it
    # (xforms/kernels/plan/placement.py)
    "concat_maps": ("xnp.concatenate([xnp.sin({a}), {b} * 2.0], axis={p0})",
                    "np.concatenate([np.sin({a}), {b} * 2.0], axis={p0})"),
    "stack": ("xnp.stack([{a}, {b}], axis={p0})", "np.stack([{a}, {b}], axis={p0})"),
    "flip": ("xnp.flip({a}, axis={p0})", "np.flip({a}, axis={p0})"),
    "swapaxes": ("xnp.swapaxes({a}, {p0}, {p1})", "np.swapaxes({a}, {p0}, {p1})"),
    "moveaxis": ("xnp.moveaxis({a}, {p0}, {p1})", "np.moveaxis({a}, {p0}, {p1})"),
    "tile": ("xnp.tile({a}, {p0})", "np.tile({a}, {p0})"),
    "repeat": ("xnp.repeat({a}, {p0}, axis={p1})", "np.repeat({a}, {p0}, axis={p1})"),
    "pad": ("xnp.pad({a}, {p0})", "np.pad({a}, {p0})"),
    "split": ("xnp.split({a}, {p0}, axis={p1})[{p2}]", "np.split({a}, {p0}, axis={p1})[{p2}]"),
    "ravel": ("xnp.ravel({a})", "np.ravel({a})"),
    # indexing and functional updates: p0 is the index expression
    # (getitem's indices are in bounds: out of bounds, x[i] clamps but its cotangent is
    # dropped, as JAX's; .at[].get(mode=...) and take are drawn out of bounds too)
    "getitem": ("{a}[{p0}]", "{a}[{p0}]"),
    "at_get_clip": ("{a}.at[{p0}].get(mode='clip')", "R.getitem({a}, np.s_[{p0}])"),
    "at_get_fill": ("{a}.at[{p0}].get(mode='fill', fill_value={p1})",
                    "R.getitem({a}, np.s_[{p0}], {p1})"),
    # (the indices an array: JAX refuses a list there)
    "take": ("xnp.take({a}, np.array({p0}), axis={p1}, fill_value={p2})",
             "R.take({a}, {p0}, {p1}, {p2})"),
    "at_set": ("{a}.at[{p0}].set({b})", "R.at_set({a}, np.s_[{p0}], {b})"),
    "at_add": ("{a}.at[{p0}].add({b})", "R.at_add({a}, np.s_[{p0}], {b})"),
    # (unique positions, promised: JAX differentiates the updates only then)
    "at_mul": ("{a}.at[{p0}].mul({b}, unique_indices=True)", "R.at_mul({a}, np.s_[{p0}], {b})"),
    "at_min": ("{a}.at[{p0}].min({b})", "R.at_min({a}, np.s_[{p0}], {b})"),
    "at_max": ("{a}.at[{p0}].max({b})", "R.at_max({a}, np.s_[{p0}], {b})"),
    # inside a fori_loop body: {i} is the (traced) loop index, p0 the length of axis 0
    "dyn_index": ("{a}[{i} % {p0}]", "{a}[{i} % {p0}]"),
    # (p1 of dyn_add/dyn_set, p2 of dyn_slice: an offset making the index negative or out of
    # bounds below -n)
    "dyn_add": ("{a}.at[{i} % {p0} - {p1}].add({b})", "R.at_add({a}, {i} % {p0} - {p1}, {b})"),
    "dyn_set": ("{a}.at[{i} % {p0} - {p1}].set({b})", "R.at_set({a}, {i} % {p0} - {p1}, {b})"),
    "dyn_slice": ("lax.dynamic_slice_in_dim({a}, {i} % {p0} - {p2}, {p1}, 0)",
                  "R.dynamic_slice_in_dim({a}, {i} % {p0} - {p2}, {p1})"),
    "iscale": ("{a} * (1.0 + 0.25 * {i})", "{a} * (1.0 + 0.25 * {i})"),
    # an affine step whose weights change with the index: which order the steps run in shows
    # (a transposed loop's sweep must count down; iscale's product alone commutes)
    "istep": ("{a} * (1.0 + 0.5 * ({i} % 2)) + {b} * {i}",
              "{a} * (1.0 + 0.5 * ({i} % 2)) + {b} * {i}"),
    # along an axis (p0), spectral, convolution and factorisations (kernels of their own on
    # both backends: cumulative loops, sort, FFT, convolution, LU/Cholesky)
    "cumsum": ("xnp.cumsum({a}, axis={p0})", "np.cumsum({a}, axis={p0})"),
    "cumprod_s": ("xnp.cumprod(1.0 + 0.5 * xnp.tanh({a}), axis={p0})",
                  "np.cumprod(1.0 + 0.5 * np.tanh({a}), axis={p0})"),
    "sort": ("xnp.sort({a}, axis={p0})", "R.sort({a}, axis={p0})"),
    "spectrum": ("xnp.abs(xnp.fft.rfft({a}, axis={p0})) ** 2",
                 "np.abs(np.fft.rfft({a}, axis={p0})) ** 2"),
    "fft_filter": ("xnp.fft.irfft(xnp.fft.rfft({a}) * "
                   "xnp.linspace(1.0, 0.2, {p0}, dtype={a}.dtype), n={p1})",
                   "np.fft.irfft(np.fft.rfft({a}) * np.linspace(1.0, 0.2, {p0}), n={p1})"),
    "fft_c": ("xnp.real(xnp.fft.ifftn({a} * (1.0 + 0.5j) + xnp.fft.fftn({a})))",
              "np.real(np.fft.ifftn({a} * (1.0 + 0.5j) + np.fft.fftn({a})))"),
    "convolve": ("xnp.convolve({a}, {b})", "np.convolve({a}, {b})"),
    # a kernel with infinities (p0) where b > 0.5: padding must add nothing (0 * inf = NaN);
    # NaN and the infinities of the result come back as -7, 7 and -6
    "convolve_inf": ("xnp.nan_to_num(xnp.convolve({a}, xnp.where({b} > 0.5, {p0}, {b})), "
                     "nan=-7.0, posinf=7.0, neginf=-6.0)", "R.convolve_special({a}, {b}, {p0})"),
    "spd_solve": ("xnp.linalg.solve({a} @ xnp.swapaxes({a}, -1, -2) + "
                  "{p0} * xnp.eye({p0}, dtype={a}.dtype), {a})",
                  "np.linalg.solve({a} @ np.swapaxes({a}, -1, -2) + {p0} * np.eye({p0}), {a})"),
    "chol_logdet": ("xnp.sum(xnp.log(xnp.diagonal(xnp.linalg.cholesky({a} @ xnp.swapaxes({a}, "
                    "-1, -2) + {p0} * xnp.eye({p0}, dtype={a}.dtype)), axis1=-2, axis2=-1)), "
                    "axis=-1)",
                    "np.sum(np.log(np.diagonal(np.linalg.cholesky({a} @ np.swapaxes({a}, -1, "
                    "-2) + {p0} * np.eye({p0})), axis1=-2, axis2=-1)), axis=-1)"),
    # eigenvalues read from one triangle of a non-symmetric matrix (S plus its strict lower
    # triangle): tangents are not symmetric, so the derivative must ignore the other triangle
    "eigvalsh_tri": ("xnp.linalg.eigh({a} @ xnp.swapaxes({a}, -1, -2) + "
                     "{p0} * xnp.eye({p0}, dtype={a}.dtype) + "
                     "xnp.tril({a} @ xnp.swapaxes({a}, -1, -2), -1), "
                     "symmetrize_input=False).eigenvalues",
                     "np.linalg.eigh({a} @ np.swapaxes({a}, -1, -2) + {p0} * np.eye({p0}) + "
                     "np.tril({a} @ np.swapaxes({a}, -1, -2), -1)).eigenvalues"),
    # scalars steering control flow (floor and comparisons record their distance to a jump)
    "pred": ("xnp.sum({a}) > {p0}", "R.gt(np.sum({a}), {p0})"),
    "branch_index": ("xnp.floor(1.5 + 2.5 * xnp.tanh(xnp.mean({a}))).astype(xnp.int32)",
                     "R.floor(1.5 + 2.5 * np.tanh(np.mean({a}))).astype(np.int32)"),
    "trip_count": ("xnp.floor(2.5 + 2.0 * xnp.tanh(xnp.mean({a})))",
                   "R.floor(2.5 + 2.0 * np.tanh(np.mean({a})))"),
    "trip_count_int": ("xnp.floor(2.5 + 2.0 * xnp.tanh(xnp.mean({a}))).astype(xnp.int64)",
                       "R.floor(2.5 + 2.0 * np.tanh(np.mean({a}))).astype(np.int64)"),
    "limit": ("1.0 + xnp.tanh(xnp.mean({a}))", "1.0 + np.tanh(np.mean({a}))"),
    "tstep": ("{a} + 0.5 + 0.25 * xnp.tanh(xnp.sum({b}))",
              "{a} + 0.5 + 0.25 * np.tanh(np.sum({b}))"),
    # a loop's accumulator {a} (zeros at first) plus a product of per-step values {b}, {c}:
    # the scan rewrites of xforms/kernels/prepare/scan_products.py
    "zeros": ("xnp.zeros({p0}, xnp.{p1})", "np.zeros({p0})"),
    "acc_outer": ("{a} + xnp.outer({b}, {c})", "{a} + np.outer({b}, {c})"),
    "acc_dot": ("{a} + {b} @ {c}", "{a} + {b} @ {c}"),
    "acc_tdot": ("{a} + xnp.tensordot({b}, {c}, axes=(0, 0))",
                 "{a} + np.tensordot({b}, {c}, axes=(0, 0))"),
    "acc_sum": ("{a} + xnp.sum({b}, axis=0)", "{a} + np.sum({b}, axis=0)"),
    "fit": ("xnp.broadcast_to(xnp.mean({a}), {p0})", "np.broadcast_to(np.mean({a}), {p0})"),
    # float -> int conversion of special values (p0: nan, inf, out of range; p1 the integer
    # dtype), brought back to small floats through an integer remainder
    # complex programs (complex_loops.py): holomorphic ops without poles near the inputs,
    # the conjugate, and the control scalars through the real part
    "conj": ("xnp.conj({a})", "np.conj({a})"),
    "rot": ("{a} * (0.6 + 0.8j)", "{a} * (0.6 + 0.8j)"),
    "exp_h": ("xnp.exp(0.5 * {a})", "np.exp(0.5 * {a})"),
    "div_c": ("{a} / (2.0 + {b} * xnp.conj({b}))", "{a} / (2.0 + {b} * np.conj({b}))"),
    "fft_cc": ("xnp.fft.ifft(xnp.fft.fft({a}, axis={p0}) * (1.0 + 0.5j), axis={p0})",
               "np.fft.ifft(np.fft.fft({a}, axis={p0}) * (1.0 + 0.5j), axis={p0})"),
    "pred_c": ("xnp.sum(xnp.real({a})) > {p0}", "R.gt(np.sum(np.real({a})), {p0})"),
    "branch_index_c": ("xnp.floor(1.5 + 2.5 * xnp.tanh(xnp.mean(xnp.real({a}))))"
                       ".astype(xnp.int32)",
                       "R.floor(1.5 + 2.5 * np.tanh(np.mean(np.real({a})))).astype(np.int32)"),
    "trip_count_c": ("xnp.floor(2.5 + 2.0 * xnp.tanh(xnp.mean(xnp.real({a}))))",
                     "R.floor(2.5 + 2.0 * np.tanh(np.mean(np.real({a}))))"),
    "trip_count_int_c": ("xnp.floor(2.5 + 2.0 * xnp.tanh(xnp.mean(xnp.real({a}))))"
                         ".astype(xnp.int64)",
                         "R.floor(2.5 + 2.0 * np.tanh(np.mean(np.real({a})))).astype(np.int64)"),
    "limit_c": ("1.0 + xnp.tanh(xnp.mean(xnp.real({a})))",
                "1.0 + np.tanh(np.mean(np.real({a})))"),
    "tstep_c": ("{a} + 0.5 + 0.25 * xnp.tanh(xnp.sum(xnp.real({b})))",
                "{a} + 0.5 + 0.25 * np.tanh(np.sum(np.real({b})))"),
    "to_int": ("(xnp.where({a} > 0.5, {p0}, {a} * {p2}).astype(xnp.{p1}) % 1000)"
               ".astype({a}.dtype) * 0.001",
               "(R.to_int(np.where(R.gt({a}, 0.5), {p0}, {a} * {p2}), np.{p1}) % 1000)"
               ".astype(np.float64) * 0.001"),
}



# ---- the AST ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Leaf:
    """A program input: an array named `name` of shape `shape` (of the program's dtype)."""
    name: str
    shape: tuple


@dataclass
class Op:
    out: str
    shape: tuple
    kind: str
    args: tuple = ()
    params: tuple = ()
    index: str = None        # the loop index a dyn_* op reads

    def lines(self, d):
        a = dict(zip("abc", self.args))
        a.update({f"p{k}": p for k, p in enumerate(self.params)})
        return [f"{self.out} = " + OPS[self.kind][d == "np"].format(i=self.index, **a)]

    def uses(self):
        return set(self.args) | ({self.index} if self.index else set())


@dataclass
class Block:
    """A nested `def name(params): unpack; stmts; return ret`."""
    name: str
    params: list
    unpack: list
    stmts: list
    ret: str

    def lines(self, d):
        body = list(self.unpack) + [ln for s in self.stmts for ln in s.lines(d)]
        return ([f"def {self.name}({', '.join(self.params)}):"] +
                ["    " + ln for ln in body + [f"return {self.ret}"]])

    def uses(self):
        return set().union(*(s.uses() for s in self.stmts), _names(self.ret)) if self.stmts \
            else _names(self.ret)


def _names(src):
    return {t for t in src.replace("(", " ").replace(")", " ").replace(",", " ").split()
            if t[:1].isalpha()}


def _tuple(names):
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def _lhs(names):
    return ", ".join(names) + ("," if len(names) == 1 else "")


@dataclass
class Cond:
    """`lax.cond(pred, true, false, *ops)` (branches[1] is taken when pred holds, as
    branches = [false, true]) or `lax.switch(index, branches, *ops)`."""
    outs: list
    index: str
    kind: str
    operands: list
    branches: list
    shapes: list = field(default_factory=list)

    def lines(self, d):
        ls = [ln for b in self.branches for ln in b.lines(d)]
        ops = ", ".join(self.operands)
        mod = "lax" if d == "xnp" else "R"
        if self.kind == "cond":
            f, t = self.branches[0].name, self.branches[1].name
            call = f"{mod}.cond({self.index}, {t}, {f}, {ops})"
        else:
            names = ", ".join(b.name for b in self.branches)
            call = f"{mod}.switch({self.index}, [{names}], {ops})"
        return ls + [f"{_lhs(self.outs)} = {call}"]

    def uses(self):
        return {self.index, *self.operands}.union(*(b.uses() for b in self.branches))


@dataclass
class While:
    """`lax.while_loop` over a carry (counter-or-time, *values): kind "count" runs
    `trip` iterations (a data-dependent float); kind "thresh" runs while the float time
    `c[0]`, advanced by a data-dependent step in the body, stays below `trip`."""
    outs: list
    kind: str
    trip: str
    operands: list
    body: Block
    t_out: str = "_"
    shapes: list = field(default_factory=list)

    def lines(self, d):
        mod = "lax" if d == "xnp" else "R"
        if self.kind == "count":
            test, init = f"c[0] < {self.trip}", "0"
        else:
            test = f"c[0] < {self.trip}" if d == "xnp" else f"R.lt(c[0], {self.trip})"
            init = "0.0"
        call = (f"{mod}.while_loop(lambda c: {test}, {self.body.name}, "
                f"{_tuple([init] + list(self.operands))})")
        return self.body.lines(d) + [f"{_lhs([self.t_out] + list(self.outs))} = {call}"]

    def uses(self):
        return {self.trip, *self.operands} | self.body.uses()


@dataclass
class Fori:
    """`lax.fori_loop(lo, hi, body, carry)`; `hi` is a literal or a traced int variable."""
    outs: list
    lo: int
    hi: str
    operands: list
    body: Block
    shapes: list = field(default_factory=list)

    def lines(self, d):
        mod = "lax" if d == "xnp" else "R"
        return self.body.lines(d) + [
            f"{_lhs(self.outs)} = {mod}.fori_loop({self.lo}, {self.hi}, {self.body.name}, "
            f"{_tuple(self.operands)})"]

    def uses(self):
        return {self.hi, *self.operands} | self.body.uses()


@dataclass
class Scan:
    """`carry, ys = lax.scan(step, carry, xs, reverse=...)` with tuples of arrays."""
    outs: list
    ys: list
    operands: list
    xs: list
    reverse: bool
    body: Block
    shapes: list = field(default_factory=list)
    steps: int = None        # scan only the first rows of xs (0 or 1: the loop's edges)

    def lines(self, d):
        mod = "lax" if d == "xnp" else "R"
        lhs = f"{_tuple(self.outs)}, {_tuple(self.ys) if self.ys else '_'}"
        rev = ", reverse=True" if self.reverse else ""
        xs = self.xs if self.steps is None else [f"{x}[:{self.steps}]" for x in self.xs]
        return self.body.lines(d) + [
            f"{lhs} = {mod}.scan({self.body.name}, {_tuple(self.operands)}, "
            f"{_tuple(xs)}{rev})"]

    def uses(self):
        return set(self.operands) | set(self.xs) | self.body.uses()


@dataclass
class Call:
    """A nested function called once, plainly or through `xf.jit` / `xf.checkpoint`."""
    outs: list
    fn: Block
    args: list
    wrap: str = None
    shapes: list = field(default_factory=list)

    def lines(self, d):
        f = self.fn.name if (self.wrap is None or d == "np") else f"xf.{self.wrap}({self.fn.name})"
        return self.fn.lines(d) + [f"{_lhs(self.outs)} = {f}({', '.join(self.args)})"]

    def uses(self):
        return set(self.args) | self.fn.uses()


@dataclass
class Program:
    args: list           # one pytree of Leaf per positional parameter
    stmts: list
    out: object          # pytree of variable names
    dtype: str = "float64"     # of every input (the NumPy rendering runs in float64)

    def leaves(self):
        return [leaf for a in self.args for leaf in _tree_leaves(a)]

    def __repr__(self):
        return render(self)

    def _repr_pretty_(self, p, cycle):
        p.text(render(self))


# ---- pytrees of leaves / names --------------------------------------------------------------
def _tree_leaves(t):
    if isinstance(t, (Leaf, str)):
        return [t]
    if isinstance(t, dict):
        return [x for k in sorted(t) for x in _tree_leaves(t[k])]
    return [x for c in t for x in _tree_leaves(c)]


def _paths(t, base):
    """(access expression, leaf) for each leaf, in tree_flatten order (dict keys sorted)."""
    if isinstance(t, Leaf):
        return [(base, t)]
    if isinstance(t, dict):
        return [p for k in sorted(t) for p in _paths(t[k], f"{base}[{k!r}]")]
    return [p for i, c in enumerate(t) for p in _paths(c, f"{base}[{i}]")]


def tree_src(t):
    """Python source of a pytree of names."""
    if isinstance(t, str):
        return t
    if isinstance(t, Leaf):
        return t.name
    if isinstance(t, dict):
        return "{" + ", ".join(f"{k!r}: {tree_src(v)}" for k, v in t.items()) + "}"
    inner = ", ".join(tree_src(c) for c in t)
    if isinstance(t, list):
        return f"[{inner}]"
    return f"({inner}{',' if len(t) == 1 else ''})"


def tree_map_leaves(f, t):
    if isinstance(t, (Leaf, str)):
        return f(t)
    if isinstance(t, dict):
        return {k: tree_map_leaves(f, v) for k, v in t.items()}
    return type(t)(tree_map_leaves(f, c) for c in t)


# ---- rendering and building ------------------------------------------------------------------
def render(prog, dialect="xnp", name="f"):
    """Readable Python source of `prog` in dialect "xnp" (xforms) or "np" (NumPy reference)."""
    params = [f"p{k}" for k in range(len(prog.args))]
    lines = [f"def {name}({', '.join(params)}):"]
    for p, a in zip(params, prog.args):
        lines += [f"    {leaf.name} = {dialect}.asarray({acc})" for acc, leaf in _paths(a, p)]
    for s in prog.stmts:
        lines += ["    " + ln for ln in s.lines(dialect)]
    lines.append(f"    return {tree_src(prog.out)}")
    return "\n".join(lines)


_counter = itertools.count()


def namespace():
    import xforms as xf
    import xforms.numpy as xnp
    from xforms import lax
    from . import custom_fns as C
    return {"np": np, "R": R, "xf": xf, "xnp": xnp, "lax": lax, "C": C}


def build(prog, dialect="xnp"):
    """Execute the rendered source and return the function (source kept for tracebacks)."""
    return run_source(render(prog, dialect), dialect)


def run_source(src, dialect):
    """The function `f` that a program's source `src` defines."""
    fname = f"<fuzz-{dialect}-{next(_counter)}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = namespace()
    exec(compile(src, fname, "exec"), ns)
    fn = ns["f"]
    fn.__fuzz_source__ = src
    return fn


def out_shape(kind, args, params, index=None):
    """Shape of an op's result, by running its NumPy source on arrays of the argument shapes
    (the generator's own shape bookkeeping is checked against NumPy this way)."""
    env = {"np": np, "R": R}
    names = []
    for k, shape in enumerate(args):
        env[f"t{k}"] = np.full(shape, 0.5)
        names.append(f"t{k}")
    if index is not None:
        env["i"] = np.int64(index)
    op = Op("_", (), kind, tuple(names), tuple(params), "i" if index is not None else None)
    with R.margins():
        exec(op.lines("np")[0], env)
    return np.shape(env["_"])
