"""The on-disk compile cache: a second process loads instead of compiling, concurrent
processes do not corrupt it, damaged entries are recompiled, and it can be disabled."""
import errno
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# these children's small elementwise programs would take the direct LLVM path, which has a
# cache of its own (tests/kernels/compile/test_llvm_object_cache.py): Numba compiles them, as this
# file tests its cache
_NUMBA = {"XFORMS_LLVM_KERNELS": "0"}

CHILD = textwrap.dedent("""
    import numpy as np, xforms as xf, xforms.numpy as xnp
    f = xf.jit(lambda x: xnp.sin(x) * 2.0 + 1.0)
    x = np.arange(3.0)
    np.testing.assert_allclose(f(x), np.sin(x) * 2.0 + 1.0)
    import xforms.kernels.cpu.backend as cpu
    exe, = cpu._exes.values()
    st = exe.kernel.stats
    print("RESULT", sum(st.cache_hits.values()), sum(st.cache_misses.values()), exe.path)
""")


@pytest.fixture
def child(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)

    def run(cache_dir, extra_env=None, wait=True):
        env = dict(os.environ, XFORMS_CACHE_DIR=str(cache_dir), PYTHONPATH=ROOT, **_NUMBA)
        env.pop("XFORMS_DISABLE_CACHE", None)
        env.update(extra_env or {})
        p = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        return _result(p) if wait else p
    return run


def _result(p):
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT"))
    _, hits, misses, path = line.split()
    return int(hits), int(misses), path


def test_second_process_loads_from_disk(child, tmp_path):
    cache = tmp_path / "cache"
    hits, misses, path = child(cache)
    assert (hits, misses) == (0, 1) and path.startswith(str(cache))
    assert glob.glob(os.path.join(os.path.dirname(path), "__pycache__", "*.nbi"))
    hits, misses, path2 = child(cache)
    assert (hits, misses) == (1, 0) and path2 == path


def test_concurrent_processes_and_corrupted_entries(child, tmp_path):
    cache = tmp_path / "cache"
    procs = [child(cache, wait=False) for _ in range(2)]     # both compile at once
    paths = {_result(p)[2] for p in procs}
    assert len(paths) == 1
    path = paths.pop()
    # damage every cache file: the generated module and Numba's index and code
    with open(path, "w") as f:
        f.write("def kernel(:\n")
    for f in glob.glob(os.path.join(os.path.dirname(path), "__pycache__", "*")):
        with open(f, "wb") as fh:
            fh.write(b"\x80\x04garbage")
    hits, misses, path2 = child(cache)                       # recompiled, correct result
    assert path2 == path and misses == 1
    hits, misses, _ = child(cache)                           # and cached again
    assert (hits, misses) == (1, 0)


def test_disable_cache_writes_nothing(child, tmp_path):
    cache = tmp_path / "cache"
    hits, misses, path = child(cache, {"XFORMS_DISABLE_CACHE": "1"})
    assert not path.startswith(str(cache)) and hits == 0
    assert not os.path.exists(cache) or not os.listdir(cache)
    # the process's private kernel folder went with it (660 were left in /tmp before)
    assert os.path.basename(os.path.dirname(path)).startswith("xforms_kernels_")
    assert not os.path.exists(os.path.dirname(path))


# ---- trust and failures (issue 31): a cache others can write into is refused; a full disk,
# an unwritable folder or a damaged entry cost the disk cache, never the result ----------------

SYNC_CHILD = textwrap.dedent("""
    import numpy as np, xforms as xf, xforms.numpy as xnp
    x = np.arange(3.0)
    f = xf.jit(lambda x: xnp.sin(x) * 2.0 + 1.0, tiered=False)
    np.testing.assert_allclose(f(x), np.sin(x) * 2.0 + 1.0)
    g = xf.jit(lambda x: xnp.cos(x) * 3.0 - 1.0)
    g.lower(x).compile()
    np.testing.assert_allclose(g(x), np.cos(x) * 3.0 - 1.0)
    import xforms.kernels.cpu.backend as cpu
    print("PATHS", *sorted(e.path for e in cpu._exes.values()))
""")


def _sync_child(tmp_path, cache_dir):
    """Run SYNC_CHILD (two synchronous compiles) with the cache in `cache_dir`;
    -> (paths of its kernel modules, stderr)."""
    script = tmp_path / "sync_child.py"
    script.write_text(SYNC_CHILD)
    env = dict(os.environ, XFORMS_CACHE_DIR=str(cache_dir), PYTHONPATH=ROOT, **_NUMBA)
    env.pop("XFORMS_DISABLE_CACHE", None)
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("PATHS"))
    return line.split()[1:], p.stderr


