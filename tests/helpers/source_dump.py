"""Dump the generated CPU (and CUDA) source of a fixed set of programs, to check that a
refactor of the emitters leaves the generated source byte-identical:

    python tests/helpers/source_dump.py /tmp/before            # on the old commit
    python tests/helpers/source_dump.py /tmp/after             # on the new one
    diff -r /tmp/before /tmp/after                      # no output: identical

Programs: the CUDA test matrix (tests/cuda/programs.py) and large-shape programs that take
the CPU emitter's other paths (chunked and parallel loops, peeled stencils, staged sums,
bounded-trig loops, array accumulators, arg reductions, symbolic sizes).  Nothing is
compiled by Numba: the source is planned and emitted only (`xforms.kernels.cpu.backend._prepare`,
`xforms.kernels.cuda.backend.emit_program`), so a run takes seconds.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cuda"))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))


def _large_programs():
    import xforms as xf
    import xforms.numpy as xnp
    from xforms import nn

    rng = np.random.default_rng(1)
    big = rng.normal(size=1 << 19)
    mat = rng.normal(size=(600, 500))
    mat32 = mat.astype(np.float32)
    small = rng.normal(size=(100,))

    def rosen(x):
        return xnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    def stencil2d(x):
        p = xnp.pad(x, 1)
        return p[2:, 1:-1] + p[:-2, 1:-1] + p[1:-1, 2:] + p[1:-1, :-2] - 4 * x

    return {
        "big_sum": (lambda x: xnp.sum(xnp.exp(x) * 2.0), (big,)),
        "big_sum_sin": (lambda x: xnp.sum(xnp.sin(x) ** 2), (big,)),
        "big_prod_mean": (lambda x: (xnp.prod(1.0 + x * 1e-6), xnp.mean(x)), (big,)),
        "big_max_argmax": (lambda x: (xnp.max(x), xnp.argmax(x), xnp.min(x), xnp.argmin(x)),
                           (big,)),
        "big_trig": (lambda x: xnp.sin(x) * xnp.cos(x) + xnp.tan(x * 0.1), (big,)),
        "big_trig32": (lambda x: xnp.sin(x) * xnp.cos(x), (big.astype(np.float32),)),
        "rosen_grad": (xf.grad(rosen), (big,)),
        "rosen_hvp": (lambda x, v: xf.hvp(rosen, (x,), (v,)), (big, big)),
        "rosen_value": (rosen, (big,)),
        "mat_rows": (lambda a: (xnp.sum(a, axis=1), xnp.max(a, axis=1), xnp.argmax(a, axis=1)),
                     (mat,)),
        "mat_cols": (lambda a: (xnp.sum(a, axis=0), xnp.min(a, axis=0), xnp.argmin(a, axis=0),
                                xnp.any(a > 0, axis=0), xnp.all(a > -5, axis=0)), (mat,)),
        "mat_softmax": (lambda a: nn.softmax(xnp.tanh(a), axis=1), (mat,)),
        "mat_logsumexp32": (lambda a: nn.logsumexp(a, axis=1), (mat32,)),
        "stencil2d": (stencil2d, (mat,)),
        "mlp_grad_big": (xf.grad(lambda w, x: xnp.sum(xnp.tanh(x @ w) ** 2)),
                         (rng.normal(size=(500, 600)), mat)),
        "small_stats": (lambda x: (xnp.var(x), xnp.std(x), xnp.argmax(x), xnp.all(x > -9)),
                        (small,)),
        "int_sums": (lambda a: (xnp.sum(a), xnp.prod(a[:5]), xnp.max(a, axis=0)),
                     (np.arange(1 << 18, dtype=np.int32).reshape(512, 512),)),
    }


def cpu_source(f, args):
    import xforms as xf
    from xforms.kernels.cpu import backend as cpu
    jitted = xf.jit(f)
    closed = jitted._trace(args, {})[0]
    return cpu._prepare(closed, {}).source


def cuda_source(f, args):
    import xforms as xf
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program
    closed = xf.make_jaxpr(f)(*args)
    return emit_program(closed, rt.spec_for((8, 0), sms=132), "program").source


def main(out, cuda=True):
    from programs import PROGRAMS
    os.makedirs(out, exist_ok=True)
    progs = {k: (f, a) for k, (f, a, _) in PROGRAMS.items()}
    progs.update(_large_programs())
    for name, (f, args) in progs.items():
        for kind, fn in (("cpu", cpu_source), ("cuda", cuda_source)):
            if kind == "cuda" and not cuda:
                continue
            try:
                text = fn(f, args)
            except Exception as e:           # recorded: a refusal must stay a refusal
                text = f"ERROR {type(e).__name__}: {e}\n"
            with open(os.path.join(out, f"{name}.{kind}.py"), "w") as fh:
                fh.write(text)
    print(f"{len(progs)} programs written to {out}")


if __name__ == "__main__":
    main(sys.argv[1], cuda="--no-cuda" not in sys.argv)
