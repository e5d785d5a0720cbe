"""xforms/kernels/numba_fixes/vector_width.py: xforms' kernels ask LLVM for 512-bit vectors where the CPU has
AVX-512; a user's own @njit code is compiled as Numba would; XFORMS_VECTOR_WIDTH chooses."""
import os
import re
import subprocess
import sys

import numba
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.build import codecache
from xforms.kernels.numba_fixes import vector_width

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ATTR = '"prefer-vector-width"='


def _loop():
    @numba.njit
    def scale(a, out):
        for i in range(a.shape[0]):
            out[i] = 2.5 * a[i] + 1.0
    return scale


def _attributes_of(dispatcher, name):
    """The attribute text of the LLVM function `name` (not its Python wrapper) as compiled."""
    text = dispatcher.inspect_llvm(dispatcher.signatures[0])
    define = next(line for line in text.splitlines() if line.startswith("define")
                  and name in line and "cpython" not in line and "cfunc" not in line)
    groups = re.findall(r"#(\d+)", define.split("{")[0])
    inline = define.split(")")[-1]
    return inline + " ".join(re.search(rf"^attributes #{g} = (.*)$", text, re.M).group(1)
                             for g in groups)


def _avx512():
    return "+avx512f" in numba.core.codegen.get_host_cpu_features().split(",")


@pytest.fixture
def width(monkeypatch):
    """The width this host's kernels use; on a host where that is LLVM's own choice (no
    AVX-512) the tests ask for 256 bits instead, so the mechanism is checked everywhere."""
    if vector_width.WIDTH is not None:
        return vector_width.WIDTH
    monkeypatch.setattr(vector_width, "_ATTRIBUTE", f'{ATTR}"256"')
    return 256


def test_modules_built_while_compiling_a_kernel_get_the_width(width):
    inside, outside = _loop(), _loop()
    x = np.arange(64.0)
    with vector_width.compiling():
        inside(x, np.empty_like(x))
    outside(x, np.empty_like(x))
    assert f'{ATTR}"{width}"' in _attributes_of(inside, "scale")
    assert ATTR not in _attributes_of(outside, "scale")     # the user's own code
    if width == 512 and _avx512():
        assert "zmm" in inside.inspect_asm(inside.signatures[0])


def test_a_jitted_function_kernel_has_the_width(width, monkeypatch):
    monkeypatch.setenv("XFORMS_DISABLE_CACHE", "1")     # compiled here: its LLVM IR is kept
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")      # (Numba's kernel, not the direct path's)
    f = xf.jit(lambda a: xnp.tanh(a) * 2.0 + 1.375)
    x = np.linspace(-3.0, 3.0, 1000)
    np.testing.assert_allclose(f(x), np.tanh(x) * 2.0 + 1.375, rtol=1e-13)
    kernels = [d for d in list(codecache._dispatchers.values()) if d.signatures]
    assert any(f'{ATTR}"{width}"' in d.inspect_llvm(d.signatures[0]) for d in kernels)


@pytest.mark.parametrize("setting,width", [("native", "None"), ("256", "256"),
                                           ("bogus", None)])
def test_the_environment_chooses(setting, width):
    env = dict(os.environ, XFORMS_VECTOR_WIDTH=setting)
    out = subprocess.run([sys.executable, "-c", "import xforms.kernels.numba_fixes.vector_width as v; "
                          "print(v.WIDTH)"], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    if width is None:                       # an unknown value means "auto"
        width = str(vector_width.WIDTH) if os.environ.get(
            "XFORMS_VECTOR_WIDTH", "auto") == "auto" else out
    assert out == width


def _many_outputs():
    """A loop that writes 16 arrays and reads 17: a few hundred runtime alias checks."""
    names = [f"a{i}" for i in range(16)]
    body = "".join(f"        {a}[i] = {a}[i] * v + {names[(k + 1) % 16]}[i]\n"
                   for k, a in enumerate(names))
    src = (f"def many({', '.join(names)}, x):\n    for i in range(x.shape[0]):\n"
           f"        v = x[i]\n{body}")
    ns = {}
    exec(src, ns)
    return numba.njit(ns["many"])


def _packed(dispatcher):
    asm = dispatcher.inspect_asm(dispatcher.signatures[0])
    return len(re.findall(r"\tv(?:mul|add|fmadd\w*)pd\s", asm))


def test_a_kernel_loop_writing_many_arrays_vectorises():
    """Inside a kernel compile the loop vectorises (LLVM's own cap of 128 alias checks is
    raised); a user's loop compiled after it is Numba's as before (the cap restored)."""
    args = [np.ones(64) for _ in range(17)]
    inside, outside = _many_outputs(), _many_outputs()
    with vector_width.compiling():
        inside(*args)
    outside(*args)
    assert _packed(inside) > 0
    assert _packed(outside) == 0


def test_tuning_flags_follow_the_width():
    assert vector_width.tuning("+sse2,+avx512f", 512) == \
        "+sse2,+avx512f,-prefer-256-bit,-prefer-128-bit"
    assert vector_width.tuning("+sse2,+avx2", 256).endswith(",+prefer-256-bit,-prefer-128-bit")
    assert vector_width.tuning("+sse2,+avx2", None) == "+sse2,+avx2"     # LLVM's choice
    assert vector_width.tuning("+neon,+fp-armv8", 512) == "+neon,+fp-armv8"   # not X86


def test_the_direct_paths_threaded_chunks_get_the_width(width):
    """The chunks of a threaded loop are a function of their own (launched on OpenMP's
    team): the direct path's target machine gives every function the kernels' width, where
    an attribute on the kernel alone left the chunks at LLVM's 256 bits on the Xeon VM
    (issue #37, session 32: exp float32 in L2, one thread, 0.62 -> 0.41 ns an element)."""
    import llvmlite.binding as binding

    from xforms.kernels.cpu import backend, chunking
    from xforms.kernels.cpu.llvm import engine, team
    if not team.available():
        pytest.skip("no OpenMP: the loop is not threaded")
    x = np.ones(chunking.PARALLEL_MIN_ELEMENTS, np.float32)
    prep = backend._prepare(xf.make_jaxpr(lambda a: xnp.exp(a) * 2.0)(x), {"name": "t"})
    assert team.launches(prep.llvm_ir)
    if vector_width.WIDTH is None:           # (no AVX-512: the width is LLVM's own)
        pytest.skip("LLVM chooses the width on this host")
    tm = engine._target_machine()
    module = binding.parse_assembly(prep.llvm_ir)
    module.triple, module.data_layout = tm.triple, str(tm.target_data)
    engine._optimise(module, tm)
    chunks = re.search(r"define internal void @chunks.*?\n}", str(module), re.S).group(0)
    assert f"<{width // 32} x float>" in chunks
