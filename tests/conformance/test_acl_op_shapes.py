# SPDX-License-Identifier: GPL-2.0
"""acl.op beyond one shape: elementwise operators broadcast their inputs
as CANN's do, in one strided task; the convolutions and views refuse what
the device does not run with the aclError and a message that says what to
change."""

import numpy as np
import pytest

import acl

from .test_acl_op_schema import Tensors


@pytest.fixture
def tensors(acl_dev):
    t = Tensors()
    yield t
    t.close()


def _run(tensors, name, inputs, out_shape, out_dtype, attrs=()):
    ins = [tensors.put(x, dt) for x, dt in inputs]
    out = tensors.put(np.zeros(out_shape, out_dtype),
                      {np.float32: acl.ACL_FLOAT, np.uint8: acl.ACL_BOOL}[
                          out_dtype], False)
    a = acl.op.create_attr()
    for setter, key, value in attrs:
        assert getattr(acl.op, setter)(a, key, value) == 0
    ret = acl.op.execute_v2(name, [t[0] for t in ins], [t[1] for t in ins],
                            [out[0]], [out[1]], a, 0)
    acl.op.destroy_attr(a)
    if ret:
        return ret, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(0) == 0
    return 0, tensors.get(out, np.zeros(out_shape, out_dtype))


@pytest.mark.parametrize("a_shape,b_shape", [
    ((2, 3, 4), (3, 1)), ((4,), (2, 3, 4)), ((2, 1, 4), (1, 3, 1)),
    ((5, 1), ())])
def test_elementwise_operators_broadcast(tensors, rng, a_shape, b_shape):
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    shape = np.broadcast_shapes(a_shape, b_shape)
    for name, want in (("Add", a + b), ("Mul", a * b), ("RealDiv", a / b),
                       ("Maximum", np.maximum(a, b))):
        ret, got = _run(tensors, name, [(a, acl.ACL_FLOAT),
                                        (b, acl.ACL_FLOAT)], shape,
                        np.float32)
        assert ret == 0, got
        np.testing.assert_array_equal(got, want)
    ret, got = _run(tensors, "Less", [(a, acl.ACL_FLOAT), (b, acl.ACL_FLOAT)],
                    shape, np.uint8)
    assert ret == 0, got
    np.testing.assert_array_equal(got, (a < b).astype(np.uint8))


def test_shapes_that_do_not_broadcast_are_refused(tensors):
    a = np.ones((2, 3), np.float32)
    b = np.ones((4,), np.float32)
    ret, msg = _run(tensors, "Add", [(a, acl.ACL_FLOAT), (b, acl.ACL_FLOAT)],
                    (2, 3), np.float32)
    assert ret == acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    assert "broadcast" in msg
    ret, msg = _run(tensors, "Add", [(a, acl.ACL_FLOAT), (a, acl.ACL_FLOAT)],
                    (3, 2), np.float32)
    assert ret == acl.ACL_ERROR_OP_OUTPUT_NOT_MATCH


_GEOM = [("set_attr_list_int", "strides", [1, 1, 1, 1]),
         ("set_attr_list_int", "pads", [1, 1, 1, 1])]


