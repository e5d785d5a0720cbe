"""xforms/kernels/numba_fixes/ssa.py and liveness.py: the SSA reconstruction and block liveness
installed in Numba give what Numba's own give (statement for statement, name for name), and
the SSA pass is much faster on a long kernel with many reassigned names (the shape of a
peeled, fused kernel)."""
import numpy as np
import pytest
from numba import njit
from numba.core import ssa
from numba.core.compiler import run_frontend

from xforms.kernels.build import codecache  # noqa: F401  (applies the patches)
from xforms.kernels.numba_fixes import patches as numba_patches, ssa as numba_ssa


def _loops(a, n):
    s = 0.0
    i = 0
    while i < n:
        t = a[i] * 2.0
        if t > 1.0:
            s += t
        else:
            s -= t
        i += 1
    i = 0
    while i < n:
        t = a[i] + s
        a[i] = t
        i += 1
    for j in range(n):
        s = s + a[j]
        if s > 100.0:
            break
    return s


def _branches(x, flag):
    y = x
    if flag:
        y = x + 1
        z = y * 2
    else:
        z = y - 1
    while z > 0:
        z -= 3
        if z == 5:
            y = 0
            continue
        y += z
    return y + z


def _big_source(loops=40):
    """A kernel-like function: loops over one counter, each with scalars assigned in
    three copies (as stencil peeling emits them)."""
    lines = ["def big(A, B, n):", "    acc = 0.0"]
    for k in range(loops):
        for part in range(3):
            lines += ["    i0 = 0", "    while i0 < n:",
                      f"        v{k} = A[i0] * {k + 1}.0 + {part}.0",
                      f"        w{k} = v{k} * v{k} - A[i0]",
                      f"        B[i0] += w{k}", f"        acc += w{k}", "        i0 += 1"]
    lines.append("    return acc")
    scope = {}
    exec("\n".join(lines), scope)
    return scope["big"]


def _dump(blocks):
    return [f"{label}: {stmt}" for label in sorted(blocks) for stmt in blocks[label].body]


def _both():
    """(Numba's _run_ssa, ours), fresh from the module of each."""
    original = numba_patches.ORIGINALS.get((ssa, "_run_ssa"))
    if original is None:
        pytest.skip("the patch is not installed on this Numba")
    return original, numba_ssa.make_run_ssa(ssa)


def test_patch_is_installed():
    assert (ssa, "_run_ssa") in numba_patches.ORIGINALS


@pytest.mark.parametrize("fn", [_loops, _branches, _big_source(6)])
def test_same_ir_as_numba(fn):
    original, patched = _both()
    ir_a, ir_b = run_frontend(fn), run_frontend(fn)
    want = original(ir_a.blocks)
    got = patched(ir_b.blocks)
    assert _dump(got) == _dump(want)
    assert all(got[k] is not ir_b.blocks[k] for k in got)     # new blocks, as Numba returns


def test_compiled_results_unchanged():
    a = np.linspace(0.0, 1.0, 7)
    assert njit(_loops)(a.copy(), 7) == _loops(a.copy(), 7)
    assert njit(_branches)(10, True) == _branches(10, True)
    assert njit(_branches)(10, False) == _branches(10, False)


def test_less_work_on_a_long_kernel(monkeypatch):
    """Ours rewrites a fraction of the statements Numba's pass rewrites on a kernel with many
    reassigned names (counted, not timed: a timing assertion fails on a loaded machine)."""
    original, patched = _both()
    fn = _big_source(30)
    visited = []
    block_pass = ssa._run_ssa_block_pass

    def counting(states, blk, handler):
        visited[-1] += len(blk.body)
        return block_pass(states, blk, handler)

    monkeypatch.setattr(ssa, "_run_ssa_block_pass", counting)
    results = []
    for run in (original, patched):
        visited.append(0)
        results.append(_dump(run(run_frontend(fn).blocks)))
    assert results[0] == results[1]
    print(f"SSA of a 30-loop kernel: statements rewritten, Numba {visited[0]}, ours {visited[1]}")
    assert 0 < visited[1] < visited[0] / 10, visited


# ---- xforms/kernels/numba_fixes/liveness.py ---------------------------------------------------------------

@pytest.mark.parametrize("fn", [_loops, _branches, _big_source(6)])
def test_live_map_same_as_numba(fn):
    from numba.core import analysis
    from numba.core.analysis import compute_cfg_from_blocks, compute_use_defs
    original = numba_patches.ORIGINALS.get((analysis, "compute_live_map"))
    if original is None:
        pytest.skip("the patch is not installed on this Numba")
    blocks = ssa._run_ssa(run_frontend(fn).blocks)
    cfg = compute_cfg_from_blocks(blocks)
    ud = compute_use_defs(blocks)
    want = original(cfg, blocks, ud.usemap, ud.defmap)
    got = analysis.compute_live_map(cfg, blocks, ud.usemap, ud.defmap)
    assert got == want and list(got) == list(want)
    assert any(want.values())


@pytest.mark.parametrize("fn", [_loops, _branches])
def test_scope_fixup_same_as_numba(fn):
    from numba.core import ir, ir_utils
    original = numba_patches.ORIGINALS.get((ir_utils, "fixup_var_define_in_scope"))
    if original is None:
        pytest.skip("the patch is not installed on this Numba")
    results = []
    for run in (original, ir_utils.fixup_var_define_in_scope):
        blocks = run_frontend(fn).blocks
        labels = sorted(blocks)
        for label in labels[1::2]:             # a second scope, as some passes leave behind
            blocks[label].scope = ir.Scope(None, blocks[label].loc)
        run(blocks)
        results.append([sorted(blocks[k].scope.localvars._con) for k in labels])
    assert results[0] == results[1]


# ---- the same two fixes on numba-cuda's own compiler core (patches.apply_cuda) ---------------
def _cuda_core():
    pytest.importorskip("numba_cuda", reason="numba-cuda is not installed")
    numba_patches.apply_cuda()
    from numba.cuda.compiler import run_frontend as cuda_frontend
    from numba.cuda.core import analysis as cuda_analysis, ssa as cuda_ssa
    return cuda_frontend, cuda_ssa, cuda_analysis


@pytest.mark.parametrize("fn", [_loops, _branches, _big_source(6)])
def test_cuda_core_ssa_and_live_map_same_as_numba_cudas(fn):
    """numba-cuda's SSA pass and liveness, replaced by ours (the PTX check's typing and
    lowering: a sixth less CPU), give its own IR, name for name, and its live sets."""
    frontend, cssa, canalysis = _cuda_core()
    original = numba_patches.ORIGINALS.get((cssa, "_run_ssa"))
    live0 = numba_patches.ORIGINALS.get((canalysis, "compute_live_map"))
    assert original is not None and live0 is not None, "not installed on numba-cuda's core"
    assert cssa._run_ssa is not original and canalysis.compute_live_map is not live0
    want, got = original(frontend(fn).blocks), cssa._run_ssa(frontend(fn).blocks)
    assert _dump(got) == _dump(want)
    cfg = canalysis.compute_cfg_from_blocks(got)
    ud = canalysis.compute_use_defs(got)
    live = canalysis.compute_live_map(cfg, got, ud.usemap, ud.defmap)
    assert live == live0(cfg, got, ud.usemap, ud.defmap) and any(live.values())
