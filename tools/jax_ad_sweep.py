"""Derivatives and vmap of xforms' public surface against JAX (issue #31): the companion of
tools/jax_sweep.py, over the same names (its MODULES, SKIP and signatures) and the same
calls (its keyword variants), compared by the same rules.  For every case it checks

    grad     grad of  sum(out * w)  (w: fixed random weights per output leaf; the real and
             imaginary parts of a complex output each get their own) with respect to every
             operand, at smooth points: the value sweep's float64 operands with NaN and inf
             replaced and moved off 0, the integers and each other (no kinks, poles or ties)
    hvp      the second derivative: jvp of that grad along a fixed direction (forward over
             reverse)
    jvp2     jvp of jvp along that direction (forward over forward: d^2 f[dir, dir])
    vjp2     vjp of the vjp along that direction (reverse over reverse: H dir)
    holo     with --ad-dtypes complex128: grad(sum(out * w), holomorphic=True) of a
             complex-valued output (grad above is then JAX's convention for a real-valued
             function of complex operands, the conjugate of df/dx + i df/dy's conjugate:
             compared with JAX, not with a formula)
    jit_grad, jit_hvp, jit_jvp2, jit_vjp2
             each of the four under jit's compiled tier (compiled kernels; not in the
             default checks: they compile every case, ask with --checks jit_grad,jit_hvp)
    vmap     vmap over a leading batch axis of 2 (the sweep's operand k and k+1, its
             NaN/inf/0 included), against jax.vmap, for each dtype of --dtypes

    python tools/jax_ad_sweep.py --module nn                 # a summary and each difference
    python tools/jax_ad_sweep.py --module numpy --names sinc,arctan2 -v
    python tools/jax_ad_sweep.py --module stats --checks grad,hvp
    python tools/jax_ad_sweep.py --module lax --checks jit_grad --seconds 600
    python tools/jax_ad_sweep.py --module numpy --ad-dtypes complex128 --checks grad,holo,hvp

Cases whose outputs are not floating (or whose operands jax cannot differentiate) count as
"not differentiable"; names whose derivative is undefined at every point the sweep can draw
are in EXCLUDED with the reason.  Needs jax (run by hand, as jax_sweep.py).  Exit status 1
when a DIFF is not allow-listed in ALLOWED.
"""
import argparse
import collections
import os
import signal
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_sweep as sweep  # noqa: E402  (the value sweep: its tables and comparison)

# (module, name) -> why no derivative is compared (vmap still is)
EXCLUDED = {}

# (module, name) or (module, name, check) -> why the difference is intended
ALLOWED = {
    ("lax", "clamp", "grad"): "only where min > max (the sweep's 2.126 > 1.826 around -0.274): "
                              "the value is max and xforms' slope follows it (1 for max); "
                              "jax's clamp rule gives every operand 0 there",
    ("numpy", "convolve", "vmap"): "jax's batched convolution multiplies its zero padding by "
                                   "the kernel (0 * inf = NaN) in float64 too; xforms skips the "
                                   "padding, as NumPy (jax_sweep's float32 convolve entry)",
    ("numpy", "poly", "vmap"): "a convolution: the convolve entry's reason",
    ("numpy", "polymul", "vmap"): "a convolution: the convolve entry's reason",
    ("numpy", "unravel_index", "grad"): "float indices (NumPy refuses them): jax differentiates "
                                        "its remainder (slope 1), xforms' index arithmetic is "
                                        "integer-valued (slope 0)",
    ("scipy_linalg", "cholesky"): "it reads one triangle: xforms' derivative is that of the "
                                  "function computed (the Hermitian matrix the triangle stands "
                                  "for; primitives/linalg/cholesky_ad.py), jax's rule assumes a "
                                  "Hermitian tangent. Equal along every Hermitian direction "
                                  "(checked: 0.0 apart), so gradients through A = B B^H agree; "
                                  "the sweep's raw gradient w.r.t. a non-symmetric A differs",
    ("scipy_linalg", "rsf2csf", "grad"): "the sweep's T is not quasi-upper-triangular, outside "
                                         "rsf2csf's domain: the values already differ there; "
                                         "xforms' gradient matches finite differences of its "
                                         "own value",
    ("special", "beta"): "where both arguments are negative (the sweep's (-1.085, -0.985)) jax's "
                         "derivative is NaN; xforms' is B(a, b)(psi(a) - psi(a + b)), which "
                         "finite differences of scipy's beta confirm (-347.2, -9260.6)",
    ("special", "betaln"): "beta's reason: jax NaN, xforms' derivative confirmed by finite "
                           "differences of scipy's betaln",
    ("special", "entr"): "for x < 0 entr is the constant -inf: xforms' slope is 0; jax's NaN is "
                         "its select's untaken branch (0 times the log of a negative number)",
    ("special", "hyp1f1", "vmap"): "int32 batches: jax_sweep's int32 entry (jax's float32 "
                                   "1F1(5; 3; -4) is off by 8e-4)",
    ("stats.cauchy", "logcdf", "vmap"): "jax.jit's float64 0.5 + arctan(-inf) / pi rounds to "
                                        "-5.6e-17 (not 0), whose log is NaN; eager jax, as "
                                        "xforms, gives log(0) = -inf",
    ("stats.cauchy", "logsf", "vmap"): "logcdf's reason (logsf(x) = logcdf(-x))",
    ("stats.expon", "logcdf", "jvp2"): "below the support (x < loc) the value is the constant "
                                       "-inf: jax's log1p(-sf) with sf = exp(where(x < loc, 0, "
                                       "...)) = 1 meets log1p's jvp rule t / (1 + u) at u = -1 "
                                       "with t = 0: 0/0, NaN in forward mode (first order too); "
                                       "jax's own reverse mode gives 0, as xforms in both modes. "
                                       "xforms' rules give the same NaN on jax's composition "
                                       "(checked, session 25); xforms' formula (where before "
                                       "log(-expm1)) keeps the accurate value",
    ("nn", "dot_product_attention", "hvp"): "the exact value is 0 (a softmax over one key is "
                                            "constant; finite differences of jax's own grad "
                                            "give 0, as xforms): jax's is rounding noise, 1e-7",
    ("nn", "dot_product_attention", "jvp2"): "hvp's reason: the sweep's operands give one key, "
                                             "so the value is v (linear: second derivative 0 "
                                             "exactly, xforms' 0); jax's jvp2 is noise that "
                                             "changes with jit (0-d: 5.8e-8 jitted, 1.3e-7 "
                                             "eager; 2-d: 1.0e-6, -9.1e-7; session 27)",
}

