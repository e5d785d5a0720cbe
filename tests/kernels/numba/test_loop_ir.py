"""The loop IR (xforms/kernels/loops/ir.py) and the indexing ops lowered once to it
(xforms/kernels/loops/lower_indexing.py): values on the CPU against NumPy for the edge cases each
lowering decides (clamping, cropping and interior padding, empty pieces, index dtypes,
rank 0), the CPU printer's slice statements, and the CUDA printer's kernels as source (no
GPU, no simulator: emit_program only writes text)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.loops.ir import (Bin, Clamp, Const, Load, Nest, Store, Sym, add, affine, mul,
                                     nest)

X = np.arange(12.0).reshape(3, 4)


def _jit_src(f, *args):
    """(result, generated CPU source) of jit(f)(*args)."""
    from xforms.kernels.cpu.backend import compile_cpu
    closed = xf.make_jaxpr(f)(*args)
    exe = compile_cpu(closed, {"name": "t"})
    flat = [np.asarray(a) for a in args]
    return [np.asarray(o) for o in exe(*flat)], exe.source


def test_affine_recognises_base_plus_step_times_index():
    i, s = Sym("i"), Sym("s")
    assert affine(i, (i,)) == (Const(0), i, 1)
    base, sym, step = affine(add(s, mul(i, 3)), (i,))
    assert base is s and sym is i and step == 3
    assert affine(add(Const(2), i), (i,))[0] == Const(2)
    assert affine(s, (i,)) == (s, None, 0)                  # no loop index: a fixed index
    assert affine(Bin("-", Const(2), i), (i,)) == (Const(2), i, -1)      # a reversed axis
    assert affine(Bin("*", Const(3), i), (i,)) == (Const(0), i, 3)
    assert affine(Bin("%", i, Const(2)), (i,)) is None
    assert affine(Clamp(Load(None, (i,)), 0, 3), (i,)) is None


def test_nest_and_store_build_an_index_space():
    n, (i, j) = nest((2, 3), "o")
    n.body.append(Store("out", (i, j), Const(0)))
    assert isinstance(n, Nest) and n.dims == (2, 3) and n.syms == (i, j)
    assert i is not j and i.hint == "o"


@pytest.mark.parametrize("dt", [np.int64, np.int32, np.uint32, np.uint64])
def test_gather_and_scatter_clamp_indices_of_every_integer_dtype(dt):
    # the primitives themselves (xnp indexing converts indices to int64 first)
    from xforms.primitives.indexing import gather, scatter, scatter_add
    idx = np.array([2, 0, 7, 1], dt)                    # 7 is clamped to the last row
    u = np.full((4, 4), -1.0)
    (g, s, a), src = _jit_src(lambda x, i: (gather(x, [i], (0,)), scatter(x, u, [i], (0,)),
                                            scatter_add(x, -u, [i], (0,))), X, idx)
    ci = np.minimum(idx.astype(np.int64), 2)
    np.testing.assert_array_equal(g, X[ci])
    want_s = X.copy()
    want_s[ci] = -1.0
    want_a = X.copy()
    np.add.at(want_a, ci, 1.0)
    np.testing.assert_array_equal(s, want_s)
    np.testing.assert_array_equal(a, want_a)
    if dt not in (np.int64, np.uint64):                  # cast before clamping (uint64 is
        assert "min(max(np.int64(" in src                # int64 already: index_values)


def test_gather_of_bool_and_scatter_add_of_bool():
    m = np.array([[True, False], [False, False], [True, True]])
    i = np.array([1, 1, 0])
    (g, a), _ = _jit_src(lambda m, i: (m[i], m.at[i].add(True)), m, i)
    np.testing.assert_array_equal(g, m[i])
    want = m.copy()
    want[[1, 0]] = True
    np.testing.assert_array_equal(a, want)


def test_dynamic_slices_clamp_the_start_and_print_as_slices():
    def f(x, k):
        return (lax.dynamic_slice(x, (k, 1), (2, 3)), lax.dynamic_slice(x, (0, k), (3, 2)),
                lax.dynamic_update_slice(x, -np.ones((2, 2)), (k, k)))

    def start(k, n, size):              # JAX: a negative start counts from the end, then clamps
        return min(max(k + n if k < 0 else k, 0), n - size)
    for k in (-5, -3, -1, 0, 1, 5):
        (a, b, c), src = _jit_src(f, X, np.int64(k))
        r = start(k, 3, 2)
        np.testing.assert_array_equal(a, X[r:r + 2, 1:4])
        cb = start(k, 4, 2)
        np.testing.assert_array_equal(b, X[:, cb:cb + 2])
        want = X.copy()
        want[r:r + 2, cb:cb + 2] = -1.0
        np.testing.assert_array_equal(c, want)
    body = src.split("def kernel")[1]
    assert "while" not in body                       # slice statements, no loops
    # (array copies by the precompiled helper, xforms/kernels/runtime/cpu_runtime.py)
    assert ", B[s1:s1 + 2, 1:4])" in body and ", B[:, s2:s2 + 2])" in body
    assert "[s3:s3 + 2, s4:s4 + 2], A)" in body


def _numpy_pad(x, value, cfg):
    """lax.pad's meaning written in NumPy (no jax in CI): per axis, spread the
    elements ``interior`` apart, then add ``lo``/``hi`` (a negative edge crops).

    >>> _numpy_pad(np.array([1., 2.]), 0.0, [(1, -1, 1)]).tolist()
    [0.0, 1.0, 0.0]
    """
    out = np.asarray(x)
    for axis, (lo, hi, interior) in enumerate(cfg):
        n = out.shape[axis]
        size = max(n + (n - 1) * interior, 0) + max(lo, 0) + max(hi, 0)
        shape = list(out.shape)
        shape[axis] = size
        grown = np.full(shape, value, out.dtype)
        at = [slice(None)] * out.ndim
        at[axis] = slice(max(lo, 0), max(lo, 0) + (n - 1) * (interior + 1) + 1 if n else 0,
                         interior + 1)
        grown[tuple(at)] = out
        keep = [slice(None)] * out.ndim
        keep[axis] = slice(-min(lo, 0), size + min(hi, 0))
        out = grown[tuple(keep)]
    return out


@pytest.mark.parametrize("cfg", [((1, 2, 0), (0, 0, 1)), ((-1, 1, 1), (2, -2, 0)),
                                 ((-2, -1, 2), (-3, 0, 0)), ((0, 0, 0), (-4, 0, 0))])
def test_pad_with_cropping_and_interior_padding(cfg):
    """A pad by a literal is a guarded view (xforms/kernels/plan/index_maps.py), interior padding
    included; by a traced value, an Op that fills and copies."""
    want = _numpy_pad(X, 7.0, cfg)
    (p,), src = _jit_src(lambda x: lax.pad(x, 7.0, cfg), X)
    np.testing.assert_array_equal(p, want)
    assert "[...] = " not in src
    (p,), src = _jit_src(lambda x, v: lax.pad(x, v, cfg), X, np.float64(7.0))
    np.testing.assert_array_equal(p, want)
    if any(interior for _, _, interior in cfg):
        assert "[...] = " in src


def test_concatenate_skips_empty_pieces():
    e = np.zeros((3, 0))
    (c, d), src = _jit_src(lambda x, e: (xnp.concatenate([x, e, x[:, :1]], axis=1),
                                         xnp.concatenate([x, x], axis=0)), X, e)
    np.testing.assert_array_equal(c, np.concatenate([X, e, X[:, :1]], axis=1))
    np.testing.assert_array_equal(d, np.concatenate([X, X]))
    assert ", 0:4], " in src                                   # copy_into(D[:, 0:4], A)
    # the slice's loop writes its slot, after the empty piece (plan/placement.py)
    assert "strided_view(D, 4, (3, 1), (5, 1))" in src


def test_rank0_operands():
    v = np.float64(2.5)
    (a, b, c), _ = _jit_src(lambda v: (lax.dynamic_slice(v, (), ()),
                                       lax.dynamic_update_slice(v, v * 2, ()),
                                       lax.pad(v, 0.0, ())), v)
    assert float(a) == 2.5 and float(b) == 5.0 and float(c) == 2.5
    (g,), _ = _jit_src(lambda x, i: x[i], np.arange(4.0), np.int64(2))
    assert float(g) == 2.0


def test_cuda_printer_writes_one_grid_stride_kernel_per_region():
    pytest.importorskip("numba_cuda")
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program
    from xforms.primitives.indexing import gather
    spec = rt.spec_for((8, 0))
    i = np.array([2, 0, 1], np.int32)
    closed = xf.make_jaxpr(lambda x, i, v: (gather(x, [i], (0,)) * 2.0,
                                            xnp.concatenate([x, x[:1]]),
                                            lax.pad(x, v, ((1, 0, 1), (0, 1, 0)))))(
        X, i, np.float64(0.0))
    src = emit_program(closed, spec, "t").source
    assert '"""gather f64[3,4] along axes (0,)"""' in src
    assert "min(max(np.int64(" in src                      # int32 indices cast
    assert '"""concatenate 2 arrays along axis 0"""' in src
    assert '"""pad: fill f64[6,5]"""' in src and '"""pad f64[3,4] -> f64[6,5]"""' in src
    # the concatenate kernel: one launch, one grid-stride loop per piece
    kern = src.split('"""concatenate')[1].split("\ndef ")[0]
    assert kern.count("for _t in range(cuda.grid(1)") == 2


