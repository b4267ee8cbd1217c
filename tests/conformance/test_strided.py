# SPDX-License-Identifier: GPL-2.0
"""Strided operands (DOC: strided operands in davinci.h), through
opdesc.describe(strided=) and Stream.launch: every op the schema marks
STRIDED, in every dtype it takes, on transposed, sliced and broadcast
(stride 0) views of its sample inputs (op_samples.py) and into a strided
dst, gives numpy's result on the views' values, the bytes the dense op
gives on them, and leaves every other element of dst as it was; in place;
in a captured graph; what describe and the device refuse; what the driver
announces."""

import dataclasses
import errno

import numpy as np
import pytest

import davinci
from davinci import _uapi, atc, capabilities, ops, opdesc, omfile, schema
from davinci.opdesc import Strided

from ._onnx_models import mlp
from .op_samples import SAMPLES, assert_matches

STRIDED_OPS = [op for op in schema.COMPUTE_OPS if "STRIDED" in op.flags]
#: SELECT reads dst too (its else-branch): tests/conformance/test_indexing.py
CASES = [(op, dtype) for op in STRIDED_OPS for dtype in op.dtypes
         if op.name != "SELECT"]
SIZES = (6, 8)
#: (src0, src1, dst) strides over SIZES, in elements
LAYOUTS = {
    "transposed, row broadcast": ((1, 6), (0, 1), (8, 1)),
    "sliced with a step, transposed dst": ((24, 3), (16, 2), (1, 6)),
    "column broadcast, dst a slice of a larger tensor": ((8, 1), (1, 0),
                                                         (20, 2)),
}
_JUNK = 0x3E


def _storage(dtype: str) -> np.dtype:
    return ops.DTYPES[dtype][1]


def _view(flat: np.ndarray, strides) -> np.ndarray:
    """numpy's view of ``flat`` with SIZES and these element strides."""
    return np.lib.stride_tricks.as_strided(
        flat, shape=SIZES, strides=[s * flat.itemsize for s in strides]).copy()


def _offsets(strides) -> np.ndarray:
    idx = np.indices(SIZES)
    return sum(i * s for i, s in zip(idx, strides)).reshape(-1)


def _junk_tensor(dev, n: int, dtype: str) -> davinci.DeviceTensor:
    junk = np.full(n * _storage(dtype).itemsize, _JUNK, np.uint8)
    return davinci.DeviceTensor.from_numpy(dev, junk.view(_storage(dtype)),
                                           dtype)


def _block(dev, strided: Strided):
    data = strided.pack()
    buf = dev.malloc(len(data))
    buf.write(data)
    return buf


def _task(op, dtype, out, srcs, strided, block, sample=None):
    sample = sample or SAMPLES[op.name][0]
    return opdesc.describe(
        op, dtype, dst=out.dev_addr, srcs=[x.dev_addr for x in srcs],
        strided=strided, attr=sample.attr if op.imm is not None else None,
        dst_dtype=sample.kwargs.get("dtype") if op.kind == "cast" else None,
        params_at=block.dev_addr)


def test_the_elementwise_ops_cast_and_identity_take_strided_operands():
    assert {op.name for op in STRIDED_OPS} == {
        "ADD", "SUB", "MUL", "DIV", "MAX", "MIN", "RELU", "EXP", "AXPY",
        "CAST", "RELU_GRAD", "SQRT", "CMP", "ABS", "LEAKY_RELU", "IDENTITY",
        "TANH", "SIGMOID", "ERF", "LOG", "GELU", "SILU", "RECIPROCAL", "POW",
        "NEG", "TANH_GRAD", "SIGMOID_GRAD", "GELU_GRAD", "SILU_GRAD",
        "SELECT", "MASK_SCALE"}
    assert all(op.params is None and op.kind in ("binary", "unary", "cast")
               for op in STRIDED_OPS)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("op,dtype", CASES,
                         ids=["%s-%s" % (o.name, d) for o, d in CASES])
