"""Which of the repository's files and functions the first `jit(grad(loss))` call of the
README program runs (issue #19's measure), from a profile of that call in a fresh process
with an empty xforms cache and tiering off (the synchronous compile path):

    python tests/call_profile.py              # files, functions, calls into repo code
    python tests/call_profile.py --list       # ... and each function with its call count
    python tests/call_profile.py --imported   # the compiler package imported beforehand

Module bodies (`<module>`, run by the first call's imports) are counted apart.
"""
import cProfile
import os
import pstats
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(show=False, imported=False):
    os.environ["XFORMS_CACHE_DIR"] = tempfile.mkdtemp()
    os.environ["XFORMS_TIERED"] = "0"
    sys.path.insert(0, ROOT)
    import numpy as np
    import xforms as xf
    import xforms.numpy as xnp

    def loss(w, x, y):
        return xnp.mean((xnp.tanh(x @ w) - y) ** 2)

    rng = np.random.default_rng(0)
    w, x, y = rng.normal(size=(3, 2)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    f = xf.jit(xf.grad(loss))
    if imported:
        import kernels.cpu  # noqa: F401
    prof = cProfile.Profile()
    prof.enable()
    f(w, x, y)
    prof.disable()
    stats = pstats.Stats(prof).stats
    mine = {k: v for k, v in stats.items()
            if k[0].startswith(ROOT + os.sep) and "/tests/" not in k[0]}
    files = {k[0] for k in mine}
    funcs = [k for k in mine if k[2] != "<module>"]
    calls = sum(v[1] for k, v in mine.items() if k[2] != "<module>")
    print(f"files {len(files)} functions {len(funcs)} (+{len(mine) - len(funcs)} module "
          f"bodies) calls {calls}")
    if show:
        for k, v in sorted(mine.items(), key=lambda kv: -kv[1][1]):
            print(f"{v[1]:6d} {os.path.relpath(k[0], ROOT)}:{k[1]} {k[2]}")


if __name__ == "__main__":
    main("--list" in sys.argv, "--imported" in sys.argv)
