"""A kernel's later steps compiled aside as a function of their own (`engine.split`, issue
#35, session 27): the cut carries only pointers, and the split kernel's results are the
whole kernel's bit for bit."""
import re

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.cpu import backend
from xforms.kernels.cpu.buffers import workspace_array
from xforms.kernels.cpu.llvm import engine, loops, scalar


def _mlp(p, x, y):
    h = xnp.tanh(x @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    return -xnp.mean(xf.nn.log_softmax(logits) * y)


def _data():
    rng = np.random.default_rng(0)
    p = {"w1": rng.standard_normal((12, 16)), "b1": rng.standard_normal(16),
         "w2": rng.standard_normal((16, 5)), "b2": rng.standard_normal(5)}
    return p, rng.standard_normal((6, 12)), np.eye(5)[rng.integers(0, 5, 6)]


PROGRAMS = {
    "mlp loss": (_mlp, lambda: _data()),
    "mlp grad": (xf.grad(_mlp), lambda: _data()),
    "softmax and sums": (lambda s: (xf.nn.softmax(s, axis=-1), xnp.sum(xnp.exp(s), axis=0)),
                         lambda: (np.random.default_rng(1).standard_normal((8, 24)),)),
}
SMALL = (lambda x: xnp.tanh(x) * 2.0, lambda: (np.ones((4, 5)),))


def _prepared(name):
    f, data = PROGRAMS[name] if name in PROGRAMS else name
    args = data()
    flat = xf.tree_util.tree_leaves(args)
    prep = backend._prepare(xf.make_jaxpr(lambda *a: f(*xf.tree_util.tree_unflatten(
        xf.tree_util.tree_structure(args), a)))(*flat), {"name": "t"})
    assert prep.llvm_ir is not None
    ws = loops.workspace(prep.plan)[0]
    extra = [workspace_array(ws)] if ws else []
    consts = [backend._const_value(c) for c in prep.plan.consts]      # (after the inputs)
    return prep.llvm_ir, [*flat, *consts, *extra]


def _leaves(out):
    return [np.asarray(a) for a in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_split_kernel_gives_the_whole_kernels_bits(monkeypatch, name):
    text, args = _prepared(name)
    monkeypatch.setattr(engine, "SPLIT_MIN_LINES", 0)
    kernel, parts = engine.split(text, scalar.WRAPPER)
    assert len(parts) == 1
    sym, part = parts[0]
    params = re.search(rf"^define void @{sym}\((.*?)\)", part, re.M).group(1).split(", ")
    assert params and all(p.startswith("ptr %") for p in params)     # only pointers cross
    assert f"call void @{sym}(" in kernel and f"define void @{sym}" not in kernel
    monkeypatch.setattr(engine, "core_free", lambda: False)
    whole = engine.compile_ir(text, scalar.WRAPPER)
    monkeypatch.setattr(engine, "core_free", lambda: True)
    cut = engine.compile_ir(text, scalar.WRAPPER)
    for a, b in zip(_leaves(whole(*args)), _leaves(cut(*args)), strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def test_small_or_unmarked_kernels_stay_whole():
    small, _ = _prepared(SMALL)
    assert engine.split(small, scalar.WRAPPER) == (small, [])    # below SPLIT_MIN_LINES
    text, _ = _prepared("mlp loss")
    assert engine.split(text, scalar.WRAPPER)[1]
    unmarked = text.replace(engine.STEP + "\n", "")
    assert engine.split(unmarked, scalar.WRAPPER) == (unmarked, [])


def test_a_scalar_crossing_the_cut_keeps_its_step_in_the_kernel(monkeypatch):
    """The loss's last step makes the scalar the kernel returns: it stays in the kernel."""
    text, _ = _prepared("mlp loss")
    monkeypatch.setattr(engine, "SPLIT_MIN_LINES", 0)
    kernel, [(sym, part)] = engine.split(text, scalar.WRAPPER)
    tail = kernel.split(f"call void @{sym}(", 1)[1]
    assert "PyFloat_FromDouble" in tail and "fadd" in tail        # (the mean's sum)


def test_no_part_on_a_loaded_machine(monkeypatch):
    import os
    monkeypatch.setattr(os, "getloadavg", lambda: (64.0, 64.0, 64.0))
    assert not engine.core_free()
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert engine.core_free() == (not any(job.is_alive() for job in engine._aside))
