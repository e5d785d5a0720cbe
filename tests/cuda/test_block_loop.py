"""Loops whose steps read what other threads wrote in the step before (a stencil), run as one
launch (xforms/kernels/cuda/printer/block_loop.py): one block, or a cooperative grid, looping over the
steps with a barrier after each of the body's kernels; the host loop where that is refused."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cuda.printer import block_loop
from xforms.kernels.cuda.backend import _compile
from xforms.tree_util import tree_leaves

from programs import PROGRAMS, heat_steps


def _fresh(f, *args):
    """An executable compiled now (the block loop's limits are read when it is emitted)."""
    return _compile(xf.make_jaxpr(f)(*args), {})


def _check(exe, f, *args, rtol=1e-12):
    """exe's values against f's eager ones, as test_matrix.py checks the matrix (a CPU
    compile of each program was most of this file's time; compiled CPU loops are tested in
    the CPU suite, tests/test_jit.py and the loop tests)."""
    out = [np.asarray(o) for o in exe(*tree_leaves(args))]
    ref = tree_leaves(f(*args))
    for o, r in zip(out, ref):
        np.testing.assert_allclose(o, np.asarray(r), rtol=rtol, atol=1e-14)


def test_the_heat_equation_is_one_launch_however_many_steps():
    u = np.random.default_rng(3).normal(size=(8, 8))       # (64: one block)
    for steps in (3, 7):
        f = lambda u: heat_steps(u, steps)   # noqa: E731
        exe = _fresh(f, u)
        host = exe.source.split("def host")[1]
        assert "for _i" not in host and "as one block" in exe.source
        assert exe.count_launches(u) == exe.launch_sites <= 2       # (+ constants' fill)
        _check(exe, f, u)


@pytest.mark.parametrize("name", ["heat_stencil", "while_stencil", "scan_stencil",
                                  "dynamic_fori_stencil", "scan_sort_loop"])
def test_stencil_loops_are_not_launched_per_step(name):
    f, args, rtol = PROGRAMS[name]
    exe = _fresh(f, *args)
    assert "as one block" in exe.source, exe.source.split("def host")[1]
    assert exe.count_launches(*args) == exe.launch_sites
    _check(exe, f, *args, rtol=rtol)


def test_grid_mode_and_host_loop_agree_with_one_block(monkeypatch):
    u = np.random.default_rng(4).normal(size=(8, 8))
    monkeypatch.setenv("XFORMS_CUDA_LOOP_BLOCK_MAX", "0")        # past one block's limit
    grid = _fresh(heat_steps, u)
    assert "cuda.cg.this_grid()" in grid.source and "_g.sync()" in grid.source
    assert grid.count_launches(u) == grid.launch_sites <= 2
    _check(grid, heat_steps, u)
    monkeypatch.setenv("XFORMS_CUDA_LOOP_GRID_MAX", "0")         # past both: the host loop
    host = _fresh(heat_steps, u)
    assert "# host loop: arrays past GRID_MAX" in host.source
    assert host.count_launches(u) == 1 + 6 * 3                    # 6 kernels a step
    _check(host, heat_steps, u)


def test_limits_by_size(monkeypatch):
    assert block_loop.mode(block_loop.BLOCK_MAX) == "block"
    assert block_loop.mode(block_loop.BLOCK_MAX + 1) == "grid"
    assert block_loop.mode(block_loop.GRID_MAX + 1) is None
    monkeypatch.setenv("XFORMS_CUDA_LOOP_GRID_MAX", "0")
    assert block_loop.mode(block_loop.BLOCK_MAX + 1) is None


def test_a_scan_is_sized_by_a_step_not_by_its_stacked_arrays():
    """A scan reads and writes a row of its stacked arrays a step: 100 rows of 32 x 512 are a
    step's 16384 elements (a grid), not 1.6M (past GRID_MAX: launches per step, as cliffs'
    LSTM was); its carries and constants count whole."""
    def f(w, h, xs):
        return lax.scan(lambda h, x: (xnp.tanh(x + h @ w),) * 2, h, xs)
    def scan_of(n):
        w, h = np.ones((n, n), np.float32), np.ones((32, n), np.float32)
        jaxpr = xf.make_jaxpr(f)(w, h, np.ones((100, 32, n), np.float32))
        (eqn,) = [e for e in jaxpr.eqns if e.prim.name == "scan"]
        return eqn
    assert block_loop.largest(scan_of(4)) == 32 * 4
    assert block_loop.largest(scan_of(512)) == 512 * 512     # the weights, a constant


def test_a_reduction_in_the_body_is_called_with_its_blocks_in_turn():
    # a norm: a block-wide tree; before, refused ("k2 uses its block": 4 launches a step)
    def norm_loop(x):
        return lax.fori_loop(0, 3, lambda i, u: u / xnp.sqrt(xnp.sum(u * u)) + xnp.roll(u, 1),
                             x)
    x = np.linspace(0.5, 2.0, 40)       # (40: not scalarised, prepare/scalarize.py)
    exe = _fresh(norm_loop, x)
    assert "as one block" in exe.source and "its blocks in turn" in exe.source
    assert exe.count_launches(x) == exe.launch_sites <= 2
    _check(exe, norm_loop, x)


def test_loops_it_cannot_take_stay_on_the_host_and_say_why(monkeypatch):
    def norm_loop(x):
        return lax.fori_loop(0, 3, lambda i, u: u / xnp.sqrt(xnp.sum(u * u)) + xnp.roll(u, 1),
                             x)
    x = np.linspace(0.5, 2.0, 40)
    monkeypatch.setattr(block_loop, "SHARED_MAX", 8)    # (its tree's 64 bytes past the limit)
    exe = _fresh(norm_loop, x)
    assert "# host loop, not one kernel: 64 bytes of shared memory" in exe.source
    assert exe.count_launches(x) > 3
    _check(exe, norm_loop, x)


def _newton(iters):
    f, (w, X, y), _ = PROGRAMS["newton_cg_loop"]
    return (lambda w, X, y: f(w, X, y, iters)), (w, X, y)


def test_newton_cg_launches_the_same_kernels_for_any_number_of_iterations():
    """Issue 34: each CG iteration an hvp (matrix-vector products, dots: two-level reductions
    of fixed grids) -- before, 11 launches an iteration on the simulator's spec."""
    counts = []
    for iters in (2, 5):
        f, args = _newton(iters)
        exe = _fresh(f, *args)
        host = exe.source.split("def host")[1]
        assert "for _i" not in host and "as one block" in exe.source, host
        counts.append(exe.count_launches(*args))
        assert counts[-1] == exe.launch_sites
        _check(exe, f, *args)
    assert counts[0] == counts[1] <= 8, counts


def test_newton_cg_sums_as_the_host_loop_does(monkeypatch):
    """The blocks in turn sum in the launch's order: the same bits as the host loop's
    launches, one block or a cooperative grid."""
    f, args = _newton(3)
    block = np.asarray(_fresh(f, *args)(*args)[0])
    monkeypatch.setenv("XFORMS_CUDA_LOOP_BLOCK_MAX", "0")
    grid = _fresh(f, *args)
    assert "cuda.cg.this_grid()" in grid.source
    assert grid.count_launches(*args) == grid.launch_sites
    monkeypatch.setenv("XFORMS_CUDA_LOOP_GRID_MAX", "0")
    host = _fresh(f, *args)
    assert host.count_launches(*args) > 3 * 8
    ref = np.asarray(host(*args)[0])
    np.testing.assert_array_equal(block, ref)
    np.testing.assert_array_equal(np.asarray(grid(*args)[0]), ref)


def test_matrix_products_in_the_body(monkeypatch):
    """Matmul tiles (a TS x TS block: the same threads numbered along x) need spec.block =
    TS * TS threads, as on a GPU (16 x 16 = 256); the simulator's spec made so."""
    import dataclasses
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.device import spec as spec_module
    from programs import matmul_steps
    monkeypatch.setattr(spec_module, "_spec", dataclasses.replace(rt.SIM_SPEC, block=16))
    u, w = np.linspace(-1.0, 1.0, 40 * 36).reshape(40, 36), np.eye(36) * 0.5 + 0.01
    exe = _fresh(matmul_steps, u, w)
    assert "as one block" in exe.source and "output tiles" in exe.source
    assert exe.count_launches(u, w) == exe.launch_sites <= 2
    _check(exe, matmul_steps, u, w)


def test_a_while_loop_gradient_launches_the_same_kernels_for_any_trip_count():
    """Its checkpoint loops (a forward sweep storing states, a reverse sweep per segment
    with a loop inside) each one block loop: before, 6 launches per step."""
    def wl(n):
        def f(x):
            return lax.while_loop(lambda c: c[0] < n, lambda c: (
                c[0] + 1, c[1] * x + 0.1 * xnp.sin(c[1])), (0, 1.0))[1]
        return xf.grad(f)
    counts = []
    for n in (3, 12):
        exe = _fresh(wl(n), 0.9)
        counts.append(exe.count_launches(0.9))
        np.testing.assert_allclose(float(np.asarray(exe(0.9)[0])), float(wl(n)(0.9)),
                                   rtol=1e-12)
    assert counts[0] == counts[1] <= 8, counts


def test_scans_and_sorts_in_the_body_compute_as_the_host_loop_does(monkeypatch):
    """Issue 34: a parallel scan's chunk kernel and a bitonic sort's tile kernels use their
    block; their blocks take the grid's work in turn, so the loop calls them as they are
    (before, refused: "k0 uses its block", 2 + 5 scan and 21 sort launches a step here).  In
    a loop they launch with the loop's block (block_loop.in_loop), so one block, a
    cooperative grid and the host loop run the same kernels: the same bits."""
    f, (u,), _ = PROGRAMS["scan_sort_loop"]
    # the called functions' shared arrays are windows of one pool per dtype: 9 B float64 (a
    # scan's chunk of 8 B and B totals, B = spec.block) and the sort tile's positions (2 B,
    # at most 512 for a line of 300) as int32; their own arrays would take several times more
    # (the simulator's spec: 640 bytes, 5184 without the pool)
    from xforms.kernels.cuda import runtime as rt
    B = rt.device_spec().block
    monkeypatch.setattr(block_loop, "SHARED_MAX", 8 * 9 * B + 4 * min(512, 2 * B))
    block = _fresh(f, u)
    assert f"_sh_float64 = cuda.shared.array({9 * B}, nbt.float64)" in block.source
    assert "as one block" in block.source and "parallel scan" in block.source
    assert "bitonic tiles" in block.source
    assert block.count_launches(u) == block.launch_sites <= 2
    monkeypatch.setenv("XFORMS_CUDA_LOOP_BLOCK_MAX", "0")
    grid = _fresh(f, u)
    assert "cuda.cg.this_grid()" in grid.source
    assert grid.count_launches(u) == grid.launch_sites <= 2
    monkeypatch.setenv("XFORMS_CUDA_LOOP_GRID_MAX", "0")
    host = _fresh(f, u)
    assert host.count_launches(u) >= 3 * 5       # (4 scans and a sort a step, at least)
    ref = np.asarray(host(u)[0])
    np.testing.assert_array_equal(np.asarray(block(u)[0]), ref)
    np.testing.assert_array_equal(np.asarray(grid(u)[0]), ref)
    _check(host, f, u)


def test_a_block_wide_kernel_is_called_as_it_is_only_with_the_loops_block():
    """Outside a loop a scan's block is sized to its line (20: 4 threads, not spec.block's
    8): such a launch is refused, as is a kernel reading its grid's shape elsewhere."""
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program
    prog = emit_program(xf.make_jaxpr(lambda x: lax.cumsum(x))(np.ones(20)), rt.SIM_SPEC, "f")
    k = next(k for k in prog.kernels if k.takes_turns)
    (_, grid, threads), = [ln for ln in prog.launches if ln[0] == k.name]
    em = type("Em", (), {"spec": rt.SIM_SPEC})()
    assert threads == (4,)
    with pytest.raises(block_loop._Refused, match="threads a block"):
        block_loop._taking_turns(em, k, grid, threads)
    assert block_loop._taking_turns(em, k, grid, (8,)) == k.name
    k.lines = k.lines + ["    _n = cuda.gridDim.x"]
    with pytest.raises(block_loop._Refused, match="uses its grid"):
        block_loop._taking_turns(em, k, grid, (8,))


def test_a_scan_along_a_leading_axis_in_the_body(monkeypatch):
    """The parallel scan's tiles of neighbouring lines (a scan along an axis that is not the
    last, few long lines) in a loop: one launch, as the last axis's."""
    from xforms.kernels.ops import cumulative
    monkeypatch.setattr(cumulative, "PARALLEL_SCAN_MIN_N", 16)   # (lines of 40 parallel)
    f = lambda x: lax.fori_loop(0, 3, lambda i, u: (           # noqa: E731
        lax.cumsum(u, 0) * 0.01 + xnp.roll(u, 1, 0) * 0.5), x)
    x = np.linspace(-1.0, 1.0, 120).reshape(40, 3)
    exe = _fresh(f, x)
    assert "as one block" in exe.source and "parallel scan of 3 line(s)" in exe.source
    assert "tiles of" in exe.source
    assert exe.count_launches(x) == exe.launch_sites <= 2
    _check(exe, f, x)


def test_a_one_block_loop_nested_in_a_grid_loop_runs_as_a_grid_too(monkeypatch):
    """An inner loop small enough for one block, inside an outer loop that runs as a
    cooperative grid, is a grid loop itself: the outer loop's threads all call it (before:
    "k2 uses its block", the outer loop on the host, 15 launches)."""
    from programs import nested_loops
    monkeypatch.setenv("XFORMS_CUDA_LOOP_BLOCK_MAX", "64")    # the outer (200) past a block
    u = np.linspace(0.0, 1.0, 200)
    exe = _fresh(nested_loops, u)
    assert "as one cooperative grid" in exe.source and "uses its block" not in exe.source
    assert exe.count_launches(u) == exe.launch_sites == 1
    _check(exe, nested_loops, u)


def test_a_raise_in_the_body_is_a_flag_the_host_reads_after_the_launch(monkeypatch):
    """A runtime check in a loop body (a reverse-mode fori_loop's checkpoint bound, its trip
    count known at run time) no longer keeps the loop on the host: the kernel stores the
    check's code and returns, the host reads it once after the launch (before: a host loop,
    a wait per check)."""
    from xforms.primitives.control import loops
    from programs import checked_grad_loop
    monkeypatch.setattr(loops, "CHECKPOINT_SLOTS", 2)
    monkeypatch.setattr(loops, "SEGMENT_STEPS", 2)           # at most 4 inner iterations
    u = np.linspace(0.0, 1.0, 40)
    exe = _fresh(checked_grad_loop, u, 3)
    host = exe.source.split("def host")[1]
    assert "for _i" not in host and "raise RuntimeError" in host     # (after the launch)
    c = exe.launch_counts(u, 3)
    assert c["kernels"] == exe.launch_sites == 1 and c["host_waits"] == 1, c
    _check(exe, checked_grad_loop, u, 3)
    with pytest.raises(RuntimeError, match="the loop ran more than 4 iterations"):
        xf.jit(checked_grad_loop, backend="cpu")(u, 9)
    with pytest.raises(RuntimeError, match="the loop ran more than 4 iterations"):
        exe(u, 9)


def test_the_tiles_of_two_products_in_the_body_share_one_pool(monkeypatch):
    """The matmul kernel's tiles are one-dimensional shared arrays (indexed kk * BM + m), so
    a loop calling two products pools them: the larger kernel's bytes, not the sum (before:
    two-dimensional tiles, summed, refused past SHARED_MAX)."""
    import dataclasses
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.device import spec as spec_module
    monkeypatch.setattr(spec_module, "_spec", dataclasses.replace(rt.SIM_SPEC, block=16))

    def f(u, w):
        return lax.fori_loop(0, 2, lambda i, u: 0.5 * (xnp.tanh(u @ w) @ w.T) +
                             xnp.roll(u, 1), u)
    u, w = np.linspace(-1.0, 1.0, 12 * 8).reshape(12, 8), np.eye(8) * 0.5 + 0.01
    tiles = 2 * 4 * 8 * 8                 # (BK x BM + BK x BN float64 of the sim's 4 x 4 tile)
    monkeypatch.setattr(block_loop, "SHARED_MAX", tiles + 8)     # one kernel's, not two
    exe = _fresh(f, u, w)
    assert "as one block" in exe.source and exe.source.count("output tiles") >= 2
    assert exe.count_launches(u, w) == exe.launch_sites <= 2
    _check(exe, f, u, w)
