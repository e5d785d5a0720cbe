"""Runs process histories of special functions (tests/fuzz/special_history.py) in a process
of its own, so every function's first compile in the process is one of the plan's
(tests/fuzz/test_fuzz.py starts it):

    python tests/fuzz/special_worker.py plans.json

The JSON holds a list of plans, each run in this process in turn; the exit status is 0 when
every program agreed with its reference, else the failures are printed and it is 1.
"""
import json
import os
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TESTS)

from fuzz.special_history import run_plan, show  # noqa: E402


def main(path):
    with open(path) as f:
        plans = json.load(f)
    for k, plan in enumerate(plans):
        plan = [tuple(s) for s in plan]
        bad = run_plan(plan)
        if bad:
            print(f"history {k}: {len(bad)} wrong result(s):\n" + "\n".join(bad)
                  + f"\n-- the plan, in one fresh process:\n{show(plan)}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
