"""The parent's side of the compile worker: one background process per parent process that
compiles generated modules into the on-disk cache (the worker itself: xforms/kernels/build/worker.py).

It lives here, not in `kernels`, so that a jitted function's first call can start the
process before this process has imported the compiler (Numba's import is what the worker
does first, in parallel with the parent's tracing):

    client = worker()                                # the process-wide client (lazy)
    client.start()                                   # spawn now
    fut = client.submit(source, sig_spec, parallel)  # -> concurrent.futures.Future
    fut.result()                                     # None, or raises WorkerError

Protocol: length-prefixed pickles over the worker's stdin/stdout (plain data only: the
source text, the signature as (dtype name, ndim) pairs, flags).  A dead worker fails its
pending jobs (the caller then compiles in-process) and the next job starts a fresh one, at
most `WorkerClient.MAX_DEATHS` times per process; a worker is also replaced after
`WorkerClient.RECYCLE_AFTER` jobs, which bounds its memory.
"""
import os
import pickle
import struct
import subprocess
import sys
import threading
from concurrent.futures import Future

WORKER_MODULE = "xforms.kernels.build.worker"
_HEADER = struct.Struct("<I")


class WorkerError(RuntimeError):
    """The background compile did not happen (the worker died, or Numba failed there)."""


def send(stream, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def recv(stream):
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    n = _HEADER.unpack(head)[0]
    data = stream.read(n)
    return pickle.loads(data) if len(data) == n else None


class WorkerClient:
    """One worker process (spawned lazily), its pending jobs, and a reader thread."""

    MAX_DEATHS = 3          # after that many deaths, stop trying (compile in-process)
    # Numba/LLVM memory grows with every compile and is never returned (~4 MB a kernel):
    # after this many jobs the worker is retired (stdin closed once it is idle) and the
    # next job starts a fresh one (about a second, off the critical path)
    RECYCLE_AFTER = 64

    def __init__(self):
        self._lock = threading.Lock()
        self._proc = None
        self._pending = {}               # job id -> Future
        self._next_id = 0
        self._jobs = 0                   # sent to the current process
        self.starts = self.deaths = 0

    def _spawn(self):
        env = dict(os.environ)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        self.starts += 1
        proc = subprocess.Popen([sys.executable, "-m", WORKER_MODULE,
                                 str(os.getpid())], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, env=env, close_fds=True)
        threading.Thread(target=self._read, args=(proc,), daemon=True,
                         name="xforms-compile-worker-reader").start()
        return proc

    def start(self):
        """Start the process now (it imports Numba while the parent traces)."""
        with self._lock:
            return self._ensure()

    def _ensure(self):
        if self._proc is not None and self._proc.poll() is not None:
            self.deaths += 1                 # (a retired worker is no longer _proc)
            self._proc = None
        if self._proc is None:
            if self.deaths >= self.MAX_DEATHS:
                return None
            try:
                self._proc = self._spawn()
                self._jobs = 0
            except OSError:
                self.deaths += 1
        return self._proc

    def _retire_if_due(self, proc):
        """(with the lock held) Close an idle, long-used worker's stdin: it exits."""
        if proc is self._proc and self._jobs >= self.RECYCLE_AFTER and \
                not any(p is proc for _, p in self._pending.values()):
            self._proc = None
            try:
                proc.stdin.close()
            except OSError:
                pass

    @property
    def pid(self):
        p = self._proc
        return p.pid if p is not None and p.poll() is None else None

    def submit(self, source, sig_spec, parallel, user_impls=()):
        """Compile `source`'s kernel into the disk cache; `user_impls`: [(key, module,
        qualname)] of the user primitives it calls (xforms/kernels/user_prims.py `importable`)."""
        fut = Future()
        with self._lock:
            proc = self._ensure()
            if proc is None:
                fut.set_exception(WorkerError("no compile worker could be started"))
                return fut
            jid = self._next_id
            self._next_id += 1
            self._pending[jid] = (fut, proc)
            self._jobs += 1
            try:
                send(proc.stdin, {"id": jid, "source": source, "sig": sig_spec,
                                   "parallel": parallel, "user_impls": list(user_impls)})
            except (OSError, ValueError) as e:        # broken pipe: it died
                del self._pending[jid]
                fut.set_exception(WorkerError(f"compile worker unreachable: {e}"))
        return fut

    def _read(self, proc):
        while True:
            try:
                msg = recv(proc.stdout)
            except Exception:
                msg = None
            if msg is None:
                break
            with self._lock:
                fut, _ = self._pending.pop(msg["id"], (None, None))
                self._retire_if_due(proc)
            if fut is not None:
                if msg["ok"]:
                    fut.set_result(None)
                else:
                    fut.set_exception(WorkerError(msg["error"]))
        proc.wait()
        with self._lock:                   # fail what this process still owed
            lost = [(j, f) for j, (f, p) in self._pending.items() if p is proc]
            for j, _ in lost:
                del self._pending[j]
            _close_pipes(proc)             # (under the lock: submit writes to stdin)
        for _, f in lost:
            f.set_exception(WorkerError(f"the compile worker (pid {proc.pid}) exited with "
                                        f"status {proc.returncode}"))

    def kill(self):
        """Terminate the worker (tests; a later submit starts another)."""
        with self._lock:
            p = self._proc
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()


def _close_pipes(proc):
    """Close a finished worker's pipes (else each leaks two files and a ResourceWarning)."""
    for stream in (proc.stdin, proc.stdout):
        try:
            stream.close()
        except OSError:                    # unsent bytes to a dead process: nothing to do
            pass


_client = None
_client_lock = threading.Lock()


def worker():
    global _client
    with _client_lock:
        if _client is None:
            _client = WorkerClient()
        return _client
