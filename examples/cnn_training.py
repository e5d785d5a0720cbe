"""Train a small convolutional network on synthetic images with `xf.jit(xf.value_and_grad)`
and the Adam optimizer of `xforms.example_libraries.optimizers`.

    python examples/cnn_training.py

Images (16x16, one channel) hold a noisy horizontal or vertical bar; the network is two 3x3
convolutions (`lax.conv_general_dilated`, channels-last as in JAX's ('NHWC', 'HWIO', 'NHWC'))
with relu, a 2x2 max pool and a global average pool (`lax.reduce_window`) and a dense layer.
The compiled step runs the convolutions as im2col + BLAS, their gradients as convolutions too.
"""
import time

import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms import lax, nn
from xforms.example_libraries import optimizers

DN = ("NHWC", "HWIO", "NHWC")


def init_params(rng):
    def conv(k, cin, cout):
        return rng.normal(size=(k, k, cin, cout)) * np.sqrt(2.0 / (k * k * cin)), np.zeros(cout)
    w1, b1 = conv(3, 1, 8)
    w2, b2 = conv(3, 8, 16)
    return {"conv1": (w1, b1), "conv2": (w2, b2),
            "dense": (rng.normal(size=(16, 2)) * 0.25, np.zeros(2))}


def predict(params, images):
    w, b = params["conv1"]
    x = nn.relu(lax.conv_general_dilated(images, w, (1, 1), "SAME", dimension_numbers=DN) + b)
    x = lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    w, b = params["conv2"]
    x = nn.relu(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN) + b)
    x = lax.reduce_window(x, 0.0, lax.add, (1, 8, 8, 1), (1, 8, 8, 1), "VALID") / 64.0
    w, b = params["dense"]
    return x.reshape(x.shape[0], -1) @ w + b


def loss(params, images, labels):
    """Mean softmax cross-entropy; labels are one-hot."""
    return -xnp.mean(xnp.sum(nn.log_softmax(predict(params, images)) * labels, axis=1))


def make_data(rng, n):
    """Images with one bright bar, horizontal (class 0) or vertical (class 1), plus noise."""
    k = rng.integers(0, 2, size=n)
    pos = rng.integers(2, 14, size=n)
    images = 0.3 * rng.normal(size=(n, 16, 16, 1))
    for i in range(n):
        if k[i] == 0:
            images[i, pos[i], 2:14, 0] += 1.0
        else:
            images[i, 2:14, pos[i], 0] += 1.0
    return images, np.eye(2)[k], k


def main():
    rng = np.random.default_rng(0)
    images, labels, classes = make_data(rng, 512)
    opt_init, opt_update, get_params = optimizers.adam(0.01)
    value_and_grad = xf.jit(xf.value_and_grad(loss))
    accuracy = xf.jit(lambda p, x: xnp.argmax(predict(p, x), axis=1))

    state = opt_init(init_params(rng))
    t0 = time.perf_counter()
    first, _ = value_and_grad(get_params(state), images[:32], labels[:32])
    print(f"first call (trace + compile, or load from the disk cache): "
          f"{time.perf_counter() - t0:.2f} s, loss {float(first):.3f}")
    t0 = time.perf_counter()
    steps = 150
    for step in range(steps):
        idx = rng.integers(0, len(images), size=32)
        value, grads = value_and_grad(get_params(state), images[idx], labels[idx])
        state = opt_update(step, grads, state)
        if step % 50 == 0:
            print(f"step {step:4d}  loss {float(value):.4f}")
    print(f"{steps} steps: {time.perf_counter() - t0:.2f} s")
    acc = float(np.mean(np.asarray(accuracy(get_params(state), images)) == classes))
    final = float(loss(get_params(state), images, labels))
    print(f"final loss {final:.4f}, training accuracy {acc:.3f}")
    assert final < 0.5 * float(first), (first, final)
    assert acc > 0.9, acc


if __name__ == "__main__":
    main()
