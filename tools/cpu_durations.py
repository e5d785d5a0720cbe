"""CPU seconds of every test: the suite's cost ranked on a loaded machine, where a test's
wall time says more about the other processes than about the test.  A test's figure is its
process's CPU time plus its children's: those it waited for (the simulator's suite, the PTX
check, the examples, with their own children) and those still running (the compile
worker), read from /proc on Linux.

    XFORMS_CPU_LOG=/tmp/cpu PYTHONPATH=. python -m pytest -n 2 -p tools.cpu_durations
    python tools/cpu_durations.py /tmp/cpu.*        # the costliest tests and files

Each process (xdist worker) appends `nodeid, start, end, own CPU s, children's CPU s` lines
to $XFORMS_CPU_LOG.<worker>.  Measure from a fresh cache (XFORMS_CACHE_DIR, the Numba
caches in xforms/**/__pycache__), as CI does: a warm cache hides the compiles.
"""
import collections
import os
import resource
import sys
import time

import pytest

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def live_children():
    """{pid: CPU s} of this process's running children, their waited-for children's
    included; {} where there is no /proc."""
    me, out = os.getpid(), {}
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except (OSError, ValueError):
            continue
        fields = stat[stat.rindex(")") + 2:].split()    # (the name may hold spaces)
        if int(fields[1]) == me:
            out[int(pid)] = sum(int(v) for v in fields[11:15]) / _TICK   # u/s, cu/cs time
    return out


def _waited():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def children_cpu(waited0, live0, waited1, live1):
    """Children's CPU s between two readings: a child running at the first and waited for
    by the second counts in `waited1` whole, so every first live reading is taken off.

        >>> children_cpu(1.0, {7: 2.0}, 4.5, {8: 0.5})   # 7: 2 -> 3.5 s, waited; 8 new
        2.0
    """
    return (waited1 - waited0) + sum(live1.values()) - sum(live0.values())


_log = None


def _write(line):
    global _log
    if _log is None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _log = open(f"{os.environ.get('XFORMS_CPU_LOG', 'cpu_durations')}.{worker}", "a",
                    buffering=1)
    _log.write(line)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    t0, own0, waited0, live0 = time.time(), time.process_time(), _waited(), live_children()
    yield
    child = children_cpu(waited0, live0, _waited(), live_children())
    _write(f"{item.nodeid}\t{t0:.3f}\t{time.time():.3f}\t"
           f"{time.process_time() - own0:.3f}\t{child:.3f}\n")


def summarise(lines, top=30):
    """(the `top` costliest tests, the files by CPU s, the total) of log lines.

        >>> summarise(["t/a.py::x\\t0\\t9\\t1.0\\t2.0", "t/a.py::y\\t9\\t9\\t0.5\\t0"], top=1)
        ([(3.0, 't/a.py::x')], [(3.5, 2, 't/a.py')], 3.5)
    """
    tests, files, count = [], collections.Counter(), collections.Counter()
    for line in lines:
        nodeid, _, _, own, child = line.rstrip("\n").split("\t")
        cpu = float(own) + float(child)
        tests.append((cpu, nodeid))
        files[nodeid.split("::")[0]] += cpu
        count[nodeid.split("::")[0]] += 1
    tests.sort(reverse=True)
    by_file = sorted(((s, count[f], f) for f, s in files.items()), reverse=True)
    return tests[:top], by_file, sum(c for c, _ in tests)


def main(paths):
    lines = [ln for p in paths for ln in open(p) if ln.count("\t") == 4]
    tests, by_file, total = summarise(lines)
    print(f"{len(lines)} tests, {total:.0f} CPU s\n\ncostliest tests (CPU s):")
    for cpu, nodeid in tests:
        print(f"{cpu:8.1f}  {nodeid}")
    print("\nfiles (CPU s, tests):")
    for cpu, n, f in by_file[:40]:
        print(f"{cpu:8.1f} {n:5d}  {f}")


if __name__ == "__main__":
    main(sys.argv[1:])