# ---- fused loops (xforms/kernels/loops/lower_loops.py), printed by both backends ---------------------------
def _loop_steps(f, *args):
    from xforms.kernels.plan.fusion import plan_program
    return [s for s in plan_program(xf.make_jaxpr(f)(*args)).steps if s.kind == "loop"]


def test_a_fused_loop_lowers_to_evals_stores_reductions_and_guarded_loads():
    from xforms.kernels.loops.ir import Eval, Reduce, Value
    from xforms.kernels.loops.lower_loops import lower_loop
    v = np.arange(5.0)
    (step,) = _loop_steps(lambda x, r: (xnp.tanh(x * r) + lax.pad(v, 0.0, ((0, 0, 0),)),
                                       xnp.sum(x * r, axis=1)), np.ones((5, 1)) * v, v[None])
    loop, index = lower_loop(step)
    kinds = [type(st).__name__ for st in loop.body]
    assert kinds.count("Reduce") == 1 and "Store" in kinds and kinds[0] == "Eval"
    assert index == loop.syms and loop.dims == (5, 5)
    evals = [st for st in loop.body if isinstance(st, Eval)]
    # the row operand r[0, j] of shape (1, 5): its size-1 dim reads index 0
    mul = next(st for st in evals if st.eqn.prim.name == "mul")
    r_load = mul.args[1]
    assert r_load.index[0] == Const(0) and r_load.index[1] is loop.syms[1]
    tanh = next(st for st in evals if st.eqn.prim.name == "tanh")
    assert isinstance(tanh.args[0], Value)                  # computed earlier in the body
    red = next(st for st in loop.body if isinstance(st, Reduce))
    assert isinstance(red.value, Value)


