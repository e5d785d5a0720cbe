"""A compile worker that dies (killed from outside, or by `WorkerClient.kill`) leaves no
pipe open in the parent: no ResourceWarning, checked with warnings as errors."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

SCRIPT = textwrap.dedent("""
    import gc, os, signal, threading, time
    from xforms.exec.worker_client import WorkerClient, WorkerError

    def readers():
        return {t for t in threading.enumerate() if t.name == "xforms-compile-worker-reader"}

    def wait_for(threads):
        for t in threads:
            t.join(60)
            assert not t.is_alive()

    c = WorkerClient()
    before = readers()
    proc = c.start()
    os.kill(proc.pid, signal.SIGKILL)           # killed from outside (the OOM killer)
    wait_for(readers() - before)
    fut = c.submit("def kernel(x):\\n    return x\\n", [("float64", -1)], False)
    before = readers()
    c.kill()                                    # and by the client
    try:
        fut.result(60)
    except WorkerError:
        pass
    wait_for(readers() - before)
    del proc, c, fut
    gc.collect()
    print("DONE", flush=True)
""")


def test_dead_worker_pipes_are_closed(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, XFORMS_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONDEVMODE="1")
    p = subprocess.run([sys.executable, "-W", "error", "-c", SCRIPT], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "DONE" in p.stdout, p.stderr[-3000:]
    assert "ResourceWarning" not in p.stderr and "Exception ignored" not in p.stderr, \
        p.stderr[-3000:]
