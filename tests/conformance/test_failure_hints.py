# SPDX-License-Identifier: GPL-2.0
"""A failed task's message says what happened, by the op that failed:
a DVPP engine refusing a corrupt file, an indexed op's index out of
range, a davinci-atc model's run-time check naming the input whose value
differs from what the model declares; an op with no such meaning keeps
the generic INVALID_TASK hint (a malformed descriptor)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import davinci
from davinci import dvpp, ops
from davinci.errors import status_hint

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "ops"))
from test_jpegd import encode, photo  # noqa: E402

MALFORMED = "malformed descriptor"
REFUSED = "the engine refused its input"


def _corrupt_jpeg() -> bytes:
    good = encode(photo(96, 64, seed=4), quality=90, subsampling=2)
    sos = good.index(b"\xff\xda")
    bad = bytearray(good)
    at = (sos + len(good)) // 2
    bad[at:at + 2] = b"\xff\xc8"        # a marker no scan may hold
    return bytes(bad)


def test_a_corrupt_jpeg_says_the_engine_refused_it_with_the_errno(dev):
    data = _corrupt_jpeg()
    src = dev.tensor(np.frombuffer(data, np.uint8).copy())
    out = dev.tensor(np.zeros(dvpp.nv12_size(96, 64), np.uint8))
    with pytest.raises(dvpp.JpegDecodeError) as e:
        ops.jpeg_decode(src, out)
    msg = str(e.value)
    assert REFUSED in msg and MALFORMED not in msg
    assert e.value.result.error_name in msg      # the record's errno


def test_a_corrupt_jpeg_on_a_stream_says_the_engine_refused_it(dev):
    """The stream's own message, where the runtime has no record: the
    op's meaning, and where to look."""
    data = _corrupt_jpeg()
    src = dev.tensor(np.frombuffer(data, np.uint8).copy())
    out = dev.tensor(np.zeros(dvpp.nv12_size(96, 64), np.uint8))
    s = dev.stream()
    pending = ops.jpeg_decode(src, out, stream=s)
    with pytest.raises(davinci.TaskFailedError) as e:
        s.synchronize()
    msg = str(e.value)
    assert "JPEGD_DECODE" in msg and REFUSED in msg and MALFORMED not in msg
    assert "result record" in msg
    assert pending.result().error < 0


def test_acl_media_reports_the_engine_refusal(acl_dev):
    acl = acl_dev
    data = _corrupt_jpeg()
    m = acl.media
    ch = m.dvpp_create_channel_desc()
    assert m.dvpp_create_channel(ch) == 0
    stream, ret = acl.rt.create_stream()
    jpeg, ret = m.dvpp_malloc(len(data))
    assert acl.rt.memcpy(jpeg, len(data), acl.util.bytes_to_ptr(data),
                         len(data), 1) == 0
    size = dvpp.nv12_size(96, 64)
    out, ret = m.dvpp_malloc(size)
    d = m.dvpp_create_pic_desc()
    for f, v in (("data", out), ("size", size), ("format", 1)):
        assert getattr(m, "dvpp_set_pic_desc_" + f)(d, v) == 0
    try:
        assert m.dvpp_jpeg_decode_async(ch, jpeg, len(data), d, stream) == 0
        assert acl.rt.synchronize_stream(stream) == \
            acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION
        msg = acl.get_recent_err_msg()
        assert REFUSED in msg and MALFORMED not in msg
        # the record's errno and what the desc's ret code says
        assert "result record: -EINVAL" in msg
        assert "ACL_ERROR_INVALID_FILE" in msg
        assert m.dvpp_get_pic_desc_ret_code(d) == \
            acl.constants.ACL_ERROR_INVALID_FILE
    finally:
        m.dvpp_destroy_pic_desc(d)
        m.dvpp_free(out)
        m.dvpp_free(jpeg)
        acl.rt.destroy_stream(stream)
        m.dvpp_destroy_channel(ch)
        m.dvpp_destroy_channel_desc(ch)


def test_an_index_out_of_range_says_so(dev):
    x = dev.tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    idx = dev.tensor(np.array([1, 4], np.int64))
    s = dev.stream()
    ops.index_select(x, idx, 0, stream=s)
    with pytest.raises(davinci.TaskFailedError) as e:
        s.synchronize()
    msg = str(e.value)
    assert "INDEX_SELECT" in msg and "index out of range" in msg
    assert MALFORMED not in msg


def test_other_ops_keep_the_generic_hint():
    st = davinci._uapi.DAVINCI_STATUS_INVALID_TASK
    assert MALFORMED in status_hint(st)
    assert MALFORMED in status_hint(st, davinci.schema.by_name("ADD").opcode)
    assert MALFORMED in status_hint(st, 0xFFFF)           # unknown opcode
    assert REFUSED in status_hint(
        st, davinci.schema.by_name("PNGD_DECODE").opcode)
    # another status means what it always meant, whatever the op
    assert status_hint(davinci._uapi.DAVINCI_STATUS_ABORTED,
                       davinci.schema.by_name("JPEGD_DECODE").opcode) == \
        status_hint(davinci._uapi.DAVINCI_STATUS_ABORTED)


def _reshape_model() -> bytes:
    """y = Reshape(x, s) with s an int64 input: davinci-atc pins s to [6],
    what the declared y[6] implies, and checks it when the model runs."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from davinci import atc
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return atc.convert(m)


def test_a_model_check_failing_names_the_input(dev):
    from davinci.model import Model
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with Model(dev, _reshape_model()) as model:
        out, = model.run([x, np.array([6], np.int64)])
        assert np.array_equal(out, x.reshape(6))
        with pytest.raises(davinci.TaskFailedError) as e:
            model.run([x, np.array([5], np.int64)])
        msg = str(e.value)
        assert "run-time check" in msg and "'s'" in msg and "'x'" not in msg
        assert MALFORMED not in msg
        # the model's stream was reset: the next run is its own
        out, = model.run([x, np.array([6], np.int64)])
        assert np.array_equal(out, x.reshape(6))


def test_acl_mdl_execute_names_the_input_too(acl_dev):
    from .test_acl_mdl import Run
    acl = acl_dev
    data = np.frombuffer(_reshape_model(), np.uint8).copy()
    model_id, ret = acl.mdl.load_from_mem(acl.util.numpy_to_ptr(data),
                                          data.nbytes)
    assert ret == 0
    r = Run(model_id)

    def put_s(v):           # Run.put writes float32s; s is an int64
        b = acl.mdl.get_dataset_buffer(r.inputs, 1)
        a = np.array([v], np.int64)
        assert acl.rt.memcpy(acl.get_data_buffer_addr(b), 8, a.ctypes.data,
                             8, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    try:
        r.put(0, np.zeros((2, 3), np.float32))
        put_s(7)
        assert acl.mdl.execute(model_id, r.inputs, r.outputs) != 0
        msg = acl.get_recent_err_msg()
        assert "run-time check" in msg and "'s'" in msg
        put_s(6)
        assert acl.mdl.execute(model_id, r.inputs, r.outputs) == 0
    finally:
        r.close()
        assert acl.mdl.unload(model_id) == 0
