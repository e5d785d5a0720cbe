"""Multi-process tests: tests/parallel/mpi_programs.py and examples/data_parallel.py on 2 MPI ranks
(`mpiexec -n 2`), run when MPI is installed (`pip install -e '.[mpi]'`: the pip `mpich`
wheel gives mpiexec, plus mpi4py and numba-mpi); skipped otherwise.  Every mpiexec run has a
time limit, so a hang fails the test instead of stalling the suite.  The checks that pass
on 2 ranks share one launch (each rank imports xforms and Numba once, not once a check:
the launches were most of this file's CPU time); the ones that abort or run an example
have their own."""
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# the pip `mpich` wheel puts mpiexec next to the venv's python, on PATH only when the
# venv is activated
_PATH = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
MPIEXEC = shutil.which("mpiexec", path=_PATH) or shutil.which("mpirun", path=_PATH)
HAVE_MPI = MPIEXEC is not None and all(importlib.util.find_spec(m) is not None
                                       for m in ("mpi4py", "numba_mpi"))
pytestmark = pytest.mark.skipif(not HAVE_MPI, reason="MPI not installed: pip install -e '.[mpi]'")


def mpirun(*args, timeout=420, ranks=2, **env_extra):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", **env_extra)
    return subprocess.run([MPIEXEC, "-n", str(ranks), sys.executable, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


# run in this order in one launch; a failing case stops the ones after it
TWO_RANKS = ["collectives", "grads", "explicit", "mismatch", "inplace", "groups", "shard_map",
             "signed_zeros", "static_differs", "static_same"]


def test_two_ranks():
    # static_differs: on main it hung or aborted with "MPI_Allreduce failed" and no reason
    r = mpirun("tests/parallel/mpi_programs.py", *TWO_RANKS, timeout=900)
    bad = [case for case in TWO_RANKS if r.stdout.count(f"ok {case} ") != 2]
    assert r.returncode == 0 and not bad, (
        f"failed or not reached: {bad}\n{r.stdout[-4000:]}\n{r.stderr[-6000:]}")


def test_axis_index_groups_on_four_ranks():
    # 4 ranks on however many cores (MPICH oversubscribes): pairs, crossed, uneven groups
    r = mpirun("tests/parallel/mpi_programs.py", "groups4", ranks=4)
    assert r.returncode == 0, f"{r.stdout[-4000:]}\n{r.stderr[-6000:]}"
    assert r.stdout.count("ok groups4") == 4, r.stdout


@pytest.mark.parametrize("case", ["abort", "abort_jit"])
def test_an_error_on_one_rank_aborts_every_rank(case):
    r = mpirun("tests/parallel/mpi_programs.py", case, timeout=120)
    assert r.returncode != 0
    assert "rank 1/2] RuntimeError" in r.stderr and "deliberate failure" in r.stderr, r.stderr
    assert "should have aborted" not in r.stderr + r.stdout


@pytest.mark.parametrize("form", ["pmap", "shard_map"])
def test_data_parallel_training_equals_serial_training(form):
    # with tiered execution on, as users run it (the suite turns it off elsewhere): pmap
    # must compile before its first step on every rank, or ranks run different collectives
    extra = ["--shard-map"] if form == "shard_map" else []
    r = mpirun("examples/data_parallel.py", "--steps", "20", "--check", *extra,
               XFORMS_TIERED="1")
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-6000:]}"
    assert "parameters identical on all ranks: True" in r.stdout, r.stdout
    assert "max |parallel - serial|" in r.stdout, r.stdout

