"""tools/cpu_durations.py, the pytest plugin that ranks tests by CPU seconds (their own and
their children's): its accounting of children and its summary."""
import importlib.util
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_spec = importlib.util.spec_from_file_location(
    "cpu_durations", os.path.join(ROOT, "tools", "cpu_durations.py"))
cd = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cd)


def test_a_child_counts_while_it_runs_and_once_it_is_waited_for():
    waited0, live0 = cd._waited(), cd.live_children()
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n" \
           "import sys; sys.stdin.read()"
    child = subprocess.Popen([sys.executable, "-c", spin], stdin=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while cd.live_children().get(child.pid, 0) < 0.25 and time.monotonic() < deadline:
            time.sleep(0.05)
        running = cd.children_cpu(waited0, live0, cd._waited(), cd.live_children())
    finally:
        child.communicate(b"")
    done = cd.children_cpu(waited0, live0, cd._waited(), cd.live_children())
    assert 0.25 <= running <= done < 60, (running, done)


def test_summary_ranks_tests_and_files():
    lines = ["t/a.py::x\t0\t1\t1.0\t2.0\n", "t/b.py::y[1]\t1\t2\t0.5\t0.0\n",
             "t/a.py::z\t2\t3\t0.25\t0.0\n"]
    tests, files, total = cd.summarise(lines, top=2)
    assert tests == [(3.0, "t/a.py::x"), (0.5, "t/b.py::y[1]")]
    assert files == [(3.25, 2, "t/a.py"), (0.5, 1, "t/b.py")] and total == 3.75
