"""Turns on the GPU for workload processes run side by side (`python -m benchmarks
--parallel N`, on_gpu.sh's table): a row's timing runs alone on the device, while the work
no figure comes from -- a system's setup (uploads), its first call (JAX's compile and
autotuning, xforms' trace and cached kernels), the check of its result -- may overlap other
processes' such work.  So the table's processes share their starts, imports and compiles,
and no figure is taken while another process uses the GPU.

A readers-writer lock over two lock files (flock: released by the kernel when a process
dies), writers first: a writer (`timed()`) takes the gate, then the room alone; a reader
(`untimed()`) passes the gate, then shares the room.  A writer waiting at the room holds
the gate, so readers arriving after it wait for its turn: its wait ends when the readers
already inside finish (no writer starves).

    with untimed():        # first call, check
        out = fn(*args)
    with timed():          # the figures
        t = timing.measure(fn, args)

Both are no-ops unless XFORMS_BENCH_GPU_TURNS names the folder of the lock files (set by the
parent of processes run side by side).
"""
import contextlib
import os

ENV = "XFORMS_BENCH_GPU_TURNS"


def _folder():
    return os.environ.get(ENV) or None


@contextlib.contextmanager
def _locked(path, mode):
    import fcntl
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)              # (closing the descriptor releases its lock)


def timed():
    """Alone on the GPU: no other process's untimed() or timed() work runs meanwhile."""
    return _turn(exclusive=True)


def untimed():
    """Beside other processes' untimed work, never during a timed() turn."""
    return _turn(exclusive=False)


@contextlib.contextmanager
def _turn(exclusive):
    """Hold the room (alone or shared), entered through the gate: a writer waiting at the
    gate keeps new readers out, so timed turns are never starved."""
    folder = _folder()
    if folder is None:
        yield
        return
    import fcntl
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    with contextlib.ExitStack() as stack:
        with _locked(os.path.join(folder, "gate"), fcntl.LOCK_EX):
            stack.enter_context(_locked(os.path.join(folder, "room"), mode))
        yield