# scipy.stats outside a law's support (or where its parameters are invalid and the value is
# NaN): the value there is a constant branch of a jnp.where/select, xforms' derivative is 0,
# and jax's reverse mode is NaN: the untaken branch's partials are inf or NaN and its zero
# cotangent times them is NaN.  Checked per case (each law's source in jax/_src/scipy/stats;
# jax's own forward mode, where select drops the untaken tangent, gives xforms' numbers).
# law -> (jax's untaken branch, {method: the checks that differ})
_UNTAKEN = {
    "beta": ("where(y outside [0, 1], -inf, ...): xlogy(a - 1, y), xlog1py(b - 1, -y) of the "
             "log of a negative; then where(a or b <= 0, nan, ...)",
             {"logpdf": ("grad",), "pdf": ("grad", "hvp")}),
    "binom": ("where(0 <= k < n + 1, ..., -inf): xlogy(k, p), xlog1py(n - k, -p) and "
              "gammaln(k + 1) at k outside that range",
              {"logpmf": ("grad",), "pmf": ("grad", "hvp")}),
    "chi2": ("where(x < loc, -inf, ...): (df / 2 - 1) log(y) at y < 0",
             {"logpdf": ("grad",), "pdf": ("grad", "hvp")}),
    "gamma": ("where(y < 0, 1, gammaincc(a, y)): gammaincc's partials at y < 0",
              {"sf": ("grad",), "logsf": ("grad",)}),
    "geom": ("where(k <= loc, -inf, ...): xlog1py(k - 1, -p) at k < 1",
             {"logpmf": ("grad",), "pmf": ("grad", "hvp")}),
    "nbinom": ("where(k < loc, -inf, ...): xlogy(k, 1 - p), gammaln(k + n), gammaln(k + 1) "
               "at k < 0", {"logpmf": ("grad",), "pmf": ("grad", "hvp")}),
    "pareto": ("where(x < loc + scale, ...): log and pow of x / scale < 1 (negative too)",
               {"logpdf": ("grad",), "pdf": ("grad", "hvp"), "cdf": ("grad", "hvp"),
                "logcdf": ("grad", "hvp"), "sf": ("grad", "hvp"), "logsf": ("grad",)}),
    "poisson": ("where(k < 0 or k not an integer, -inf, ...): xlogy(k, mu), gammaln(k + 1) "
                "at k < 0", {"logpmf": ("grad",), "pmf": ("grad", "hvp")}),
    "truncnorm": ("select(x >= b: 0, x <= a: -inf, ...), where(a >= b, nan, ...): "
                  "_log_gauss_mass's log of a negative mass",
                  {m: ("grad", "hvp") for m in ("cdf", "logcdf", "sf", "logsf")}),
}
ALLOWED.update({(f"stats.{law}", m, c): f"outside the support jax's NaN is the untaken branch "
                                        f"of {why}; xforms' 0 is the derivative of the value"
                for law, (why, methods) in _UNTAKEN.items()
                for m, checks in methods.items()
                # vjp2 (reverse over reverse) meets the untaken branch as hvp's reverse pass
                for c in checks + (("vjp2",) if "hvp" in checks else ())})

