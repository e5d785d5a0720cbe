"""Shared fixtures.  `mode` runs a test function eagerly and again under `jit` (CPU); the
same tests run on the CUDA simulator in their own process (tests/cuda)."""
import os
import sys

# the test helpers (tests/helpers: jax_reference, jax_tiers, numpy_check, ...) are imported
# by name from any folder of tests/ (docs/testing.md: the map)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))

os.environ.setdefault("XFORMS_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..",
                                                       ".xforms_cache"))
os.environ.setdefault("XFORMS_ENABLE_CHECKS", "1")
# compiled code on the first call (tests check its properties); tests/exec/test_tiered.py turns
# tiered execution on where it tests it
os.environ.setdefault("XFORMS_TIERED", "0")
# tests that compare with JAX (where it is installed) compare float64 results
os.environ.setdefault("JAX_ENABLE_X64", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import xforms as xf  # noqa: E402

# Hypothesis profiles for the differential fuzzing in tests/fuzz (`-m fuzz`).  `default` and
# `ci` are fast (a few hundred programs in all); `deep` (`--hypothesis-profile=deep`) checks
# tens of thousands.  Each fuzz test runs a fixed fraction of the profile's max_examples.
from hypothesis import HealthCheck, settings  # noqa: E402

_fuzz = dict(deadline=None, print_blob=True,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                    HealthCheck.filter_too_much])
settings.register_profile("default", max_examples=30, **_fuzz)
settings.register_profile("ci", max_examples=30, derandomize=True, database=None, **_fuzz)
settings.register_profile("deep", max_examples=3000, **_fuzz)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(params=["eager", "jit"])
def mode(request):
    """A wrapper applied to the function under test: identity, or xf.jit."""
    if request.param == "eager":
        return lambda f, **kw: f
    return lambda f, **kw: xf.jit(f, **kw)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# Tests that take minutes (a subprocess running a whole suite, the examples, the site build)
# are marked `early` (`early(seconds=...)`: about how long, where it is known): under xdist
# they start first, at the heads of the workers' first batches, the longest first and each
# to the worker with the least so far, and run beside the short tests.  In collection order
# they came wherever their file sorts, two of them one after the other on one worker (the
# simulator's suite, then the PTX check) or last, keeping a worker busy after the other
# had finished.
def pytest_configure(config):
    config.addinivalue_line("markers", "early(seconds=60): minutes long; started first "
                                       "under xdist")


def _early_seconds(item):
    return item.get_closest_marker("early").kwargs.get("seconds", 60)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Move `early` tests to the heads of the workers' first batches: xdist's load scheduler
    sends worker w items [w * c, (w + 1) * c) first, c = (items per worker) // 4 (at least 2,
    at most --maxschedchunk).  Without xdist (or with one worker) they simply go first.

        early tests of 400, 150, 150 s, 2 workers of 800-item batches: 400 at 0, 150 s at
        800 and 801
    """
    early = [it for it in items if it.get_closest_marker("early")]
    if not early:
        return
    rest = [it for it in items if not it.get_closest_marker("early")]
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    chunk = max(min(len(items) // workers // 4, config.getoption("maxschedchunk", None)
                    or len(items)), 2)
    heads, load = [[] for _ in range(workers)], [0] * workers
    for it in sorted(early, key=_early_seconds, reverse=True):    # (a stable sort)
        w = load.index(min(load))
        heads[w].append(it)
        load[w] += _early_seconds(it)
    if workers == 1 or max(map(len, heads)) > chunk:
        items[:] = sum(heads, []) + rest
        return
    out = []
    for w, head in enumerate(heads):
        take = chunk - len(head) if w < workers - 1 else len(rest)
        out += head + rest[:take]
        rest = rest[take:]
    items[:] = out
