"""xforms/kernels/cpu/numba/outline_prange.py: a large kernel's prange nests move into functions of their own
(only they go through Numba's parfors passes); the results do not change."""
import numpy as np
import pytest

from xforms.kernels.cpu import backend as cpu
from xforms.kernels.cpu.numba import outline_prange


KERNEL = '''def kernel(A, B, C):
    n = A.shape[0]
    # a comment stays where it was
    for ch in prange(n):
        i0 = ch
        B[i0] = A[i0] * 2.0
    s = 0.0
    for ch in prange(n):
        s += A[ch]
    C[0] = s
    for ch in prange(n):
        t = A[ch]
    C[1] = t
    return B
'''


def test_moves_a_nest_and_passes_what_it_reads():
    out, names = outline_prange.outline(KERNEL)
    assert names == ["_xf_nest0"]
    assert "def _xf_nest0(A, B, n):\n    for ch in prange(n):" in out
    assert "    _xf_nest0(A, B, n)\n" in out
    assert "    # a comment stays where it was\n" in out
    # the second nest's reduction is `s += ...` on a name assigned before it: passed in,
    # but its result is read later, so that nest stays
    assert "    s = 0.0\n    for ch in prange(n):\n        s += A[ch]" in out
    # a nest writing `t` that the kernel reads afterwards stays too
    assert "    for ch in prange(n):\n        t = A[ch]\n    C[1] = t" in out
    [text] = outline_prange.texts(out, ["_xf_nest0"])
    assert text.startswith("def _xf_nest0(") and "B[i0] = A[i0] * 2.0" in text


def test_runs_like_the_original():
    ns = {"prange": range}
    out, _ = outline_prange.outline(KERNEL)
    exec(compile(out, "<outlined>", "exec"), ns)
    ref = {"prange": range}
    exec(compile(KERNEL, "<orig>", "exec"), ref)
    a = np.arange(5.0)
    b1, c1, b2, c2 = np.zeros(5), np.zeros(2), np.zeros(5), np.zeros(2)
    ns["kernel"](a, b1, c1)
    ref["kernel"](a, b2, c2)
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_array_equal(c1, c2)


def test_no_prange_no_change():
    src = "def kernel(A):\n    for i in range(3):\n        A[i] = 1.0\n    return A\n"
    assert outline_prange.outline(src) == (src, [])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jitted_kernel_outlined_same_result(monkeypatch, dtype):
    import xforms as xf
    import xforms.numpy as xnp
    if not cpu._threads_available():
        pytest.skip("one thread: no prange loops are emitted")
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path's outlining: the direct
    x = np.linspace(-2, 2, 1 << 20).astype(dtype)       # path takes chunked sin/cos since s22)

    def f(x):
        return xnp.sin(x) * xnp.cos(x) + xnp.exp(-x * x)

    closed = xf.jit(f)._trace((x,), {})[0]
    ref = np.asarray(xf.jit(f)(x))
    assert "_xf_nest" not in cpu._prepare(closed, {}).source
    monkeypatch.setattr(cpu, "PARFOR_MAX_COST", 10)   # every prange kernel is "large"
    prep = cpu._prepare(closed, {})
    assert "_xf_nest0(" in prep.source and "__xforms_nests__" in prep.source
    from xforms.kernels.build import codecache
    got = np.asarray(xf.jit(lambda x: f(x) * 1.5)(x)) / 1.5   # a fresh compile
    nested = [m for m in codecache._modules.values() if getattr(m, "__xforms_nests__", ())]
    assert any(hasattr(getattr(m, "_xf_nest0"), "py_func") for m in nested)  # compiled
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(got, np.sin(x) * np.cos(x) + np.exp(-x * x), rtol=10 * tol,
                               atol=10 * tol)


SERIAL = '''def kernel(A, B):
    n = A.shape[0]
    i = 0
    while i < n:
        B[i] = A[i] + 1.0
        i += 1
    for j in range(n):
        B[j] *= 2.0
    s = 0.0
    for j in range(n):
        s += B[j]
    B[0] = s
    return B
'''