def _warnings(err):
    return [ln for ln in err.splitlines() if "CacheWarning: xforms:" in ln]



CONV_CHILD = textwrap.dedent("""
    import numpy as np, xforms as xf, xforms.numpy as xnp
    from xforms import lax
    x, w = np.linspace(-1, 1, 2 * 9 * 3).reshape(2, 9, 3), np.linspace(0, 1, 36).reshape(3, 3, 4)
    f = xf.jit(xf.grad(lambda w, x: xnp.sum(lax.conv_general_dilated(
        x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")) ** 2)), tiered=False)
    g = np.asarray(f(w, x))
    import xforms.kernels.cpu.backend as cpu
    from xforms.kernels.build import object_cache
    exe, = cpu._exes.values()
    k = getattr(exe.kernel, "kernel", exe.kernel)
    if hasattr(k, "stats"):           # a Numba kernel (XFORMS_LLVM_KERNELS=0)
        hits, misses = sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())
    else:                             # the direct LLVM path's object code
        hits, misses = object_cache.stats["hits"], object_cache.stats["misses"]
    print("RESULT", int(hits > 0), int(misses > 0), g.tobytes().hex())
""")


@pytest.mark.parametrize("llvm", ["0", "1"])
def test_cached_kernel_finds_the_convolution_it_calls_by_symbol(tmp_path, llvm):
    # a Numba kernel (llvm "0") calls conv_run by a symbol bound when it compiles
    # (numba_fixes/unlinked.py); loaded from disk in a new process, the symbol is bound
    # again before its code loads.  The direct LLVM path's object code (llvm "1") calls
    # BLAS's gemm by a symbol the same way (session 25: its convolutions are its own IR)
    script = tmp_path / "conv_child.py"
    script.write_text(CONV_CHILD)
    env = dict(os.environ, XFORMS_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT,
               XFORMS_LLVM_KERNELS=llvm)
    env.pop("XFORMS_DISABLE_CACHE", None)
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append(next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT")).split())
    assert runs[0][1:3] == ["0", "1"] and runs[1][1:3] == ["1", "0"]
    assert runs[0][3] == runs[1][3]

def test_untrusted_dir_modes(tmp_path):
    from xforms.kernels.build.codecache import untrusted_dir
    top = tmp_path / "top"
    own = top / "cache"
    own.mkdir(parents=True)
    for d in (tmp_path, top, own):
        os.chmod(d, 0o700)
    assert untrusted_dir(str(own)) is None
    os.chmod(own, 0o770)
    assert untrusted_dir(str(own)).endswith(f"{own} is writable by group")
    os.chmod(own, 0o1707)                     # sticky does not excuse the cache's own folder
    assert untrusted_dir(str(own)).endswith(f"{own} is writable by others")
    os.chmod(own, 0o700)
    os.chmod(top, 0o777)                      # a parent anyone can rename things in
    assert untrusted_dir(str(own)).endswith(f"{top} is writable by group and others")
    os.chmod(top, 0o1777)                     # a sticky parent (as /tmp) is fine
    assert untrusted_dir(str(own)) is None
    assert untrusted_dir(str(own), own=2) is not None
    os.chmod(top, 0o700)
    link = tmp_path / "link"                  # links are judged by their owner and target
    link.symlink_to(own)
    assert untrusted_dir(str(link)) is None
    os.chmod(own, 0o777)
    assert untrusted_dir(str(link)).endswith(f"{own} is writable by group and others")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="chown to another user needs root")
def test_untrusted_dir_owners(tmp_path):
    from xforms.kernels.build.codecache import untrusted_dir
    other = 4321
    own = tmp_path / "cache"
    own.mkdir()
    os.chmod(tmp_path, 0o700)
    os.chown(own, other, other)
    assert untrusted_dir(str(own)).endswith(f"{own} is owned by another user (uid {other})")
    os.chown(own, 0, 0)
    os.chown(tmp_path, other, other)          # a parent of someone else's
    assert "owned by another user" in untrusted_dir(str(own))
    os.chown(tmp_path, 0, 0)
    link = tmp_path / "link"
    link.symlink_to(own)
    os.lchown(link, other, other)
    assert untrusted_dir(str(link)).endswith(
        f"{link} is a symbolic link owned by another user (uid {other})")


