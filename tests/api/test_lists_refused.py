"""Lists where JAX refuses them (session 21): operators, indexing, lax functions and
xforms.nn, both eagerly and traced.  The messages are JAX's (jax 0.10.2, recorded here:
JAX is not installed in CI); xforms.numpy's refusal is tests/api/test_api_arguments.py's.
"""
import operator
import re

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

_EAGER_AND_TRACED = [lambda f, x: f(x), lambda f, x: xf.jit(f)(x)]
_IDS = ["eager", "jit"]


@pytest.fixture(params=_EAGER_AND_TRACED, ids=_IDS)
def run(request):
    return request.param


@pytest.mark.parametrize("op, char", [(operator.add, "+"), (operator.mul, "*"),
                                      (operator.eq, "=="), (operator.matmul, "@"),
                                      (operator.xor, "^"), (operator.lshift, "<<")])
def test_operators_refuse_lists_and_tuples(run, op, char):
    x = xnp.ones(2, xnp.int64)
    # jax: TypeError: unsupported operand type(s) for +: 'ArrayImpl' and 'list', and
    # 'list' and 'ArrayImpl' for [1, 2] + x (== is reflected: 'ArrayImpl' and 'list' both
    # ways); tuples alike
    for other, name in (([1, 2], "list"), ((1, 2), "tuple")):
        with pytest.raises(TypeError, match=rf"unsupported operand type\(s\) for "
                           rf"{re.escape(char)}: '\w+' and '{name}'"):
            run(lambda x: op(x, other), x)
        swapped = rf"'\w+' and '{name}'" if char == "==" else rf"'{name}' and '\w+'"
        with pytest.raises(TypeError, match=rf"for {re.escape(char)}: {swapped}"):
            run(lambda x: op(other, x), x)


def test_operators_still_take_arrays_and_scalars(run):
    x = xnp.ones(2)
    out = run(lambda x: x + np.array([1.0, 2.0]) + 1 + np.float64(1), x)
    np.testing.assert_array_equal(out, [4.0, 5.0])


_LIST_INDEX = "non-tuple sequence for multidimensional indexing"


@pytest.mark.parametrize("index", [lambda x: x[[0, 1]], lambda x: x[[True, False]],
                                   lambda x: x.at[[0, 1]].get(),
                                   lambda x: x.at[[0, 1]].set(5.0)],
                         ids=["getitem", "mask", "at-get", "at-set"])
def test_list_indices_are_refused(run, index):
    # jax: TypeError: Using a non-tuple sequence for multidimensional indexing is not
    # allowed; use `arr[array(seq)]` instead of `arr[seq]`
    with pytest.raises(TypeError, match=_LIST_INDEX):
        run(index, xnp.arange(3.0))


def test_lists_inside_a_tuple_index_are_taken(run):
    # jax: x[(0, [0, 1])] and x[[0, 1],] are index arrays inside a tuple: accepted
    x = xnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(run(lambda x: x[0, [0, 1]], x), [0.0, 1.0])
    np.testing.assert_array_equal(run(lambda x: x[[1, 0],][:, 0], x), [3.0, 0.0])
    np.testing.assert_array_equal(run(lambda x: x[np.array([1])], x), [[3.0, 4.0, 5.0]])


@pytest.mark.parametrize("call, name, pos", [
    (lambda x: lax.add(x, [1.0, 2.0]), "add", 1), (lambda x: lax.exp([1.0, 2.0]), "exp", 0),
    (lambda x: lax.reduce_sum([1.0, 2.0], (0,)), "reduce_sum", 0),
    (lambda x: lax.max((1.0, 2.0), x), "max", 0)])
def test_lax_functions_refuse_lists(run, call, name, pos):
    # jax: TypeError: Error interpreting argument to add as a JAX value. The problematic
    # value is of type <class 'list'> and was passed to add at position 1.
    with pytest.raises(TypeError, match=f"argument to {name} as a JAX value.*position {pos}"):
        run(call, xnp.ones(2))


# jax 0.10.2: every jax.nn function below raises TypeError for a list; one_hot takes it
_NN = ["gelu", "log_softmax", "logsumexp", "relu", "sigmoid", "softmax", "softplus", "celu",
       "elu", "glu", "hard_silu", "hard_tanh", "identity", "leaky_relu", "log1mexp",
       "log_sigmoid", "mish", "relu6", "selu", "silu", "soft_sign", "sparse_plus",
       "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh", "logmeanexp"]


@pytest.mark.parametrize("name", _NN)
def test_nn_functions_refuse_lists(name):
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments|concatenate"):
        getattr(xf.nn, name)([1.0, 2.0])
    np.testing.assert_allclose(getattr(xf.nn, name)(np.array([1.0, 2.0])),
                               getattr(xf.nn, name)(xnp.asarray([1.0, 2.0])))


def test_nn_one_hot_takes_a_list():
    # jax: nn.one_hot([0, 1], 3) = [[1, 0, 0], [0, 1, 0]]
    np.testing.assert_array_equal(xf.nn.one_hot([0, 1], 3), [[1, 0, 0], [0, 1, 0]])
