"""The direct LLVM path's object code on disk (xforms/kernels/build/object_cache.py): a
second process loads it instead of compiling, with the same bits; damaged entries are
replaced; a full, read-only or untrusted cache costs the cache (one warning), never the
result; the key follows the IR and the target."""
import ctypes
import errno
import json
import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from xforms.kernels.build import cache_rules, object_cache
from xforms.kernels.cpu.llvm import engine

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

CHILD = textwrap.dedent("""
    import json, sys, warnings
    warnings.simplefilter("always")
    import numpy as np, xforms as xf, xforms.numpy as xnp
    from xforms.kernels.build import object_cache
    f = xf.jit(xf.grad(lambda x: xnp.sum(xnp.tanh(x) * x + xnp.exp(-x * x) * 0.75)),
               tiered=False)
    x = np.linspace(-1.0, 1.0, 7)
    with warnings.catch_warnings(record=True) as caught:
        r = np.asarray(f(x))
    print(json.dumps({"bits": r.tobytes().hex(), "stats": object_cache.stats,
                      "numba": "numba" in sys.modules,
                      "warnings": [str(w.message) for w in caught]}))
""")


def _child(tmp_path, cache, **env):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    e = dict(os.environ, XFORMS_CACHE_DIR=str(cache), PYTHONPATH=ROOT)
    e.pop("XFORMS_DISABLE_CACHE", None)
    e.pop("XFORMS_LLVM_KERNELS", None)
    e.update(env)
    p = subprocess.run([sys.executable, str(script)], env=e, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_second_process_loads_the_object_code(tmp_path):
    cache = tmp_path / "cache"
    first = _child(tmp_path, cache)
    assert first["stats"]["hits"] == 0 and first["stats"]["stored"] >= 1, first
    assert not first["numba"] and not first["warnings"], first    # (no Numba to reach it)
    files = sorted(os.listdir(cache / "llvm"))
    assert len(files) == first["stats"]["stored"]
    assert oct(os.stat(cache / "llvm").st_mode & 0o777) == "0o700"
    second = _child(tmp_path, cache)
    assert second["stats"] == {"hits": first["stats"]["stored"], "misses": 0, "stored": 0}
    assert second["bits"] == first["bits"] and not second["numba"], second
    assert sorted(os.listdir(cache / "llvm")) == files
    x = np.linspace(-1.0, 1.0, 7)
    want = np.tanh(x) + x * (1 - np.tanh(x) ** 2) - 1.5 * x * np.exp(-x * x)
    np.testing.assert_allclose(np.frombuffer(bytes.fromhex(second["bits"])), want,
                               rtol=1e-14)


def test_disabled_cache_writes_nothing(tmp_path):
    out = _child(tmp_path, tmp_path / "cache", XFORMS_DISABLE_CACHE="1")
    assert out["stats"] == {"hits": 0, "misses": 0, "stored": 0}
    assert not (tmp_path / "cache" / "llvm").exists()


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """The object cache in tmp_path/cache, no warnings given or folders broken yet."""
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("XFORMS_DISABLE_CACHE", raising=False)
    monkeypatch.setattr(cache_rules, "broken", set())
    monkeypatch.setattr(cache_rules, "_warned", set())
    monkeypatch.setattr(object_cache, "stats", {"hits": 0, "misses": 0, "stored": 0})
    return tmp_path / "cache" / "llvm"


def _ir(c):
    """A small module whose function `xf_t` computes sin(x) * c + x (c picks the entry)."""
    return textwrap.dedent(f"""
        declare double @llvm.sin.f64(double)
        define double @xf_t(double %x) {{
          %s = call double @llvm.sin.f64(double %x)
          %m = fmul double %s, {float(c)!r}
          %r = fadd double %m, %x
          ret double %r
        }}""")


def _run(text, x=0.3):
    """`xf_t` of IR `text` compiled (or loaded) by the engine, at x; -> (bits, owner)."""
    address, owner = engine.compile_function(text, "xf_t")
    fn = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)
    return np.float64(fn(x)).tobytes(), owner


def _entry(folder):
    names = os.listdir(folder)
    assert len(names) == 1, names
    return folder / names[0]


def _damage(kind, path):
    data = path.read_bytes()
    if kind == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif kind == "a byte changed":
        path.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "no header":
        path.write_bytes(data[data.index(b"\n") + 1:])
    elif kind == "another key's entry":
        head, _, code = data.partition(b"\n")
        f = head.split(b" ")
        path.write_bytes(b" ".join(f[:2] + [b"0" * len(f[2])] + f[3:]) + b"\n" + code)
    elif kind == "a folder":
        path.unlink()
        path.mkdir()


@pytest.mark.parametrize("kind", ["truncated", "a byte changed", "empty", "no header",
                                  "another key's entry", "a folder"])
