"""`import xforms` starts importing the compiler package on a thread of its own
(xforms/jit/backends.py `preload`, XFORMS_PRELOAD), so that the first `jit` call finds it
imported (issue #35).  The process-level checks run in fresh interpreters; no timings are
asserted."""
import json
import os
import subprocess
import sys
import textwrap

from xforms.jit import backends

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _run(code, preload, tmp_path):
    # (OPENBLAS_THREAD_TIMEOUT unset, as in a user's shell: xforms sets it, and restarts the
    # OpenBLAS pools loaded before: this process's setting would be inherited)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    env.update(PYTHONPATH=ROOT, XFORMS_PRELOAD=preload, XFORMS_CACHE_DIR=str(tmp_path / "cache"))
    code = f"HOLD_PRELOAD = {HOLD_PRELOAD!r}\n" + textwrap.dedent(code)
    p = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


# a child's lines that hold the preload for 0.5 s inside its import of llvmlite's bindings
# (`Slow.started` is set once it is there): a child's `exec(HOLD_PRELOAD)` (`_run` defines
# the name) before its `import xforms`
HOLD_PRELOAD = """
class Slow:
    started = threading.Event()

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        preloading = threading.current_thread().name == "xforms-preload"
        if name == "llvmlite.binding.ffi" and preloading:
            cls.started.set()
            time.sleep(0.5)
        return None

sys.meta_path.insert(0, Slow)
"""


_PROBE = """
    import json, sys, threading
    import numpy as np
    import xforms as xf, xforms.numpy as xnp
    from xforms.exec import tiered
    found = [t for t in threading.enumerate() if t.name == "xforms-preload"]
    for t in found:
        t.join()
    imported = "xforms.kernels" in sys.modules
    left = tiered.has_pending_warnings()    # the OpenBLAS restart, left to the main thread
    y = xf.jit(lambda x: xnp.sin(x) * 2.0, tiered=False)(np.arange(3.0))
    print(json.dumps([len(found), imported, left, tiered.has_pending_warnings(),
                      np.asarray(y).tolist() == (np.sin(np.arange(3.0)) * 2.0).tolist()]))
"""


def test_import_starts_the_compiler_import_and_the_first_compile_finishes_it(tmp_path):
    assert _run(_PROBE, "1", tmp_path) == [1, True, True, False, True]


def test_preload_off_leaves_the_compiler_to_the_first_compile(tmp_path):
    assert _run(_PROBE, "0", tmp_path) == [0, False, False, False, True]


def test_a_failed_preload_is_reported_by_the_first_compile(tmp_path):
    """The preload thread's ImportError reaches the user where the compile needs it."""
    code = """
        import json, sys, threading
        import numpy as np

        class NoLlvmlite:
            @staticmethod
            def find_spec(name, path=None, target=None):
                if name.partition(".")[0] == "llvmlite":
                    raise ImportError("no llvmlite here")
                return None

        sys.meta_path.insert(0, NoLlvmlite)
        import xforms as xf, xforms.numpy as xnp
        for t in threading.enumerate():
            if t.name == "xforms-preload":
                t.join()
        try:
            xf.jit(lambda x: xnp.sin(x), tiered=False)(np.arange(3.0))
            print(json.dumps("compiled"))
        except xf.errors.BackendError as e:
            print(json.dumps(str(e)))
    """
    said = _run(code, "1", tmp_path)
    assert "failed to import" in said and "no llvmlite here" in said, said


def test_a_process_forked_during_the_preload_compiles(tmp_path):
    """A fork right after `import xforms` (a multiprocessing pool made at the top of a
    script) waits for the preload: a child forked in the middle of it inherited module
    locks held by a thread it lacks, and its first compile waited for them for ever."""
    code = """
        import json, os, sys, threading, time
        import numpy as np

        exec(HOLD_PRELOAD)
        import xforms as xf, xforms.numpy as xnp
        assert Slow.started.wait(60)
        pid = os.fork()
        if pid == 0:
            y = xf.jit(lambda x: xnp.cos(x) + 1.0, tiered=False)(np.arange(3.0))
            os._exit(0 if np.asarray(y).tolist() == (np.cos(np.arange(3.0)) + 1.0).tolist() else 3)
        print(json.dumps(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])))
    """
    assert _run(code, "1", tmp_path) == 0


def test_a_compile_that_does_not_wait_for_the_preload_leaves_its_work_to_the_next(tmp_path):
    """A compile for the "interpret" backend, registered without the compiler package, does
    not wait for the preload: what the preload leaves to the main thread runs at the first
    compile that finds the package imported."""
    code = """
        import json, sys, threading, time
        import numpy as np

        exec(HOLD_PRELOAD)
        import xforms as xf, xforms.numpy as xnp
        from xforms.exec import tiered
        assert Slow.started.wait(60)
        xf.jit(lambda x: xnp.sin(x), backend="interpret")(np.arange(3.0))
        for t in threading.enumerate():
            if t.name == "xforms-preload":
                t.join()
        left = tiered.has_pending_warnings()
        xf.jit(lambda x: xnp.sin(x), tiered=False)(np.arange(3.0))
        print(json.dumps([left, tiered.has_pending_warnings()]))
    """
    assert _run(code, "1", tmp_path) == [True, False]


def test_the_preload_waits_while_a_fast_tier_first_call_runs(tmp_path):
    """The preload's import holds the GIL: it imports no module while a tiered first call
    (the fast tier answering) runs, as the tiered compile thread waits for it."""
    code = """
        import json, sys, threading, time
        import numpy as np
        seen = []

        class Slow:       # holds the preload at llvmlite's bindings, then logs its imports
            started = threading.Event()

            @classmethod
            def find_spec(cls, name, path=None, target=None):
                if threading.current_thread().name == "xforms-preload":
                    seen.append(time.monotonic())
                    if name == "llvmlite.binding.ffi":
                        cls.started.set()
                        time.sleep(0.3)
                return None

        sys.meta_path.insert(0, Slow)
        import xforms as xf, xforms.numpy as xnp
        assert Slow.started.wait(60)

        def slow(x):
            time.sleep(0.8)
            return x

        f = xf.jit(lambda x: xf.pure_callback(slow, xf.ShapeDtypeStruct((3,), np.float64),
                                              xnp.sin(x)) * 2.0, tiered=True)
        start = time.monotonic()
        f(np.ones(3))
        end = time.monotonic()
        for t in threading.enumerate():
            if t.name == "xforms-preload":
                t.join()
        inside = [t for t in seen if start + 0.4 < t < end - 0.05]
        print(json.dumps([len(inside), len([t for t in seen if t > end])]))
    """
    inside, after = _run(code, "1", tmp_path)
    assert inside == 0 and after > 0, (inside, after)


def test_auto_preloads_only_where_a_core_is_idle():
    assert backends.idle_core(2, 0.4) and backends.idle_core(2, 1.0)    # (a harness's runs)
    assert backends.idle_core(8, 7.0)
    assert not backends.idle_core(2, 1.5) and not backends.idle_core(2, 12.0)
    assert not backends.idle_core(1, 0.0)          # (one core: the thread would only compete)
    assert backends.preload("auto", cores=2, load=12.0) is None
    assert backends.preload("never") is None


def test_no_preload_once_the_compiler_is_imported():
    import xforms.kernels  # noqa: F401
    assert backends.preload("always") is None
