"""First-order optimizers with JAX's `jax.example_libraries.optimizers` interface.

Each optimizer is a triple of functions `(init_fun, update_fun, get_params)`:

    >>> opt_init, opt_update, get_params = optimizers.adam(1e-3)
    >>> state = opt_init(params)                     # params: any pytree of arrays
    >>> state = opt_update(step, grads, state)       # grads: same structure as params
    >>> params = get_params(state)

The per-array rules below are written for one array; `optimizer` lifts them to pytrees.  The
state is an `OptimizerState` pytree (flat per-leaf states plus the structures), so it passes
through `jit`, `vmap` and `lax` control flow.  The arithmetic is JAX's, step for step, so the
parameters after a few steps match JAX's to rounding.
"""
import collections
import functools

from .. import numpy as xnp
from ..tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

OptimizerState = collections.namedtuple("OptimizerState",
                                        ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Optimizer = collections.namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


def _flatten_states(states):
    """-> (per-leaf flat states, per-leaf structures), as tuples: the structures are the
    state's pytree aux data, which jit hashes to find its compiled function."""
    pairs = [tree_flatten(s) for s in states]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def optimizer(opt_maker):
    """Decorator: turn a maker of per-array (init, update, get_params) into one whose functions
    take pytrees of arrays."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            leaves, tree = tree_flatten(x0_tree)
            flat, subtrees = _flatten_states([init(x0) for x0 in leaves])
            return OptimizerState(flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            flat, tree, subtrees = opt_state
            grads, grad_def = tree_flatten(grad_tree)
            if grad_def != tree:
                raise TypeError("optimizer update function was passed a gradient tree that did "
                                "not match the parameter tree structure with which it was "
                                f"initialized: parameter tree {tree} and grad tree {grad_def}.")
            states = [tree_unflatten(d, s) for d, s in zip(subtrees, flat)]
            new_flat, new_subtrees = _flatten_states(
                [update(i, g, s) for g, s in zip(grads, states)])
            for before, after in zip(subtrees, new_subtrees):
                if before != after:
                    raise TypeError("optimizer update function produced an output structure "
                                    f"that did not match its input structure: input {before} "
                                    f"and output {after}.")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            flat, tree, subtrees = opt_state
            return tree_unflatten(tree, [get_params(tree_unflatten(d, s))
                                         for d, s in zip(subtrees, flat)])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _first(state):
    return state[0]


# ---- optimizers (per-array rules) ----------------------------------------------------------
@optimizer
def sgd(step_size):
    """x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size, mass):
    """Heavy ball: v <- mass * v + g; x <- x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * v, v

    return (lambda x0: (x0, xnp.zeros_like(x0))), update, _first


@optimizer
def nesterov(step_size, mass):
    """Nesterov momentum: v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * (mass * v + g), v

    return (lambda x0: (x0, xnp.zeros_like(x0))), update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum on the normalized gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, xnp.zeros_like(x0), xnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + xnp.square(g)
        inv = xnp.where(g_sq > 0, 1. / xnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * inv) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: a running mean of g^2 scales the step."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg = state
        avg = avg * gamma + xnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / xnp.sqrt(avg + eps), avg

    return (lambda x0: (x0, xnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, xnp.zeros_like(x0), xnp.zeros_like(x0)

    def update(i, g, state):
        x, avg, mom = state
        avg = avg * gamma + xnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / xnp.sqrt(avg + eps)
        return x - mom, avg, mom

    return init, update, _first


def _bias(b, like, i):
    """1 - b^(i + 1) in the dtype of `like` (as JAX computes it)."""
    return 1 - xnp.asarray(b, like.dtype) ** (i + 1)


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba), with bias-corrected moment estimates."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, xnp.zeros_like(x0), xnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * xnp.square(g) + b2 * v
        mhat, vhat = m / _bias(b1, m, i), v / _bias(b2, m, i)
        return x - step_size(i) * mhat / (xnp.sqrt(vhat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm of past gradients."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, xnp.zeros_like(x0), xnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = xnp.maximum(b2 * u, xnp.abs(g))
        return x - (step_size(i) / _bias(b1, m, i)) * m / (u + eps), m, u

    return init, update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (memory-efficient adaptive): one accumulator vector per axis of each array."""
    step_size = make_schedule(step_size)

    def along(ndim, v, axis):
        """v (1-d) shaped to broadcast along `axis` of an ndim-array."""
        shape = [1] * ndim
        shape[axis] = v.shape[0]
        return xnp.reshape(v, shape)

    def init(x0):
        shape = xnp.shape(x0)
        x0 = xnp.atleast_1d(x0)
        return x0, xnp.zeros_like(x0), [xnp.zeros(n, dtype=x0.dtype) for n in x0.shape], shape

    def update(i, g, state):
        x, m, vs, shape = state
        g = xnp.reshape(g, x.shape)
        accum = functools.reduce(xnp.minimum, [along(g.ndim, v, a) for a, v in enumerate(vs)])
        accum = accum + xnp.square(g)
        inv = xnp.where(accum > 0, 1. / xnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * inv) + momentum * m
        x = x - step_size(i) * m
        vs = [xnp.max(accum, axis=tuple(d for d in range(x.ndim) if d != a))
              for a in range(x.ndim)]
        return x, m, vs, shape

    def get_params(state):
        return xnp.reshape(state[0], state[3])

    return init, update, get_params


# ---- learning-rate schedules: step number -> step size -----------------------------------------
def constant(step_size):
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    """step_size * decay_rate ** (i / decay_steps)."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """step_size / (1 + decay_rate * i / decay_steps) (floored ratio with `staircase`)."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * xnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From step_size to final_step_size over decay_steps, as (1 - i / decay_steps) ** power."""
    def schedule(step_num):
        step_num = xnp.minimum(step_num, decay_steps)
        mult = (1 - step_num / decay_steps) ** power
        return mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """values[k] for steps after k of the boundaries (len(values) == len(boundaries) + 1)."""
    boundaries, values = xnp.array(boundaries), xnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[xnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule):
    """A schedule from a schedule (returned as is) or a constant step size."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if xnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---- utilities ------------------------------------------------------------------------------------
def l2_norm(tree):
    """The l2 norm of all leaves of a pytree, as one vector."""
    leaves, _ = tree_flatten(tree)
    return xnp.sqrt(sum(xnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale the gradient pytree down to l2 norm `max_norm` when it is longer."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: xnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


# ---- (un)packing the state, e.g. to save it ---------------------------------------------------
class JoinPoint:
    """Marks where a parameter's own state subtree sits inside the unpacked state."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """OptimizerState -> a pytree of the parameters' structure holding JoinPoints of states."""
    flat, tree, subtrees = opt_state
    return tree_unflatten(tree, [JoinPoint(tree_unflatten(d, s))
                                 for d, s in zip(subtrees, flat)])


def pack_optimizer_state(marked_pytree):
    """Inverse of unpack_optimizer_state."""
    sentinels, tree = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: expected a pytree of JoinPoints (the result of "
                        "unpack_optimizer_state)")
    flat, subtrees = _flatten_states([s.subtree for s in sentinels])
    return OptimizerState(flat, tree, subtrees)
