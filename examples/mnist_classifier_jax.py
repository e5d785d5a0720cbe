"""JAX's "MNIST classifier from scratch" example, run by xforms with only the imports changed.

    python examples/mnist_classifier_jax.py                          # on xforms
    XFORMS_EXAMPLE_USE_JAX=1 python examples/mnist_classifier_jax.py # the same program on JAX

An MLP with random initialisation from a split PRNG key, trained by plain SGD under
`jit(update)` with `grad`, on synthetic 8x8 "digit" images (ten noisy class prototypes drawn
with `random`).  xforms.random is JAX's generator, so both runs draw the same data and the
same initial weights, and print the same losses up to floating-point rounding.
"""
import os
import time

if os.environ.get("XFORMS_EXAMPLE_USE_JAX"):
    import jax.numpy as jnp
    from jax import grad, jit, random
    from jax.nn import logsumexp, one_hot
else:                                   # the only lines that differ from the JAX program
    import xforms.numpy as jnp
    from xforms import grad, jit, random
    from xforms.nn import logsumexp, one_hot


def synthetic_digits(key, prototypes, num, noise=0.7):
    num_classes, pixels = prototypes.shape
    k_label, k_noise = random.split(key)
    labels = random.randint(k_label, (num,), 0, num_classes)
    images = prototypes[labels] + noise * random.normal(k_noise, (num, pixels))
    return images, one_hot(labels, num_classes)


def init_random_params(scale, layer_sizes, key):
    keys = random.split(key, len(layer_sizes) - 1)
    params = []
    for k, m, n in zip(keys, layer_sizes[:-1], layer_sizes[1:]):
        kw, kb = random.split(k)
        params.append((scale * random.normal(kw, (m, n)), scale * random.normal(kb, (n,))))
    return params


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        outputs = jnp.dot(activations, w) + b
        activations = jnp.tanh(outputs)
    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)


if __name__ == "__main__":
    layer_sizes = [64, 128, 64, 10]
    param_scale = 0.1
    step_size = 0.05
    num_epochs = 3
    batch_size = 128

    key = random.PRNGKey(0)
    key, k_proto, k_train, k_test, k_init = random.split(key, 5)
    prototypes = random.normal(k_proto, (10, 64))
    train_images, train_labels = synthetic_digits(k_train, prototypes, 1024)
    test_images, test_labels = synthetic_digits(k_test, prototypes, 256)
    num_batches = train_images.shape[0] // batch_size

    def data_stream(key):
        while True:
            key, sub = random.split(key)
            perm = random.permutation(sub, train_images.shape[0])
            for i in range(num_batches):
                idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train_images[idx], train_labels[idx]

    @jit
    def update(params, batch):
        grads = grad(loss)(params, batch)
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    params = init_random_params(param_scale, layer_sizes, k_init)
    batches = data_stream(key)
    first_loss = float(loss(params, (train_images, train_labels)))
    print(f"initial loss {first_loss:.6f}")
    for epoch in range(num_epochs):
        start_time = time.time()
        for _ in range(num_batches):
            params = update(params, next(batches))
        epoch_time = time.time() - start_time
        train_acc = float(accuracy(params, (train_images, train_labels)))
        test_acc = float(accuracy(params, (test_images, test_labels)))
        train_loss = float(loss(params, (train_images, train_labels)))
        print(f"Epoch {epoch} in {epoch_time:0.2f} sec: loss {train_loss:.6f}, "
              f"training accuracy {train_acc:.4f}, test accuracy {test_acc:.4f}")
    assert train_loss < 0.5 * first_loss and test_acc > 0.8, (first_loss, train_loss, test_acc)
