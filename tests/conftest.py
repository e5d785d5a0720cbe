"""Shared fixtures.  `mode` runs a test function eagerly and again under `jit` (CPU); the
same tests run on the CUDA simulator in their own process (tests/cuda)."""
import os

os.environ.setdefault("XFORMS_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..",
                                                       ".xforms_cache"))
os.environ.setdefault("XFORMS_ENABLE_CHECKS", "1")
# compiled code on the first call (tests check its properties); tests/test_tiered.py turns
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


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden files")


@pytest.fixture(params=["eager", "jit"])
def mode(request):
    """A wrapper applied to the function under test: identity, or xf.jit."""
    if request.param == "eager":
        return lambda f, **kw: f
    return lambda f, **kw: xf.jit(f, **kw)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
