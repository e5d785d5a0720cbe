"""The cumulative kernels on the CUDA simulator (the parallel scan along the last axis and for
few long lines, else one thread per line) against NumPy, and the sort kernel against eager
evaluation."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax
import xforms.numpy as xnp
from xforms.kernels.cuda import runtime as rt

NP = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum, "cummin": np.minimum,
      "cumlogsumexp": np.logaddexp}


def _ref(name, x, axis, reverse):
    x = np.flip(x, axis) if reverse else x
    out = NP[name].accumulate(x, axis=axis, dtype=x.dtype)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cumulative_kernels(dtype):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(dtype)
    x[0, 1, 2] = np.nan
    combos = [(n, ax, rv) for n in NP for ax in (0, 1, 2) for rv in (False, True)]
    outs = xf.jit(lambda x: [getattr(lax, n)(x, ax, rv) for n, ax, rv in combos],
                  backend="cuda")(x)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for (n, ax, rv), o in zip(combos, outs):
        np.testing.assert_allclose(np.asarray(o), _ref(n, x, ax, rv), rtol=tol,
                                   equal_nan=True, err_msg=f"{n} axis={ax} reverse={rv}")


def test_cumsum_grad_on_cuda():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    g = xf.jit(xf.grad(lambda x: (lax.cumsum(x, 1) ** 2).sum()), backend="cuda")(x)
    want = np.flip(np.cumsum(np.flip(2 * np.cumsum(x, 1), 1), 1), 1)
    np.testing.assert_allclose(np.asarray(g), want)


def test_sort_kernel_orders_like_the_cpu():
    """Rank sort (xforms/kernels/ops/sorting.py): NaN last, ties stable, two keys, complex
    keys by (real, imag), other axes, and what is built on sort (argsort, median, top_k)."""
    x = np.array([[3.0, np.nan, 1.0, 3.0, -0.5, 1.0], [2.0, 2.0, np.nan, np.nan, -1.0, 0.0]])
    z = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 - 1j, 2 + 0j])

    def f(x, z):
        return (lax.sort(x), lax.sort(x, dimension=0), lax.sort((x, -x), num_keys=1),
                lax.sort((x[0], x[1], x[1] * 2), num_keys=2), lax.sort(z),
                xnp.argsort(x, axis=1), xnp.median(x[:, [0, 2, 3, 4]], axis=1),
                lax.top_k(x[1], 3), lax.sort(np.array([3, -2, 7, 0], np.int32)))
    got, want = xf.jit(f, backend="cuda")(x, z), f(x, z)
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert "sort along axis" in xf.jit(f, backend="cuda").lower(x, z).as_text()


def test_sort_gradient_on_cuda():
    x = np.array([0.3, -1.2, 2.5, 0.7])
    loss = lambda x: xnp.sum(lax.sort(x) * np.arange(1.0, 5.0))          # noqa: E731
    g = xf.jit(xf.grad(loss), backend="cuda")(x)
    np.testing.assert_allclose(np.asarray(g), xf.grad(loss)(x), rtol=1e-14)


# ---- the bitonic network (ops/bitonic.py) ---------------------------------------------------
# Sort tiles hold T = 4 x spec.block positions: 32 on the simulator (blocks of 8 threads),
# 1024 on a GPU; lines are sized by T so that both take global merge steps.
T = 4 * rt.device_spec().block
LENGTHS = (2, 7, T - 1, T, T + 1, 2 * T, 3 * T + 4)
FULL = ("bool", "int32", "uint64", "float64", "complex64")
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]


@pytest.fixture
def bitonic(monkeypatch):
    """Every line of 2 or more through the bitonic network, none by rank."""
    from xforms.kernels.ops import sorting
    monkeypatch.setattr(sorting, "RANK_SORT_MAX_N", 1)


def _on_cuda(f, *args):
    """f(*args) jitted for CUDA, checking that its sorts took the bitonic network."""
    jf = xf.jit(f, backend="cuda")
    assert "bitonic tiles" in jf.lower(*args).as_text()
    return jf(*args)


def _values(dtype, n, rng):
    """Keys of `dtype` with many ties (and NaN, -0.0, extremes for floats)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(0, 5, n).astype(dt)
        x[::5] = info.max
        x[1::6] = info.min
        return x
    x = np.round(rng.normal(size=n), 0).astype(dt)
    x[::7] = np.nan
    x[2::9] = -0.0
    if dt.kind == "c":
        x = (x + 1j * np.round(rng.normal(size=n), 0)).astype(dt)
        x[3::8] = complex(np.nan, 1.0)
    return x


