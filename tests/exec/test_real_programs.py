"""The real JAX programs of benchmarks/workloads/real_programs.py (MNIST MLP, MNIST VAE,
DP-SGD with slice-written convolutions) run on xforms at tiny sizes for a step or two and
agree with NumPy (the MLP's gradient written by hand) or with JAX's recorded values (the
same program, run by JAX: xforms.random is JAX's generator, so keys, initial parameters,
binarised batches and DP noise are the same)."""
import numpy as np
import pytest
from jax_reference import reference

from benchmarks.workloads import real_programs as rp
from xforms.tree_util import tree_leaves

TINY_VAE = dict(batch=4, num_batches=2, hidden=8, pixels=16, n_test=6, grid=(2, 2))
TINY_DPSGD = dict(batch=3, side=12, chans=(4, 4), dense=8, filters=((3, 3), (2, 2)))


def _leaves(tree):
    return [np.asarray(a, dtype=np.float64) for a in tree_leaves(tree)]


def _jax_leaves(tree):
    import jax
    return [np.asarray(a, dtype=np.float64) for a in jax.tree_util.tree_leaves(tree)]


def _close(got, want, rtol=1e-10):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * max(1.0, np.abs(w).max()))


def _mnist_numpy_step(params, images, labels, step=0.001):
    """One SGD step of the from-scratch MLP, its backward pass written by hand."""
    acts, pre = [images], []
    for w, b in params[:-1]:
        pre.append(acts[-1] @ w + b)
        acts.append(np.tanh(pre[-1]))
    logits = acts[-1] @ params[-1][0] + params[-1][1]
    z = logits - logits.max(axis=1, keepdims=True)
    softmax = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    delta = (softmax * labels.sum(axis=1, keepdims=True) - labels) / images.shape[0]
    grads = []
    for i in range(len(params) - 1, -1, -1):
        grads.append((acts[i].T @ delta, delta.sum(0)))
        if i:
            delta = (delta @ params[i][0].T) * (1 - acts[i] ** 2)
    return [(w - step * dw, b - step * db) for (w, b), (dw, db) in zip(params, grads[::-1])]


def test_mnist_two_updates_match_numpy():
    update, (params, batch) = rp.mnist_program(rp.namespace("xforms"), batch=8,
                                               sizes=(16, 12, 8, 4))
    want = params
    for _ in range(2):
        params = update(params, batch)
        want = _mnist_numpy_step(want, *batch)
    _close(_leaves(params), [a for wb in want for a in wb])


@pytest.mark.slow        # ~30 s CPU of compiling (nested jit, fori_loop, grad, image grid)
@pytest.mark.early
def test_vae_epoch_and_evaluate_match_jax():
    run_epoch, evaluate, args, (_, test_images) = rp.vae_program(rp.namespace("xforms"),
                                                                 **TINY_VAE)
    state = run_epoch(*args)
    got = _leaves(state) + _leaves(evaluate(state, test_images))

    def jax_run():
        je, jv, ja, (_, jt) = rp.vae_program(rp.namespace("jax"), **TINY_VAE)
        s = je(*ja)
        return _jax_leaves(s) + _jax_leaves(jv(s, jt))
    want = reference("real_programs/vae_epoch_evaluate", jax_run)
    # the sampled image grid is 0/1 (a Bernoulli draw of the same uniforms)
    _close(got, want, rtol=1e-9)


@pytest.mark.slow        # ~1-2 min CPU compiling vmap(grad) of 13 slice taps (kernels/numba_*)
@pytest.mark.early
@pytest.mark.parametrize("steps", [2])
def test_dpsgd_private_updates_match_jax(steps):
    ns = rp.namespace("xforms")
    update, (rng, _, state, batch) = rp.dpsgd_program(ns, **TINY_DPSGD)
    for i in range(steps):
        state = update(rng, i, state, batch)
    got = _leaves(state)

    def jax_run():
        jns = rp.namespace("jax")
        ju, (jr, _, js, jb) = rp.dpsgd_program(jns, **TINY_DPSGD)
        for i in range(steps):
            js = ju(jr, i, js, jb)
        return _jax_leaves(js)
    _close(got, reference("real_programs/dpsgd_two_steps", jax_run), rtol=1e-9)


def test_slice_conv_matches_numpy_correlation():
    """The slice-written convolution is an NHWC/HWIO cross-correlation (SAME, stride 2)."""
    ns = rp.namespace("xforms")
    init, apply = rp.slice_conv(ns, 3, (3, 2), strides=(2, 2), padding="SAME")
    out_shape, (W, b) = init(ns.random.PRNGKey(0), (2, 5, 6, 2))
    x = np.random.default_rng(0).standard_normal((2, 5, 6, 2))
    got = np.asarray(apply((W, b), x))
    W = np.asarray(W)
    xp = np.pad(x, ((0, 0), (1, 1), (0, 1), (0, 0)))    # JAX's SAME split: low = total // 2
    want = np.zeros(out_shape) + np.asarray(b)
    for i in range(out_shape[1]):
        for j in range(out_shape[2]):
            win = xp[:, 2 * i:2 * i + 3, 2 * j:2 * j + 2, :]
            want[:, i, j, :] += np.einsum("nhwc,hwco->no", win, W)
    assert got.shape == out_shape == (2, 3, 3, 3)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