# the derivatives at complex128 operands (--ad-dtypes complex128): (module, name) or
# (module, name, check) -> why the difference is intended (ALLOWED's float64 reasons do not
# carry over)
ALLOWED_COMPLEX = {
    ("scipy_linalg", "cholesky"): "ALLOWED's float64 reason: xforms differentiates the Hermitian "
                                  "matrix the triangle read stands for (its gradient's diagonal "
                                  "is real). Checked session 35 at complex128: jvp along a "
                                  "Hermitian direction 1.1e-16 apart (lower and upper), grad "
                                  "through A = B B^H + 3I 1.4e-15 apart",
    ("scipy_linalg", "rsf2csf"): "ALLOWED's float64 reason: a complex, full T is outside "
                                 "rsf2csf's domain (a real quasi-upper-triangular Schur form); "
                                 "the values already differ there (2.0 apart at the sweep's 3x3 "
                                 "operands; SciPy's differ from both)",
    ("nn", "dot_product_attention", "hvp"): "the sweep's 2-d operands attend over one key "
        "(softmax of a single logit is 1): the output is v, linear, its second derivative "
        "exactly 0 (xforms); jax's 7.6e-8 and 2.7e-6 (jvp2) are rounding (central "
        "differences give -1.8e-9 at h = 1e-3, growing as 1/h^2; session 36)",
    ("nn", "dot_product_attention", "jvp2"): "the hvp entry's reason",
}

AD_CHECKS = ("grad", "holo", "hvp", "jvp2", "vjp2", "jit_grad", "jit_hvp", "jit_jvp2",
             "jit_vjp2")
LOOSE = 1000      # derivatives agree to ~1e-6 relative (float64): other formulas than jax's
SQUARE = {"linalg", "scipy_linalg"}   # 2-d operands there are square and well conditioned


def smooth(nd, k, square=False):
    """The k-th float64 operand for derivatives: the value sweep's, without NaN/inf, off the
    kinks of abs/floor/max (0, the integers, ties between elements and operands)."""
    v = sweep.inputs(np.float64, 1, k)
    v = np.where(np.isnan(v), 0.75, np.where(np.isposinf(v), 2.5, np.where(np.isneginf(v),
                                                                           -1.25, v)))
    v = v + 0.1 * (k + 1) + 0.013 * np.arange(v.size)
    if nd == 0:
        return np.asarray(v[(k + 2) % v.size])
    if nd == 1:
        return v
    if square:   # (3, 3), diagonally dominant: invertible, positive eigenvalues
        m = np.concatenate([v, v[:2]]).reshape(3, 3) / 4
        return m + 2.0 * np.eye(3)
    return v[1:].reshape(2, 3)


def smooth_complex(nd, k, square=False):
    """The k-th complex128 operand for derivatives: smooth's values as real parts beside
    imaginary parts that are smooth's next operand's, halved (none 0: off the branch cuts
    of log, sqrt and the inverse functions, which lie on the axes)."""
    im = 0.5 * smooth(nd, (k + 1) % 3, square)
    return smooth(nd, k, square) + 1j * np.where(np.abs(im) < 0.05, 0.3, im)


def batched(dt, nd, k):
    """A batch of 2 along a new leading axis: the sweep's operand k, then operand k+1's
    values in the same shape."""
    a = sweep.inputs(dt, nd, k)
    b = np.resize(sweep.inputs(dt, max(nd, 1), (k + 1) % 3).ravel(), a.shape).astype(dt)
    return np.stack([a, b])


def weights(leaves, rng_key):
    """Fixed weights per output leaf (a complex leaf gets a real and an imaginary one)."""
    out = []
    for i, leaf in enumerate(leaves):       # (arrays or shape structs)
        r = np.random.default_rng(1000 * rng_key + i)
        out.append((r.standard_normal(np.shape(leaf)), r.standard_normal(np.shape(leaf))))
    return out


