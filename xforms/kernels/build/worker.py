"""The compile worker process: compiles generated modules into the on-disk cache.

The first calls of a jitted function run on a fast tier (xforms/exec/tiered.py) while the
Numba compile happens here, in one worker process per parent, started by the parent's
client (xforms/exec/worker_client.py) on the first tiered call and reused for every function.
The worker only fills the content-addressed disk cache (`codecache.load_module` +
`compile_kernel` with `cache=True`); the parent then loads the same module and finds
Numba's cached machine code, which takes milliseconds instead of the compile's seconds.

    python -m xforms.kernels.build.worker <parent pid>     # jobs on stdin, replies on stdout

The worker exits when its stdin closes and, while busy compiling, when its parent process
is gone (a watchdog thread polls getppid), so it never outlives its parent.  An interrupted
compile cannot damage the cache: codecache writes modules atomically, and Numba writes its
index and code to temporary files renamed into place.
"""
import os
import sys
import threading
import warnings

from xforms.exec import gc_pause
from xforms.exec.worker_client import recv, send


def _watch_parent(ppid):
    import time
    while True:
        if os.getppid() != ppid:
            os._exit(0)             # orphaned: leave at once (the cache stays consistent)
        time.sleep(0.2)


def _warm_up():
    """Numba's first compile in a process sets up its typing and target contexts (about
    half a second); do it before the first job arrives.  The worker compiles only xforms'
    kernels, so without the extensions they import themselves (numba_fixes/extensions.py)."""
    import numba

    from ..numba_fixes import extensions
    with extensions.deferring():
        numba.njit("float64(float64)", cache=False)(lambda x: x + 1.0)


def main(ppid):
    threading.Thread(target=_watch_parent, args=(ppid,), daemon=True).start()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr                 # stray prints must not break the protocol
    from . import codecache
    from .. import user_prims
    # a cache the worker cannot use is the parent's too: the parent, which then compiles
    # the kernel itself, says so once
    warnings.simplefilter("ignore", codecache.CacheWarning)
    _warm_up()
    while True:
        job = recv(stdin)
        if job is None:
            return
        # as jit does in the parent (xforms/exec/gc_pause.py); the reply goes out before the
        # collector resumes, so whatever it still does runs while the parent loads the kernel
        with gc_pause.paused():
            if not _reply(stdout, _compile(job, codecache, user_prims)):
                return                      # the parent exited mid-compile: nobody to tell


def _compile(job, codecache, user_prims):
    """Compile one job's kernel into the disk cache; the reply for the parent."""
    try:
        for key, module, qualname in job.get("user_impls", ()):
            user_prims.register_importable(key, module, qualname)
        mod, _, h = codecache.load_module(job["source"])
        codecache.compile_kernel(mod, h, codecache.signature_of(job["sig"]),
                                 parallel=job["parallel"])
        return {"id": job["id"], "ok": True}
    except BaseException as e:              # reported; the parent decides what to do
        return {"id": job["id"], "ok": False, "error": f"{type(e).__name__}: {e}"[:4000]}


def _reply(stdout, reply):
    """Send `reply`; False when the parent is gone."""
    try:
        send(stdout, reply)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else os.getppid())