@pytest.mark.parametrize("dtype", DTYPES)
def test_bitonic_sort_orders_every_dtype_like_the_cpu(bitonic, dtype):
    """One key with a payload and two keys, lines of every length, along either axis; the
    eager NumPy implementation (stable, NaN last, complex by (real, imag)) is the reference."""
    rng = np.random.default_rng(1)
    # every length for a few dtypes; for the others (the same kernels' text with another
    # type: the simulator's time is what is saved) one tile, two and several merges
    lengths = LENGTHS if dtype in FULL else (2, T + 1, 3 * T + 4)
    xs = [_values(dtype, n, rng) for n in lengths]
    grid = _values(dtype, 3 * 40, rng).reshape(3, 40)

    def f(grid, *xs):
        one = [lax.sort((x, xnp.arange(x.shape[0])), num_keys=1) for x in xs]
        two = [lax.sort((x[::-1], x, -xnp.arange(x.shape[0])), num_keys=2) for x in xs]
        return one, two, lax.sort(grid, dimension=0), lax.sort((grid.T, grid.T), num_keys=1,
                                                               dimension=0), lax.sort(grid)
    got = xf.jit(f, backend="cuda")(grid, *xs)
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(f(grid, *xs))):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert f"merge {4 * T}, stride {2 * T}" in xf.jit(f, backend="cuda").lower(grid,
                                                                               *xs).as_text()


