"""Giving up an eager evaluation part-way: the tiered first call's bound (xforms/exec/tiered.py).

A tiered `jit` may run a first call on the fast tier while the compiled code is being built;
when that compile finishes first, the evaluation is no longer worth finishing.  The compile
thread then asks (`request`) the evaluating thread to stop; the evaluation looks at `STOP`
at safe points only -- each loop trip (xforms/primitives/control/loops.py, scan.py) and each
top-level step of a plan (plans.py `run_steps`) -- and raises `Abandoned` there, so no
NumPy call, cache update or lock is interrupted half-way.  The caller catches it and calls
the compiled code instead.

A safe point costs one list read and a false test when nothing is asked (a few ns: a loop
trip is ~300 ns):

    stop = abandon.STOP                   # once per loop
    for ...:
        carry = body(*carry)
        if stop[0]:                       # a thread was asked to stop
            abandon.check()               # raises Abandoned in that thread only
"""
import threading

# STOP[0]: the ids of the threads asked to stop (empty, and false, nearly always)
STOP = [frozenset()]
_lock = threading.Lock()


class Abandoned(BaseException):
    """An eager evaluation given up at a safe point (`request`).  A BaseException: the
    impl rules' `except Exception` clauses must not turn it into a result."""


def check():
    """Raise Abandoned if the calling thread was asked to stop."""
    if threading.get_ident() in STOP[0]:
        raise Abandoned()


def request(thread_id):
    """Ask thread `thread_id` to stop its eager evaluation at its next safe point."""
    with _lock:
        STOP[0] = STOP[0] | {thread_id}


def clear(thread_id=None):
    """Withdraw the request for `thread_id` (default: the calling thread's)."""
    tid = threading.get_ident() if thread_id is None else thread_id
    with _lock:
        if tid in STOP[0]:
            STOP[0] = STOP[0] - {tid}