@pytest.fixture
def second_user():
    """A second local user's (name, uid): one made with useradd (and removed afterwards)
    when we are root and can; else (None, an unused uid) when root; else the test skips."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("a second user needs root")
    name = "xforms_cache_test"
    existed = _uid_of(name) is not None
    if not existed and shutil.which("useradd"):
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       capture_output=True)
    uid = _uid_of(name)
    try:
        yield (name, uid) if uid is not None else (None, 4321)
    finally:
        if uid is not None and not existed:
            subprocess.run(["userdel", name], capture_output=True)


def _uid_of(name):
    import pwd
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


class _Planted:
    """Unpickling it creates the file `marker` (the attacker's code, run as the victim)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _plant(cache, marker, user=None):
    """Overwrite Numba's index files in `cache` with a pickle that creates `marker` (as
    `user`, who owns the cache, when given)."""
    import pickle
    indexes = glob.glob(os.path.join(cache, "cpu", "__pycache__", "*.nbi"))
    assert indexes
    payload = os.path.join(os.path.dirname(cache), "payload.pkl")
    with open(payload, "wb") as f:
        pickle.dump(_Planted(str(marker)), f)
    os.chmod(payload, 0o644)
    for index in indexes:
        subprocess.run(["cp", payload, index], check=True, user=user)


@pytest.mark.parametrize("who", ["others", "second user"])
def test_planted_pickle_is_not_loaded(tmp_path, who, request, healthy_cache):
    """Another user who can write into the cache plants a pickle in Numba's index: xforms
    refuses the cache with one warning, loads nothing from it, and computes right."""
    if who == "second user":
        name, uid = request.getfixturevalue("second_user")
        base = tempfile.mkdtemp()             # under /tmp, where the other user can reach
        os.chmod(base, 0o755)
    else:
        base = str(tmp_path)
    try:
        cache = os.path.join(base, "shared", "xforms")
        paths = _copy_cache(healthy_cache, cache)           # a valid cache, then planted
        assert all(p.startswith(cache) for p in paths)
        marker = os.path.join(base, "planted_code_ran")
        if who == "others":
            os.chmod(cache, 0o777)            # anyone could have written into it
            _plant(cache, marker)
            why = f"{cache} is writable by group and others"
        else:                                 # the other user made it (shared scratch)
            os.chmod(base, 0o1777)
            for d, dirs, files in os.walk(os.path.dirname(cache)):
                for e in [d] + [os.path.join(d, f) for f in files]:
                    os.chown(e, uid, uid)
            _plant(cache, marker, user=name or uid)
            why = f"is owned by another user (uid {uid})"
        paths, err = _sync_child(tmp_path, cache)
        assert not os.path.exists(marker)
        assert not any(p.startswith(cache) for p in paths)
        warned = _warnings(err)
        assert len(warned) == 1 and why in warned[0] and "XFORMS_CACHE_DIR" in warned[0], err
    finally:
        if base != str(tmp_path):
            shutil.rmtree(base)


def test_created_folders_are_private(tmp_path):
    cache = tmp_path / "a" / "b" / "xforms"
    os.chmod(tmp_path, 0o700)
    paths, err = _sync_child(tmp_path, cache)
    assert not _warnings(err) and all(p.startswith(str(cache)) for p in paths)
    for d in (tmp_path / "a", tmp_path / "a" / "b", cache, cache / "cpu",
              cache / "cpu" / "__pycache__"):
        assert os.stat(d).st_mode & 0o777 == 0o700, d


def _damage(kind, module):
    """Damage the cache entry of `module` (its file and Numba's files next to it)."""
    numba_dir = os.path.join(os.path.dirname(module), "__pycache__")
    stem = os.path.join(numba_dir, os.path.basename(module)[:-3])
    index, data = stem + ".kernel-*.nbi", stem + ".kernel-*.nbc"    # (patterns)
    if kind == "module not utf-8":
        with open(module, "rb") as f:
            head = f.read(40)
        with open(module, "wb") as f:
            f.write(b"\xff\xfe\x00garbage " + head)
    elif kind == "module is a folder":
        os.unlink(module)
        os.makedirs(os.path.join(module, "sub"))
    elif kind == "index is a folder":
        index, = glob.glob(index)
        os.unlink(index)
        os.mkdir(index)
    elif kind == "index damaged after its version":
        import io
        import pickle
        index, = glob.glob(index)
        with open(index, "rb") as f:
            blob = f.read()
        stream = io.BytesIO(blob)
        pickle.load(stream)
        with open(index, "wb") as f:
            f.write(blob[:stream.tell()] + b"garbage\x00\xff")
    elif kind == "code truncated":
        data, = glob.glob(data)
        with open(data, "rb") as f:
            head = f.read(100)
        with open(data, "wb") as f:
            f.write(head)
    elif kind == "__pycache__ is a file" and os.path.isdir(numba_dir):
        shutil.rmtree(numba_dir)
        open(numba_dir, "w").close()


@pytest.fixture(scope="module")
def healthy_cache(tmp_path_factory):
    """(folder, kernel module paths) of a cache SYNC_CHILD filled: made by one process for
    the module, copied (times kept: Numba's index checks the module's mtime and size) by the
    tests that damage one, instead of a child process each to fill it."""
    top = tmp_path_factory.mktemp("healthy")
    cache = top / "cache"
    paths, err = _sync_child(top, cache)
    assert all(p.startswith(str(cache)) for p in paths) and not _warnings(err), err
    # a copy loads both kernels without a compile, so the damage below hits entries Numba
    # would load
    probe = _copy_cache((cache, paths), top / "probe")
    (top / "p").mkdir()
    script = top / "p" / "sync_child.py"     # (its name is in the kernels' text and hash)
    script.write_text(SYNC_CHILD + textwrap.dedent("""
        st = [e.kernel.stats for e in cpu._exes.values()]
        print("HITS", sum(sum(s.cache_hits.values()) for s in st),
              sum(sum(s.cache_misses.values()) for s in st))
    """))
    env = dict(os.environ, XFORMS_CACHE_DIR=str(top / "probe"), PYTHONPATH=ROOT, **_NUMBA)
    env.pop("XFORMS_DISABLE_CACHE", None)
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert next(ln for ln in lines if ln.startswith("PATHS")).split()[1:] == probe
    assert next(ln for ln in lines if ln.startswith("HITS")).split()[1:] == ["2", "0"], r.stdout
    return cache, paths


def _copy_cache(healthy_cache, dst):
    """A copy of the healthy cache at `dst`; -> its kernel module paths there."""
    src, paths = healthy_cache
    os.makedirs(os.path.dirname(dst), mode=0o700, exist_ok=True)   # (as xforms makes them)
    shutil.copytree(src, dst, symlinks=True)
    return [str(dst) + p[len(str(src)):] for p in paths]


@pytest.mark.parametrize("kind", ["module not utf-8", "module is a folder",
                                  "index is a folder", "index damaged after its version",
                                  "code truncated", "__pycache__ is a file"])
def test_damaged_entries_are_replaced(tmp_path, kind, healthy_cache):
    """Each kind of damage: the next process computes right and replaces the entry, so the
    one after it finds a healthy cache (no warning, the same files)."""
    cache = tmp_path / "cache"
    paths = _copy_cache(healthy_cache, cache)
    good = {}
    for p in paths:
        with open(p, "rb") as f:
            good[p] = f.read()
    for p in paths:
        _damage(kind, p)
    assert _sync_child(tmp_path, cache)[0] == paths         # recompiled, right results
    paths2, err = _sync_child(tmp_path, cache)
    assert paths2 == paths and not _warnings(err), err
    for p in paths:                                          # the entries replaced
        with open(p, "rb") as f:
            assert f.read() == good[p]
        numba_dir = os.path.join(os.path.dirname(p), "__pycache__")
        stem = os.path.basename(p)[:-3]
        assert all(os.path.isfile(f) for f in glob.glob(os.path.join(numba_dir, stem + "*")))
        assert glob.glob(os.path.join(numba_dir, stem + "*.nbi"))


def _tmpfs(path, size_kb):
    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0700", "tmpfs",
                        str(path)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root and mount rights)")