def test_bitonic_sort_keeps_jaxs_order_of_zeros_and_nans(bitonic):
    # jax 0.10.2 (x64): jnp.argsort([0., -0., 1., -0., 0., nan, -nan, -1.]) == [7 0 1 3 4 2 5 6]
    # (-0.0 and 0.0 equal, so in their input order; NaNs of either sign last)
    x = np.array([0.0, -0.0, 1.0, -0.0, 0.0, np.nan, -np.nan, -1.0])
    jax_order = np.array([7, 0, 1, 3, 4, 2, 5, 6])
    long = np.tile(x, T // 4 + 1)                          # > T: global merge steps too
    want_long = np.concatenate([np.flatnonzero(long == -1.0), np.flatnonzero(long == 0.0),
                                np.flatnonzero(long == 1.0), np.flatnonzero(long != long)])
    got = _on_cuda(lambda a, b: (xnp.argsort(a), xnp.argsort(b)), x, long)
    np.testing.assert_array_equal(np.asarray(got[0]), jax_order)
    np.testing.assert_array_equal(np.asarray(got[1]), want_long)


@pytest.mark.parametrize("tiles, extra, launches", [(0, 1, 1), (1, 0, 1), (1, 1, 3), (3, 4, 6),
                                                     (4, 0, 6)])
def test_bitonic_sort_launches(bitonic, tiles, extra, launches):
    """1 tile launch, then per merge of size k > T: log2(k / T) global steps and a tile launch
    (n = tiles x T + extra); a line of one is a copy by the rank kernel.  4T: first tiles,
    a global step (3 launches), a merge's tiles, the last tiles with the gather."""
    n = tiles * T + extra
    x = np.random.default_rng(2).normal(size=n)
    f = xf.jit(lambda x, y: lax.sort((x, y), num_keys=1), backend="cuda")
    exe = f.lower(x, -x)._exe
    assert exe.count_launches(x, -x) == exe.launch_sites == launches
    # merge sizes and strides are arguments: at most four kernels to compile
    assert exe.source.count("\ndef k") == min(launches, 4)
    out = f(x, -x)
    np.testing.assert_array_equal(np.asarray(out[0]), np.sort(x))
    np.testing.assert_array_equal(np.asarray(out[1]), -np.sort(x))


def test_top_k_and_argsort_of_long_lines(bitonic):
    x = np.round(np.random.default_rng(3).normal(size=(2, 50)), 1)
    vals, idx = _on_cuda(lambda x: lax.top_k(x, 5), x)
    want_vals, want_idx = lax.top_k(x, 5)
    np.testing.assert_array_equal(np.asarray(vals), np.asarray(want_vals))
    np.testing.assert_array_equal(np.asarray(idx), np.asarray(want_idx))
    got = _on_cuda(lambda x: xnp.argsort(x, axis=0), x.T)
    np.testing.assert_array_equal(np.asarray(got), np.argsort(x.T, axis=0, kind="stable"))


def test_bitonic_tiles_fit_shared_memory(bitonic, monkeypatch):
    """Tiles shrink so that positions and keys fit the static shared memory (here made
    small: 32 positions of an int32 index and two complex128 keys need 1152 bytes)."""
    from xforms.kernels.ops import bitonic as net
    monkeypatch.setattr(net, "SHARED_BYTES", 600)
    z = _values("complex128", 40, np.random.default_rng(4))
    f = lambda z: lax.sort((z, z.conj(), xnp.arange(40)), num_keys=2)      # noqa: E731
    got = _on_cuda(f, z)
    assert "bitonic tiles of 16" in xf.jit(f, backend="cuda").lower(z).as_text()
    for g, w in zip(got, f(z)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


# ---- the parallel scan (ops/prefix_scan.py) --------------------------------------------------
# Chunks of C = SCAN_GRAIN x spec.block: a grain of 2 makes chunks of 16 on the simulator, so
# a line of C^2 + C + 3 = 275 takes three levels (275 -> 18 chunk sums -> 2 -> 1); 512 on a GPU.
C = 2 * rt.device_spec().block
SCAN_OPS = {"i": ("cumsum", "cumprod", "cummax", "cummin"), "u": ("cumsum", "cummax", "cummin"),
            "f": tuple(NP), "c": ("cumsum", "cumprod")}


@pytest.fixture
def parallel(monkeypatch):
    from xforms.kernels.ops import cumulative, prefix_scan
    monkeypatch.setattr(cumulative, "PARALLEL_SCAN_MIN_N", 1)
    monkeypatch.setattr(prefix_scan, "SCAN_GRAIN", 2)


def _scan_values(dtype, shape, rng):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return rng.integers(0, 4 if dt.kind == "u" else 3, shape).astype(dt) - (
            0 if dt.kind == "u" else dt.type(1))
    x = 1.0 + 0.05 * rng.normal(size=shape)               # products stay near 1
    if dt.kind == "c":
        x = x + 0.05j * rng.normal(size=shape)
    return x.astype(dt)


def _scan_tol(dtype):
    """Sums in another order than NumPy's serial one differ by rounding: a few ulps times the
    length for float32/complex64, likewise for float64; integers exactly (wrapping alike)."""
    kind, size = np.dtype(dtype).kind, np.dtype(dtype).itemsize
    if kind in "iub":
        return 0
    return 2e-5 if size == 4 or (kind == "c" and size == 8) else 1e-12


# one dtype per kind and width class (the kernels' text differs only in the type: the
# simulator's minutes go where a dtype can differ -- wrapping, float32 rounding, complex)
@pytest.mark.parametrize("dtype", ["int8", "int64", "uint32", "float32", "float64",
                                   "complex64"])
def test_parallel_scan_of_every_dtype(parallel, dtype):
    rng = np.random.default_rng(5)
    long = C * C + C + 3 if dtype in FULL + ("float32",) else C + 1     # 3 levels, or 2
    lines = [_scan_values(dtype, n, rng) for n in sorted({1, C + 1, long})]
    grid = _scan_values(dtype, (3, 40, 2), rng)
    names = SCAN_OPS[np.dtype(dtype).kind]

    def f(grid, *xs):
        return ([getattr(lax, nm)(x, 0, k % 2 == 1) for nm in names
                 for k, x in enumerate(xs)],
                [getattr(lax, nm)(grid, 1, rv) for nm in names for rv in (False, True)])
    jf = xf.jit(f, backend="cuda")
    assert f"parallel scan of 1 line(s) of {long}" in jf.lower(grid, *lines).as_text()
    got = jf(grid, *lines)
    want = ([_ref(nm, x, 0, k % 2 == 1) for nm in names for k, x in enumerate(lines)],
            [_ref(nm, grid, 1, rv) for nm in names for rv in (False, True)])
    for g, w in zip(xf.tree_util.tree_leaves(got), xf.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=_scan_tol(dtype),
                                   atol=_scan_tol(dtype))


@pytest.mark.parametrize("n2, n1, n0, launches", [(0, 0, 2, 1), (0, 1, 0, 1), (0, 1, 1, 3),
                                                   (1, 0, 0, 3), (1, 0, 1, 5), (1, 2, 28, 5)])
def test_parallel_scan_lengths_and_launches(parallel, n2, n1, n0, launches):
    """2 levels - 1 launches per scan (chunk scans, then each level's sums added); NaN kept
    by cummax as lax.cummax keeps it; powers of two and not.  Float64 sums in another order
    than NumPy's: within a few ulps of the sum of magnitudes (atol), else rtol.
    n = n2 C^2 + n1 C + n0."""
    n = n2 * C * C + n1 * C + n0
    x = np.random.default_rng(6).normal(size=n)
    x[n // 3] = np.nan
    # every primitive both ways on the longest line; cumsum both ways on the others (the
    # simulator's time: the launch structure is the same for every primitive)
    combos = [(nm, rv) for nm in (NP if n0 == 28 else ("cumsum",)) for rv in (False, True)]
    jf = xf.jit(lambda x: [getattr(lax, nm)(x, 0, rv) for nm, rv in combos], backend="cuda")
    exe = jf.lower(x)._exe
    assert exe.count_launches(x) == exe.launch_sites == launches * len(combos)
    for (nm, rv), got in zip(combos, jf(x)):
        np.testing.assert_allclose(np.asarray(got), _ref(nm, x, 0, rv), rtol=1e-12,
                                   atol=1e-12, equal_nan=True, err_msg=f"{nm} reverse={rv}")


# ---- the parallel scan along an axis that is not the last ------------------------------------
# Lines (o, i) of shape outer + (n,) + inner lie `inner` apart: blocks scan tiles of W
# neighbouring lines (W = 4 here: the simulator's warp), consecutive threads on consecutive
# lines.  (37, 13) along 0: partial tiles of 13 = 4 + 4 + 4 + 1 lines, chunks of 16 / 4 = 4
# positions, 2 levels; (2, 70, 3) along 1: 3 of 4 lanes live, 70 -> 18 sums -> 2 -> 1, 3 levels.
AXIS_CASES = [((0, 5), 0), ((1, 3), 0), ((9, 4), 0), ((37, 13), 0), ((2, 70, 3), 1)]


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "float64", "complex128"])
def test_parallel_scan_along_a_non_last_axis(parallel, dtype):
    rng = np.random.default_rng(7)
    xs = [_scan_values(dtype, shape, rng) for shape, _ in AXIS_CASES]
    names = SCAN_OPS[np.dtype(dtype).kind]
    combos = [(nm, k, rv) for nm in names for k in range(len(xs)) for rv in (False, True)]

    def f(*xs):
        return [getattr(lax, nm)(xs[k], AXIS_CASES[k][1], rv) for nm, k, rv in combos]
    jf = xf.jit(f, backend="cuda")
    assert "tiles of 4 lines" in jf.lower(*xs).as_text()
    for (nm, k, rv), got in zip(combos, jf(*xs)):
        np.testing.assert_allclose(np.asarray(got), _ref(nm, xs[k], AXIS_CASES[k][1], rv),
                                   rtol=_scan_tol(dtype), atol=_scan_tol(dtype),
                                   err_msg=f"{nm} of {xs[k].shape} reverse={rv}")


@pytest.mark.parametrize("shape, axis, launches", [((9, 4), 0, 3), ((4, 4), 0, 1),
                                                   ((37, 13), 0, 3), ((2, 70, 3), 1, 5)])
def test_parallel_scan_along_a_non_last_axis_launches(parallel, shape, axis, launches):
    """2 levels - 1 launches, the levels counted in chunks of C / W positions."""
    x = np.random.default_rng(8).normal(size=shape)
    jf = xf.jit(lambda x: lax.cummax(x, axis), backend="cuda")
    exe = jf.lower(x)._exe
    assert exe.count_launches(x) == exe.launch_sites == launches
    np.testing.assert_array_equal(np.asarray(jf(x)), np.maximum.accumulate(x, axis))


def _addresses(source, loop, read, var, values):
    """The global indices read by statement `read...` of the first kernel loop `loop...`
    of `source` at loop variable or tile element `var` = each of `values` (the loop body's
    index arithmetic up to that read, executed in Python from its first iteration)."""
    body = [ln.strip() for ln in source.split(loop, 1)[1].splitlines()[1:]]
    body = body[:next(k for k, s in enumerate(body) if s.startswith(read)) + 1]
    index = body[-1].split("= ", 1)[1].split("[", 1)[1].rsplit("]", 1)[0]
    stmts = [s for s in body[:-1] if "[" not in s and not s.startswith(("for ", "if "))]
    env, out = {"_g": 0, "_q": 0, "min": min}, []
    for v in values:
        env[var] = v
        for st in stmts:
            exec(st, env)
        out.append(eval(index, env))
    return out


@pytest.mark.parametrize("reverse", [False, True])
def test_parallel_scan_reads_neighbouring_addresses(parallel, reverse):
    """Consecutive threads of a chunk scan read consecutive elements (a tile's W = 4 lines
    at one position), and so do those adding the chunk sums -- not `inner` = 13 apart."""
    x = np.zeros((37, 13))
    src = xf.jit(lambda x: lax.cumsum(x, 0, reverse), backend="cuda").lower(x)._exe.source
    tile = _addresses(src, "for _g in range(", "_s[_e] = ", "_e", range(4))
    added = _addresses(src, "for _q in range(", "_b = ", "_q", range(4))
    for got in (tile, added):
        assert got == list(range(got[0], got[0] + 4)), got


def test_fuzz_small_array_paths_take_the_long_line_kernels():
    """The CUDA fuzz's `small_array_paths("cuda")` (tests/fuzz/checks.py) sends tiny arrays
    through what large ones take: the parallel scan, the bitonic network, inputs unpacked."""
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from fuzz.checks import small_array_paths
    x, y = np.arange(12.0).reshape(3, 4), np.array([3.0, 1.0, 2.0])

    def f(x, y):                                       # (a program compiled nowhere else)
        return lax.cumprod(x, 0, True), xnp.sort(y) - 1.0, x * 3.0 + y[1]
    jf = xf.jit(f, backend="cuda")
    with small_array_paths("cuda"):
        text, got = jf.lower(x, y).as_text(), jf(x, y)
    assert "parallel scan" in text and "bitonic" in text and "_IN0" not in text
    for g, w in zip(got, (_ref("cumprod", x, 0, True), np.sort(y) - 1.0, x * 3.0 + y[1])):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-14)


