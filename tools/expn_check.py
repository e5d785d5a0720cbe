"""special.expn against JAX pair by pair (issue #31): jax 0.10.2's expn never returns on an
array whose orders hold inf beside a finite one (its loop inside XLA, where no signal reaches
it), so tools/jax_sweep.py leaves those cases out (HANGS) and this script calls jax on one
(n, x) pair at a time, in a subprocess, and compares xforms' values on the whole arrays:
eagerly, jit's fast tier, compiled, vmap, and d/dx (grad, vmap of grad), float32 and float64.

    python tools/expn_check.py             # a line per check: OK, or the differing pairs

Known differences, kept on purpose (xforms' docstring says why): E_n(0) for n >= 2 is
1/(n - 1) (SciPy's, the integral's; jax gives 1/n), and d/dx E_0 at 0 < x <= 1 is the
closed form -exp(-x)(1 + x)/x^2 (jax: NaN, from its E_{-1}).
"""
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))

from jax_sweep import inputs  # noqa: E402

JAX = """
import json, sys
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
import jax.scipy.special as js
dt = np.dtype(sys.argv[1])
pairs = json.loads(sys.stdin.read())
val, der = [], []
for n, x in pairs:
    a, b = dt.type(n), dt.type(x)
    val.append(float(js.expn(a, b)))
    der.append(float(jax.grad(js.expn, argnums=1)(a, b)))
print(json.dumps([val, der]))
"""


def pairs():
    """The sweep's float operands (n, x), then integer orders at small, large and zero x."""
    n, x = inputs("float64", 1, 0).tolist(), inputs("float64", 1, 1).tolist()
    n += [1.0, 2.0, 3.0, 5.0, 0.0, 10.0, 2.0, 50.0, np.inf, np.inf, -np.inf]
    x += [0.5, 1e-3, 30.0, 2.0, 0.0, 100.0, 1e-10, 1.0, 0.5, 3.0, 3.0]
    return n, x


def jax_values(dt, n, x):
    data = json.dumps([[float(a), float(b)] for a, b in zip(n, x)])
    r = subprocess.run([sys.executable, "-c", JAX, dt], input=data, capture_output=True,
                       text=True, timeout=600)
    if r.returncode:
        raise SystemExit(r.stderr[-2000:])
    val, der = json.loads(r.stdout.strip().splitlines()[-1])
    return np.array(val, dt), np.array(der, dt)


def main():
    import xforms as xf
    import xforms.scipy.special as xs
    n, x = pairs()
    bad = 0
    for dt in ("float32", "float64"):
        a, b = np.array(n, dt), np.array(x, dt)
        want, dwant = jax_values(dt, a, b)
        with np.errstate(all="ignore"):
            got = {"eager": xs.expn(a, b), "jit": xf.jit(xs.expn)(a, b),
                   "compiled": xf.jit(xs.expn, tiered=False)(a, b),
                   "vmap": xf.vmap(xs.expn)(a, b),
                   "grad": [xf.grad(xs.expn, 1)(p, q) for p, q in zip(a, b)],
                   "vmap grad": xf.vmap(xf.grad(xs.expn, 1))(a, b)}
        tol = 2e-5 if dt == "float32" else 1e-9
        for how, v in got.items():
            v = np.asarray(v, dt)
            w = dwant if "grad" in how else want
            ok = np.isclose(v, w, rtol=tol, atol=0, equal_nan=True)
            ok &= (np.signbit(v) == np.signbit(w)) | (v != 0) | np.isnan(v)
            diff = [(n[k], x[k], float(v[k]), float(w[k])) for k in np.nonzero(~ok)[0]]
            bad += bool(diff)
            print(f"{dt} {how}: {'OK' if not diff else 'DIFF (n, x, xforms, jax) ' + str(diff)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
