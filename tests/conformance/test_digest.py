# SPDX-License-Identifier: GPL-2.0
"""A fixed, seeded workload of every op; the SHA-256 of all outputs is
written to $DAVINCI_DIGEST_FILE when set, so backends (in-process, FUSE,
kernel module) can be compared bit for bit."""

import hashlib
import os

import numpy as np

from davinci import ops

from . import _ref as R

FLOATS = ("float32", "float16", "bfloat16")
ALL = FLOATS + ("int32",)


def workload(dev):
    """Yield (label, output bytes) of the fixed workload."""
    rng = np.random.default_rng(20261129)
    s = dev.stream()
    for dt in ALL:
        a = dev.tensor(R.random(rng, (64, 96), dt, -5, 5), dt)
        b = dev.tensor(R.random(rng, (64, 96), dt, 0.5, 5), dt)
        outs = {name: getattr(ops, name)(a, b, stream=s)
                for name in ("add", "sub", "mul", "div", "maximum", "minimum")}
        outs["relu"] = ops.relu(a, stream=s)
        outs["relu_grad"] = ops.relu_grad(b, a, stream=s)
        for pred in ops.CMP_PREDICATES:
            outs["compare_" + pred] = ops.compare(pred, a, b, stream=s)
        for dst in ALL:
            outs["cast_" + dst] = ops.cast(a, dst, stream=s)
        if dt in FLOATS:
            outs["exp"] = ops.exp(a, stream=s)
            outs["axpy"] = ops.axpy(0.3, a, b, stream=s)
            outs["softmax"] = ops.softmax(a, stream=s)
            outs["log_softmax"] = ops.log_softmax(a, stream=s)
            outs["sqrt"] = ops.sqrt(a, stream=s)        # NaN for a < 0
            outs["reduce_sum"] = ops.reduce_sum(a, stream=s)
            outs["matmul"] = ops.matmul(a, b, transpose_b=True, stream=s)
            outs["matmul_ta"] = ops.matmul(a, b, transpose_a=True, stream=s)
        s.synchronize()
        for name in sorted(outs):
            yield "%s/%s" % (dt, name), outs[name].numpy(raw=True).tobytes()
    yield from specials(dev, s)
    with dev.malloc(1 << 20) as x, dev.malloc(1 << 20) as y:
        x.write(rng.integers(0, 256, 1 << 20, dtype=np.uint8))
        s.memcpy(y, x, 777_777, dst_offset=3, src_offset=11)
        s.memset(y, 0x5C, 1000, offset=500_000)
        s.synchronize()
        yield "memory", y.read()


# Bit patterns where hardware differs if the kernels let it: NaNs with a
# payload and a sign (an op's output must be the canonical NaN), signed
# zeros and infinities, subnormals, the largest finite values, +-1. Given as
# bits: numpy's own float32 -> float16 rounding of a NaN differs between
# x86_64 and arm64.
SPECIAL_BITS = {
    "float32": np.array(
        [0x7fc00000, 0xffc00000, 0x7fc00001, 0xffa00003, 0x7f800000,
         0xff800000, 0x00000000, 0x80000000, 0x00000001, 0x807fffff,
         0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000,
         0x33800000], np.uint32).view(np.float32),
    "float16": np.array(
        [0x7e00, 0xfe00, 0x7e01, 0xfd03, 0x7c00, 0xfc00, 0x0000, 0x8000,
         0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x1400],
        np.uint16).view(np.float16),
    "bfloat16": np.array(
        [0x7fc0, 0xffc0, 0x7fc1, 0xffa3, 0x7f80, 0xff80, 0x0000, 0x8000,
         0x0001, 0x807f, 0x0080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80, 0x3380],
        np.uint16),
}


def specials(dev, s):
    """Every elementwise op, casts and softmax on each pair of special
    values, in each float dtype."""
    for dt in FLOATS:
        x = SPECIAL_BITS[dt]
        a = dev.tensor(np.repeat(x, x.size).reshape(16, 16), dt)
        b = dev.tensor(np.tile(x, x.size).reshape(16, 16), dt)
        outs = {name: getattr(ops, name)(a, b, stream=s)
                for name in ("add", "sub", "mul", "div", "maximum", "minimum")}
        outs["relu"] = ops.relu(a, stream=s)
        outs["relu_grad"] = ops.relu_grad(b, a, stream=s)
        outs["exp"] = ops.exp(a, stream=s)
        outs["sqrt"] = ops.sqrt(a, stream=s)
        outs["axpy"] = ops.axpy(-0.0, a, b, stream=s)
        outs["softmax"] = ops.softmax(b, stream=s)
        outs["log_softmax"] = ops.log_softmax(b, stream=s)
        for pred in ops.CMP_PREDICATES:
            outs["compare_" + pred] = ops.compare(pred, a, b, stream=s)
        for dst in ALL:
            outs["cast_" + dst] = ops.cast(a, dst, stream=s)
        s.synchronize()
        for name in sorted(outs):
            yield ("specials/%s/%s" % (dt, name),
                   outs[name].numpy(raw=True).tobytes())


def test_digest(dev):
    h = hashlib.sha256()
    labels = []
    for label, data in workload(dev):
        h.update(label.encode() + b"\0" + data)
        labels.append(label)
    assert len(labels) > 60
    digest = h.hexdigest()
    path = os.environ.get("DAVINCI_DIGEST_FILE")
    if path:
        with open(path, "w") as f:
            f.write(digest + "\n")
    # deterministic within one backend as well
    h2 = hashlib.sha256()
    for label, data in workload(dev):
        h2.update(label.encode() + b"\0" + data)
    assert h2.hexdigest() == digest