@pytest.mark.parametrize("free_kb", [0, 8])
def test_full_disk_compiles_without_cache(tmp_path, free_kb):
    """A cache on a full filesystem (0 KB free: the module cannot be written; 8 KB: the
    module and Numba's index fit, its code does not): each compile works, one warning."""
    mnt = tmp_path / "small"
    _tmpfs(mnt, 256)                          # two kernels take about 64 KB
    try:
        with open(mnt / "fill", "wb") as f:
            f.write(b"\0" * ((256 - free_kb) * 1024))
        paths, err = _sync_child(tmp_path, mnt / "xforms")
        warned = _warnings(err)
        assert len(warned) == 1 and "No space left on device" in warned[0], err
        if not free_kb:
            assert not any(p.startswith(str(mnt)) for p in paths)
        os.unlink(mnt / "fill")                              # space again: cached again
        paths, err = _sync_child(tmp_path, mnt / "xforms")
        assert not _warnings(err) and all(p.startswith(str(mnt)) for p in paths)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_read_only_cache_compiles_without_it(tmp_path):
    """A cache on a filesystem mounted read-only (Numba could not write its index there,
    and would look for it elsewhere): one warning, every compile works."""
    mnt = tmp_path / "ro"
    _tmpfs(mnt, 1024)
    try:
        _sync_child(tmp_path, mnt / "xforms")               # fill it, then read-only
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        paths, err = _sync_child(tmp_path, mnt / "xforms")
        warned = _warnings(err)
        assert len(warned) == 1 and "is not writable" in warned[0], err
        assert not any(p.startswith(str(mnt)) for p in paths)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def fresh_codecache(monkeypatch, tmp_path):
    """codecache with no modules, warnings or broken folders yet, the cache in tmp_path."""
    from xforms.kernels.build import cache_rules, codecache
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("XFORMS_DISABLE_CACHE", raising=False)
    for name, value in (("_modules", {}), ("_private_dir", None)):
        monkeypatch.setattr(codecache, name, value)
    monkeypatch.setattr(cache_rules, "broken", set())
    monkeypatch.setattr(cache_rules, "_warned", set())
    return codecache


