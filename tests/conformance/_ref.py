# SPDX-License-Identifier: GPL-2.0
"""numpy references for the device ops (storage-exact where the device is)."""

import numpy as np

from davinci import schema
from davinci.ops import DTYPES, bfloat16_to_float32, float32_to_bfloat16

STORAGE = {name: storage.type for name, (_, storage) in DTYPES.items()}
#: the dtypes the device computes exactly, as numpy does (wrapping)
INTEGERS = tuple(d.name for d in schema.DTYPES if d.kind != "float")
#: the range random() draws each integer type from
_INT_RANGE = {"int32": (-1000, 1000), "int64": (-1 << 40, 1 << 40),
              "int8": (-128, 128), "uint8": (0, 256), "bool": (0, 2)}


def to_f32(raw, dtype):
    """Storage array -> float32 values."""
    if dtype == "bfloat16":
        return bfloat16_to_float32(raw)
    return np.asarray(raw).astype(np.float32)


def from_f32(x, dtype):
    """float32 values -> storage, rounded once to nearest even."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "bfloat16":
        return float32_to_bfloat16(x)
    if dtype == "float16":
        return x.astype(np.float16)
    if dtype == "float32":
        return x
    raise ValueError(dtype)


def random(rng, shape, dtype, low=-4.0, high=4.0, integer_valued=False):
    """Random storage array of ``dtype``."""
    if dtype in INTEGERS:
        return rng.integers(*_INT_RANGE[dtype], shape).astype(STORAGE[dtype])
    x = rng.uniform(low, high, shape).astype(np.float32)
    if integer_valued:
        x = np.round(x).astype(np.float32)
    return from_f32(x, dtype)


def int_div(a, b):
    """The device's integer DIV: truncating, x / 0 = 0, wrapping."""
    t = a.dtype
    a = a.astype(np.int64)
    b = b.astype(np.int64)
    q = np.where(b == 0, 0, np.abs(a) // np.where(b == 0, 1, np.abs(b)))
    return (np.sign(a) * np.sign(b) * q).astype(t)


_F32_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "div": np.divide, "maximum": np.maximum, "minimum": np.minimum,
}


def binary(name, a, b, dtype):
    if dtype in INTEGERS:
        if name == "div":
            return int_div(a, b)
        with np.errstate(over="ignore"):
            return _F32_BINARY[name](a, b).astype(a.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = _F32_BINARY[name](to_f32(a, dtype), to_f32(b, dtype))
    return from_f32(r, dtype)


def relu(a, dtype):
    if dtype in INTEGERS:
        return np.maximum(a, 0).astype(a.dtype)
    return from_f32(np.maximum(to_f32(a, dtype), np.float32(0)), dtype)


def axpy(alpha, x, y, dtype):
    r = np.float32(alpha) * to_f32(x, dtype) + to_f32(y, dtype)
    return from_f32(r, dtype)


_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)
_M32 = 0xFFFFFFFF


def philox4x32_10(counter, key):
    """Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
    1, 2, 3", SC'11) of four 32-bit counter words and two key words."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0 = _PHILOX_M[0] * c0
        p1 = _PHILOX_M[1] * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & _M32,
                          (p0 >> 32) ^ c3 ^ k1, p0 & _M32)
        k0 = (k0 + _PHILOX_W[0]) & _M32
        k1 = (k1 + _PHILOX_W[1]) & _M32
    return c0, c1, c2, c3


def philox_words(seed: int, offset: int, n: int) -> np.ndarray:
    """The device's words: element i takes word i % 4 of the block of
    counter (offset + i // 4) (low word, high word, 0, 0) and key seed
    (low word, high word)."""
    key = (seed & _M32, (seed >> 32) & _M32)
    out = []
    for block in range((n + 3) // 4):
        ctr = (offset + block) & ((1 << 64) - 1)
        out.extend(philox4x32_10((ctr & _M32, ctr >> 32, 0, 0), key))
    return np.array(out[:n], dtype=np.uint64)


def uniform(words: np.ndarray, dtype: str) -> np.ndarray:
    """RANDOM_UNIFORM's values of Philox words, as float32 (each exact in
    ``dtype``)."""
    bits = {"float32": 24, "float16": 11, "bfloat16": 8}[dtype]
    return ((words >> (32 - bits)).astype(np.float64) /
            (1 << bits)).astype(np.float32)


def normal(seed: int, offset: int, n: int, mean: float = 0.0,
           std: float = 1.0) -> np.ndarray:
    """RANDOM_NORMAL's values in float64 (numpy's log, sqrt, cos and sin):
    element i is one of the Box-Muller pair of words i & ~1 and (i & ~1) + 1,
    u1 = ((w0 >> 8) + 1) 2^-24, u2 = (w1 >> 8) 2^-24, cos for even i."""
    w = philox_words(seed, offset, (n + 3) // 4 * 4)
    i = np.arange(n)
    w0, w1 = w[i & ~1], w[(i & ~1) + 1]
    u1 = ((w0 >> 8) + 1).astype(np.float64) / (1 << 24)
    u2 = (w1 >> 8).astype(np.float64) / (1 << 24)
    r = np.sqrt(-2 * np.log(u1))
    trig = np.where(i & 1, np.sin(2 * np.pi * u2), np.cos(2 * np.pi * u2))
    return mean + std * r * trig


def adam(x, g, m, v, fields):
    """ADAM's step in numpy float32, each operation of ops_optimizer.c's
    order rounded (no contraction): float32 ``x``, ``g``, ``m``, ``v``
    (the storage widened) and davinci.optim.adam_fields' block ->
    (param, exp_avg, exp_avg_sq) in float32, before the storage rounding."""
    f = {k: np.array(b, np.uint32).view(np.float32)[()]
         for k, b in fields.items() if k not in ("maximize", "amsgrad")}
    x, g, m, v = (np.array(a, np.float32) for a in (x, g, m, v))
    with np.errstate(all="ignore"):
        if fields["maximize"]:
            g = -g
        if f["weight_decay"] != 0:
            g = g + x * f["weight_decay"]
        x = x * f["decay"]
        d = g - m
        w = f["exp_avg_weight"]
        if abs(w) < np.float32(0.5):
            m = m + w * d
        else:
            m = g - d * (np.float32(1) - w)
        v = v * f["beta2"]
        v = v + (f["exp_avg_sq_weight"] * g) * g
        den = np.sqrt(v) / f["bias_correction2_sqrt"] + f["eps"]
        x = x - (f["step_size"] * m) / den
    return x, m, v


def sgd_momentum(x, g, b, fields):
    """SGD_MOMENTUM's step in numpy float32, ops_optimizer.c's order ->
    (param, momentum_buffer) in float32, before the storage rounding."""
    f = {k: np.array(fields[k], np.uint32).view(np.float32)[()]
         for k in ("lr", "momentum", "dampening_weight", "weight_decay")}
    x, g, b = (np.array(a, np.float32) for a in (x, g, b))
    with np.errstate(all="ignore"):
        if fields["maximize"]:
            g = -g
        if f["weight_decay"] != 0:
            g = g + x * f["weight_decay"]
        b = g if fields["first_step"] else \
            b * f["momentum"] + g * f["dampening_weight"]
        g = g + b * f["momentum"] if fields["nesterov"] else b
        x = x - g * f["lr"]
    return x, b
