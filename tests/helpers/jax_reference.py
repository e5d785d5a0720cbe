"""JAX's values for the JAX-comparison tests, live or recorded.

`reference(key, thunk)` returns `thunk()` (a JAX computation) converted to NumPy when jax is
installed, and otherwise the value recorded under `key` in tests/helpers/jax_reference_values.py, so
the comparisons also run where JAX is absent (CI).  A key with no recorded value skips the
test there.  Record (or refresh) the values with JAX installed, in one process:

    XFORMS_RECORD_JAX=1 python -m pytest -q -p no:xdist tests/numpy/test_numpy_breadth.py ...

which rewrites tests/helpers/jax_reference_values.py at exit, keeping the keys the run did not
touch.  Arrays are stored bit-exactly (dtype, shape and the bytes in hex); tuples, lists,
dicts, None, bools, ints and strings keep their structure (Python floats become 0-d
arrays: nan and inf have no literal).

    ref = reference("sort/float64", lambda: jnp.sort(x))
"""
import atexit
import os
import pprint

import numpy as np
import pytest

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
except ImportError:          # CI: the recorded values stand in
    jax = jnp = None

try:
    from jax_reference_values import VALUES
except ImportError:
    VALUES = {}

RECORD = os.environ.get("XFORMS_RECORD_JAX") == "1"
_PATH = os.path.join(os.path.dirname(__file__), "jax_reference_values.py")
_NEW = {}


def _encode(v):
    if v is None or isinstance(v, (bool, int, str)) and not isinstance(v, np.generic):
        return ("py", v)
    if isinstance(v, (tuple, list)):
        return ("tuple" if isinstance(v, tuple) else "list", [_encode(x) for x in v])
    if isinstance(v, dict):
        return ("dict", {k: _encode(x) for k, x in v.items()})
    a = np.asarray(v)
    return ("array", a.dtype.str, list(a.shape), np.ascontiguousarray(a).tobytes().hex())


def _decode(e):
    tag = e[0]
    if tag == "py":
        return e[1]
    if tag in ("tuple", "list"):
        items = [_decode(x) for x in e[1]]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        return {k: _decode(x) for k, x in e[1].items()}
    _, dt, shape, hexed = e
    return np.frombuffer(bytes.fromhex(hexed), dtype=np.dtype(dt)).reshape(shape).copy()


def _numpy(v):
    """JAX arrays (also inside tuples, lists and dicts) as NumPy arrays."""
    if isinstance(v, (tuple, list)):
        return type(v)(_numpy(x) for x in v)
    if isinstance(v, dict):
        return {k: _numpy(x) for k, x in v.items()}
    if jax is not None and isinstance(v, jax.Array):
        return np.asarray(v)
    return v


def reference(key, thunk):
    """JAX's value for `key`: thunk() when jax is installed, else the recorded one."""
    if jax is not None:
        v = _numpy(thunk())
        if RECORD:
            _NEW[key] = _encode(v)
        return v
    if key not in VALUES:
        pytest.fail(f"no recorded JAX value for {key!r}: run this test once with jax installed "
                    "and XFORMS_RECORD_JAX=1 to record it (tests/helpers/jax_reference_values.py)")
    return _decode(VALUES[key])


def _digest(args, kwargs):
    import hashlib

    def enc(v):
        if isinstance(v, (np.ndarray, np.generic, float, complex)):
            return repr(_encode(v))
        if isinstance(v, (tuple, list)):
            return "(" + ",".join(enc(x) for x in v) + ")"
        return repr(v)
    text = enc(list(args)) + enc(sorted(kwargs.items()))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def call(path, *args, **kwargs):
    """JAX's function `path` (dotted, below `jax`: "nn.softmax", "numpy.sort") applied to
    NumPy arguments: live, or recorded under the path and a digest of the arguments.

        want = call("nn.softmax", x, axis=0)
    """
    def run():
        fn = jax
        for part in path.split("."):
            fn = getattr(fn, part)
        return fn(*args, **kwargs)
    return reference(f"{path}#{_digest(args, kwargs)}", run)


def _write():
    if not _NEW:
        return
    merged = dict(VALUES)
    merged.update(_NEW)
    with open(_PATH, "w") as f:
        f.write('"""JAX 0.10.2 values (jax_enable_x64, CPU) for the JAX-comparison tests, '
                'written by\ntests/helpers/jax_reference.py (XFORMS_RECORD_JAX=1): '
                'do not edit."""\n\n')
        f.write("VALUES = " + pprint.pformat(merged, width=100, compact=True) + "\n")


if RECORD:
    atexit.register(_write)