@pytest.mark.parametrize("attrs,words", [
    (_GEOM, "NCHW"),                                    # CANN's NHWC default
    (_GEOM + [("set_attr_string", "data_format", "NHWC")], "NCHW"),
    ([("set_attr_string", "data_format", "NCHW")], "strides"),
    ([("set_attr_string", "data_format", "NCHW"),
      ("set_attr_list_int", "strides", [1, 1, 1, 1]),
      ("set_attr_list_int", "pads", [1, 0, 1, 1])], "alike"),
    ([("set_attr_string", "data_format", "NCHW"),
      ("set_attr_list_int", "strides", [2, 1, 1, 1]),
      ("set_attr_list_int", "pads", [1, 1, 1, 1])], "N and C 1"),
])
def test_a_convolution_the_device_cannot_run_is_refused(tensors, attrs,
                                                        words):
    x = np.ones((1, 2, 5, 5), np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    ret, msg = _run(tensors, "Conv2D", [(x, acl.ACL_FLOAT),
                                        (w, acl.ACL_FLOAT)], (1, 3, 5, 5),
                    np.float32, attrs)
    assert ret == acl.ACL_ERROR_OP_ATTR_NOT_MATCH
    assert words in msg


def test_a_conv2d_bias_of_the_wrong_length_is_refused(tensors):
    x = np.ones((1, 2, 5, 5), np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    ret, msg = _run(tensors, "Conv2D", [
        (x, acl.ACL_FLOAT), (w, acl.ACL_FLOAT),
        (np.ones(2, np.float32), acl.ACL_FLOAT)], (1, 3, 5, 5), np.float32,
        _GEOM + [("set_attr_string", "data_format", "NCHW")])
    assert ret == acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    assert "bias" in msg


@pytest.mark.parametrize("offsets,size", [([0, 3], [1, 2]), ([-1, 0], [1, 1]),
                                          ([0], [1])])
def test_a_slice_outside_its_input_is_refused(tensors, offsets, size):
    x = np.ones((2, 4), np.float32)
    ret, msg = _run(tensors, "SliceD", [(x, acl.ACL_FLOAT)], (1, 1),
                    np.float32, [("set_attr_list_int", "offsets", offsets),
                                 ("set_attr_list_int", "size", size)])
    assert ret == acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    assert "offset" in msg


def test_a_transpose_takes_a_permutation_only(tensors):
    x = np.ones((2, 4), np.float32)
    ret, msg = _run(tensors, "TransposeD", [(x, acl.ACL_FLOAT)], (4, 2),
                    np.float32, [("set_attr_list_int", "perm", [0, 0])])
    assert ret == acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    assert "perm" in msg


def test_same_padding_pools_as_tensorflows(tensors, rng):
    """MaxPool with SAME padding: out = ceil(in / stride), the window's
    taps outside the input ignored."""
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)),
                    constant_values=-np.inf)
    want = np.stack([np.stack([padded[:, :, i:i + 3, j:j + 3].max(
        axis=(2, 3)) for j in range(6)], -1) for i in range(6)], -2)
    ret, got = _run(tensors, "MaxPool", [(x, acl.ACL_FLOAT)], (1, 2, 6, 6),
                    np.float32, [("set_attr_list_int", "ksize", [1, 1, 3, 3]),
                                 ("set_attr_list_int", "strides",
                                  [1, 1, 1, 1]),
                                 ("set_attr_string", "padding", "SAME"),
                                 ("set_attr_string", "data_format", "NCHW")])
    assert ret == 0, got
    np.testing.assert_array_equal(got, want)


_POOL = [("set_attr_list_int", "ksize", [1, 1, 2, 2]),
         ("set_attr_list_int", "strides", [1, 1, 1, 1])]


@pytest.mark.parametrize("name,attrs,words", [
    ("MaxPool", _POOL + [("set_attr_string", "padding", "VALID")], "NCHW"),
    ("MaxPool", _POOL + [("set_attr_string", "padding", "SAME"),
                         ("set_attr_string", "data_format", "NCHW")],
     "split evenly"),
    ("MaxPoolV3", _POOL + [("set_attr_list_int", "pads", [1, 0, 0, 0])],
     "alike"),
    ("AvgPoolV2", [("set_attr_list_int", "ksize", [1, 1, 2, 2])], "strides"),
    ("AvgPool", _POOL + [("set_attr_string", "padding", "CALCULATED"),
                         ("set_attr_string", "data_format", "NCHW")],
     "SAME, VALID"),
])
def test_a_pooling_the_device_cannot_run_is_refused(tensors, name, attrs,
                                                    words):
    x = np.ones((1, 2, 5, 5), np.float32)
    ret, msg = _run(tensors, name, [(x, acl.ACL_FLOAT)], (1, 2, 4, 4),
                    np.float32, attrs)
    assert ret == acl.ACL_ERROR_OP_ATTR_NOT_MATCH
    assert words in msg