def test_a_strided_op_is_numpy_and_the_dense_op_on_the_views(
        dev, rng, op, dtype, layout):
    sample = SAMPLES[op.name][0]
    out_dtype = sample.kwargs.get("dtype", dtype)
    nsrc = opdesc.SOURCES[op.kind]
    raws = [r.reshape(-1) for r in sample.inputs(rng, dtype)]
    src_strides, dst_strides = LAYOUTS[layout][:nsrc], LAYOUTS[layout][2]
    strided = Strided(SIZES, dst_strides, src_strides[0],
                      src_strides[1] if nsrc == 2 else None)
    dtypes = sample.dtypes_of(dtype, nsrc)
    srcs = [davinci.DeviceTensor.from_numpy(dev, r, d)
            for r, d in zip(raws, dtypes)]
    out = _junk_tensor(dev, strided.span(0), out_dtype)
    before = out.numpy(raw=True)
    block = _block(dev, strided)
    s = dev.stream()
    s.launch(_task(op, dtype, out, srcs, strided, block))
    s.synchronize()
    got_all = out.numpy(raw=True)
    got = _view(got_all, dst_strides)

    views = [_view(r, st) for r, st in zip(raws, src_strides)]
    assert_matches(sample, views, got, dtype, out_dtype)
    # bit for bit the dense op on the same values
    fn = getattr(ops, op.python)
    args = ([sample.attr] if op.takes_attr else []) + [
        davinci.DeviceTensor.from_numpy(dev, v, d)
        for v, d in zip(views, dtypes)]
    dense = fn(*args, **sample.kwargs).numpy(raw=True)
    assert got.tobytes() == dense.tobytes()
    # and no other element of dst written
    untouched = np.ones(got_all.size, bool)
    untouched[_offsets(dst_strides)] = False
    assert np.array_equal(got_all[untouched].view(np.uint8),
                          before[untouched].view(np.uint8))
    block.free()


def test_in_place_on_a_strided_view(dev, rng):
    x = rng.standard_normal(128).astype(np.float32)
    y = rng.standard_normal(48).astype(np.float32)
    tx = davinci.DeviceTensor.from_numpy(dev, x)
    ty = davinci.DeviceTensor.from_numpy(dev, y)
    view = (16, 2)                       # x[::2] as 6 x 8, rows 16 apart
    strided = Strided(SIZES, view, view, (8, 1))
    block = _block(dev, strided)
    s = dev.stream()
    s.launch(opdesc.describe("add", "float32", dst=tx.dev_addr,
                             srcs=(tx.dev_addr, ty.dev_addr),
                             strided=strided, params_at=block.dev_addr))
    s.synchronize()
    want = x.copy()
    want[_offsets(view)] += y
    assert np.array_equal(tx.numpy(), want)


def test_a_graph_runs_its_strided_tasks_on_the_inputs_of_each_launch(dev):
    x = np.arange(48, dtype=np.float32)
    tx = davinci.DeviceTensor.from_numpy(dev, x)
    tb = davinci.DeviceTensor.from_numpy(dev, np.ones(8, np.float32))
    out = davinci.DeviceTensor.empty(dev, (48,), "float32")
    strided = Strided(SIZES, (8, 1), (1, 6), (0, 1))
    block = _block(dev, strided)
    s = dev.stream()
    with s.capture() as g:
        s.launch(opdesc.describe("mul", "float32", dst=out.dev_addr,
                                 srcs=(tx.dev_addr, tb.dev_addr),
                                 strided=strided, params_at=block.dev_addr))
    for scale in (2.0, 3.0):
        tb.buffer.write(np.full(8, scale, np.float32))
        g.launch()
        s.synchronize()
        assert np.array_equal(out.numpy().reshape(SIZES),
                              x.reshape(8, 6).T * np.float32(scale))
    g.destroy()
    block.free()


def test_describe_coalesces_what_is_contiguous_in_every_operand():
    st = Strided((2, 1, 3, 4), dst=(12, 99, 4, 1), src0=(12, 5, 4, 1),
                 src1=(0, 0, 0, 1))
    c = st.coalesced()
    assert c == Strided((6, 4), (4, 1), (4, 1), (0, 1))
    p = _uapi.davinci_params_strided.from_buffer_copy(st.pack())
    assert p.ndim == 2 and list(p.sizes) == [6, 4, 0, 0, 0, 0, 0, 0]
    assert [list(r)[:2] for r in p.strides] == [[4, 1], [4, 1], [0, 1]]
    assert Strided((5, 7), (7, 1), (7, 1)).coalesced().sizes == (35,)
    assert Strided((1, 1), (3, 4), (5, 6)).coalesced().sizes == (1,)
    t = opdesc.describe("relu", "float32", dst=0x1000, srcs=(0x2000,),
                        strided=Strided((4, 3), (3, 1), (1, 4)),
                        params_at=0x3000)
    assert t.count == 12 and t.flags == _uapi.DAVINCI_TASK_F_STRIDED
    assert t.params_size == 264
    assert t.params_version == _uapi.DAVINCI_PARAMS_STRIDED_VERSION


