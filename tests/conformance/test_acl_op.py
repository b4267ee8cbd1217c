# SPDX-License-Identifier: GPL-2.0
"""acl.op.execute_v2 of every built-in op, pyACL style, against numpy; the
tensor-desc and data-buffer API; shape and dtype checks and their codes."""

import os

import numpy as np
import pytest

import acl
from davinci.ops import bfloat16_to_float32, float32_to_bfloat16

ND = acl.ACL_FORMAT_ND
_NP = {acl.ACL_FLOAT: np.float32, acl.ACL_FLOAT16: np.float16,
       acl.ACL_INT32: np.int32, acl.ACL_BF16: np.uint16}


class Op:
    """Tensors for one pyACL single-op call, freed at the end."""

    def __init__(self):
        self.ptrs, self.descs, self.bufs = [], [], []
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0

    def tensor(self, array, dtype=acl.ACL_FLOAT):
        arr = np.ascontiguousarray(array)
        if dtype == acl.ACL_BF16:
            raw = float32_to_bfloat16(arr.astype(np.float32))
        else:
            raw = arr.astype(_NP[dtype])
        return self._make(raw, list(arr.shape), dtype, True)

    def empty(self, shape, dtype=acl.ACL_FLOAT):
        raw = np.zeros(shape, _NP[dtype])
        return self._make(raw, list(shape), dtype, False)

    def _make(self, raw, shape, dtype, upload):
        n = max(raw.nbytes, 1)
        p, ret = acl.rt.malloc(n, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        assert ret == 0
        if upload and raw.nbytes:
            assert acl.rt.memcpy(p, n, raw.ctypes.data, raw.nbytes,
                                 acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        d = acl.create_tensor_desc(dtype, shape, ND)
        assert d
        b = acl.create_data_buffer(p, raw.nbytes)
        self.ptrs.append(p)
        self.descs.append(d)
        self.bufs.append(b)
        return (d, b, p, raw.dtype, tuple(shape), dtype)

    def run(self, op_type, ins, outs, attr=0):
        return acl.op.execute_v2(op_type, [t[0] for t in ins],
                                 [t[1] for t in ins], [t[0] for t in outs],
                                 [t[1] for t in outs], attr, self.stream)

    def result(self, t):
        assert acl.rt.synchronize_stream(self.stream) == 0
        d, b, p, npdt, shape, dtype = t
        out = np.empty(shape, npdt)
        if out.nbytes:
            assert acl.rt.memcpy(out.ctypes.data, out.nbytes, p, out.nbytes,
                                 acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        if dtype == acl.ACL_BF16:
            return bfloat16_to_float32(out).reshape(shape)
        return out

    def close(self):
        for b in self.bufs:
            assert acl.destroy_data_buffer(b) == 0
        for d in self.descs:
            acl.destroy_tensor_desc(d)
        for p in self.ptrs:
            assert acl.rt.free(p) == 0
        acl.rt.destroy_stream(self.stream)


@pytest.fixture
def op(acl_dev):
    o = Op()
    yield o
    o.close()


def _tol(dtype):
    return {acl.ACL_FLOAT: 1e-6, acl.ACL_FLOAT16: 2e-3,
            acl.ACL_BF16: 1e-2, acl.ACL_INT32: 0}[dtype]


def _round(x, dtype):
    """numpy reference rounded to the operand type."""
    if dtype == acl.ACL_BF16:
        return bfloat16_to_float32(float32_to_bfloat16(
            np.asarray(x, np.float32)))
    return np.asarray(x).astype(_NP[dtype]).astype(np.float32)


BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
          "RealDiv": np.divide, "Maximum": np.maximum,
          "Minimum": np.minimum}


@pytest.mark.parametrize("dtype", [acl.ACL_FLOAT, acl.ACL_FLOAT16,
                                   acl.ACL_BF16])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(op, rng, name, dtype):
    a = _round(rng.standard_normal((7, 33)), dtype)
    b = _round(rng.uniform(0.5, 2.0, (7, 33)), dtype)
    ta, tb = op.tensor(a, dtype), op.tensor(b, dtype)
    tc = op.empty((7, 33), dtype)
    assert op.run(name, [ta, tb], [tc]) == 0
    want = _round(BINARY[name](a, b), dtype)
    np.testing.assert_allclose(op.result(tc).astype(np.float32), want,
                               rtol=_tol(dtype), atol=_tol(dtype))


def test_int32_add(op):
    a = np.arange(-50, 50, dtype=np.int32)
    ta, tb = op.tensor(a, acl.ACL_INT32), op.tensor(a, acl.ACL_INT32)
    tc = op.empty((100,), acl.ACL_INT32)
    assert op.run("Add", [ta, tb], [tc]) == 0
    np.testing.assert_array_equal(op.result(tc), 2 * a)


@pytest.mark.parametrize("dtype", [acl.ACL_FLOAT, acl.ACL_FLOAT16,
                                   acl.ACL_BF16])
def test_relu_exp(op, rng, dtype):
    x = _round(rng.standard_normal((5, 40)) * 3, dtype)
    tx = op.tensor(x, dtype)
    tr, te = op.empty((5, 40), dtype), op.empty((5, 40), dtype)
    assert op.run("Relu", [tx], [tr]) == 0
    assert op.run("Exp", [tx], [te]) == 0
    np.testing.assert_array_equal(op.result(tr).astype(np.float32),
                                  np.maximum(x, 0))
    np.testing.assert_allclose(op.result(te).astype(np.float32),
                               np.exp(x.astype(np.float64)),
                               rtol=max(_tol(dtype), 2e-6))


@pytest.mark.parametrize("tx1,tx2", [(False, False), (True, False),
                                     (False, True), (True, True)])
def test_matmul_transpose(op, rng, tx1, tx2):
    m, k, n = 6, 17, 9
    a = rng.standard_normal((k, m) if tx1 else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tx2 else (k, n)).astype(np.float32)
    attr = acl.op.create_attr()
    assert acl.op.set_attr_bool(attr, "transpose_x1", tx1) == 0
    assert acl.op.set_attr_bool(attr, "transpose_x2", tx2) == 0
    ta, tb, tc = op.tensor(a), op.tensor(b), op.empty((m, n))
    assert op.run("MatMul", [ta, tb], [tc], attr) == 0
    want = (a.T if tx1 else a) @ (b.T if tx2 else b)
    np.testing.assert_allclose(op.result(tc), want, rtol=1e-5, atol=1e-5)
    acl.op.destroy_attr(attr)


def test_matmul_fp16(op, rng):
    a = rng.standard_normal((8, 16)).astype(np.float16)
    b = rng.standard_normal((16, 4)).astype(np.float16)
    ta = op.tensor(a, acl.ACL_FLOAT16)
    tb = op.tensor(b, acl.ACL_FLOAT16)
    tc = op.empty((8, 4), acl.ACL_FLOAT16)
    assert op.run("MatMul", [ta, tb], [tc]) == 0
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(op.result(tc).astype(np.float32), want,
                               rtol=1e-2, atol=1e-2)


def test_softmax_reduce_sum(op, rng):
    x = rng.standard_normal((4, 3, 10)).astype(np.float32)
    tx = op.tensor(x)
    ts = op.empty((4, 3, 10))
    attr = acl.op.create_attr()
    assert acl.op.set_attr_list_int(attr, "axes", [-1]) == 0
    assert op.run("SoftmaxV2", [tx], [ts], attr) == 0
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(op.result(ts), e / e.sum(-1, keepdims=True),
                               rtol=1e-5, atol=1e-6)
    # ReduceSum: axes as an int32 input tensor, keep_dims False and True
    taxes = op.tensor(np.array([-1], np.int32), acl.ACL_INT32)
    tr = op.empty((4, 3))
    assert op.run("ReduceSum", [tx, taxes], [tr]) == 0
    np.testing.assert_allclose(op.result(tr), x.sum(-1), rtol=1e-5,
                               atol=1e-5)
    attr2 = acl.op.create_attr()
    assert acl.op.set_attr_bool(attr2, "keep_dims", True) == 0
    tk = op.empty((4, 3, 1))
    assert op.run("ReduceSum", [tx, taxes], [tk], attr2) == 0
    np.testing.assert_allclose(op.result(tk), x.sum(-1, keepdims=True),
                               rtol=1e-5, atol=1e-5)
    # all axes (ReduceSumD style attribute)
    attr3 = acl.op.create_attr()
    assert acl.op.set_attr_list_int(attr3, "axes", [0, 1, 2]) == 0
    tall = op.empty((1,))
    assert op.run("ReduceSum", [tx], [tall], attr3) == 0
    np.testing.assert_allclose(op.result(tall), [x.sum()], rtol=1e-4)


@pytest.mark.parametrize("src,dst", [
    (acl.ACL_FLOAT, acl.ACL_FLOAT16), (acl.ACL_FLOAT16, acl.ACL_FLOAT),
    (acl.ACL_FLOAT, acl.ACL_BF16), (acl.ACL_BF16, acl.ACL_FLOAT),
    (acl.ACL_FLOAT16, acl.ACL_BF16)])
def test_cast(op, rng, src, dst):
    x = _round(rng.standard_normal(300) * 10, src)
    tx = op.tensor(x, src)
    ty = op.empty((300,), dst)
    attr = acl.op.create_attr()
    assert acl.op.set_attr_data_type(attr, "dst_type", dst) == 0
    assert op.run("Cast", [tx], [ty], attr) == 0
    np.testing.assert_allclose(op.result(ty).astype(np.float32),
                               _round(x, dst), rtol=_tol(dst))


def test_checks_return_pyacl_codes(op, rng):
    a = op.tensor(np.ones((4, 4), np.float32))
    b = op.tensor(np.ones((4, 5), np.float32))
    h = op.tensor(np.ones((4, 4), np.float16), acl.ACL_FLOAT16)
    i = op.tensor(np.ones((4, 4), np.int32), acl.ACL_INT32)
    out = op.empty((4, 4))
    out5 = op.empty((4, 5))
    assert op.run("Conv3D", [a, a], [out]) == acl.ACL_ERROR_OP_NOT_FOUND
    assert op.run("Add", [a, b], [out]) == acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    assert op.run("Add", [a, h], [out]) == acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    assert op.run("Add", [a], [out]) == acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    assert op.run("Add", [a, a], [out5]) == acl.ACL_ERROR_OP_OUTPUT_NOT_MATCH
    assert op.run("Exp", [i], [op.empty((4, 4), acl.ACL_INT32)]) == \
        acl.ACL_ERROR_UNSUPPORTED_DATA_TYPE
    assert op.run("MatMul", [a, a], [out5]) == \
        acl.ACL_ERROR_OP_OUTPUT_NOT_MATCH
    assert op.run("MatMul", [b, b], [out]) == acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    bad = acl.op.create_attr()
    assert acl.op.set_attr_int(bad, "transpose_x1", 1) == 0
    assert op.run("MatMul", [a, a], [out], bad) == \
        acl.ACL_ERROR_OP_ATTR_NOT_MATCH
    ax = acl.op.create_attr()
    assert acl.op.set_attr_list_int(ax, "axes", [0]) == 0
    assert op.run("SoftmaxV2", [a], [out], ax) == \
        acl.ACL_ERROR_OP_ATTR_NOT_MATCH
    # a data buffer smaller than its description
    d = acl.create_tensor_desc(acl.ACL_FLOAT, [8, 8], ND)
    small = acl.create_data_buffer(a[2], 64)
    assert acl.op.execute_v2("Relu", [d], [small], [d], [small], 0,
                             op.stream) == acl.ACL_ERROR_INVALID_PARAM
    acl.destroy_data_buffer(small)
    acl.destroy_tensor_desc(d)
    # nothing failed on the device
    assert acl.rt.synchronize_stream(op.stream) == 0


def test_tensor_desc_and_data_buffer_getters(acl_dev):
    d = acl.create_tensor_desc(acl.ACL_FLOAT16, [2, 3, 5], ND)
    assert d != 0
    assert acl.get_tensor_desc_type(d) == acl.ACL_FLOAT16
    assert acl.get_tensor_desc_format(d) == ND
    assert acl.get_tensor_desc_num_dims(d) == 3
    assert [acl.get_tensor_desc_dim(d, i) for i in range(3)] == [2, 3, 5]
    assert acl.get_tensor_desc_dim_v2(d, 2) == (5, 0)
    assert acl.get_tensor_desc_dim_v2(d, 3)[1] == acl.ACL_ERROR_INVALID_PARAM
    assert acl.get_tensor_desc_element_count(d) == 30
    assert acl.get_tensor_desc_size(d) == 60
    acl.destroy_tensor_desc(d)
    b = acl.create_data_buffer(0x1234000, 4096)
    assert acl.get_data_buffer_addr(b) == 0x1234000
    assert acl.get_data_buffer_size_v2(b) == 4096
    assert acl.destroy_data_buffer(b) == 0
    assert acl.destroy_data_buffer(b) == acl.ACL_ERROR_INVALID_PARAM


def test_constants_match_cann():
    assert (acl.ACL_FLOAT, acl.ACL_FLOAT16, acl.ACL_INT32, acl.ACL_BF16) == \
        (0, 1, 3, 27)
    assert (acl.ACL_FORMAT_NCHW, acl.ACL_FORMAT_NHWC, acl.ACL_FORMAT_ND) == \
        (0, 1, 2)
    assert (acl.ACL_ERROR_OP_INPUT_NOT_MATCH,
            acl.ACL_ERROR_OP_OUTPUT_NOT_MATCH,
            acl.ACL_ERROR_OP_ATTR_NOT_MATCH, acl.ACL_ERROR_OP_NOT_FOUND,
            acl.ACL_ERROR_UNSUPPORTED_DATA_TYPE) == \
        (100021, 100022, 100023, 100024, 100026)


def test_set_model_dir(acl_dev, tmp_path):
    assert acl.op.set_model_dir(str(tmp_path)) == 0
    assert acl.op.set_model_dir(os.path.join(str(tmp_path), "nope")) == \
        acl.ACL_ERROR_INVALID_FILE