def scalarised(fn, kw, tnp, leaves_of, ws):
    """sum(out * w) over the float leaves of fn(*a, **kw), in the namespace tnp."""
    def f(*a):
        total = 0.0
        for leaf, (wr, wi) in zip(leaves_of(fn(*a, **kw)), ws):
            total = total + tnp.sum(tnp.real(leaf) * wr)
            if tnp.iscomplexobj(leaf):
                total = total + tnp.sum(tnp.imag(leaf) * wi)
        return total
    return f


def ad_checks(jax, xf, jfn, xfn, kw, operands):
    """{check: (jax's call, xforms' call)} for grad and hvp, or None when the outputs are not
    floating (nothing to differentiate)."""
    import jax.numpy as jnp
    import xforms.numpy as xnp
    try:
        outs = jax.tree_util.tree_leaves(jax.eval_shape(lambda *a: jfn(*a, **kw), *operands))
    except Exception:
        return None
    if not outs or not all(np.dtype(v.dtype).kind in "fc" for v in outs):
        return None
    ws = weights(outs, len(operands))
    jf = scalarised(jfn, kw, jnp, jax.tree_util.tree_leaves, ws)
    xf_ = scalarised(xfn, kw, xnp, xf.tree_util.tree_leaves, ws)
    argnums = tuple(range(len(operands)))
    dirs = tuple(direction(o) for o in operands)

    def hvp(api, f):
        return lambda *a: api.jvp(api.grad(f, argnums), a, dirs)[1]

    def jvp2(api, f):           # forward over forward: d^2 f along dirs, twice
        def df(*a):
            return api.jvp(f, a, dirs)[1]
        return lambda *a: api.jvp(df, a, dirs)[1]

    def vjp2(api, f):           # reverse over reverse: the vjp of f's vjp, along dirs
        def g(*a):
            return api.vjp(f, *a)[1](np.float64(1.0))
        return lambda *a: api.vjp(g, *a)[1](dirs)
    # jax under jax.jit: its eager op-by-op dispatch compiles each primitive per shape, 5x
    # slower here, and its jitted derivatives are the same formulas
    pairs = {"grad": (jax.jit(jax.grad(jf, argnums)), xf.grad(xf_, argnums)),
             "holo": holomorphic(jax, xf, jfn, xfn, kw, outs, ws, argnums, operands),
             "hvp": (jax.jit(hvp(jax, jf)), hvp(xf, xf_)),
             "jvp2": (jax.jit(jvp2(jax, jf)), jvp2(xf, xf_)),
             "vjp2": (jax.jit(vjp2(jax, jf)), vjp2(xf, xf_))}
    # each derivative again under jit's compiled tier: the kernels' own lowerings of the
    # derivative's primitives (jit_grad, jit_hvp, ...)
    pairs.update({f"jit_{c}": (j, xf.jit(x, tiered=False)) for c, (j, x) in list(pairs.items())
                  if j is not None})
    return {c: p for c, p in pairs.items() if p[0] is not None}


def direction(o):
    """The fixed tangent of operand o (complex operands: a complex one, as jvp wants)."""
    t = np.arange(np.size(o)) + 1.0
    d = np.cos(t) + (1j * np.sin(2 * t) if np.iscomplexobj(o) else 0)
    return d.reshape(np.shape(o))


def holomorphic(jax, xf, jfn, xfn, kw, outs, ws, argnums, operands):
    """(jax's, xforms') grad(sum(out * w), holomorphic=True) where the operands and the
    outputs are all complex; (None, None) otherwise."""
    import jax.numpy as jnp
    import xforms.numpy as xnp
    if not (all(np.iscomplexobj(o) for o in operands)
            and all(np.dtype(v.dtype).kind == "c" for v in outs)):
        return None, None

    def total(fn, tnp, leaves_of):
        def f(*a):
            return sum(tnp.sum(leaf * (wr + 0.5j * wi))
                       for leaf, (wr, wi) in zip(leaves_of(fn(*a, **kw)), ws))
        return f
    return (jax.jit(jax.grad(total(jfn, jnp, jax.tree_util.tree_leaves), argnums,
                             holomorphic=True)),
            xf.grad(total(xfn, xnp, xf.tree_util.tree_leaves), argnums, holomorphic=True))


