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
