"""Shared fixtures.  `mode` runs a test function eagerly and again under `jit` (CPU); the
same tests run on the CUDA simulator in their own process (tests/cuda)."""
import os

os.environ.setdefault("XFORMS_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..",
                                                       ".xforms_cache"))
os.environ.setdefault("XFORMS_ENABLE_CHECKS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import xforms as xf  # noqa: E402


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
