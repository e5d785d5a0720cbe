"""tests/conftest.py's ordering of `early` tests (minutes long): under xdist, at the heads
of the workers' first batches, the longest first, each to the worker with the least so far;
without xdist, first.  Every test is still collected once."""
import importlib.util
import os
import types

import pytest

# (by path: under the whole suite `import conftest` may find tests/cuda/conftest.py first)
_spec = importlib.util.spec_from_file_location(
    "tests_conftest", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conftest.py"))
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)


class _Item:
    def __init__(self, name, seconds=None):
        self.name = name
        self.mark = None if seconds is None else pytest.mark.early(seconds=seconds).mark

    def get_closest_marker(self, name):
        return self.mark if name == "early" else None


def _config(workers=None, maxschedchunk=None):
    config = types.SimpleNamespace(getoption=lambda name, default=None: maxschedchunk)
    if workers:
        config.workerinput = {"workercount": workers}
    return config


def _order(items, config):
    names = [it.name for it in items]
    conftest.pytest_collection_modifyitems(config, items)
    got = [it.name for it in items]
    assert sorted(got) == sorted(names)
    return got


def _items():
    return ([_Item("sim0", 150), _Item("sim1", 150)] + [_Item(f"t{i}") for i in range(100)]
            + [_Item("ptx", 750)])


def test_two_workers_start_the_longest_apart():
    got = _order(_items(), _config(workers=2))
    batch = 103 // 2 // 4                 # xdist's first batch for each of 2 workers
    assert got[0] == "ptx" and got[batch:batch + 2] == ["sim0", "sim1"]
    assert [n for n in got if n.startswith("t")] == [f"t{i}" for i in range(100)]


def test_batches_of_two():
    """(xdist's least batch: --maxschedchunk 1 still sends two)"""
    got = _order(_items(), _config(workers=2, maxschedchunk=1))
    assert got[:4] == ["ptx", "t0", "sim0", "sim1"]


def test_without_xdist_or_beyond_the_batches_they_go_first():
    assert _order(_items(), _config())[:3] == ["ptx", "sim0", "sim1"]
    items = [_Item(f"e{i}", 60) for i in range(5)] + [_Item(f"t{i}") for i in range(9)]
    got = _order(items, _config(workers=2, maxschedchunk=1))
    assert got[:5] == [f"e{i}" for i in range(0, 5, 2)] + ["e1", "e3"]


def test_nothing_early_keeps_the_order():
    items = [_Item(f"t{i}") for i in range(10)]
    assert _order(items, _config(workers=2)) == [f"t{i}" for i in range(10)]
