"""How many times each whole-program IR pass ran: traces (a Builder staging a program),
simplifications and dead-code eliminations.  A test hook, not a timer: tests/test_pass_counts.py
checks that the first `jit(grad(loss))` call builds and simplifies each IR once.

    >>> before = pass_counts.snapshot()
    >>> xf.jit(xf.grad(loss))(w, x, y)
    >>> pass_counts.since(before)
    {'trace': 4, 'simplify': 4, 'dce': 4}
"""
counts = {"trace": 0, "simplify": 0, "dce": 0}    # the passes add to these themselves


def snapshot():
    return dict(counts)


def since(before):
    """The passes run since `snapshot()` returned `before`."""
    return {k: counts[k] - before.get(k, 0) for k in counts}
