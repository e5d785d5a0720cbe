"""The one cache policy (xforms/core/memo.py): bounded LRU, jaxprs held weakly, sizes from config."""
import gc

import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms.core import memo
from xforms.transforms.ad import vjp_jaxprs
from xforms.core.ir import ClosedJaxpr


class Obj:
    pass


def test_lru_is_bounded_least_recently_used_first(monkeypatch):
    monkeypatch.setenv("XFORMS_IR_CACHE_SIZE", "2")
    c = memo.LRU()
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1                   # touched: "b" goes next
    c.put("c", 3)
    assert (c.get("a"), c.get("b"), c.get("c")) == (1, None, 3)
    c.put(["unhashable"], 4)                 # not cached, no error
    assert c.get(["unhashable"]) is None and len(c) == 2


def test_memo_keys_by_identity_and_drops_dead_objects():
    m = memo.Memo(size=lambda: 0)            # no bound
    a, b = Obj(), Obj()
    calls = []
    assert m.lookup(a, "k", lambda v: calls.append(1) or v, "A") == "A"
    assert m.lookup(a, "k", lambda v: calls.append(1) or v, "again") == "A"
    assert m.lookup(b, "k", str, "B") == "B"
    assert len(calls) == 1 and len(m) == 2
    del a
    gc.collect()
    assert len(m) == 1 and m.values() == ["B"]


def test_memo_bound(monkeypatch):
    m = memo.Memo(size=lambda: 3)
    objs = [Obj() for _ in range(5)]
    for k, o in enumerate(objs):
        m.put(o, "k", k)
    assert len(m) == 3
    assert [m.get(o, "k") for o in objs] == [None, None, 2, 3, 4]


def test_a_jaxprs_derived_programs_are_cached_then_released():
    traced = xf.make_jaxpr(lambda x: xnp.sum(xnp.sin(x) * x))(np.ones(3))
    closed = ClosedJaxpr(traced.jaxpr, traced.consts)     # (the trace cache keeps `traced`)
    first = vjp_jaxprs(closed, [True], 1)
    assert vjp_jaxprs(closed, [True], 1) is first          # once per jaxpr and key
    before = len(memo.derived)
    del closed, first
    gc.collect()
    assert len(memo.derived) < before                      # (its linearization and vjp)


def test_results_do_not_depend_on_the_bound(monkeypatch):
    monkeypatch.setenv("XFORMS_IR_CACHE_SIZE", "1")
    f = lambda w: xnp.sum(xnp.tanh(w) ** 2)                # noqa: E731
    w = np.linspace(-1.0, 1.0, 5)
    want = 2 * np.tanh(w) * (1 - np.tanh(w) ** 2)
    for _ in range(2):
        np.testing.assert_allclose(xf.grad(f)(w), want)
        np.testing.assert_allclose(xf.jacrev(f)(w), want)
        np.testing.assert_allclose(xf.vmap(xf.grad(lambda v: f(v)))(w[None])[0], want)
