"""A generated kernel calls the runtime's jitted helpers (copies, sorts, FFTs, LAPACK
drivers) by symbol (xforms/kernels/numba_fixes/unlinked.py `by_symbol`): their code is
not linked into the kernel's module and optimised again there (issue 35), and a kernel
loaded from Numba's disk cache in a new process binds the symbols before it runs."""
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# helper -> (program, its inputs' shapes, NumPy reference); each program's kernel calls
# the helper (checked on the generated source)
PROGRAMS = textwrap.dedent("""
    import numpy as np, xforms as xf, xforms.numpy as xnp
    from xforms import lax

    def inputs(shapes):
        r = np.random.default_rng(0)
        return [r.normal(size=s) for s in shapes]

    def spd(a):
        return a @ a.T + 4 * np.eye(len(a))

    def scan_ref(x):
        c, ys = x[0], []
        for a in x:
            ys.append(c)
            c = c * 0.5 + a
        return np.stack(ys)

    PROGRAMS = {
        "copy_into": (lambda x: lax.scan(lambda c, a: (c * 0.5 + a, c), x[0], x)[1],
                      [(5, 3, 4)], scan_ref),
        "transpose_into": (lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((2,), (1,)))),
                           [(4, 3, 2), (4, 2, 5)],
                           lambda x, y: np.einsum("kib,kbj->bij", x, y)),
        "argsort_stable": (lambda x: xnp.sort(x, axis=1), [(3, 17)],
                           lambda x: np.sort(x, axis=1, kind="stable")),
        "fft_r2c": (lambda x: xnp.fft.rfft(x), [(3, 16)], lambda x: np.fft.rfft(x)),
        "la_cholesky": (lambda a: xnp.linalg.cholesky(a @ a.T + 4 * xnp.eye(5)), [(5, 5)],
                        lambda a: np.linalg.cholesky(spd(a))),
    }
""")

CHILD = PROGRAMS + textwrap.dedent("""
    import json, sys
    import xforms.kernels.cpu.backend as cpu
    out = {}
    for name in sys.argv[1].split(","):
        f, shapes, ref = PROGRAMS[name]
        args = inputs(shapes)
        got = np.asarray(xf.jit(f, tiered=False)(*args))
        out[name] = [float(np.max(np.abs(got - ref(*args)))), got.tobytes().hex()]
    hits = misses = 0
    for exe in cpu._exes.values():
        st = getattr(getattr(exe.kernel, "kernel", exe.kernel), "stats", None)
        if st is not None:          # (None: the module runs as Python, XFORMS_DISABLE_JIT)
            hits += sum(st.cache_hits.values())
            misses += sum(st.cache_misses.values())
    print("RESULT", json.dumps({"hits": hits, "misses": misses, "out": out}))
""")


def _programs():
    ns = {}
    exec(PROGRAMS, ns)
    return ns


@pytest.mark.parametrize("helper", ["copy_into", "transpose_into", "argsort_stable",
                                    "fft_r2c", "la_cholesky"])
def test_kernel_calls_the_helper_by_symbol(helper, monkeypatch, tmp_path):
    # an empty cache: a kernel loaded from disk has no IR to read
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")   # (the Numba kernels' helpers: the direct
    import xforms as xf                               # path copies and reshapes itself)
    from xforms.kernels.cpu.backend import compile_cpu
    ns = _programs()
    f, shapes, ref = ns["PROGRAMS"][helper]
    args = ns["inputs"](shapes)
    exe = compile_cpu(xf.make_jaxpr(f)(*args), {"name": "t"})
    assert re.search(rf"\b{helper}\(", exe.source)
    kernel = getattr(exe.kernel, "kernel", exe.kernel)
    ir = "".join(kernel.inspect_llvm(sig) for sig in kernel.signatures)
    assert re.search(rf"^declare .*@\"?xforms_unlinked_\w*_{helper}_", ir, re.M)
    # the helper's body (Numba's mangled name carries its qualified name) is not there
    assert not re.findall(rf"^define .*@\"?_ZN\w*{len(helper)}{helper}", ir, re.M)
    np.testing.assert_allclose(np.asarray(exe(*args)[0]), ref(*args), rtol=1e-12, atol=1e-12)


def test_cached_kernels_find_their_helpers_in_a_new_process(tmp_path):
    # the second process loads every kernel from Numba's disk cache: the helpers' symbols
    # are bound (by the kernels' reload_init) before their code runs
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = dict(os.environ, XFORMS_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT,
               XFORMS_LLVM_KERNELS="0")                # (Numba's disk cache)
    env.pop("XFORMS_DISABLE_CACHE", None)
    names = "copy_into,transpose_into,argsort_stable,fft_r2c,la_cholesky"
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, str(script), names], env=env, capture_output=True,
                           text=True, timeout=900)
        assert p.returncode == 0, p.stderr[-3000:]
        line = next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT"))
        runs.append(json.loads(line.split(" ", 1)[1]))
    assert (runs[0]["hits"], runs[0]["misses"]) == (0, 5)
    assert (runs[1]["hits"], runs[1]["misses"]) == (5, 0)
    for name, (err, bits) in runs[1]["out"].items():
        assert err < 1e-12, name
        assert bits == runs[0]["out"][name][1], name


def test_helpers_run_as_python_without_jit(tmp_path):
    # XFORMS_DISABLE_JIT runs a generated module as plain Python: its helpers are the
    # runtime's own functions then, not the by-symbol intrinsics (not callable from Python)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = dict(os.environ, XFORMS_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT,
               XFORMS_DISABLE_JIT="1")
    p = subprocess.run([sys.executable, str(script), "copy_into,argsort_stable"], env=env,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT"))
    for name, (err, _) in json.loads(line.split(" ", 1)[1])["out"].items():
        assert err < 1e-12, name


def _scaler(k):
    import numba

    @numba.njit
    def scale(x):
        x *= k
    return scale


def test_two_closures_of_one_factory_are_not_called_by_one_symbol():
    """Issue #31's audit: a helper's symbol is its module and qualified name, which two
    closures of one factory share; the second closure called by symbol ran the first's
    code (x *= 3 multiplied by 2).  Such a dispatcher is now called as Numba links it, and
    `symbol_call` refuses it."""
    import numba
    from xforms.kernels.numba_fixes import unlinked
    twice, thrice = _scaler(2.0), _scaler(3.0)
    two, three = unlinked.by_symbol(twice), unlinked.by_symbol(thrice)

    @numba.njit
    def a(x):
        two(x)

    @numba.njit
    def b(x):
        three(x)
    x, y = np.ones(2), np.ones(2)
    a(x)
    b(y)
    assert x.tolist() == [2.0, 2.0] and y.tolist() == [3.0, 3.0]
    assert not unlinked.named(twice) and not unlinked.named(thrice)
    with pytest.raises(TypeError, match="not the function its module"):
        unlinked.symbol_call(thrice, (numba.float64[:],))
    from xforms.kernels.runtime import cpu_runtime
    assert unlinked.named(cpu_runtime.argsort_stable)