def test_damaged_entry_is_replaced(fresh, kind):
    text = _ir(0.4375)
    want, _ = _run(text)
    path = _entry(fresh)
    good = path.read_bytes()
    assert _run(text)[0] == want and object_cache.stats["hits"] == 1
    _damage(kind, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # (healed without a warning)
        assert _run(text)[0] == want
    assert object_cache.stats == {"hits": 1, "misses": 2, "stored": 2}
    assert path.read_bytes() == good                   # written anew
    assert _run(text)[0] == want and object_cache.stats["hits"] == 2


def test_a_file_where_the_folder_belongs_is_replaced(fresh):
    fresh.parent.mkdir(mode=0o700)
    fresh.write_bytes(b"not a folder")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _run(_ir(1.3125))[0] == _reference(1.3125)
    assert fresh.is_dir() and len(os.listdir(fresh)) == 1


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_full_disk_compiles_in_memory(fresh, monkeypatch):
    monkeypatch.setattr(object_cache, "_write", _no_space)
    with pytest.warns(cache_rules.CacheWarning, match="No space left on device") as rec:
        bits, _ = _run(_ir(0.5625))
        bits2, _ = _run(_ir(0.6875))                   # (the folder is skipped: no warning)
    assert len([w for w in rec if w.category is cache_rules.CacheWarning]) == 1
    assert (bits, bits2) == (_reference(0.5625), _reference(0.6875))
    assert not os.listdir(fresh) and object_cache.stats["stored"] == 0


def _reference(c, x=0.3):
    """sin(x) * c + x as the IR computes it (libm's sin, as math's), without the cache."""
    return np.float64(math.sin(x) * c + x).tobytes()


def test_untrusted_folder_is_not_used(fresh, tmp_path):
    os.chmod(tmp_path, 0o700)
    (tmp_path / "cache").mkdir(mode=0o777)
    os.chmod(tmp_path / "cache", 0o777)                # (the umask may have taken bits)
    with pytest.warns(cache_rules.CacheWarning, match="writable by group and others"):
        bits, _ = _run(_ir(0.8125))
    assert bits == _reference(0.8125) and not os.listdir(fresh)


def _tmpfs(path, size_kb):
    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0700", "tmpfs",
                        str(path)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root and mount rights)")


def test_full_filesystem_compiles_in_memory(fresh, tmp_path, monkeypatch):
    mnt = tmp_path / "full"
    _tmpfs(mnt, 64)
    try:
        monkeypatch.setenv("XFORMS_CACHE_DIR", str(mnt / "xforms"))
        (mnt / "xforms" / "llvm").mkdir(parents=True)
        with open(mnt / "fill", "wb", buffering=0) as f:    # every block taken
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError as e:
                assert e.errno == errno.ENOSPC
        with pytest.warns(cache_rules.CacheWarning, match="No space left on device"):
            bits, _ = _run(_ir(1.1875))
        assert bits == _reference(1.1875)
        assert not os.listdir(mnt / "xforms" / "llvm")  # (nor a temporary file left)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_read_only_cache_compiles_without_it(fresh, tmp_path, monkeypatch):
    mnt = tmp_path / "ro"
    _tmpfs(mnt, 512)
    try:
        monkeypatch.setenv("XFORMS_CACHE_DIR", str(mnt / "xforms"))
        _run(_ir(0.9375))
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        with pytest.warns(cache_rules.CacheWarning, match="is not writable"):
            bits, _ = _run(_ir(1.0625))
        assert bits == _reference(1.0625)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_key_follows_the_ir_and_the_target():
    text = _ir(0.25)
    target = ("x86_64-unknown-linux-gnu", "skylake", "+avx2,+fma,-avx512f")
    key = engine.cache_key(text, *target)
    assert key == engine.cache_key(text, *target)
    assert key != engine.cache_key(_ir(0.375), *target)
    assert key != engine.cache_key(text, target[0], "znver3", target[2])
    assert key != engine.cache_key(text, *target[:2], "+avx2,+fma,+avx512f")
    assert key != engine.cache_key(text, "aarch64-unknown-linux-gnu", *target[1:])
    assert key != engine.cache_key(text, *target, passes=False)     # (code generation only)


def test_ir_holding_an_address_is_not_cached(fresh):
    """An address of this process written as a number would be wrong in the next one."""
    text = _ir(0.125).replace("define", "@g = global ptr inttoptr (i64 140737488355328 to "
                                        "ptr)\ndefine", 1)
    assert engine.cache_key(text, "t", "c", "f") is None
    as_instruction = _ir(0.125).replace("ret double %r", "%p = inttoptr i64 4096 to ptr\n"
                                                         "  ret double %r")
    assert engine.cache_key(as_instruction, "t", "c", "f") is None
    assert engine.cache_key(_ir(0.125), "t", "c", "f") is not None
    assert _run(text)[0] == _reference(0.125)
    assert not os.path.exists(fresh) or not os.listdir(fresh)