@pytest.mark.parametrize("call,error", [
    (dict(op="matmul"), davinci.InvalidArgumentError),
    (dict(op="copy_view"), davinci.InvalidArgumentError),
    (dict(op="softmax"), davinci.InvalidArgumentError),
    (dict(strided=Strided((4,), (1,), (1,))), davinci.InvalidArgumentError),
    (dict(op="relu"), davinci.InvalidArgumentError),        # src1 strides
    (dict(count=5), davinci.ShapeError),
    (dict(params_at=0), davinci.InvalidArgumentError),
    (dict(strided=Strided((3, 4), (0, 1), (4, 1), (4, 1))),
     davinci.ShapeError),
    (dict(strided=Strided((2, 3), (2, 1), (3, 1), (3, 1))),
     davinci.ShapeError),
    (dict(strided=Strided((2,) * 9, tuple(3 ** i for i in range(9)),
                          (1,) * 9, (0,) * 9)), davinci.ShapeError),
    (dict(strided=Strided((2, 2), (2, 1), (1 << 62, 1), (0, 1))),
     davinci.ShapeError),
])
def test_describe_refuses_what_the_device_would(call, error):
    args = dict(op="add", strided=Strided((3, 4), (4, 1), (1, 3), (0, 1)),
                count=0, params_at=0x3000)
    args.update(call)
    op = opdesc.op_of(args.pop("op"))
    srcs = (0x1000,) * opdesc.SOURCES[op.kind]
    with pytest.raises(error):
        opdesc.describe(op, "float32", dst=0x2000, srcs=srcs,
                        rows=(1, 1), mnk=(1, 1, 1), **args)
    with pytest.raises(davinci.ShapeError):
        Strided((3, 4), (4, 1), (-1, 3))


def _expect_refused(dev, s, t, out, want):
    s.launch(t)
    with pytest.raises(davinci.TaskFailedError) as e:
        s.synchronize()
    assert e.value.status == _uapi.DAVINCI_STATUS_INVALID_TASK
    assert np.array_equal(out.numpy(), want)
    s.reset()


def test_the_device_refuses_a_block_or_an_overlap_touching_nothing(dev):
    x = np.arange(64, dtype=np.float32)
    tx = davinci.DeviceTensor.from_numpy(dev, x)
    out = davinci.DeviceTensor.from_numpy(dev, np.full(64, 7, np.float32))
    strided = Strided((8, 8), (8, 1), (1, 8), (0, 1))
    block = _block(dev, strided)
    s = dev.stream()
    t = opdesc.describe("add", "float32", dst=out.dev_addr,
                        srcs=(tx.dev_addr, tx.dev_addr), strided=strided,
                        params_at=block.dev_addr)
    good = _uapi.davinci_params_strided.from_buffer_copy(strided.pack())
    for field, value in (("ndim", 0), ("ndim", 9), ("pad", 1)):
        bad = _uapi.davinci_params_strided.from_buffer_copy(bytes(good))
        setattr(bad, field, value)
        block.write(bytes(bad))
        _expect_refused(dev, s, t, out, np.full(64, 7, np.float32))
    bad = _uapi.davinci_params_strided.from_buffer_copy(bytes(good))
    bad.strides[0][1] = 0               # dst writes each row's element 8x
    block.write(bytes(bad))
    _expect_refused(dev, s, t, out, np.full(64, 7, np.float32))
    # dst over its own source, transposed: not in place, refused
    block.write(strided.pack())
    t.dst = tx.dev_addr
    _expect_refused(dev, s, t, tx, x)
    block.free()


