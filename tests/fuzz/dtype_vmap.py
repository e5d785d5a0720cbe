"""The dtype programs (dtype_programs.py) under vmap: bool, int8 ... uint64, float16/32/64
with their limits, NaN and signed zeros through the batching rules of conversions, shifts,
reductions with where=, arg- and cumulative reductions, and -- the indexed programs --
gathers, scatters and dynamic slices at traced integer indices that are themselves batched
(negative, out of bounds either way, the index dtype's limits), so each example of the batch
takes its own path through JAX's index semantics (clamp, drop, fill, count from the end).

`vmap(f, in_axes)` eagerly and `jit(vmap(f, in_axes))` compiled must equal the program run
one example at a time on xforms Arrays (the eager operators), stacked, bit for bit (NaN
payloads aside; zeros' signs aside where the program adds a literal zero, as
check_dtype_tiers).  A batch of `size` examples: example b is each batched input's values
rolled by b (the same special values, in other places); an input with in_axes None is shared.

    check_dtype_vmap([case], in_axes=[(0, None)], size=3)
"""
import contextlib

import numpy as np

import xforms as xf

from .dtype_programs import ADDS_ZERO, _run, llvm_kernels, same_bits


def example(a, b):
    """Example b of a batched input: its values rolled by b (a 0-d input: itself)."""
    return np.roll(a.ravel(), b).reshape(a.shape) if a.ndim else a.copy()


def batched(args, axes, size):
    """The inputs of vmap: each batched one stacked along its axis (0 or -1)."""
    return [np.stack([example(a, b) for b in range(size)], axis=ax) if ax is not None else a
            for a, ax in zip(args, axes)]


def check_dtype_vmap(cases, in_axes, size, numba=False):
    """Each program under vmap (eagerly, and compiled: `numba` on the Numba path) equals it
    run example by example (the module docstring)."""
    for k, (case, axes) in enumerate(zip(cases, in_axes)):
        f, signs = case.fn(), not ADDS_ZERO.search(case.src)
        examples = [[example(a, b) if ax is not None else a for a, ax in zip(case.args, axes)]
                    for b in range(size)]
        loop = [_run(lambda all_args: [f(*all_args[0])], [case], arrays=True, inputs=[ex])[0]
                for ex in examples]
        want = [np.stack([out[j] for out in loop]) for j in range(len(loop[0]))]
        ins = batched(case.args, axes, size)
        vf = xf.vmap(f, in_axes=tuple(axes))
        eager = _run(lambda all_args: [vf(*all_args[0])], [case], arrays=True, inputs=[ins])[0]
        with llvm_kernels(False) if numba else contextlib.nullcontext():
            compiled = _run(lambda all_args: [xf.jit(vf, tiered=False)(*all_args[0])], [case],
                            inputs=[ins])[0]
        for j, w in enumerate(want):
            same_bits(eager[j], w, f"program {k} output {j}: vmap {axes} (eager) vs a loop "
                      f"of {size}\n{case!r}", signs)
            same_bits(compiled[j], w, f"program {k} output {j}: jit(vmap {axes}) vs a loop "
                      f"of {size}\n{case!r}", signs)