# ---- the last axis: always the parallel scan, a block sized to the line ------------------------
# (the default grain of 8: on the simulator blocks of 4 threads -- its warp -- for lines of up
# to 32, of 8 beyond, so chunks of 32 or 64 positions; a line of 1000 takes 16 chunks: 3 launches)
LAST = [(1, 1), (31, 1), (32, 1), (33, 1), (1000, 3)]       # (n, launches)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8"])
def test_last_axis_scans_in_parallel(dtype):
    rng = np.random.default_rng(9)
    xs = [_scan_values(dtype, (3 if n < 100 else 2, n), rng) for n, _ in LAST]
    names = ("cumsum", "cumprod", "cummax") + (("cumlogsumexp",) if dtype[0] == "f" else ())
    # (reversed lines for cumsum only: the simulator's time; the kernels read `reverse`
    # alike for every primitive)
    combos = [(nm, k, rv) for nm in names for k in range(len(xs))
              for rv in ((False, True) if nm == "cumsum" else (False,))]
    jf = xf.jit(lambda *xs: [getattr(lax, nm)(xs[k], 1, rv) for nm, k, rv in combos],
                backend="cuda")
    text = jf.lower(*xs).as_text()
    for x in xs[1:]:
        assert f"parallel scan of {x.shape[0]} line(s) of {x.shape[1]}," in text, x.shape
    for (nm, k, rv), got in zip(combos, jf(*xs)):
        np.testing.assert_allclose(np.asarray(got), _ref(nm, xs[k], 1, rv),
                                   rtol=_scan_tol(dtype), atol=_scan_tol(dtype),
                                   err_msg=f"{nm} of {xs[k].shape} reverse={rv}")


@pytest.mark.parametrize("n, launches", LAST)
def test_last_axis_scan_launches_and_reads_neighbouring_addresses(n, launches):
    x = np.random.default_rng(10).normal(size=(5, n))
    jf = xf.jit(lambda x: lax.cumsum(x, 1, True), backend="cuda")
    exe = jf.lower(x)._exe
    assert exe.count_launches(x) == exe.launch_sites == launches
    np.testing.assert_allclose(np.asarray(jf(x)), _ref("cumsum", x, 1, True), rtol=1e-12)
    if n > 1:       # consecutive threads load consecutive elements of the line
        got = _addresses(exe.source, "for _g in range(", "_s[_e] = ", "_e", range(4))
        assert got == list(range(got[0] - 3, got[0] + 1))[::-1], got