def test_the_om_reader_refuses_a_strided_record_without_its_block():
    """A STRIDED op record names its block in PARAMS (format 1.1): one
    that names none is refused at load, saying so."""
    m, _ = mlp(seed=14, n_in=16, hidden=8, n_out=4)
    om = omfile.parse(atc.convert(m, input_shape="x:2,16"))
    i = next(i for i, o in enumerate(om.ops)
             if o.opcode == _uapi.DAVINCI_OP_ADD)
    records = list(om.ops)
    records[i] = dataclasses.replace(records[i],
                                     flags=_uapi.DAVINCI_TASK_F_STRIDED)
    bad = omfile.serialize(dataclasses.replace(om, ops=records))
    with pytest.raises(omfile.ModelFormatError,
                       match="takes a parameter block"):
        omfile.parse(bad)


@pytest.mark.parametrize("what,why", [
    ("an unused src1 row", "src1"), ("a size past ndim", "size"),
    ("sizes that are not count", "count"),
])
def test_the_device_refuses_each_malformed_block(dev, what, why):
    """Further rules the device checks itself (describe never packs such
    a block): each task fails INVALID_TASK, its dst untouched."""
    x = np.arange(64, dtype=np.float32)
    tx = davinci.DeviceTensor.from_numpy(dev, x)
    out = davinci.DeviceTensor.from_numpy(dev, np.full(64, 7, np.float32))
    strided = Strided((8, 8), (8, 1), (1, 8))
    block = _block(dev, strided)
    t = opdesc.describe("relu", "float32", dst=out.dev_addr,
                        srcs=(tx.dev_addr,), strided=strided,
                        params_at=block.dev_addr)
    bad = _uapi.davinci_params_strided.from_buffer_copy(strided.pack())
    if why == "src1":
        bad.strides[2][0] = 1
    elif why == "size":
        bad.sizes[bad.ndim] = 1
    else:
        t.count = 63
    block.write(bytes(bad))
    _expect_refused(dev, dev.stream(), t, out, np.full(64, 7, np.float32))
    block.free()


def test_the_driver_announces_strided_operands(dev):
    caps = dev.capabilities()
    assert caps.strided_versions() == (_uapi.DAVINCI_PARAMS_STRIDED_VERSION,)
    for op in schema.COMPUTE_OPS:
        assert caps.takes_strided(op) == ("STRIDED" in op.flags), op.name
        assert caps.op_flags(op) & _uapi.DAVINCI_TASK_F_NOTIFY
    assert caps.op_flags("matmul") == (_uapi.DAVINCI_TASK_F_NOTIFY |
                                       _uapi.DAVINCI_TASK_F_TRANS_A |
                                       _uapi.DAVINCI_TASK_F_TRANS_B)
    old = capabilities.from_features(dev.version.features)
    assert old.strided_versions() == ()
    assert not any(old.takes_strided(op) for op in old.ops)
    assert dataclasses.replace(caps, strided_mask=0).takes_strided("add") \
        is False


class _Abi16Transport:
    """A driver of ABI 1.6: GET_CAP refuses the queries 1.7 added."""

    def __init__(self, transport):
        self._t = transport

    def _new(self, arg) -> bool:
        return arg.query in (_uapi.DAVINCI_CAP_OP_FLAGS,
                             _uapi.DAVINCI_CAP_STRIDED)

    def try_ioctl(self, cmd, arg=None):
        return errno.EINVAL if self._new(arg) else \
            self._t.try_ioctl(cmd, arg)

    def ioctl(self, cmd, arg=None):
        if self._new(arg):
            raise davinci.InvalidArgumentError("unknown query",
                                               errno.EINVAL)
        return self._t.ioctl(cmd, arg)


def test_a_driver_without_the_queries_takes_no_strided_operands(dev):
    caps = capabilities.query(_Abi16Transport(dev.transport))
    assert caps.strided_versions() == ()
    assert not caps.takes_strided("add")
    assert caps.op_flags("matmul") == (_uapi.DAVINCI_TASK_F_NOTIFY |
                                       _uapi.DAVINCI_TASK_F_TRANS_A |
                                       _uapi.DAVINCI_TASK_F_TRANS_B)
    assert not caps.op_flags("add") & _uapi.DAVINCI_TASK_F_STRIDED
