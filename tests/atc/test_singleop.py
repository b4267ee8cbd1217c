# SPDX-License-Identifier: GPL-2.0
"""davinci-atc --singleop on its own, no device: ATC's single-op JSON (in
the form Ascend's acl_execute_* samples ship, singleop_sample.json) becomes
one model file per operator, named as ATC names them, and an operator the
device cannot run, or JSON that is not a description, fails the run with
the operator and the reason. (acl.op reads the files in
tests/conformance/test_acl_op_models.py.)"""

import json
import os

import pytest

from acl import singleop
from tests.atc._cli import atc as _atc

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "singleop_sample.json")


def test_each_operator_becomes_a_model_file_named_as_atc_names_it(tmp_path):
    p = _atc("--singleop", SAMPLE, "--output", str(tmp_path / "op_models"),
             "--soc_version=Ascend310")
    assert p.returncode == 0, p.stderr
    assert "ATC run success" in p.stdout
    names = sorted(os.listdir(tmp_path / "op_models"))
    assert names == ["0_Add_3_2_8_16_3_2_8_16_3_2_8_16.om",
                     "1_MatMul_1_2_1_64_1_2_8_64_1_2_1_8.om",
                     "2_ReduceSum_0_2_4_6_3_2_1_0_2_4.om",
                     "3_Conv2D_0_0_1_3_8_8_0_0_4_3_3_3_0_0_1_4_8_8.om"]
    with open(SAMPLE) as f:
        want = json.load(f)
    for i, name in enumerate(names):
        with open(tmp_path / "op_models" / name, "rb") as f:
            spec = singleop.load(f.read(), name)
        assert spec.source == want[i]


def _compile_one(tmp_path, op: dict):
    src = tmp_path / "op.json"
    src.write_text(json.dumps([op]))
    return _atc("--singleop", str(src), "--output", str(tmp_path / "out"))


_ADD = {"op": "Add",
        "input_desc": [{"format": "ND", "shape": [4], "type": "float"}] * 2,
        "output_desc": [{"format": "ND", "shape": [4], "type": "float"}]}


@pytest.mark.parametrize("change,words", [
    ({"op": "Conv3D"}, ["Conv3D", "not built in"]),
    ({"output_desc": [{"format": "ND", "shape": [5], "type": "float"}]},
     ["Add", "shape [4]"]),
    ({"input_desc": [{"format": "ND", "shape": [4], "type": "double"}] * 2},
     ["Add", "ACL_DOUBLE"]),
    ({"input_desc": [{"format": "ND", "shape": [4], "type": "complex"}] * 2},
     ["type 'complex'"]),
    ({"attr": [{"name": "alpha", "type": "float"}]}, ["name, type and value"]),
    ({"input_desc": [{"format": "ND", "shape": [-1], "type": "float"}] * 2},
     ["dynamic"]),
])
def test_an_operator_the_device_cannot_run_fails_the_run(tmp_path, change,
                                                         words):
    p = _compile_one(tmp_path, dict(_ADD, **change))
    assert p.returncode == 1
    for w in words:
        assert w in p.stderr, p.stderr
    assert not (tmp_path / "out").exists() or \
        not os.listdir(tmp_path / "out")


def test_text_that_is_not_a_description_fails_the_run(tmp_path):
    src = tmp_path / "op.json"
    for text, words in (("[{", "not JSON"), ("[]", "list of operators"),
                        ('[{"input_desc": []}]', '"op"')):
        src.write_text(text)
        p = _atc("--singleop", str(src), "--output", str(tmp_path / "o"))
        assert p.returncode == 1 and words in p.stderr, p.stderr


def test_singleop_and_model_are_two_kinds_of_run(tmp_path):
    p = _atc("--singleop", SAMPLE, "--model", "m.onnx", "--output",
             str(tmp_path))
    assert p.returncode == 2 and "--singleop and --model" in p.stderr
    p = _atc("--output", str(tmp_path))
    assert p.returncode == 2 and "--model" in p.stderr
