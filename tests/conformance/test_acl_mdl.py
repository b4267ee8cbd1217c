# SPDX-License-Identifier: GPL-2.0
"""Offline models: ONNX -> davinci-atc -> acl.mdl, pyACL style, against
numpy; dynamic batch; one submission per execute; refused files."""

import dataclasses
import struct

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import acl  # noqa: E402
import davinci  # noqa: E402
from davinci import _uapi as U, atc, omfile  # noqa: E402
from davinci.manager import Manager  # noqa: E402
from davinci.model import Model  # noqa: E402

from ._onnx_models import mlp  # noqa: E402
from .conftest import require_fault_privilege  # noqa: E402

def _write(tmp_path, data, name="m.om"):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


class Run:
    """Device buffers and datasets for one model, freed at the end."""

    def __init__(self, model_id):
        self.model_id = model_id
        self.desc = acl.mdl.create_desc()
        assert acl.mdl.get_desc(self.desc, model_id) == 0
        self.ptrs, self.bufs = [], []
        self.inputs, self.outputs = (
            self._dataset(count(self.desc), size_of) for count, size_of in
            ((acl.mdl.get_num_inputs, acl.mdl.get_input_size_by_index),
             (acl.mdl.get_num_outputs, acl.mdl.get_output_size_by_index)))

    def _dataset(self, n, size_of):
        ds = acl.mdl.create_dataset()
        for b in [self._data_buffer(size_of(self.desc, i)) for i in range(n)]:
            assert acl.mdl.add_dataset_buffer(ds, b) == (ds, 0)
        assert acl.mdl.get_dataset_num_buffers(ds) == n
        return ds

    def _data_buffer(self, size):
        """A data buffer over ``size`` bytes of new device memory."""
        p, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0
        self.ptrs.append(p)
        self.bufs.append(acl.create_data_buffer(p, size))
        return self.bufs[-1]

    def put(self, i, arr):
        b = acl.mdl.get_dataset_buffer(self.inputs, i)
        arr = np.ascontiguousarray(arr, np.float32)
        assert acl.rt.memcpy(acl.get_data_buffer_addr(b),
                             acl.get_data_buffer_size(b), arr.ctypes.data,
                             arr.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0

    def get(self, i, shape):
        b = acl.mdl.get_dataset_buffer(self.outputs, i)
        out = np.empty(shape, np.float32)
        assert acl.rt.memcpy(out.ctypes.data, out.nbytes,
                             acl.get_data_buffer_addr(b), out.nbytes,
                             acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return out

    def close(self):
        for ds in (self.inputs, self.outputs):
            assert acl.mdl.destroy_dataset(ds) == 0
        for b in self.bufs:
            acl.destroy_data_buffer(b)
        for p in self.ptrs:
            acl.rt.free(p)
        assert acl.mdl.destroy_desc(self.desc) == 0


def test_mlp_loads_describes_and_runs(acl_dev, tmp_path):
    m, ref = mlp()
    path = _write(tmp_path, atc.convert(m, input_shape="x:8,64"))
    model_id, ret = acl.mdl.load_from_file(path)
    assert ret == 0 and model_id > 0
    r = Run(model_id)
    d = r.desc
    assert acl.mdl.get_num_inputs(d) == 1
    assert acl.mdl.get_num_outputs(d) == 1
    assert acl.mdl.get_input_size_by_index(d, 0) == 8 * 64 * 4
    assert acl.mdl.get_output_size_by_index(d, 0) == 8 * 10 * 4
    dims, ret = acl.mdl.get_input_dims(d, 0)
    assert ret == 0 and dims == {"name": "x", "dimCount": 2, "dims": [8, 64]}
    dims, ret = acl.mdl.get_output_dims(d, 0)
    assert ret == 0 and dims["dims"] == [8, 10] and dims["name"] == "prob"
    assert acl.mdl.get_input_index_by_name(d, "x") == (0, 0)
    idx, ret = acl.mdl.get_input_index_by_name(d, "nope")
    assert ret == acl.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.get_output_data_type(d, 0) == acl.ACL_FLOAT
    assert acl.mdl.get_input_format(d, 0) == acl.ACL_FORMAT_ND
    assert acl.mdl.get_input_name_by_index(d, 0) == "x"
    info, ret = acl.mdl.get_dynamic_batch(d)
    assert ret == 0 and info == {"batchCount": 0, "batch": []}
    rng = np.random.default_rng(1)
    for _ in range(2):          # the second run reuses the patched list
        x = rng.standard_normal((8, 64)).astype(np.float32)
        r.put(0, x)
        assert acl.mdl.execute(model_id, r.inputs, r.outputs) == 0
        np.testing.assert_allclose(r.get(0, (8, 10)), ref(x), rtol=1e-5,
                                   atol=1e-6)
    dims, ret = acl.mdl.get_cur_output_dims(d, 0)
    assert ret == 0 and dims["dims"] == [8, 10]
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    x = rng.standard_normal((8, 64)).astype(np.float32)
    r.put(0, x)
    assert acl.mdl.execute_async(model_id, r.inputs, r.outputs, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_allclose(r.get(0, (8, 10)), ref(x), rtol=1e-5,
                               atol=1e-6)
    assert acl.rt.destroy_stream(stream) == 0
    r.close()
    assert acl.mdl.unload(model_id) == 0
    assert acl.mdl.unload(model_id) == acl.ACL_ERROR_GE_EXEC_MODEL_ID_INVALID


def test_load_from_mem_and_query_size(acl_dev, tmp_path):
    m, ref = mlp(seed=2)
    data = atc.convert(m, input_shape="x:2,64")
    arr = np.frombuffer(data, np.uint8).copy()
    model_id, ret = acl.mdl.load_from_mem(acl.util.numpy_to_ptr(arr),
                                          arr.nbytes)
    assert ret == 0
    work, weight, ret = acl.mdl.query_size(_write(tmp_path, data))
    assert ret == 0 and weight > 64 * 32 * 4 and work > 0
    r = Run(model_id)
    x = np.random.default_rng(3).standard_normal((2, 64)).astype(np.float32)
    r.put(0, x)
    assert acl.mdl.execute(model_id, r.inputs, r.outputs) == 0
    np.testing.assert_allclose(r.get(0, (2, 10)), ref(x), rtol=1e-5,
                               atol=1e-6)
    r.close()
    assert acl.mdl.unload(model_id) == 0


def test_model_without_inputs_runs(acl_dev):
    """A graph of constants: no inputs, an empty input dataset."""
    from .test_atc_ops import _constant_graph
    m, k = _constant_graph()
    arr = np.frombuffer(atc.convert(m), np.uint8).copy()
    model_id, ret = acl.mdl.load_from_mem(acl.util.numpy_to_ptr(arr),
                                          arr.nbytes)
    assert ret == 0
    r = Run(model_id)
    assert acl.mdl.get_num_inputs(r.desc) == 0
    assert acl.mdl.execute(model_id, r.inputs, r.outputs) == 0
    np.testing.assert_array_equal(r.get(0, (4,)), np.maximum(k, 0))
    np.testing.assert_array_equal(r.get(1, (4,)), k)
    r.close()
    assert acl.mdl.unload(model_id) == 0


def test_dynamic_batch(acl_dev, tmp_path):
    m, ref = mlp(seed=4)
    path = _write(tmp_path, atc.convert(m, input_shape="x:-1,64",
                                        dynamic_batch_size="1,2,4"))
    model_id, ret = acl.mdl.load_from_file(path)
    assert ret == 0
    r = Run(model_id)
    d = r.desc
    assert acl.mdl.get_num_inputs(d) == 2
    idx, ret = acl.mdl.get_input_index_by_name(d, acl.ACL_DYNAMIC_TENSOR_NAME)
    assert (idx, ret) == (1, 0)
    info, ret = acl.mdl.get_dynamic_batch(d)
    assert info == {"batchCount": 3, "batch": [1, 2, 4]}
    dims, _ = acl.mdl.get_input_dims(d, 0)
    assert dims["dims"] == [-1, 64]
    hw, ret = acl.mdl.get_dynamic_hw(d, -1)
    assert ret == 0 and hw["hwCount"] == 0
    assert acl.mdl.set_dynamic_hw_size(model_id, r.inputs, idx, 8, 8) == \
        acl.ACL_ERROR_MODEL_NOT_DYNAMIC
    assert acl.mdl.get_input_size_by_index(d, 0) == 4 * 64 * 4
    # no batch chosen yet: refused, nothing runs
    assert acl.mdl.execute(model_id, r.inputs, r.outputs) == \
        acl.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
    assert acl.mdl.set_dynamic_batch_size(model_id, r.inputs, idx, 3) == \
        acl.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID
    rng = np.random.default_rng(5)
    for batch in (2, 4, 1):
        assert acl.mdl.set_dynamic_batch_size(model_id, r.inputs, idx,
                                              batch) == 0
        x = rng.standard_normal((batch, 64)).astype(np.float32)
        r.put(0, x)
        assert acl.mdl.execute(model_id, r.inputs, r.outputs) == 0
        np.testing.assert_allclose(r.get(0, (batch, 10)), ref(x), rtol=1e-5,
                                   atol=1e-6)
        dims, ret = acl.mdl.get_cur_output_dims(d, 0)
        assert ret == 0 and dims["dims"] == [batch, 10]
    r.close()
    assert acl.mdl.unload(model_id) == 0


def test_execute_is_one_submission(dev, monkeypatch):
    """Each execute hands the whole task list to the stream at once: a
    replay of the graph captured at the first execute with these buffers
    (one ioctl), or, without task graphs, one batch into the ring."""
    m, ref = mlp(seed=6)
    mod = Model(dev, atc.convert(m, input_shape="x:4,64"))
    ntasks = len(mod.plans[0].tasks)
    assert ntasks >= 4
    calls = []
    submit, launch = davinci.Stream.submit, davinci.Stream.launch_graph

    def counting_submit(self, tasks):
        calls.append(("submit", len(tasks)))
        return submit(self, tasks)

    def counting_launch(self, graph_id):
        calls.append(("graph", graph_id))
        return launch(self, graph_id)
    monkeypatch.setattr(davinci.Stream, "submit", counting_submit)
    monkeypatch.setattr(davinci.Stream, "launch_graph", counting_launch)
    x = dev.tensor(np.zeros((4, 64), np.float32))
    y = dev.empty((4, 10), "float32")
    s = dev.stream()
    rng = np.random.default_rng(7)
    for i in range(3):
        xv = rng.standard_normal((4, 64)).astype(np.float32)
        x.buffer.write(xv.view(np.uint8).reshape(-1))
        calls.clear()
        mod.execute(s, [x.dev_addr, y.dev_addr])
        s.synchronize()
        np.testing.assert_allclose(y.numpy(), ref(xv), rtol=1e-5, atol=1e-6)
        if not mod.use_graphs:
            assert calls == [("submit", ntasks)]
        elif i == 0:        # captured (on the model's own stream), replayed
            assert [c[0] for c in calls] == ["submit", "graph"]
            assert calls[0][1] == ntasks
        else:
            assert [c[0] for c in calls] == ["graph"]
    s.destroy()
    mod.unload()


def test_model_runs_in_order_after_other_work(dev):
    """execute_async on a busy stream: the model's tasks wait for it."""
    m, ref = mlp(seed=8)
    mod = Model(dev, atc.convert(m, input_shape="x:1,64"))
    s = dev.stream()
    xin = dev.malloc(64 * 4)
    out = dev.malloc(10 * 4)
    x = np.random.default_rng(9).standard_normal((1, 64)).astype(np.float32)
    staging = dev.malloc(64 * 4)
    staging.write(x.view(np.uint8).reshape(-1))
    s.nop(2000)
    s.memcpy(xin, staging, 64 * 4)          # the input arrives on the stream
    mod.execute(s, [xin.dev_addr, out.dev_addr])
    s.synchronize()
    np.testing.assert_allclose(out.numpy(np.float32, (1, 10)), ref(x),
                               rtol=1e-5, atol=1e-6)
    s.destroy()
    for b in (xin, out, staging):
        b.free()
    mod.unload()


# -- refused files ---------------------------------------------------------
def test_refuses_files_that_are_not_davinci_models(acl_dev, tmp_path):
    cases = {
        "ascend.om": b"IMOD" + bytes(252),      # Huawei ATC's magic
        "text.om": b"this is not a model\n" * 10,
        "empty.om": b"",
    }
    free0 = _hbm_free()
    for name, data in cases.items():
        mid, ret = acl.mdl.load_from_file(_write(tmp_path, data, name))
        assert ret == acl.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID, name
        msg = acl.get_recent_err_msg()
        assert "davinci-atc" in msg, msg
    acl.mdl.load_from_file(_write(tmp_path, cases["ascend.om"], "a.om"))
    assert "Huawei" in acl.get_recent_err_msg()
    for path in (tmp_path / "missing.om", tmp_path):
        mid, ret = acl.mdl.load_from_file(str(path))
        assert ret == acl.ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID
    assert _hbm_free() == free0         # nothing was left allocated


def _hbm_free():
    free, _, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    assert ret == 0
    return free


def _corrupt(data: bytes):
    """(what, bytes) for each way the tests break a valid model."""
    hdr = omfile._HEADER
    sec = omfile._SECTION
    nsect = struct.unpack_from("<I", data, 20)[0]
    table = [sec.unpack_from(data, hdr.size + i * sec.size)
             for i in range(nsect)]

    def with_section(i, **kw):
        kind, count, off, size = table[i]
        f = dict(kind=kind, count=count, off=off, size=size, **{})
        f.update(kw)
        b = bytearray(data)
        sec.pack_into(b, hdr.size + i * sec.size, f["kind"], f["count"],
                      f["off"], f["size"])
        return bytes(b)
    ops = next(i for i, t in enumerate(table) if t[0] == omfile.SECT_OPS)
    tens = next(i for i, t in enumerate(table) if t[0] == omfile.SECT_TENSORS)
    _, _, op_off, _ = table[ops]
    _, _, t_off, _ = table[tens]

    def patch(off, fmt, value):
        b = bytearray(data)
        struct.pack_into(fmt, b, off, value)
        return bytes(b)
    return [
        ("truncated", data[:len(data) // 2]),
        ("padded", data + b"\0" * 64),
        ("newer format", patch(8, "<H", 2)),
        ("other ABI major", patch(12, "<H", 9)),
        ("section past the end", with_section(ops, off=len(data) - 8)),
        ("size overflows", with_section(ops, size=(1 << 64) - 1)),
        ("op count in the billions", with_section(ops, count=3_000_000_000)),
        ("unknown section", with_section(ops, kind=77)),
        ("op opcode", patch(op_off + 2, "<H", 0xFFFF)),
        ("op tensor id", patch(op_off + 16, "<I", 123456)),
        ("op m too large", patch(op_off + 40, "<I", 0x7FFFFFFF)),
        ("weight past WEIGHTS", patch(t_off + 8, "<Q", 1 << 62)),
        ("meta not JSON", with_section(
            next(i for i, t in enumerate(table)
                 if t[0] == omfile.SECT_META), size=3)),
    ]


def test_corrupt_models_are_refused(acl_dev, tmp_path):
    m, _ = mlp(seed=10)
    data = atc.convert(m, input_shape="x:1,64")
    omfile.parse(data)
    free0 = _hbm_free()
    for what, bad in _corrupt(data):
        with pytest.raises(omfile.ModelFormatError):
            omfile.parse(bad)
        mid, ret = acl.mdl.load_from_mem(bad, len(bad))
        assert ret == acl.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID, what
    assert _hbm_free() == free0, "a refused model left memory allocated"


def test_model_runs_when_no_graph_fits(dev):
    """With every task graph of the context taken, execute falls back to
    one batch into the ring."""
    if not dev.version.has(davinci._uapi.DAVINCI_FEAT_GRAPHS):
        pytest.skip("this driver has no task graphs")
    m, ref = mlp(seed=12)
    mod = Model(dev, atc.convert(m, input_shape="x:2,64"))
    s = dev.stream()
    held = []
    with pytest.raises(davinci.DavinciError, match="ENOSPC"):
        while True:
            with s.capture() as g:
                s.nop()
            held.append(g)
    x = np.random.default_rng(13).standard_normal((2, 64)).astype(np.float32)
    out, = mod.run([x])
    np.testing.assert_allclose(out, ref(x), rtol=1e-5, atol=1e-6)
    for g in held:
        g.destroy()
    s.destroy()
    mod.unload()


# -- every field of every op record ------------------------------------------
def _op_records(data: bytes) -> int:
    """File offset of the OPS section's first record."""
    hdr, sec = omfile._HEADER, omfile._SECTION
    for i in range(struct.unpack_from("<I", data, 20)[0]):
        kind, _, off, _ = sec.unpack_from(data, hdr.size + i * sec.size)
        if kind == omfile.SECT_OPS:
            return off
    raise AssertionError("no OPS section")


def _with_op(om, pick, **fields):
    """``om`` with its first op of opcode ``pick`` changed by ``fields``."""
    i = next(i for i, o in enumerate(om.ops) if o.opcode == pick)
    ops = list(om.ops)
    ops[i] = dataclasses.replace(ops[i], **fields)
    return omfile.serialize(dataclasses.replace(om, ops=ops))


def _output_id(om):
    return next(i for i, t in enumerate(om.tensors)
                if t.kind == omfile.KIND_OUTPUT)


def _with_memset(om, **fields):
    """``om`` with a MEMSET of its output appended."""
    op = omfile.Op(0, U.DAVINCI_OP_MEMSET, 0, 0, 0, _output_id(om),
                   omfile.NO_TENSOR, count=4)
    return omfile.serialize(dataclasses.replace(
        om, ops=om.ops + [dataclasses.replace(op, **fields)]))


def _zero_bytes_set(om, at):
    data = bytearray(omfile.serialize(om))
    data[_op_records(data) + at] = 1
    return bytes(data)


#: op records the device would refuse at every execute (or the loader
#: choke on), each of which the file format refuses at load
_BAD_OPS = {
    "MEMSET's unused src0 names tensor 999":
        lambda om: _with_memset(om, src0=999),
    "MEMSET's unused src1 names its own dst":
        lambda om: _with_memset(om, src1=_output_id(om)),
    "MEMSET's byte above 255": lambda om: _with_memset(om, imm=0x100),
    "MEMSET with a dtype": lambda om: _with_memset(om, dtype=1),
    "MATMUL with a count": lambda om: _with_op(om, U.DAVINCI_OP_MATMUL,
                                               count=1),
    "ADD with m": lambda om: _with_op(om, U.DAVINCI_OP_ADD, m=1),
    "RELU with imm": lambda om: _with_op(om, U.DAVINCI_OP_RELU, imm=1),
    "SOFTMAX of int32": lambda om: _with_op(
        om, U.DAVINCI_OP_SOFTMAX, dtype=U.DAVINCI_DTYPE_INT32),
    "SOFTMAX in place": lambda om: _with_op(
        om, U.DAVINCI_OP_SOFTMAX,
        src0=next(o.dst for o in om.ops if o.opcode == U.DAVINCI_OP_SOFTMAX)),
    "RELU turned into COPY_VIEW, an op with a parameter block":
        lambda om: _with_op(om, U.DAVINCI_OP_RELU,
                            opcode=U.DAVINCI_OP_COPY_VIEW),
    "ADD with strided operands, whose block a record cannot hold":
        lambda om: _with_op(om, U.DAVINCI_OP_ADD,
                            flags=U.DAVINCI_TASK_F_STRIDED),
    # an op no converter writes, whose operands the file format does not
    # check as the device does (fuzz_om found a batch norm so), however
    # well its fields are filled
    "RELU turned into a well-formed ARGSORT": lambda om: _with_op(
        om, U.DAVINCI_OP_RELU, opcode=U.DAVINCI_OP_ARGSORT, count=0, m=2,
        n=8, k=8),
    "padding at byte 6": lambda om: _zero_bytes_set(om, 6),
    "reserved at byte 48": lambda om: _zero_bytes_set(om, 48),
}


@pytest.mark.parametrize("what", sorted(_BAD_OPS))
def test_every_field_of_an_op_record_is_checked_before_allocating(
        acl_dev, what):
    """Refused at load with 145006, and nothing allocated on the way."""
    m, _ = mlp(seed=14, n_in=16, hidden=8, n_out=4)
    bad = _BAD_OPS[what](omfile.parse(atc.convert(m, input_shape="x:2,16")))
    with pytest.raises(omfile.ModelFormatError):
        omfile.parse(bad)
    counts = acl._state.devices[0].dev.transport.ioctl_counts
    allocs = counts[U.DAVINCI_IOCTL_MEM_ALLOC]
    free0 = _hbm_free()
    mid, ret = acl.mdl.load_from_mem(bad, len(bad))
    assert ret == acl.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID, \
        acl.get_recent_err_msg()
    assert "op " in acl.get_recent_err_msg()
    assert counts[U.DAVINCI_IOCTL_MEM_ALLOC] == allocs
    assert _hbm_free() == free0


# -- a failed execute ----------------------------------------------------------
@pytest.fixture
def faults():
    """The manager, to fail a model's task with an injected ECC error;
    device 0 is reset after the test (and after acl_dev's teardown, when
    asked for before it), healthy for the next one."""
    m = Manager()
    try:
        require_fault_privilege(m)
        yield m
        if m.info(0).health_name != "OK" or m.info(0).faults_armed:
            m.reset(0)
    finally:
        m.close()


def _model_bytes(m, shape):
    data = atc.convert(m, input_shape=shape)
    return data, len(data)


def _fail_next_task_on(faults, addr):
    faults.inject(0, "ecc", addr=addr, size=64)


def _x_ptr(r):
    return acl.get_data_buffer_addr(acl.mdl.get_dataset_buffer(r.inputs, 0))


def test_each_execute_reports_its_own_outcome(faults, acl_dev):
    """A correct execute after a failed one runs and succeeds."""
    m, ref = mlp(seed=16)
    model_id, ret = acl.mdl.load_from_mem(*_model_bytes(m, "x:2,64"))
    assert ret == 0
    r = Run(model_id)
    x = np.random.default_rng(17).standard_normal((2, 64)).astype(np.float32)
    r.put(0, x)
    _fail_next_task_on(faults, _x_ptr(r))
    assert acl.mdl.execute(model_id, r.inputs, r.outputs) == \
        acl.ACL_ERROR_RT_DEVICE_MEM_ERROR
    for _ in range(2):
        assert acl.mdl.execute(model_id, r.inputs, r.outputs) == 0, \
            acl.get_recent_err_msg()
        np.testing.assert_allclose(r.get(0, (2, 10)), ref(x), rtol=1e-5,
                                   atol=1e-6)
    r.close()
    assert acl.mdl.unload(model_id) == 0


def test_model_run_after_a_failed_run(faults, dev):
    m, ref = mlp(seed=18)
    mod = Model(dev, atc.convert(m, input_shape="x:2,64"))
    x = np.random.default_rng(19).standard_normal((2, 64)).astype(np.float32)
    faults.inject(0, "ecc")             # the next task touching any HBM
    with pytest.raises(davinci.TaskFailedError) as ei:
        mod.run([x])
    assert ei.value.status == U.DAVINCI_STATUS_ECC_ERROR
    out, = mod.run([x])
    np.testing.assert_allclose(out, ref(x), rtol=1e-5, atol=1e-6)
    mod.unload()


def test_unload_after_a_failed_execute_frees_everything(faults, acl_dev):
    m, _ = mlp(seed=20)
    data, size = _model_bytes(m, "x:2,64")
    free0 = _hbm_free()
    model_id, ret = acl.mdl.load_from_mem(data, size)
    assert ret == 0
    r = Run(model_id)
    used = free0 - _hbm_free()
    _fail_next_task_on(faults, _x_ptr(r))
    assert acl.mdl.execute(model_id, r.inputs, r.outputs) != 0
    r.close()
    assert acl.mdl.unload(model_id) == 0, acl.get_recent_err_msg()
    assert _hbm_free() == free0, "unload left %d of the model's %d bytes" % (
        free0 - _hbm_free(), used)
    assert acl.mdl.unload(model_id) == acl.ACL_ERROR_GE_EXEC_MODEL_ID_INVALID


def test_unload_frees_everything_then_reports_a_failed_run(faults, dev):
    """A run still in flight when the model is unloaded fails: unload frees
    the weights, workspace, graphs and streams, then raises the failure."""
    used0 = dev.mem_info().ctx_used
    m, _ = mlp(seed=22)
    mod = Model(dev, atc.convert(m, input_shape="x:2,64"))
    x, y = dev.malloc(2 * 64 * 4), dev.malloc(2 * 10 * 4)
    faults.inject(0, "ecc", addr=x.dev_addr, size=64)
    mod.execute(mod.stream, [x.dev_addr, y.dev_addr])
    with pytest.raises(davinci.TaskFailedError) as ei:
        mod.unload()
    assert ei.value.status == U.DAVINCI_STATUS_ECC_ERROR
    x.free()
    y.free()
    assert dev.mem_info().ctx_used == used0
    assert not dev.streams              # the model's own and its capture stream


# -- overlapping buffers -------------------------------------------------------
def _model_stream(model_id):
    return acl.mdl._objects.models[model_id].model.stream


@pytest.mark.parametrize("at", [0, 256, 432])
def test_an_output_overlapping_an_input_is_refused(acl_dev, at):
    """Refused with ACL_ERROR_INVALID_PARAM naming both buffers, before
    anything is submitted; the input is untouched."""
    m, ref = mlp(seed=24)
    model_id, ret = acl.mdl.load_from_mem(*_model_bytes(m, "x:2,64"))
    assert ret == 0
    r = Run(model_id)
    x = np.random.default_rng(25).standard_normal((2, 64)).astype(np.float32)
    r.put(0, x)
    bad = acl.mdl.create_dataset()
    out = acl.create_data_buffer(_x_ptr(r) + at, 2 * 10 * 4)
    assert acl.mdl.add_dataset_buffer(bad, out)[1] == 0
    s = _model_stream(model_id)
    before = s.query().submitted_seq
    assert acl.mdl.execute(model_id, r.inputs, bad) == \
        acl.ACL_ERROR_INVALID_PARAM
    msg = acl.get_recent_err_msg()
    assert "input 0" in msg and "output 0" in msg and "overlap" in msg, msg
    assert s.query().submitted_seq == before
    xin = acl.mdl.get_dataset_buffer(r.inputs, 0)
    back = np.empty_like(x)
    assert acl.rt.memcpy(back.ctypes.data, back.nbytes,
                         acl.get_data_buffer_addr(xin), back.nbytes,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert (back == x).all()
    assert acl.mdl.execute(model_id, r.inputs, r.outputs) == 0
    np.testing.assert_allclose(r.get(0, (2, 10)), ref(x), rtol=1e-5,
                               atol=1e-6)
    acl.destroy_data_buffer(out)
    assert acl.mdl.destroy_dataset(bad) == 0
    r.close()
    assert acl.mdl.unload(model_id) == 0


def test_overlapping_outputs_are_refused(dev):
    """Two outputs in one buffer: refused naming both, nothing submitted."""
    from ._onnx_models import model
    from onnx import helper
    mod = Model(dev, atc.convert(model(
        [helper.make_node("Relu", ["x"], ["y1"]),
         helper.make_node("Exp", ["x"], ["y2"])],
        [("x", [4])], [("y1", [4]), ("y2", [4])])))
    x, y = dev.malloc(16), dev.malloc(32)
    s = mod.stream
    for y2 in (y.dev_addr, y.dev_addr + 12):
        with pytest.raises(davinci.InvalidArgumentError,
                           match="output 0 'y1'.*overlaps output 1 'y2'"):
            mod.execute(s, [x.dev_addr, y.dev_addr, y2])
    assert s.query().submitted_seq == 0
    mod.execute(s, [x.dev_addr, y.dev_addr, y.dev_addr + 16])   # adjacent
    s.synchronize()
    for b in (x, y):
        b.free()
    mod.unload()


# -- bfloat16 arrays -----------------------------------------------------------
def _bf16_model():
    """x (bfloat16) -> y = x (bfloat16), z = float32(x), w = bfloat16(z)."""
    from onnx import TensorProto, helper
    bf, f32 = TensorProto.BFLOAT16, TensorProto.FLOAT
    g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"]),
         helper.make_node("Cast", ["x"], ["z"], to=f32),
         helper.make_node("Cast", ["z"], ["w"], to=bf)], "bf16",
        [helper.make_tensor_value_info("x", bf, [4])],
        [helper.make_tensor_value_info(n, t, [4])
         for n, t in (("y", bf), ("z", f32), ("w", bf))])
    return atc.convert(helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 13)]))


def test_model_run_takes_and_gives_bfloat16_arrays(dev):
    """The bits of a bfloat16 array go in as they are, and bfloat16
    outputs come back as bfloat16 arrays, as onnx.numpy_helper makes."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from onnx import numpy_helper
    bf16 = np.dtype(ml_dtypes.bfloat16)
    vals = [1.5, -2.25, 3.0, 0.1]
    x = numpy_helper.to_array(numpy_helper.from_array(
        np.array(vals, np.float32).astype(bf16)))
    assert x.dtype == bf16
    mod = Model(dev, _bf16_model())
    y, z, w = mod.run([x])
    assert y.dtype == bf16 and w.dtype == bf16 and z.dtype == np.float32
    assert (y.view(np.uint16) == x.view(np.uint16)).all()
    assert (w.view(np.uint16) == x.view(np.uint16)).all()
    np.testing.assert_array_equal(z, x.astype(np.float32))
    assert z[0] == 1.5 and z[1] == -2.25 and z[2] == 3.0
    mod.unload()


@pytest.mark.parametrize("given", ["float32", "uint16", "float64"])
def test_model_run_refuses_other_arrays_for_a_bfloat16_input(dev, given):
    """No silent conversion into bfloat16: refused naming the dtype, before
    anything is allocated."""
    mod = Model(dev, _bf16_model())
    used = dev.mem_info().ctx_used
    with pytest.raises(davinci.DTypeError, match="bfloat16.*%s" % given):
        mod.run([np.array([1.5, -2.25, 3.0, 0.1]).astype(given)])
    assert dev.mem_info().ctx_used == used
    mod.unload()


def test_model_run_without_ml_dtypes_says_so(dev, monkeypatch):
    """Where ml_dtypes is not installed no bfloat16 array can exist: a
    bfloat16 model's run is refused saying what to install."""
    import davinci.model as dm
    monkeypatch.setattr(dm, "_bfloat16", lambda: None)
    mod = Model(dev, _bf16_model())
    with pytest.raises(davinci.DTypeError, match="ml_dtypes"):
        mod.run([np.zeros(4, np.uint16)])
    mod.unload()
