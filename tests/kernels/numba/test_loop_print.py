"""The printer core (xforms/kernels/loops/loop_print.py): accumulator statements (`Init`, `Fold`) of every
reduction monoid, printed once for both backends, run as Python against NumPy -- sequential
(ordered) folds and tree folds combining in any order, with NaNs and ties -- and the CPU and
CUDA printers' hooks on the same accumulators."""
from contextlib import contextmanager

import numpy as np
import pytest

from xforms.kernels.codegen import lit
from xforms.kernels.loops.ir import Accum, Fold, Init, Name
from xforms.kernels.loops.loop_print import Printer


class _Py(Printer):
    """A printer into plain Python lines (the hooks every backend fills in)."""

    def __init__(self):
        self.lines, self.depth, self.n = [], 0, 0

    def line(self, text):
        self.lines.append("    " * self.depth + text)

    @contextmanager
    def block(self, header):
        self.line(header)
        self.depth += 1
        yield
        self.depth -= 1

    def fresh(self, hint):
        self.n += 1
        return f"_{hint}{self.n}"

    def lit(self, v, dt):
        return lit(v, dt)


def _run(lines, **env):
    scope = {"np": np, **env}
    exec("\n".join(lines), scope)
    return scope


def _ordered(op, x, out_dt=np.int64):
    """Fold x[0], x[1], ... in order into one accumulator, as a CPU loop does."""
    dt = x.dtype
    acc = Accum(op, dt, Name("v"), Name("k") if op.startswith("arg") else None, out_dt)
    p = _Py()
    p.print_acc(Init(acc))
    with p.block("for i in range(len(x)):"):
        p.print_acc(Fold(acc, Name("x[i]"), Name("i")))
    s = _run(p.lines, x=x)
    return s["k"] if acc.index else s["v"]


def _tree(op, x, seed):
    """Combine one accumulator per element pairwise, in a random order (CUDA's trees)."""
    dt, arg = x.dtype, op.startswith("arg")
    p = _Py()
    a = Accum(op, dt, Name("a"), Name("ai") if arg else None, np.int64)
    with p.block("def comb(a, ai, b, bi):"):
        p.print_acc(Fold(a, Name("b"), Name("bi"), ordered=False))
        p.line("return a, ai")
    comb = _run(p.lines)["comb"]
    items = [(x[i], i) for i in range(len(x))]
    rng = np.random.default_rng(seed)
    while len(items) > 1:
        j = int(rng.integers(len(items) - 1))
        (va, ia), (vb, ib) = items[j], items[j + 1]
        if rng.integers(2):                 # either side may hold the accumulator
            (va, ia), (vb, ib) = (vb, ib), (va, ia)
        items[j:j + 2] = [comb(va, ia, vb, ib)]
    v, i = items[0]
    return i if arg else v


FLOATS = np.array([0.5, -2.0, 3.0, 3.0, np.nan, 1.0, np.nan, -7.0])
TIES = np.array([1.0, 4.0, -1.0, 4.0, 0.0, 4.0])
INTS = np.array([3, -9, 12, 12, 0, -9], np.int64)


@pytest.mark.parametrize("x", [FLOATS, TIES, INTS, FLOATS[[0, 1, 2, 5, 7]]],
                         ids=["nan", "ties", "ints", "finite"])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "argmax", "argmin"])
def test_folds_match_numpy_in_order_and_in_any_tree_order(op, x):
    want = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
            "argmax": np.argmax, "argmin": np.argmin}[op](x)
    check = np.testing.assert_equal if x.dtype.kind != "f" or op.startswith("arg") else \
        (lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-15))
    check(_ordered(op, x), want)
    for seed in range(6):
        check(_tree(op, x, seed), want)


@pytest.mark.parametrize("op, fn", [("and", np.all), ("or", np.any)])
def test_bool_monoids(op, fn):
    for x in (np.array([True, False, True]), np.array([True, True]), np.array([False])):
        assert _ordered(op, x) == fn(x)
        assert _tree(op, x, 0) == fn(x)


def test_argmax_index_starts_at_the_index_dtype():
    p = _Py()
    p.print_acc(Init(Accum("argmax", np.dtype(np.float32), Name("v"), Name("k"),
                           np.dtype(np.int32)), 0))
    assert p.lines == ["v = np.float32(-np.inf)", "k = np.int32(0)"]


def test_cpu_and_cuda_print_a_sum_their_way():
    from xforms.kernels.cuda.printer.loop import CudaPrinter
    from xforms.kernels.cpu.numba.printer import CpuPrinter

    class _Em:
        def __init__(self):
            self.out = []
            self.line = self.out.append
            self.block = self.fresh = self.lit = self.comment = self.check_dtypes = None
            self.s = self.scalar_value = None

    em = _Em()
    acc = Accum("sum", np.dtype(np.float32), Name("s"))
    CpuPrinter(em).print_acc(Fold(acc, Name("x")))
    kb = _Em()
    CudaPrinter(_Em(), kb).print_acc(Fold(acc, Name("x")))
    assert em.out == ["s += x"]                    # the CPU's accumulator keeps its type
    assert kb.out == ["s = np.float32(s + x)"]     # (Numba CUDA: cast back to 32 bits)
