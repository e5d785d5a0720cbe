"""The fast tier's BLAS threads before the compiler's load monitor runs
(xforms/exec/eager_blas.py): one OpenBLAS thread for a first call's products where the load
says no core is idle (session 35: the LSTM-by-scan gradient's first call took 13-21 s wall at
load 17-20 on two threads, 1.0-1.4 s on one), the count put back after; nothing changed on
an idle machine, for a program without products, or where the environment fixes the count.
No timings: the tests record the thread counts set (fake libraries)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.exec import eager_blas, tiered


class FakeBlas:
    def __init__(self, n=2):
        self.n, self.calls = n, []

    def get(self):
        return self.n

    def set(self, n):
        self.calls.append(n)
        self.n = n


@pytest.fixture
def blas(monkeypatch):
    fake = FakeBlas()
    monkeypatch.setattr(eager_blas, "_libraries", lambda: [(fake.get, fake.set)])
    monkeypatch.setattr(eager_blas, "_monitor_running", lambda: False)
    for var in ("XFORMS_BLAS_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    return fake


def test_loaded_reads_the_load_as_the_preload_does():
    assert not eager_blas.loaded(2, 0.4)
    assert eager_blas.loaded(2, 1.6) and eager_blas.loaded(2, 20.0)
    assert not eager_blas.loaded(1, 5.0)          # one core: OpenBLAS has one thread


def test_products_are_found_at_any_depth():
    a = np.ones((3, 3))
    assert eager_blas.has_products(xf.make_jaxpr(lambda a: a @ a)(a))
    assert not eager_blas.has_products(xf.make_jaxpr(lambda a: xnp.sin(a) * 2.0)(a))
    in_scan = xf.make_jaxpr(lambda a: lax.scan(lambda c, x: (c @ a, None), a, None, 4)[0])(a)
    assert eager_blas.has_products(in_scan)
    chol = xf.make_jaxpr(lambda a: xnp.linalg.cholesky(a))(np.eye(3))
    assert eager_blas.has_products(chol)


@pytest.mark.parametrize("load, products, env, want", [
    (5.0, True, None, [1, 2]),                   # loaded: one thread, then back to two
    (0.2, True, None, []),                       # an idle core: as OpenBLAS chose
    (5.0, False, None, []),                      # no product in the program
    (5.0, True, ("XFORMS_BLAS_THREADS", "2"), []),   # the user fixed the count
    (5.0, True, ("OPENBLAS_NUM_THREADS", "2"), []),
])
def test_one_thread_only_where_loaded_and_free_to_choose(blas, monkeypatch, load, products,
                                                         env, want):
    monkeypatch.setattr(eager_blas.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(eager_blas.os, "sched_getaffinity", lambda pid: {0, 1})
    if env:
        monkeypatch.setenv(*env)
    with eager_blas.one_thread_while_loaded(products):
        inside = blas.n
    assert blas.calls == want
    assert inside == (1 if want else 2) and blas.n == 2


def test_the_monitor_running_decides_alone(blas, monkeypatch):
    monkeypatch.setattr(eager_blas, "loaded", lambda: True)
    monkeypatch.setattr(eager_blas, "_monitor_running", lambda: True)
    with eager_blas.one_thread_while_loaded(True):
        pass
    assert blas.calls == []


def test_a_tiered_first_call_runs_its_products_on_one_thread_when_loaded(blas, monkeypatch):
    monkeypatch.setattr(tiered, "_submit", lambda exe: None)     # (no background compile)
    monkeypatch.setattr(eager_blas, "loaded", lambda: True)
    seen = []
    real = eager_blas.one_thread_while_loaded

    def spy(products=True):
        seen.append(products)
        return real(products)
    monkeypatch.setattr(eager_blas, "one_thread_while_loaded", spy)
    f = xf.jit(lambda a, b: xnp.tanh(a @ b), tiered=True)
    a = np.full((4, 4), 0.1)
    np.testing.assert_allclose(f(a, a), np.tanh(a @ a), rtol=1e-12)
    (exe, _, _), = f._fast.values()
    assert type(exe) is tiered.TieredExecutable and exe.fast_calls == 1
    assert seen == [True] and blas.calls == [1, 2]
