"""A two-layer MLP trained on the host, then run for inference on the NPU.

The data are scikit-learn's bundled 8x8 handwritten digits (no download).
Training is plain numpy on the host; inference uploads the weights and runs
matmul, add, relu and softmax as device tasks on one stream, then compares
the device's predictions and accuracy with the host's.
"""
import time

import numpy as np
from sklearn.datasets import load_digits

import davinci
from davinci import ops

HIDDEN = 64
EPOCHS = 300
LEARNING_RATE = 0.5


def load_data(seed: int = 0):
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    split = int(len(x) * 0.8)
    return x[:split], y[:split], x[split:], y[split:]


def train(x, y, seed: int = 0, epochs: int = EPOCHS):
    """Full-batch gradient descent on softmax cross-entropy."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((x.shape[1], HIDDEN)) *
          np.sqrt(2 / x.shape[1])).astype(np.float32)
    b1 = np.zeros(HIDDEN, np.float32)
    w2 = (rng.standard_normal((HIDDEN, 10)) *
          np.sqrt(2 / HIDDEN)).astype(np.float32)
    b2 = np.zeros(10, np.float32)
    onehot = np.eye(10, dtype=np.float32)[y]
    for _ in range(epochs):
        h = np.maximum(x @ w1 + b1, 0)
        z = h @ w2 + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / len(x)
        gh = g @ w2.T
        gh[h <= 0] = 0
        w2 -= LEARNING_RATE * (h.T @ g)
        b2 -= LEARNING_RATE * g.sum(axis=0)
        w1 -= LEARNING_RATE * (x.T @ gh)
        b1 -= LEARNING_RATE * gh.sum(axis=0)
    return w1, b1, w2, b2


def infer_host(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0)
    z = h @ w2 + b2
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def infer_device(dev, x, w1, b1, w2, b2):
    """The same network as device tasks; biases are tiled to the batch
    because the device's add is elementwise."""
    n = len(x)
    stream = dev.stream()
    xt, w1t, w2t = dev.tensor(x), dev.tensor(w1), dev.tensor(w2)
    b1t = dev.tensor(np.tile(b1, (n, 1)))
    b2t = dev.tensor(np.tile(b2, (n, 1)))
    h = ops.relu(ops.add(ops.matmul(xt, w1t, stream=stream), b1t,
                         stream=stream), stream=stream)
    probs = ops.softmax(ops.add(ops.matmul(h, w2t, stream=stream), b2t,
                                stream=stream), stream=stream)
    stream.synchronize(timeout=60)
    return probs.numpy()


def main() -> None:
    t0 = time.perf_counter()
    x_train, y_train, x_test, y_test = load_data()
    weights = train(x_train, y_train)
    t1 = time.perf_counter()
    host = infer_host(x_test, *weights)
    host_acc = float((host.argmax(1) == y_test).mean())
    print("   trained on %d digits on the host in %.2f s; host accuracy "
          "%.2f%% on %d test digits" % (len(x_train), t1 - t0,
                                        100 * host_acc, len(x_test)))
    with davinci.Device(0) as dev:
        t2 = time.perf_counter()
        npu = infer_device(dev, x_test, *weights)
        t3 = time.perf_counter()
    npu_acc = float((npu.argmax(1) == y_test).mean())
    agree = int((npu.argmax(1) == host.argmax(1)).sum())
    print("   NPU inference in %.1f ms; NPU accuracy %.2f%%; %d/%d predictions "
          "equal to the host's; max |p_npu - p_host| = %.2e"
          % ((t3 - t2) * 1e3, 100 * npu_acc, agree, len(x_test),
             float(np.abs(npu - host).max())))
    if npu_acc != host_acc:
        raise SystemExit("NPU accuracy differs from the host's")


if __name__ == "__main__":
    main()
