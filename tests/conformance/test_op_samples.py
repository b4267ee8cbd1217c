# SPDX-License-Identifier: GPL-2.0
"""Every device op of the schema on its sample inputs (op_samples.py),
in every dtype it takes, through davinci.ops, against numpy."""

import numpy as np
import pytest

import davinci
from davinci import ops, schema

from . import _ref as R
from .op_samples import SAMPLES

CASES = [(op, s, dtype) for op in schema.COMPUTE_OPS
         for s in SAMPLES.get(op.name, ()) for dtype in op.dtypes]


@pytest.mark.parametrize("op", schema.COMPUTE_OPS, ids=lambda o: o.name)
def test_every_op_has_samples(op):
    assert SAMPLES.get(op.name), (
        "DAVINCI_OP_%s has no sample inputs: add them to "
        "tests/conformance/op_samples.py" % op.name)


def _ulps_apart(got: np.ndarray, want: np.ndarray, dtype: str) -> np.ndarray:
    """Distance in units in the last place of ``dtype`` (storage bits)."""
    bits = {"float32": np.int32, "float16": np.int16,
            "bfloat16": np.int16}[dtype]
    g = np.ascontiguousarray(got).view(bits).astype(np.int64)
    w = np.ascontiguousarray(want).view(bits).astype(np.int64)
    # order the bit patterns as the floats they encode
    sign = np.int64(1) << (8 * np.dtype(bits).itemsize - 1)
    g = np.where(g < 0, -(g & (sign - 1)), g)
    w = np.where(w < 0, -(w & (sign - 1)), w)
    return np.abs(g - w)


@pytest.mark.parametrize("op,sample,dtype", CASES, ids=[
    "%s-%s-%s" % (op.name, s.name, d) for op, s, d in CASES])
def test_op_matches_numpy(dev, rng, op, sample, dtype):
    raws = sample.inputs(rng, dtype)
    tensors = [davinci.DeviceTensor.from_numpy(dev, r, dtype) for r in raws]
    fn = getattr(ops, op.python)
    args = ([sample.attr] if op.imm is not None else []) + tensors
    got = fn(*args, **sample.kwargs)
    out_dtype = sample.kwargs.get("dtype", dtype)
    values = [r if dtype == "int32" else R.to_f32(r, dtype) for r in raws]
    want = np.asarray(sample.reference(sample.attr, *values))
    if out_dtype == "int32":
        assert np.array_equal(got.numpy(), want.astype(np.int32))
        return
    want_raw = R.from_f32(want.astype(np.float32), out_dtype)
    got_raw = got.numpy(raw=True)
    assert got_raw.shape == want_raw.shape
    if sample.rtol:
        np.testing.assert_allclose(R.to_f32(got_raw, out_dtype),
                                   R.to_f32(want_raw, out_dtype),
                                   rtol=max(sample.rtol, {
                                       "float32": 0, "float16": 2e-3,
                                       "bfloat16": 1.6e-2}[out_dtype]),
                                   atol=1e-6)
        return
    apart = _ulps_apart(got_raw, want_raw, out_dtype)
    nan = np.isnan(R.to_f32(want_raw, out_dtype))
    assert np.array_equal(nan, np.isnan(R.to_f32(got_raw, out_dtype)))
    assert apart[~nan].max(initial=0) <= sample.ulps, (
        "%d elements more than %d ulp off, worst %d" % (
            int((apart[~nan] > sample.ulps).sum()), sample.ulps,
            int(apart[~nan].max())))
