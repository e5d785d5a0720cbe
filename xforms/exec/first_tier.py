"""Which tier a jitted function's first call on a new signature takes (xforms/exec/tiered.py
runs it): the fast tier, the compile first, or a race of the two where the cost model's
estimate (xforms/exec/eager_cost.py) is too close to the compile's to trust.

    tier, deadline_s = first_call_tier(closed)      # ("fast" | "race" | "compile", s or None)
"""
import os

from .. import config
from .eager_cost import (EAGER_BASE, EAGER_PER_EQN, EQN_NS, compile_limit,
                         direct_compile_limit, eager_cost, holds_guessed)


def worthwhile(closed, direct=None):
    """Whether the fast tier is cheap enough for `closed`: one eager evaluation should not
    take longer than its compile (xforms/exec/eager_cost.py): Numba's, or, where
    `direct(closed)` says the direct LLVM path may take the program, that path's, ~10x
    cheaper (a 10^5-step loop: 0.4 s eagerly against a 0.02 s compile).  `direct` is asked
    only when the answer depends on it (it may import the backends); None: `in_process`.

    >>> worthwhile(xf.make_jaxpr(lambda x: xnp.sin(x) * 2.0)(np.ones(10 ** 6)))
    True
    """
    executed, budget, _ = _estimate(closed, direct, 1.0)
    return executed <= budget


# A first call estimated longer than its compile races (`first_call_tier`) when the estimate
# is at most this factor above the compile's budget (the model's error: median x1.4, worst
# x3, session 36), or GUESS_BAND where a while loop's trip count is guessed (the ODE
# gradient at t_end 5 and 50: the same program, the same estimate, 0.13-0.21 and 0.72-1.3
# CPU s eagerly).  Below the budget a first call stays on the fast tier, whose compile
# starts after a head start and stops it if it is done first (`TieredExecutable`): racing
# there too slowed short first calls 2-10x (the compile's in-process part holds the GIL).
RACE_BAND = 3.0
GUESS_BAND = 10.0
# Without a spare core a racing first call gets this fraction of the compile's expected CPU
# seconds before it gives up for the compile: the model put it above the compile, so when
# the model is right the race costs this much, and when it is wrong a first call of under
# this much answers eagerly.  First call, process CPU s, fresh processes, compiling first ->
# racing, medians of 4-5 alternated rounds at load 17-19: the ODE gradient to t = 5 (0.13-0.21
# CPU s eagerly of a 0.70 s budget) 1.38 -> 0.73, to t = 50 1.55 -> 1.53 (a whole compile's
# deadline, load 10: 1.13-1.56 -> 1.92-2.36).
DEADLINE_FRACTION = 0.5
# the idle cores a race needs to start the compile at once beside the first call (the
# calling thread's, the compile's, one for the rest): a 2-core machine never does
SPARE_CORES = 3


def first_call_tier(closed, direct=None):
    """(tier, seconds) of a new signature of `closed`'s first call: ("fast", None): the
    fast tier, the compile after it (`TieredExecutable`); ("compile", None): compile, then
    call; ("race", its deadline: DEADLINE_FRACTION of the compile's expected seconds)
    where the estimate is above the compile's but within the model's error (RACE_BAND,
    GUESS_BAND): the first call starts on the fast tier and gives up for the compiled code
    (at its next loop trip or step: xforms/core/eager/abandon.py) when the compile, started
    at once beside it where a core is spare, is done first, else when it has run for its
    deadline in CPU seconds (then it compiles and waits).  A program with effects (debug
    prints, callbacks) never races: giving it up part-way would run its effects twice.  XFORMS_TIERED_MAX_EAGER (a fixed limit) decides
    between the first two alone.

    >>> first_call_tier(xf.make_jaxpr(lambda x: xnp.sin(x) * 2.0)(np.ones(10 ** 6)))
    ('fast', None)
    """
    fixed = config.tiered_max_eager() is not None
    effects = bool(getattr(closed, "jaxpr", closed).effects)
    band = 1.0 if fixed or effects else GUESS_BAND if holds_guessed(closed) else RACE_BAND
    executed, budget, _ = _estimate(closed, direct, band)
    if executed <= budget:
        return "fast", None
    if executed <= budget * band:
        return "race", budget * EQN_NS * 1e-9 * DEADLINE_FRACTION
    return "compile", None


def _estimate(closed, direct, band):
    """(estimated equation executions of one eager evaluation, the compile's budget in the
    same units, equations): the budget is the direct LLVM path's where `direct(closed)`
    says it may compile the program and the answer matters (the estimate above that
    budget), else Numba's: then the estimate is above Numba's budget x `band`."""
    fixed = config.tiered_max_eager()
    limit = fixed if fixed is not None else EAGER_BASE + EAGER_PER_EQN * 10 ** 5
    executed, size = eager_cost(closed, limit)
    budget = compile_limit(size, fixed)
    if fixed is not None or executed > budget * band:
        return executed, budget, size
    direct_budget = direct_compile_limit(closed)
    if executed > direct_budget and (direct or in_process)(closed):
        budget = direct_budget
    return executed, budget, size


def has_spare_core():
    """Whether cores are idle for a compile beside the first call: SPARE_CORES of the
    usable cores free by the 1-minute load average.  Beside each other the two take CPU
    (and the GIL: the compile's planning and IR emission hold it) from each other: the ODE
    gradient's first call raced so at load 17-19 on 2 cores, 1.84-2.56 CPU s (median 2.47),
    7.4-9.4 s of wall, against 1.19-1.79 (1.55), 4.2-6.1 compiling first, and 1.49-2.11
    (1.53), 5.4-7.6 with the deadline.  Not yet measured on an idle machine."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    try:
        return os.getloadavg()[0] + SPARE_CORES <= cores
    except OSError:
        return False


#: cheap necessary tests, filled by the backends: `test(closed)` is True when the backend
#: may compile `closed` in this process without the compile worker (the CPU backend: its
#: direct LLVM path, xforms/kernels/cpu/llvm/ `may_take`)
IN_PROCESS = []


def in_process(closed):
    """Whether `closed` may be a program that a backend compiles in this process without
    the compile worker (the CPU backend from LLVM IR, xforms/kernels/cpu/llvm/: float
    arguments and results, no constants, elementwise, view and reduction equations), so
    that starting the worker for it would only cost: a cheap necessary test (a program it
    passes that the backend then gives Numba starts the worker when it asks).

    >>> in_process(xf.make_jaxpr(lambda x: xnp.sin(x) * 2.0)(0.5))
    True
    """
    return any(test(closed) for test in IN_PROCESS)