def test_loops_split_into_parts():
    out, names = outline_prange.outline(SERIAL, loops=True)
    # straight-line statements go with the loops: the whole body is one part
    assert names == ["_xf_part0"]
    assert "def _xf_part0(A, B):\n    n = A.shape[0]" in out
    assert "def kernel(A, B):\n    _xf_part0(A, B)\n    return B" in out
    # at most 6 lines a part: two parts, the first returning `n`, which the second reads
    out, names = outline_prange.outline(SERIAL, loops=True, max_lines=6)
    assert names == ["_xf_part0", "_xf_part1"]
    assert "        i += 1\n    return n\n" in out
    assert "    n = _xf_part0(A, B)\n    _xf_part1(B, n)\n    return B" in out
    for text in (out, outline_prange.outline(SERIAL, loops=True, max_lines=3)[0]):
        ns, ref = {}, {}
        exec(compile(text, "<split>", "exec"), ns)
        exec(compile(SERIAL, "<orig>", "exec"), ref)
        a = np.arange(4.0)
        np.testing.assert_array_equal(ns["kernel"](a, np.zeros(4)), ref["kernel"](a, np.zeros(4)))


MAYBE = '''def kernel(A, B):
    t = 1.0
    for j in range(A.shape[0]):
        if A[j] > 0:
            t = A[j]
    u = t * 2.0
    for j in range(A.shape[0]):
        B[j] = u
    return B
'''


def test_a_name_the_part_may_not_assign_is_passed_in():
    # `t` may keep its value from before the loop: the part that returns it takes it
    out, names = outline_prange.outline(MAYBE, loops=True, max_lines=3)
    assert "def _xf_part0(A, t):" in out and "    t = _xf_part0(A, t)\n" in out
    ns, ref = {}, {}
    exec(compile(out, "<split>", "exec"), ns)
    exec(compile(MAYBE, "<orig>", "exec"), ref)
    for a in (np.array([-1.0, 3.0]), np.array([-1.0, -2.0])):
        np.testing.assert_array_equal(ns["kernel"](a, np.zeros(2)), ref["kernel"](a, np.zeros(2)))


def test_jitted_kernel_split_same_result(monkeypatch):
    import xforms as xf
    import xforms.numpy as xnp
    from xforms import nn
    a = np.random.default_rng(0).normal(size=(30, 20))

    def f(a):
        return nn.softmax(xnp.tanh(a), axis=1) * xnp.sum(a ** 2, axis=0)

    ref = np.asarray(xf.jit(f)(a))
    monkeypatch.setattr(cpu, "SPLIT_LINES", 10)
    closed = xf.jit(f)._trace((a,), {})[0]
    assert "__xforms_parts__" in cpu._prepare(closed, {}).source
    got = np.asarray(xf.jit(lambda a: f(a) * 1.5)(a)) / 1.5
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=1e-14)


def test_kernel_and_parts_carry_no_unused_wrappers(monkeypatch):
    # the kernel is called through its dispatcher (no C-ABI wrapper needed), the parts only
    # from the kernel (no Python wrapper either): Numba builds neither
    import xforms as xf
    import xforms.numpy as xnp
    from xforms.kernels.build import codecache
    monkeypatch.setattr(cpu, "SPLIT_LINES", 10)
    monkeypatch.setattr(codecache, "cache_enabled", lambda: False)   # compiled here, not loaded
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")    # (Numba's wrappers: not the LLVM path)
    a = np.random.default_rng(1).normal(size=(7, 5))
    np.asarray(xf.jit(lambda a: xnp.tanh(a) * 2.71 - xnp.sum(a, axis=0))(a))
    mod = next(m for m in reversed(list(codecache._modules.values()))
               if getattr(m, "__xforms_parts__", ()))
    kernels = [d for d in codecache._dispatchers.values() if d.py_func is mod.kernel]
    part = getattr(mod, mod.__xforms_parts__[0])
    for disp, wrappers in [(kernels[0], ("cfunc",)), (part, ("cfunc", "cpython"))]:
        [cres] = disp.overloads.values()
        for w in wrappers:
            name = getattr(cres.fndesc, f"llvm_{w}_wrapper_name")
            assert cres.library.get_pointer_to_function(name) == 0, (disp, w)
    assert cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name) != 0


def test_straight_line_kernel_skips_the_analysis(monkeypatch):
    """A long kernel without a top-level loop (the 300-op chain's hvp: 4,782 lines) has
    nothing to move: it is returned before any per-statement analysis (which took ~0.2 CPU s
    there for nothing)."""
    def no_analysis(*a, **k):
        raise AssertionError("analysed a kernel with no loop")
    monkeypatch.setattr(outline_prange, "_groups", no_analysis)
    src = "def kernel(a, b):\n" + "".join(f"    a = a * {i}.0 + b\n" for i in range(3000)) \
        + "    return a\n"
    assert outline_prange.outline(src, loops=True) == (src, [])
