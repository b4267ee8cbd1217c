# SPDX-License-Identifier: GPL-2.0
"""ONNX's own backend node tests (onnx.backend.test.loader's kind="node"
cases, built in memory: the wheel ships no data/node folder) and the
package's backend models (kinds pytorch-operator, pytorch-converted and
simple, read from their folders) whose ops are all ones davinci-atc
claims: each is converted and run through the offline-model loader with
the case's tolerance, and none may be converted and wrong. A refusal is
allowed (an element type the converter does not put on the device, an
attribute it does not take), and so is a run that fails (a computed input
that is not what the model's declared shapes say: atc.lower.pinned); the
counts, and onnxruntime's on the same cases, are printed (pytest -s), per
op type too."""

import collections
import dataclasses
import glob
import os
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import numpy_helper  # noqa: E402
from onnx.backend.test.loader import load_model_tests  # noqa: E402

from davinci import atc  # noqa: E402
from davinci.errors import TaskFailedError  # noqa: E402
from davinci.model import Model  # noqa: E402


def _claimed(tests):
    claimed = {n for n in atc.supported_ops() if ":" not in n}
    return [t for t in tests if t.model is not None and t.data_sets and
            {n.op_type for n in t.model.graph.node} <= claimed]


def _cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tests = load_model_tests(kind="node")
    return _claimed(tests)


#: the package's backend models (each a folder: model.onnx and
#: test_data_set_*/input_*.pb, output_*.pb)
_MODEL_KINDS = ("pytorch-operator", "pytorch-converted", "simple")


def _tensors(folder: str, prefix: str) -> list:
    def index(path):
        return int(os.path.basename(path)[len(prefix) + 1:-3])
    out = []
    for path in sorted(glob.glob(os.path.join(folder, prefix + "_*.pb")),
                       key=index):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        out.append(t)
    return out


def _model_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tests = [t for k in _MODEL_KINDS for t in load_model_tests(kind=k)]
    out = []
    for t in tests:
        sets = sorted(glob.glob(os.path.join(t.model_dir,
                                             "test_data_set_*")))
        if not sets:
            continue
        model = onnx.load(os.path.join(t.model_dir, "model.onnx"))
        out.append(dataclasses.replace(t, model=model, data_sets=[
            (_tensors(sets[0], "input"), _tensors(sets[0], "output"))]))
    return _claimed(out)


def _array(v) -> np.ndarray:
    return numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) \
        else np.asarray(v)


def _close(got, want, t) -> bool:
    return all(np.shape(g) == np.shape(w) and np.allclose(
        np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=t.rtol,
        atol=t.atol, equal_nan=True) for g, w in zip(got, want))


def _onnxruntime(t, ins, outs) -> "bool | None":
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    try:
        s = ort.InferenceSession(t.model.SerializeToString(),
                                 providers=["CPUExecutionProvider"])
        got = s.run(None, {i.name: a for i, a in zip(s.get_inputs(), ins)})
    except Exception:       # noqa: BLE001 (onnxruntime's own refusals)
        return False
    return _close(got, outs, t)


def _table(per: dict) -> str:
    """Per op type: its cases, how many davinci passes, onnxruntime's."""
    rows = ["%-22s %5s %7s %11s" % ("op type", "cases", "davinci",
                                    "onnxruntime")]
    for op in sorted(per):
        n, dv, ort = per[op]
        rows.append("%-22s %5d %7d %11d%s" % (op, n, dv, ort,
                                              "  <" if dv < ort else ""))
    return "\n".join(rows)


def _run_all(dev, cases, what: str) -> None:
    counts = collections.Counter()
    per = collections.defaultdict(lambda: [0, 0, 0])
    wrong = []
    for t in cases:
        ins = [_array(v) for v in t.data_sets[0][0]]
        outs = [_array(v) for v in t.data_sets[0][1]]
        ort_ok = _onnxruntime(t, ins, outs)
        if ort_ok is not None:
            counts["onnxruntime passes"] += ort_ok
        ok = False
        try:
            data = atc.convert(t.model)
        except atc.ConversionError:
            counts["davinci refuses"] += 1
        else:
            with Model(dev, data) as mod:
                try:
                    got = mod.run(ins)
                except TaskFailedError:
                    counts["davinci fails the run"] += 1
                    got = None
            ok = got is not None and _close(got, outs, t)
            if ok:
                counts["davinci passes"] += 1
            elif got is not None:
                wrong.append(t.name)
        for op in {n.op_type for n in t.model.graph.node}:
            per[op][0] += 1
            per[op][1] += ok
            per[op][2] += bool(ort_ok)
    counts["cases"] = len(cases)
    print("%s of davinci-atc's ops: %s" % (what, dict(counts)))
    print("per op type (a case counts for each op type it has; < where "
          "davinci passes fewer):\n%s" % _table(per))
    assert not wrong, "converted and wrong: %s" % wrong
    assert counts["davinci passes"] > 0


def test_no_node_test_is_converted_and_wrong(dev):
    _run_all(dev, _cases(), "ONNX node tests")


def test_no_backend_model_is_converted_and_wrong(dev):
    _run_all(dev, _model_cases(), "the onnx package's backend models")