def run(args):
    import jax
    jax.config.update("jax_enable_x64", True)
    import xforms as xf
    # the value sweep's call reads its SEC/WATCHDOG when called: a compiled tier's Numba
    # compiles under load outlast the default 60 s (--seconds raises it for every case)
    sweep.SEC, sweep.WATCHDOG = args.seconds, 3 * args.seconds
    signal.signal(signal.SIGALRM, sweep._alarm)
    counts, diffs, notes = collections.Counter(), [], []
    names_checked = 0

    def record(mod_key, name, case, check, j, x, loose, dt="float64"):
        kind, what = sweep.classify(j, x, loose)
        table = ALLOWED_COMPLEX if dt == "complex128" and check != "vmap" else ALLOWED
        allowed = table.get((mod_key, name, check)) or table.get((mod_key, name))
        if check.startswith("jit_"):    # the same derivative, compiled: its reasons hold
            allowed = allowed or table.get((mod_key, name, check[4:]))
        if check == "vmap":         # values: the value sweep's reasons hold too
            allowed = allowed or sweep.ALLOWED.get((mod_key, name, dt)) or \
                sweep.ALLOWED.get((mod_key, name))
        counts[f"{check} {kind}" + (" allowed" if kind == "DIFF" and allowed else "")] += 1
        line = f"{case} [{check}]: {kind}: {what}"
        if kind == "DIFF":
            diffs.append((bool(allowed), line + (f"  (allowed: {allowed})" if allowed else "")))
            print("ALLOWED" if allowed else "DIFF   ", diffs[-1][1], flush=True)
        elif kind.startswith(("refused", "accepted")) and args.verbose:
            notes.append(line)
            print("  ", line, flush=True)

    for mod_key in args.module:
        for name, xfn, jfn in sweep.public_names(mod_key, args.names, args.chunk):
            n, keywords = sweep.arity(jfn)
            if not n or n > 3:
                counts["not exercised (no array signature)"] += 1
                continue
            names_checked += 1
            if args.verbose:
                print(f"# {mod_key}.{name}", flush=True)
            for nd in (0, 1, 2):
                for kw in sweep.variants(keywords, nd):
                    for adt in (args.ad_dtypes if set(AD_CHECKS) & set(args.checks)
                                and (mod_key, name) not in EXCLUDED else ()):
                        draw = smooth_complex if adt == "complex128" else smooth
                        ops = [draw(nd, k, mod_key in SQUARE) for k in range(n)]
                        case = sweep.case_name(mod_key, name, adt, nd, kw)
                        pairs = ad_checks(jax, xf, jfn, xfn, kw, ops)
                        if pairs is None:
                            counts["not differentiable"] += 1
                        for check, (jg, xg) in (pairs or {}).items():
                            if check in args.checks:
                                record(mod_key, name, case, check, sweep.call(jg, ops, {}),
                                       sweep.call(xg, ops, {}), LOOSE, adt)
                    if "vmap" not in args.checks:
                        continue
                    if any(k[:2] == (mod_key, name) for k in sweep.HANGS):
                        # jax's own batch never returns (expn: tools/expn_check.py checks
                        # its vmap pair by pair)
                        counts["vmap not called (jax hangs: sweep.HANGS)"] += 1
                        continue
                    for dt in args.dtypes:
                        ops = [batched(dt, nd, k) for k in range(n)]
                        case = sweep.case_name(mod_key, name, dt, nd, kw)
                        jv = sweep.call(jax.jit(jax.vmap(lambda *a, f=jfn: f(*a, **kw))),
                                        ops, {})
                        xv = sweep.call(xf.vmap(lambda *a, f=xfn: f(*a, **kw)), ops, {})
                        record(mod_key, name, case, "vmap", jv, xv, 1, dt)
    return names_checked, counts, diffs, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module", default="numpy,lax,nn,special,linalg,fft,scipy_linalg,stats",
                    type=sweep.module_list)
    ap.add_argument("--names", type=lambda s: set(s.split(",")), default=None)
    ap.add_argument("--chunk", default=(1, 1), type=sweep.chunk_arg,
                    help="k/n: the k-th of n alphabetical slices of each module's names")
    ap.add_argument("--dtypes", default="float64,int32,complex128", type=lambda s: s.split(","),
                    help="vmap's operand dtypes (derivatives are float64)")
    ap.add_argument("--ad-dtypes", default="float64,complex128", type=lambda s: s.split(","),
                    help="the derivatives' operand dtypes: float64, complex128 (the complex "
                         "one adds the holo check)")
    ap.add_argument("--checks", default="grad,holo,hvp,jvp2,vjp2,vmap", type=lambda s: s.split(","),
                    help="of " + ", ".join(AD_CHECKS + ("vmap",)) + " (the jit_ checks "
                    "compile every case: slow, ask for them)")
    ap.add_argument("--seconds", type=int, default=sweep.SEC,
                    help="per call limit, seconds (default %(default)s; jit_grad compiles "
                    "under load want more, e.g. 600)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    names_checked, counts, diffs, notes = run(args)     # (each line printed as found)
    return sweep.summary(names_checked, counts, diffs)


if __name__ == "__main__":
    sys.exit(main())