def _compile_one(codecache, fn):
    """Compile fn(xnp) (a program no other test compiles) and check it; -> its module's path."""
    import xforms as xf
    import xforms.numpy as xnp
    x = np.linspace(0.1, 0.9, 5)
    f = xf.jit(lambda x: fn(xnp, x), tiered=False)
    with pytest.warns(codecache.CacheWarning, match="No space left on device") as rec:
        np.testing.assert_allclose(f(x), fn(np, x))
    assert len([w for w in rec if w.category is codecache.CacheWarning]) == 1
    return f.lower(x)._exe.path


def test_no_space_anywhere_compiles_in_memory(fresh_codecache, monkeypatch):
    """No folder takes a write (where mount is not allowed, the full disk injected): the
    module lives in memory only, and the result is right."""
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path: its disk cache)
    monkeypatch.setattr(fresh_codecache, "_write_atomic", _no_space)
    monkeypatch.setattr(tempfile, "mkdtemp", _no_space)
    path = _compile_one(fresh_codecache, lambda np, x: np.arctan(x) * 0.375 - np.cosh(x))
    assert path.startswith("<xforms kernel xk_")


def test_numba_cache_write_fails(fresh_codecache, monkeypatch, tmp_path):
    """Numba's cache write fails after its compile: the kernel is used uncached."""
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")     # (the Numba path: its disk cache)
    from numba.core import caching
    monkeypatch.setattr(caching.IndexDataCacheFile, "_save_data", _no_space)
    path = _compile_one(fresh_codecache, lambda np, x: np.arcsinh(x) * 0.625 + np.exp(x))
    assert path.startswith(str(tmp_path / "cache"))


def test_numba_cache_dir_is_checked_too(fresh_codecache, monkeypatch, tmp_path):
    """NUMBA_CACHE_DIR moves Numba's pickled index files: it must be safe as well."""
    import numba
    shared = tmp_path / "numba_cache"
    shared.mkdir()
    os.chmod(tmp_path, 0o700)
    os.chmod(shared, 0o777)
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(shared))
    with pytest.warns(fresh_codecache.CacheWarning, match=f"{shared} is writable by group"):
        d = fresh_codecache.kernel_dir()
    assert not d.startswith(str(tmp_path))
    os.chmod(shared, 0o700)
    assert fresh_codecache.kernel_dir() == str(tmp_path / "cache" / "cpu")


def test_code_compiled_for_perf_is_kept_apart(tmp_path):
    """Under NUMBA_ENABLE_PROFILING=1 (for `perf`) the runtime helpers are not written to
    Numba's cache, which does not key the setting -- kernels compiled later in other
    processes linked them and ran slower (26 vs 16 ms, a transformer block's forward) --
    and kernels get keys of their own."""
    code = ("import numba, xforms.kernels.build.codecache as c, "
            "xforms.kernels.runtime.helper_cache as h; print(h.CACHE, c.VERSION_KEY)")
    out = {}
    for flag in ("0", "1"):
        env = dict(os.environ, PYTHONPATH=ROOT, NUMBA_ENABLE_PROFILING=flag)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        out[flag] = r.stdout.split(" ", 1)
    assert out["0"][0] == "True" and out["1"][0] == "False"
    assert out["0"][1] != out["1"][1]
