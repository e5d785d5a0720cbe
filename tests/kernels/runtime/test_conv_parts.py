"""xforms/kernels/runtime/conv.py splits a convolution's blocks over threads: each method gives
bitwise the same result in 1, 2 or 3 parts, on one or on all of Numba's threads (its blocks
are fixed by the sizes alone; the transposed method's per-block products are added in block
order), and the values of the NumPy definition.  Shapes are just large enough for several
blocks per method (the block sizes are compiled constants)."""
import numba
import numpy as np
import pytest

from xforms.kernels.runtime import conv as cr
from xforms.kernels.codegen import conv_geometry as geometry, conv_logical as logical
from xforms.primitives.conv import _conv_impl

# name: (lhs NCHW shape, rhs OIHW shape, padding, lhs dilation, groups, layouts, method)
CASES = {
    "small": ((6, 1, 30, 30), (8, 1, 3, 3), 0, 1, 1, ("NHWC", "HWIO", "NHWC"), cr.SMALL),
    "small_groups": ((3, 4, 30, 30), (4, 1, 3, 3), 1, 1, 4, ("NHWC", "HWIO", "NHWC"),
                     cr.SMALL),
    "im2col": ((2, 64, 32, 32), (8, 64, 3, 3), 0, 1, 1, ("NHWC", "HWIO", "NHWC"), cr.IM2COL),
    "im2col_groups": ((2, 64, 32, 32), (8, 32, 3, 3), 0, 1, 2, ("NHWC", "HWIO", "NCHW"),
                      cr.IM2COL),
    # the batch axis contiguous (a weight gradient's operand): partial sums per block
    "transposed": ((16, 16, 18, 18), (8, 16, 3, 3), 0, 1, 1, ("CHWN", "HWIO", "NHWC"),
                   cr.TRANSPOSED),
    "transposed_groups": ((16, 32, 18, 18), (8, 16, 3, 3), 0, 1, 2, ("CHWN", "HWIO", "NHWC"),
                          cr.TRANSPOSED),
    "scatter": ((3, 32, 16, 16), (32, 32, 3, 3), 2, 2, 1, ("NHWC", "HWIO", "NHWC"),
                cr.SCATTER),
    "scatter_nchw": ((3, 32, 16, 16), (32, 32, 3, 3), 2, 2, 1, ("NCHW", "HWIO", "NCHW"),
                     cr.SCATTER),
}


def _spec(layout, names):
    return tuple(layout.index(c) for c in names)


def _setup(name):
    xs, ws, pad, ld, G, (lx, lw, lo), method = CASES[name]
    rng = np.random.default_rng(3)
    x = rng.normal(size=tuple(xs["NCHW".index(c)] for c in lx))
    w = rng.normal(size=tuple(ws["OIHW".index(c)] for c in lw))
    dn = (_spec(lx, "NCHW"), _spec(lw, "OIHW"), _spec(lo, "NCHW"))
    params = dict(window_strides=(1, 1), padding=((pad, pad), (pad, pad)),
                  lhs_dilation=(ld, ld), rhs_dilation=(1, 1), dimension_numbers=dn,
                  feature_group_count=G, batch_group_count=1)
    want = _conv_impl(x, w, **params)[0]
    plan = ()
    for shape, spec in zip((x.shape, w.shape, want.shape), dn):
        sizes, strides = logical(shape, spec)
        plan += sizes + strides
    return x, w, want, plan + geometry(params), method


def _run(x, w, shape, plan, parts, dtype):
    out = np.full(shape, np.nan, dtype)
    cr.conv_run(np.ascontiguousarray(x, dtype).reshape(-1),
                np.ascontiguousarray(w, dtype).reshape(-1), out.reshape(-1), plan + (parts,))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_split_gives_the_same_bits(name):
    x, w, want, plan, method = _setup(name)
    chosen, _, blocks, _ = cr.choose(plan + (0,))
    assert chosen == method and blocks * CASES[name][4] >= 3     # several units
    np.testing.assert_allclose(_run(x, w, want.shape, plan, 1, np.float64), want,
                               rtol=1e-12, atol=1e-12)
    first = _run(x, w, want.shape, plan, 1, np.float32)
    np.testing.assert_allclose(first, want, rtol=2e-4, atol=2e-4)
    for parts, threads in ((2, None), (3, None), (0, None), (2, 1)):
        prev = numba.get_num_threads()
        numba.set_num_threads(threads or prev)
        try:
            got = _run(x, w, want.shape, plan, parts, np.float32)
        finally:
            numba.set_num_threads(prev)
        np.testing.assert_array_equal(got, first)


def test_threads_for():
    """One thread below PARALLEL_MIN_MACS; above, the fewer of BLAS's and Numba's."""
    small = cr.PARALLEL_MIN_MACS - 1
    assert cr.threads_for(small, 2) == 1
    assert cr.threads_for(cr.PARALLEL_MIN_MACS, 1) == 1
    assert cr.threads_for(cr.PARALLEL_MIN_MACS, 64) == numba.get_num_threads()


def test_balanced_blocks():
    """Blocks of at most `per`, none empty, their count even where that fits (the CNN's
    second layer at batch 32: 352 output lines, 82 per block -> 6 blocks of 59)."""
    for n in range(1, 80):
        for per in range(1, n + 2):
            size = cr._balanced(n, per)
            blocks = -(-n // size)
            assert size <= per and (blocks - 1) * size < n
    assert cr._balanced(352, 82) == 59 and cr._balanced(3872, 910) == 646
    assert cr._balanced(5, 5) == 5 and cr._balanced(4, 3) == 2
