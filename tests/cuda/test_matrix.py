"""Every program of the CUDA matrix (tests/cuda/programs.py) under jit(backend="cuda") on the
simulator agrees with eager evaluation (the NumPy rules), and for a subset also with
jit(backend="cpu") (the full CPU comparison is tests/exec/test_jit.py's; CPU compiles are slow).
Outputs are DeviceArrays of the right shapes and dtypes."""
import numpy as np
import pytest

import xforms as xf
from xforms.kernels.cuda.runtime import DeviceArray
from xforms.tree_util import tree_leaves, tree_structure

from programs import PROGRAMS

CPU_TOO = {"mlp_grad", "cond", "vmap_while", "custom_rules", "complex_grads"}
JITTED = {name: xf.jit(f, backend="cuda") for name, (f, _, _) in PROGRAMS.items()}


def agree(got, want, rtol, what):
    gl, wl = tree_leaves(got), tree_leaves(want)
    assert tree_structure(got) == tree_structure(want), what
    for k, (g, w) in enumerate(zip(gl, wl)):
        w = np.asarray(w)
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (what, k, g.shape, w.shape, g.dtype,
                                                           w.dtype)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True,
                                       err_msg=f"{what}: output {k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{what}: output {k}")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_matches_eager(name):
    f, args, rtol = PROGRAMS[name]
    got = JITTED[name](*args)
    assert all(isinstance(g, DeviceArray) for g in tree_leaves(got))
    agree(got, f(*args), rtol, f"{name}: cuda vs eager")
    if name in CPU_TOO:
        agree(got, xf.jit(f, backend="cpu")(*args), rtol, f"{name}: cuda vs cpu")


def test_second_call_reuses_the_executable_and_device_inputs():
    f, args, rtol = PROGRAMS["mlp_grad"]
    jf = JITTED["mlp_grad"]
    first = jf(*args)
    dev_args = xf.device_put(args, backend="cuda")
    assert all(isinstance(a, DeviceArray) for a in tree_leaves(dev_args))
    again = jf(*dev_args)                      # device inputs: no host round trip
    agree(again, first, 0, "device inputs")
    agree(xf.device_get(again), f(*args), rtol, "device_get")
    assert all(type(a) is np.ndarray for a in tree_leaves(xf.device_get(again)))
