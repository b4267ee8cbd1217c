# SPDX-License-Identifier: GPL-2.0
"""Every device op of the schema on its sample inputs (op_samples.py),
in every dtype it takes, through davinci.ops, against numpy."""

import pytest

import davinci
from davinci import ops, schema

from .op_samples import SAMPLES, assert_matches

CASES = [(op, s, dtype) for op in schema.COMPUTE_OPS
         for s in SAMPLES.get(op.name, ()) for dtype in op.dtypes
         if not s.only or dtype in s.only]


@pytest.mark.parametrize("op", schema.COMPUTE_OPS, ids=lambda o: o.name)
def test_every_op_has_samples(op):
    assert SAMPLES.get(op.name), (
        "DAVINCI_OP_%s has no sample inputs: add them to "
        "tests/conformance/op_samples.py" % op.name)


@pytest.mark.parametrize("op,sample,dtype", CASES, ids=[
    "%s-%s-%s" % (op.name, s.name, d) for op, s, d in CASES])
def test_op_matches_numpy(dev, rng, op, sample, dtype):
    raws = sample.inputs(rng, dtype)
    tensors = [davinci.DeviceTensor.from_numpy(dev, r, d) for r, d in
               zip(raws, sample.dtypes_of(dtype, len(raws)))]
    fn = getattr(ops, op.python)
    args = ([sample.attr] if op.takes_attr else []) + tensors
    got = fn(*args, **sample.kwargs)
    out_dtype = sample.out_dtype or sample.kwargs.get("dtype", dtype)
    got_raw = got.numpy(raw=True)
    assert_matches(sample, raws, got_raw, dtype, out_dtype)
