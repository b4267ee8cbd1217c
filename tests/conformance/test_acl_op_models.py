# SPDX-License-Identifier: GPL-2.0
"""acl.op reads the single-op models davinci-atc --singleop writes, as
Ascend's acl_execute_* samples do: set_model_dir checks every file of the
directory and load one from memory, a file that is not a whole model or
describes an operator the device cannot run is refused with the aclError
that says so, and the operators then run as the sample runs them."""

import json
import os

import numpy as np
import pytest

import acl
from acl import singleop

from .test_acl_op_schema import Tensors

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "atc", "singleop_sample.json")


@pytest.fixture
def tensors(acl_dev):
    t = Tensors()
    yield t
    t.close()


@pytest.fixture
def model_dir(tmp_path):
    with open(SAMPLE) as f:
        models = singleop.compile_json(f.read())
    d = tmp_path / "op_models"
    d.mkdir()
    for name, data in models:
        (d / name).write_bytes(data)
    return d


def test_the_samples_model_directory_loads_and_its_add_runs(
        acl_dev, tensors, model_dir, rng):
    assert acl.op.set_model_dir(str(model_dir)) == 0
    a = rng.integers(-100, 100, (8, 16), dtype=np.int32)
    b = rng.integers(-100, 100, (8, 16), dtype=np.int32)
    ta, tb = tensors.put(a, acl.ACL_INT32), tensors.put(b, acl.ACL_INT32)
    out = tensors.put(np.zeros((8, 16), np.int32), acl.ACL_INT32, False)
    assert acl.op.execute_v2("Add", [ta[0], tb[0]], [ta[1], tb[1]], [out[0]],
                             [out[1]], 0, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    np.testing.assert_array_equal(tensors.get(out, a), a + b)


@pytest.mark.parametrize("damage", ["truncate", "flip", "header", "version"])
def test_a_damaged_model_file_is_refused(acl_dev, model_dir, damage):
    path = model_dir / sorted(os.listdir(model_dir))[1]
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "flip":
        data[len(data) // 2] ^= 0x20
    elif damage == "header":
        data[0] ^= 1
    else:
        data[len(singleop.MAGIC)] = 9
    path.write_bytes(bytes(data))
    assert acl.op.set_model_dir(str(model_dir)) == acl.ACL_ERROR_PARSE_MODEL
    msg = acl.get_recent_err_msg()
    assert path.name in msg and "davinci-atc --singleop" in msg


def test_a_model_of_an_operator_the_device_cannot_run_is_refused(acl_dev,
                                                                 tmp_path):
    op = {"op": "MatMul",
          "input_desc": [{"format": "ND", "shape": [2, 3], "type": "float"},
                         {"format": "ND", "shape": [4, 5], "type": "float"}],
          "output_desc": [{"format": "ND", "shape": [2, 5],
                           "type": "float"}]}
    spec = singleop.parse_json(json.dumps(op))[0]
    (tmp_path / "0_MatMul.om").write_bytes(singleop.dump(spec))
    assert acl.op.set_model_dir(str(tmp_path)) == \
        acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    assert "inner dimensions" in acl.get_recent_err_msg()


def test_load_reads_a_model_from_memory(acl_dev, model_dir):
    data = (model_dir / sorted(os.listdir(model_dir))[3]).read_bytes()
    buf = np.frombuffer(data, np.uint8).copy()
    assert acl.op.load(buf.ctypes.data, buf.nbytes) == 0
    bad = buf.copy()
    bad[-1] ^= 1
    assert acl.op.load(bad.ctypes.data, bad.nbytes) == \
        acl.ACL_ERROR_PARSE_MODEL


def test_a_missing_directory_is_an_invalid_file(acl_dev, tmp_path):
    assert acl.op.set_model_dir(str(tmp_path / "none")) == \
        acl.ACL_ERROR_INVALID_FILE
