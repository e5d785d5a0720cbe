"""A second process that keeps one core busy while a benchmark case runs.

Issue #20's "loaded" row: a product that splits its work over every core waits
for the half whose core another process holds, while a system that notices the
load (XLA's pool, xforms' BLAS policy in xforms/kernels/runtime/products/blas_threads.py) degrades
gracefully.  ``with one_core_busy(): ...`` runs the body beside a spinning
Python process and stops it afterwards::

    with one_core_busy():
        t = timing.measure(fn, args)
"""
from __future__ import annotations

import contextlib
import subprocess
import sys
import time

SPIN = "while True: pass"
WARMUP_S = 3.0      # long enough for a load monitor (1-2 s period) to see the spinner


@contextlib.contextmanager
def one_core_busy(warmup_s: float = WARMUP_S):
    proc = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        time.sleep(warmup_s)
        yield proc
    finally:
        proc.kill()
        proc.wait()
