"""Ctrl-C during the first compile of a process (it lands in the lazy import of Numba and
the compiler package) leaves the process able to compile on the next call (issue 31)."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

SCRIPT = textwrap.dedent("""
    import os, signal, sys
    import numpy as np

    class Interrupt:
        # a real SIGINT, sent while the module named argv[1] is about to be imported
        fired = False

        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name == sys.argv[1] and not cls.fired:
                cls.fired = True
                os.kill(os.getpid(), signal.SIGINT)
            return None

    # Ctrl-C as in a terminal, whatever signal state the test runner's process passes on
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import xforms as xf, xforms.numpy as xnp
    assert "numba" not in sys.modules            # imported lazily, by the first compile
    sys.meta_path.insert(0, Interrupt)
    x = np.arange(3.0)
    f = xf.jit(lambda x: xnp.sin(x) * 2.0, tiered=False)
    try:
        f(x)
        print("not interrupted")
    except KeyboardInterrupt:
        print("interrupted")
    np.testing.assert_allclose(f(x), np.sin(x) * 2.0)
    g = xf.jit(lambda x: xnp.cos(x) + 1.0)
    np.testing.assert_allclose(g.lower(x).compile()(x), np.cos(x) + 1.0)
    print("compiled")
""")


@pytest.mark.parametrize("where", ["llvmlite.binding.ffi", "numba.core.typing",
                                   "numba.np.ufunc", "xforms.kernels.cpu.backend", "xforms.kernels.cuda"])
def test_interrupted_first_compile(tmp_path, where):
    # (no preload: the imports interrupted are the first compile's, on the main thread)
    env = dict(os.environ, PYTHONPATH=ROOT, XFORMS_CACHE_DIR=str(tmp_path / "cache"),
               XFORMS_PRELOAD="0")
    if where.startswith("numba"):       # (the direct LLVM path's programs never import Numba)
        env["XFORMS_LLVM_KERNELS"] = "0"
    p = subprocess.run([sys.executable, "-c", SCRIPT, where], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["interrupted", "compiled"], p.stdout + p.stderr[-3000:]