def test_guarded_reads_are_peeled_on_the_cpu_and_checked_per_element_on_cuda():
    pytest.importorskip("numba_cuda")
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program

    def f(x):
        xp = lax.pad(x, 0.0, ((1, 1, 0),))
        return xp[2:] - 2.0 * xp[1:-1] + xp[:-2]
    x = np.linspace(0.0, 1.0, 50) ** 2
    (y,), src = _jit_src(f, x)
    want = np.concatenate([[0.0], x, [0.0]])
    np.testing.assert_allclose(y, want[2:] - 2 * want[1:-1] + want[:-2], rtol=1e-13)
    body = src.split("def kernel")[1]
    loops = body.split("while i0 <")[1:]
    assert len(loops) == 3                             # head, plain middle, tail
    assert " if " in loops[0] and " if " not in loops[1] and " if " in loops[2]
    cu = emit_program(xf.make_jaxpr(f)(x), rt.spec_for((8, 0)), "t").source
    assert "A[_t] if 0 <= i0 < 50 else 0.0" in cu and "A[i0 + 1] if -1 <= i0 < 49" in cu


def test_cuda_fused_loops_index_with_linear_offsets():
    pytest.importorskip("numba_cuda")
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program
    x = np.ones((3, 4))
    src = emit_program(xf.make_jaxpr(lambda a, b: a * 2.0 + b.T[::-1])(x, x.T),
                       rt.spec_for((8, 0)), "t").source
    assert "A[_t]" in src                               # same shape as the loop: the flat index
    assert "B[-i0 + i1 * 3 + 2]" in src                  # transposed and reversed


def test_a_row_value_broadcast_along_the_innermost_loop_is_read_once_before_it():
    """x - max(x) along the last axis: the row's max is read into a scalar before the loop
    over the row (read inside it, from a buffer LLVM cannot tell apart from the one the
    loop stores to, it kept the loop from being vectorised: cpu/numba/printer.invariant_reads)."""
    import re
    x = np.random.default_rng(0).standard_normal((3, 5, 40)).astype(np.float32)

    def softmax(x):
        e = xnp.exp(x - xnp.max(x, axis=-1, keepdims=True))
        return e / xnp.sum(e, axis=-1, keepdims=True)
    (out,), src = _jit_src(softmax, x)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-6)
    hoisted = re.findall(r"^\s*(m\d+) = (\w+)\[i0, i1(?:, 0)?\]", src, re.M)
    assert len(hoisted) >= 2, src            # the max, then the sum
    for name, arr in hoisted:
        after = src.split(f"{name} = ")[1].split("\n", 1)[1]
        assert re.search(rf"\b{arr}\[i0, i1(, 0)?\]", after) is None, src

