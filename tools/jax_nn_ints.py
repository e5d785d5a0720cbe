"""Probe of jax.nn's activations on integer and bool inputs at the ends of each width
(issue #31): JAX evaluates its definitions in the input's integer dtype before anything
promotes (uint8 `-x` wraps in log_sigmoid, int8 `x * x` in squareplus, `x - max(x)` in
softmax), so the extremes of uint8/int8/uint16/int16/bool show whether xforms follows it.
Each function is called eagerly, under `xforms.jit` on its fast tier and on its compiled
tier, and by jax (64-bit mode); values and dtypes are compared.

    python tools/jax_nn_ints.py                   # every function and dtype, the differences
    python tools/jax_nn_ints.py --names squareplus,softmax --dtypes int8 -v

Needs jax (not a CI dependency: run by hand; tests/jax_parity/test_jax_nn_and_stats_edges.py holds
what it found as literals).  Exit status 1 when anything differs.
"""
import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NAMES = ("identity", "relu", "relu6", "sigmoid", "softplus", "sparse_plus", "sparse_sigmoid",
         "soft_sign", "silu", "mish", "log_sigmoid", "elu", "leaky_relu", "hard_tanh",
         "celu", "selu", "gelu", "glu", "log_softmax", "softmax", "logsumexp",
         "standardize", "hard_sigmoid", "hard_silu", "squareplus", "log1mexp", "tanh")
DTYPES = ("uint8", "int8", "uint16", "int16", "bool")


def values(dtype):
    """Both ends of the width, its neighbours, and small values (8 of them, for glu)."""
    if dtype == "bool":
        return np.array([False, True, True, False, True, False, False, True])
    info = np.iinfo(dtype)
    vals = [info.min, info.min + 1, -1, 0, 1, 100, info.max - 1, info.max]
    return np.array([min(max(v, info.min), info.max) for v in vals], dtype=dtype)


def tiers(fn):
    """name -> a callable for each xforms tier."""
    import xforms as xf
    from xforms.exec import tiered
    tiered._submit = lambda *a, **k: None          # no background compile
    return {"eager": fn, "jit": xf.jit(fn, tiered=True), "compiled": xf.jit(fn, tiered=False)}


def outcome(want, got):
    """A reason the two outcomes (results or exceptions) differ, or None.  xforms returning
    where jax raises is not counted (xforms accepts more: `sigmoid` of ints)."""
    if isinstance(want, Exception):
        return None
    if isinstance(got, Exception):
        return f"raised {type(got).__name__}: {got}"
    want, got = np.asarray(want), np.asarray(got)
    if want.dtype != got.dtype:
        return f"dtype {got.dtype}, jax {want.dtype}"
    if want.shape != got.shape:
        return f"shape {got.shape}, jax {want.shape}"
    if want.dtype.kind in "fc":
        rtol = 2e-6 if want.dtype.itemsize <= 4 else 1e-12
        # atol: XLA flushes float32 subnormals (exp(-100) is 0 in jax), as jax_sweep allows
        tiny = np.finfo(want.dtype).tiny
        if np.allclose(got, want, rtol=rtol, atol=tiny, equal_nan=True):
            return None
    elif np.array_equal(got, want):
        return None
    return f"values {got.ravel()}, jax {want.ravel()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", default=",".join(NAMES))
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.nn as jnn
    import xforms.nn as xnn
    warnings.simplefilter("ignore")
    np.set_printoptions(linewidth=200)
    bad = 0
    for name in args.names.split(","):
        for dtype in args.dtypes.split(","):
            x = values(dtype)
            try:
                want = np.asarray(getattr(jnn, name)(x))
            except Exception as e:              # noqa: BLE001 (jax refuses: nothing to match)
                want = e
            for tier, fn in tiers(getattr(xnn, name)).items():
                try:
                    got = fn(x)
                except Exception as e:          # noqa: BLE001 (reported, not hidden)
                    got = e
                why = outcome(want, got)
                if why:
                    bad += 1
                    print(f"DIFF  {name}({dtype}) [{tier}]: {why}", flush=True)
                elif args.verbose:
                    print(f"same  {name}({dtype}) [{tier}]", flush=True)
    print(f"{bad} difference(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
