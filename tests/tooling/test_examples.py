"""Smoke test: every example runs to completion (each asserts its own outcome)."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
SCRIPTS = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py"))


@pytest.mark.early
@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs(script):
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, script)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), f"{script} printed nothing"
