# SPDX-License-Identifier: GPL-2.0
"""The integer and bool dtypes (ABI 1.7) at their edges, on every backend:
wrapping arithmetic, division by zero, saturating casts, one rounding of
int64 to bfloat16, bool bytes other than 0 and 1, CMP's bool result."""

import numpy as np
import pytest

import davinci
from davinci import ops
from davinci.errors import MisalignedOperandError

I64 = np.iinfo(np.int64)


def test_integer_arithmetic_wraps_and_x_over_0_is_0(dev):
    a = dev.tensor(np.array([I64.max, I64.min, 7, -7, I64.min], np.int64))
    b = dev.tensor(np.array([1, -1, 0, 2, -1], np.int64))
    assert ops.add(a, b).numpy().tolist() == [I64.min, I64.max, 7, -5,
                                              I64.max]
    assert ops.div(a, b).numpy().tolist() == [I64.max, I64.min, 0, -3,
                                              I64.min]
    assert ops.abs(a).numpy().tolist()[1] == I64.min
    s8 = dev.tensor(np.array([-128, 127, 5], np.int8))
    m1 = dev.tensor(np.array([-1, 1, 0], np.int8))
    assert ops.div(s8, m1).numpy().tolist() == [-128, 127, 0]
    assert ops.add(s8, m1).numpy().tolist() == [127, -128, 5]
    u8 = dev.tensor(np.array([0, 200, 3], np.uint8))
    v8 = dev.tensor(np.array([1, 100, 3], np.uint8))
    assert ops.sub(u8, v8).numpy().tolist() == [255, 100, 0]
    assert ops.mul(u8, v8).numpy().tolist() == [0, 32, 9]
    assert ops.relu(u8).numpy().tolist() == [0, 200, 3]


def test_float_to_integer_casts_truncate_and_saturate(dev):
    f = dev.tensor(np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.9,
                             -2.9, 127.5, -128.5, 300.0, -0.0], np.float32))
    assert ops.cast(f, "int8").numpy().tolist() == [
        0, 127, -128, 127, -128, 2, -2, 127, -128, 127, 0]
    assert ops.cast(f, "uint8").numpy().tolist() == [
        0, 255, 0, 255, 0, 2, 0, 127, 0, 255, 0]
    assert ops.cast(f, "int64").numpy().tolist() == [
        0, I64.max, I64.min, I64.max, I64.min, 2, -2, 127, -128, 300, 0]
    assert ops.cast(f, "bool").numpy().tolist() == [
        True, True, True, True, True, True, True, True, True, True, False]


def test_integer_casts_wrap_and_int64_rounds_once(dev):
    i = dev.tensor(np.array([300, -129, (1 << 40) + (1 << 32) + 1],
                            np.int64))
    assert ops.cast(i, "int8").numpy().tolist() == [44, 127, 1]
    assert ops.cast(i, "uint8").numpy().tolist() == [44, 127, 1]
    # 2^40 + 2^32 + 1 is above the half-way point of bfloat16's 8 bits:
    # it rounds up; through float32 (2^40 + 2^32, a tie) it would not
    got = ops.cast(i, "bfloat16").numpy()[2]
    assert got == float((1 << 40) + (1 << 33))
    assert ops.cast(i, "float32").numpy()[2] == np.float32(
        (1 << 40) + (1 << 32) + 1)


def test_a_bool_byte_other_than_0_or_1_reads_as_true(dev):
    t = dev.empty((4,), "bool")
    t.buffer.write(np.array([0, 1, 2, 255], np.uint8))
    assert ops.cast(t, "int32").numpy().tolist() == [0, 1, 1, 1]
    assert ops.cast(t, "float32").numpy().tolist() == [0, 1, 1, 1]


def test_compare_writes_bool(dev):
    a = dev.tensor(np.array([1, 5, -3], np.int64))
    b = dev.tensor(np.array([2, 5, -4], np.int64))
    r = ops.compare("LE", a, b, dtype="bool")
    assert r.dtype == "bool"
    assert r.numpy().tolist() == [True, True, False]
    x = dev.tensor(np.array([np.nan, 1.0], np.float32))
    assert ops.compare("NE", x, x, dtype="bool").numpy().tolist() == [
        True, False]
    with pytest.raises(davinci.DTypeError):
        ops.compare("LE", a, b, dtype="int8")


def test_int64_operands_align_to_8_bytes(dev):
    buf = dev.malloc(64)
    x = davinci.DeviceTensor(buf, (2,), "int64", offset=4)
    with pytest.raises(MisalignedOperandError):
        ops.add(x, x)
