# SPDX-License-Identifier: GPL-2.0
"""The pyACL surface real programs call besides acl.mdl: every name of
Ascend's public samples, copies whose direction comes from the addresses,
top-level and acl.rt calls, op handles, argument checking like a C
extension, quiet failures, pointers that would crash, acl.media."""

import os
import pathlib
import subprocess
import threading
import sys

import numpy as np
import pytest

import acl
from acl import util

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
NAMES = HERE / "pyacl_sample_names.txt"


def _names():
    """The acl.* names Ascend's public Python samples call (with counts);
    the shared copy when present, else this repository's."""
    shared = REPO.parent / "shared" / "pyacl-sample-names.txt"
    path = shared if shared.is_file() else NAMES
    out = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            out.append(line.split()[1])
    return out


def _resolve(name):
    obj = acl
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def test_every_name_of_ascend_samples_exists():
    names = _names()
    assert len(names) >= 160
    missing = []
    for n in names:
        try:
            fn = _resolve(n)
        except AttributeError:
            missing.append(n)
            continue
        assert callable(fn), n
        if not n.startswith("acl.media."):
            # a real call, not one of acl.media's "not supported" stand-ins
            assert n.split(".")[-1] not in acl.media.UNSUPPORTED, n
    assert missing == []


def test_media_names_fail_cleanly(acl_dev):
    # the JPEG decode's and VPC's calls work (tests/conformance/
    # test_dvpp_jpegd.py, test_dvpp_vpc.py); the rest are stand-ins
    assert acl.media.dvpp_create_border_config() == 0
    assert acl.media.dvpp_vpc_pyr_down_async(1, 2, 3, 4, 5) == \
        acl.ACL_ERROR_FEATURE_UNSUPPORTED
    assert "DVPP" in acl.get_recent_err_msg()
    p, ret = acl.media.dvpp_malloc(4096)
    assert ret == 0 and acl.media.dvpp_free(p) == 0


#: acl.media names of pyACL beyond what the samples call (and beyond the VPC
#: calls acl.media implements: resize, crop, crop and paste, their batches,
#: convert color), from CANN's
#: reference: the VPC function list (aclcppdevg "VPC": acldvppVpcResizeAsync
#: .. acldvppVpcCalcHistAsync), the acldvppBorderConfig calls, spelled as
#: pyACL's Python reference spells them (aclpythondevg "Function:
#: dvpp_vpc_crop_resize_paste_async", "dvpp_create_border_config", ...)
PYACL_MEDIA = """
dvpp_vpc_crop_resize_async dvpp_vpc_batch_crop_resize_async
dvpp_vpc_crop_resize_paste_async dvpp_vpc_batch_crop_resize_paste_async
dvpp_vpc_batch_crop_resize_make_border_async dvpp_vpc_pyr_down_async dvpp_vpc_equalize_hist_async
dvpp_vpc_make_border_async dvpp_vpc_calc_hist_async
dvpp_create_border_config dvpp_destroy_border_config
dvpp_set_border_config_value dvpp_set_border_config_border_type
dvpp_set_border_config_top dvpp_set_border_config_bottom
dvpp_set_border_config_left dvpp_set_border_config_right
""".split()


def test_pyacl_media_names_exist_and_are_not_supported(acl_dev):
    for name in PYACL_MEDIA:
        fn = getattr(acl.media, name)
        want = 0 if "_create_" in name else acl.ACL_ERROR_FEATURE_UNSUPPORTED
        assert fn(1, 2, 3) == want, name
        assert name in acl.get_recent_err_msg(), name
        assert name in acl.media.UNSUPPORTED


# -- copies --------------------------------------------------------------------
def _pinned(n):
    p, ret = acl.rt.malloc_host(n)
    assert ret == 0
    return p


def test_memcpy_direction_comes_from_the_addresses(acl_dev):
    n = 256
    src = np.arange(n, dtype=np.uint8)
    dev, ret = acl.rt.malloc(n, 0)
    assert ret == 0
    pin = _pinned(n)
    out = np.zeros(n, np.uint8)
    H = util.numpy_to_ptr
    # the kind the issue names: a pinned host source said to be device
    assert acl.rt.memcpy(pin, n, H(src), n, acl.ACL_MEMCPY_HOST_TO_DEVICE) \
        == 0
    assert acl.rt.memcpy(H(out), n, pin, n, acl.ACL_MEMCPY_DEVICE_TO_HOST) \
        == 0
    np.testing.assert_array_equal(out, src)
    for kind in (acl.ACL_MEMCPY_DEFAULT, acl.ACL_MEMCPY_HOST_TO_HOST):
        out[:] = 0
        assert acl.rt.memcpy(dev, n, H(src), n, kind) == 0
        assert acl.rt.memcpy(pin, n, dev, n, kind) == 0
        dev2, _ = acl.rt.malloc(n, 0)
        assert acl.rt.memcpy(dev2, n, dev, n, kind) == 0
        assert acl.rt.memcpy(H(out), n, dev2, n, kind) == 0
        np.testing.assert_array_equal(out, src)
        assert acl.rt.free(dev2) == 0
    assert acl.rt.memcpy(dev, n, H(src), n, 9) == acl.ACL_ERROR_INVALID_PARAM
    # a pointer said to be device memory that is not ours is refused
    assert acl.rt.free(dev) == 0
    assert acl.rt.memcpy(dev, n, H(src), n,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free_host(pin) == 0


def test_memcpy_async_direction_comes_from_the_addresses(acl_dev):
    n = 4096
    src = np.random.default_rng(0).integers(0, 255, n, np.uint8)
    stream, _ = acl.rt.create_stream()
    dev, _ = acl.rt.malloc(n, 0)
    pin, pin2 = _pinned(n), _pinned(n)
    out = np.zeros(n, np.uint8)
    H = util.numpy_to_ptr
    D = acl.ACL_MEMCPY_DEFAULT
    assert acl.rt.memcpy_async(pin, n, H(src), n, D, stream) == 0
    assert acl.rt.memcpy_async(dev, n, pin, n,
                               acl.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.memcpy_async(pin2, n, dev, n,
                               acl.ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.memcpy_async(H(out), n, pin2, n, D, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(out, src)
    for p in (pin, pin2):
        assert acl.rt.free_host(p) == 0
    assert acl.rt.free(dev) == 0
    assert acl.rt.destroy_stream(stream) == 0


# -- top level ------------------------------------------------------------------
def test_top_level_calls(acl_dev, caplog):
    assert isinstance(acl.get_soc_name(), str) and acl.get_soc_name()
    assert acl.data_type_size(acl.ACL_FLOAT16) == 2
    assert acl.data_type_size(acl.ACL_INT64) == 8
    p, _ = acl.rt.malloc(64, 0)
    b = acl.create_data_buffer(p, 64)
    assert acl.get_data_buffer_size_v2(b) == 64
    desc = acl.create_tensor_desc(acl.ACL_INT64, [2], acl.ACL_FORMAT_ND)
    axes = np.array([0, 1], np.int64)
    assert acl.set_tensor_const(desc, util.numpy_to_ptr(axes),
                                axes.nbytes) == 0
    assert acl.set_tensor_const(desc, 0, 0) == 0          # empty buffer
    assert acl.set_tensor_const(123, 0, 0) == acl.ACL_ERROR_INVALID_PARAM
    with caplog.at_level("INFO", logger="acl.app"):
        assert acl.app_log(acl.ACL_INFO, "model loaded") is None
    assert "model loaded" in caplog.text
    acl.destroy_tensor_desc(desc)
    acl.destroy_data_buffer(b)
    acl.rt.free(p)


def _python(code, **env):
    e = dict(os.environ, **env)
    us = str(REPO / "userspace")
    e["PYTHONPATH"] = us + (os.pathsep + e["PYTHONPATH"]
                            if e.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-c", code], env=e,
                          capture_output=True, text=True, timeout=60)


def test_failed_calls_are_quiet_unless_asked():
    code = ("import acl\nprint(acl.rt.free(12345))\n"
            "print(acl.get_recent_err_msg())")
    p = _python(code)
    assert p.returncode == 0 and p.stderr == ""
    lines = p.stdout.splitlines()
    assert lines[0] == str(acl.ACL_ERROR_RT_MEMORY_FREE)
    assert "acl.rt.free" in lines[1]
    p = _python(code, ASCEND_SLOG_PRINT_TO_STDOUT="1")
    assert p.stderr == "" and "[ERROR] acl: acl.rt.free failed" in p.stdout


# -- argument checking -------------------------------------------------------------
def test_arguments_are_checked_like_a_c_extension(acl_dev):
    with pytest.raises(TypeError):
        acl.rt.malloc()
    with pytest.raises(TypeError):
        acl.rt.malloc(64, 0, 1)
    with pytest.raises(TypeError, match="size"):
        acl.rt.malloc("64", 0)
    with pytest.raises(TypeError, match="stream"):
        acl.rt.synchronize_stream(None)
    with pytest.raises(TypeError, match="model_path"):
        acl.mdl.load_from_file(None)
    with pytest.raises(TypeError):
        acl.rt.memcpy(0, 1, 0, 1)
    with pytest.raises(TypeError, match="device_id"):
        acl.rt.set_device(None)
    # the audit's cases: a C extension raises, it returns no error code
    with pytest.raises(TypeError, match="input"):
        acl.mdl.execute(1, None, None)
    with pytest.raises(TypeError, match="data"):
        acl.create_data_buffer("x", 4)
    with pytest.raises(TypeError, match="model_desc"):
        acl.mdl.get_num_inputs(None)
    with pytest.raises(TypeError, match="desc"):
        acl.get_tensor_desc_type(None)


#: parameters that are ints (handles, pointers, sizes) in every pyACL call
_INT_ARGS = {"stream", "event", "context", "model_id", "model_desc",
             "dataset", "data_buffer", "desc", "handle", "input", "output",
             "device_id", "size", "count", "index", "data", "data_type",
             "dev_ptr", "host_ptr", "kind", "timeout", "model_size"}


#: the exceptions: parameters of these names that are not ints
_NOT_INT = {("acl.util.bytes_to_ptr", "data")}   # takes bytes

#: a valid-typed value for the parameters that are not ints
_FILLER = {"op_type": "Add", "model_path": "", "file_name": "",
           "attr_name": "a", "message": "", "config_path": "",
           "input_desc": [], "output_desc": [], "inputs": [], "outputs": []}


def _public_functions():
    import inspect
    for mod in (acl, acl.rt, acl.mdl, acl.op, acl.util):
        for name in mod.__all__:
            fn = getattr(mod, name)
            if inspect.isfunction(fn):
                yield "%s.%s" % (mod.__name__, name), fn


def test_none_where_an_int_is_required_raises_type_error(acl_dev):
    """Every public call, each int parameter in turn given None (the others
    0): TypeError, never an error code or a value."""
    import inspect
    checked = []
    for name, fn in _public_functions():
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind is p.POSITIONAL_OR_KEYWORD]
        for i, p in enumerate(params):
            if p not in _INT_ARGS or (name, p) in _NOT_INT:
                continue
            args = [_FILLER.get(q, 0) for q in params]
            args[i] = None
            with pytest.raises(TypeError, match=p):
                fn(*args)
            checked.append(name)
    # the calls of the audit are among them
    assert {"acl.mdl.execute", "acl.create_data_buffer",
            "acl.mdl.get_num_inputs", "acl.get_tensor_desc_dim",
            "acl.mdl.get_dataset_buffer"} <= set(checked)


def test_pointer_helpers_refuse_what_would_crash(acl_dev):
    dev, _ = acl.rt.malloc(64, 0)
    with pytest.raises(ValueError, match="acl.rt.memcpy"):
        util.ptr_to_bytes(dev, 8)
    with pytest.raises(ValueError, match="device memory"):
        util.ptr_to_numpy(dev, (4,), acl.NPY_FLOAT)
    with pytest.raises(ValueError, match="not readable"):
        util.ptr_to_bytes(0x10, 8)
    host = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(
        util.ptr_to_numpy(util.numpy_to_ptr(host), (4,), acl.NPY_FLOAT), host)
    acl.rt.free(dev)


# -- acl.rt ---------------------------------------------------------------------------
def test_rt_calls(acl_dev):
    assert acl.rt.get_run_mode() == (acl.ACL_HOST, 0)
    status, ret = acl.rt.query_device_status(0)
    assert (status, ret) == (acl.ACL_RT_DEVICE_STATUS_NORMAL, 0)
    util_rate, ret = acl.rt.get_device_utilization_rate(0)
    assert ret == 0 and 0 <= util_rate["cubeUtilization"] <= 100
    assert set(util_rate) >= {"cubeUtilization", "vectorUtilization",
                              "aicpuUtilization", "memoryUtilization"}
    assert acl.rt.query_device_status(99)[1] == \
        acl.ACL_ERROR_RT_INVALID_DEVICEID
    event, ret = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    assert ret == 0
    stream, _ = acl.rt.create_stream()
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.synchronize_stream_with_timeout(stream, 5000) == 0
    assert acl.rt.query_event_wait_status(event) == \
        (acl.ACL_EVENT_WAIT_STATUS_COMPLETE, 0)
    assert acl.rt.synchronize_device_with_timeout(5000) == 0
    assert acl.rt.synchronize_device_with_timeout(-1) == 0
    acl.rt.destroy_event(event)
    acl.rt.destroy_stream(stream)
    acl.rt.get_last_error()                         # forget older errors
    assert acl.rt.free(4242) == acl.ACL_ERROR_RT_MEMORY_FREE
    assert acl.rt.peek_at_last_error() == acl.ACL_ERROR_RT_MEMORY_FREE
    assert acl.rt.get_last_error() == acl.ACL_ERROR_RT_MEMORY_FREE
    assert acl.rt.get_last_error() == 0
    # reset_device_force releases a device set twice at once
    assert acl.rt.set_device(0) == 0
    p, _ = acl.rt.malloc(4096, 0)
    assert acl.rt.reset_device_force(0) == 0
    assert acl.rt.get_device()[1] == acl.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.free(p) == acl.ACL_ERROR_RT_MEMORY_FREE
    assert acl.rt.set_device(0) == 0                 # for the fixture


# -- acl.op ----------------------------------------------------------------------------
def _tensor(arr, dtype):
    p, _ = acl.rt.malloc(max(arr.nbytes, 1), 0)
    acl.rt.memcpy(p, arr.nbytes, util.numpy_to_ptr(arr), arr.nbytes,
                  acl.ACL_MEMCPY_HOST_TO_DEVICE)
    return (acl.create_tensor_desc(dtype, list(arr.shape), acl.ACL_FORMAT_ND),
            acl.create_data_buffer(p, arr.nbytes), p)


def _read(t, shape, dtype):
    out = np.empty(shape, dtype)
    acl.rt.memcpy(util.numpy_to_ptr(out), out.nbytes, t[2], out.nbytes,
                  acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return out


def test_op_handles_cast_and_params(acl_dev, tmp_path):
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(8).astype(np.float32) for _ in range(2))
    ta, tb = _tensor(a, acl.ACL_FLOAT), _tensor(b, acl.ACL_FLOAT)
    tc = _tensor(np.zeros(8, np.float32), acl.ACL_FLOAT)
    stream, _ = acl.rt.create_stream()
    attr = acl.op.create_attr()
    assert acl.op.set_attr_list_list_int(attr, "pads", [[0, 1], [2, 3]]) == 0
    handle, ret = acl.op.create_handle("Add", [ta[0], tb[0]], [tc[0]], attr)
    assert ret == 0
    for _ in range(2):
        assert acl.op.execute_with_handle(handle, [ta[1], tb[1]], [tc[1]],
                                          stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(_read(tc, 8, np.float32), a + b)
    acl.op.destroy_handle(handle)
    assert acl.op.execute_with_handle(handle, [ta[1], tb[1]], [tc[1]],
                                      stream) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.op.create_handle("Conv3D", [ta[0]], [tc[0]], 0)[1] == \
        acl.ACL_ERROR_OP_NOT_FOUND
    assert acl.op.update_params("Add", [ta[0], tb[0]], [tc[0]], attr) == 0
    th = _tensor(np.zeros(8, np.float16), acl.ACL_FLOAT16)
    assert acl.op.cast(ta[0], ta[1], th[0], th[1], 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(_read(th, 8, np.float16),
                                  a.astype(np.float16))
    bad = tmp_path / "op.om"
    bad.write_bytes(b"IMOD" + bytes(100))
    data = np.frombuffer(bad.read_bytes(), np.uint8).copy()
    assert acl.op.load(util.numpy_to_ptr(data), data.nbytes) == \
        acl.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID
    assert "davinci-atc" in acl.get_recent_err_msg()
    acl.op.destroy_attr(attr)
    for t in (ta, tb, tc, th):
        acl.destroy_data_buffer(t[1])
        acl.destroy_tensor_desc(t[0])
        acl.rt.free(t[2])
    acl.rt.destroy_stream(stream)


def test_constant_inputs_are_read_from_the_tensor_desc(acl_dev):
    """acl.set_tensor_const's data is the input when its data buffer is
    empty or None, through execute_v2 and execute_with_handle alike."""
    x = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    tx = _tensor(x, acl.ACL_FLOAT)
    ty = _tensor(np.zeros(3, np.float32), acl.ACL_FLOAT)
    axes = np.array([-1], np.int64)
    dax = acl.create_tensor_desc(acl.ACL_INT64, [1], acl.ACL_FORMAT_ND)
    assert acl.set_tensor_const(dax, util.numpy_to_ptr(axes), axes.nbytes) == 0
    axes[0] = 0             # copied when set: this changes nothing
    empty = acl.create_data_buffer(0, 0)
    stream, _ = acl.rt.create_stream()
    for buf in (empty, None):
        ty2 = _tensor(np.zeros(3, np.float32), acl.ACL_FLOAT)
        assert acl.op.execute_v2("ReduceSum", [tx[0], dax], [tx[1], buf],
                                 [ty2[0]], [ty2[1]], 0, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        np.testing.assert_allclose(_read(ty2, 3, np.float32), x.sum(axis=1),
                                   rtol=1e-6)
    handle, ret = acl.op.create_handle("ReduceSum", [tx[0], dax], [ty[0]], 0)
    assert ret == 0
    assert acl.op.execute_with_handle(handle, [tx[1], empty], [ty[1]],
                                      stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_allclose(_read(ty, 3, np.float32), x.sum(axis=1),
                               rtol=1e-6)
    # any operator: a constant addend, on the device
    c = np.random.default_rng(6).standard_normal((3, 4)).astype(np.float32)
    dc = acl.create_tensor_desc(acl.ACL_FLOAT, [3, 4], acl.ACL_FORMAT_ND)
    assert acl.set_tensor_const(dc, util.numpy_to_ptr(c), c.nbytes) == 0
    tz = _tensor(np.zeros((3, 4), np.float32), acl.ACL_FLOAT)
    assert acl.op.execute_v2("Add", [tx[0], dc], [tx[1], empty], [tz[0]],
                             [tz[1]], 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(_read(tz, (3, 4), np.float32), x + c)
    # a constant shorter than its description, or none, is refused
    short = acl.create_tensor_desc(acl.ACL_FLOAT, [3, 4], acl.ACL_FORMAT_ND)
    assert acl.set_tensor_const(short, util.numpy_to_ptr(c), 8) == 0
    plain = acl.create_tensor_desc(acl.ACL_FLOAT, [3, 4], acl.ACL_FORMAT_ND)
    for d in (short, plain):
        assert acl.op.execute_v2("Add", [tx[0], d], [tx[1], empty], [tz[0]],
                                 [tz[1]], 0, stream) == \
            acl.ACL_ERROR_INVALID_PARAM
    assert "set_tensor_const" in acl.get_recent_err_msg()
    acl.op.destroy_handle(handle)
    for d in (dax, dc, short, plain):
        acl.destroy_tensor_desc(d)
    acl.destroy_data_buffer(empty)
    acl.rt.destroy_stream(stream)


def test_update_params_checks_as_execution_would(acl_dev):
    """update_params sees the attributes and descriptions: what execute_v2
    would refuse, it refuses with the same code."""
    da = acl.create_tensor_desc(acl.ACL_FLOAT, [2, 3], acl.ACL_FORMAT_ND)
    db = acl.create_tensor_desc(acl.ACL_FLOAT, [4, 3], acl.ACL_FORMAT_ND)
    dc = acl.create_tensor_desc(acl.ACL_FLOAT, [2, 4], acl.ACL_FORMAT_ND)
    attr = acl.op.create_attr()
    assert acl.op.update_params("MatMul", [da, db], [dc], attr) == \
        acl.ACL_ERROR_OP_INPUT_NOT_MATCH            # k = 3 against 4
    assert acl.op.set_attr_bool(attr, "transpose_x2", True) == 0
    assert acl.op.update_params("MatMul", [da, db], [dc], attr) == 0
    assert acl.op.set_attr_int(attr, "transpose_x2", 1) == 0   # not a bool
    assert acl.op.update_params("MatMul", [da, db], [dc], attr) == \
        acl.ACL_ERROR_OP_ATTR_NOT_MATCH
    assert acl.op.update_params("Add", [da, db], [dc], 0) == \
        acl.ACL_ERROR_OP_INPUT_NOT_MATCH
    for d in (da, db, dc):
        acl.destroy_tensor_desc(d)
    acl.op.destroy_attr(attr)


def test_attr_list_list_int_is_stored_and_read(acl_dev):
    """set_attr_list_list_int's value is what the operator reads: as
    ReduceSum's axes it is refused (axes are a list of ints), the same
    name set with set_attr_list_int runs; bad values are refused."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    tx, ty = _tensor(x, acl.ACL_FLOAT), _tensor(np.zeros(3, np.float32),
                                                acl.ACL_FLOAT)
    attr = acl.op.create_attr()
    assert acl.op.set_attr_list_list_int(attr, "axes", [[-1]]) == 0
    assert acl.op.execute_v2("ReduceSum", [tx[0]], [tx[1]], [ty[0]], [ty[1]],
                             attr, 0) == acl.ACL_ERROR_OP_ATTR_NOT_MATCH
    assert "[[-1]]" in acl.get_recent_err_msg()
    assert acl.op.set_attr_list_int(attr, "axes", [-1]) == 0
    assert acl.op.execute_v2("ReduceSum", [tx[0]], [tx[1]], [ty[0]], [ty[1]],
                             attr, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    np.testing.assert_array_equal(_read(ty, 3, np.float32), x.sum(axis=1))
    for bad in ([[0, "x"]], [1, 2], 5):
        assert acl.op.set_attr_list_list_int(attr, "pads", bad) == \
            acl.ACL_ERROR_INVALID_PARAM
    acl.op.destroy_attr(attr)


class _BlockingCallback:
    """A stream held back by a blocking host callback until release():
    ordering only, no clock."""

    def __init__(self, stream):
        self.gate = threading.Event()
        self.running = True
        ctx, _ = acl.rt.get_context()
        self.tid, ret = acl.util.start_thread(self._loop, ctx)
        assert ret == 0
        self.stream = stream
        assert acl.rt.subscribe_report(self.tid, stream) == 0
        assert acl.rt.launch_callback(lambda _: self.gate.wait(), None,
                                      acl.ACL_CALLBACK_BLOCK, stream) == 0

    def _loop(self, ctx):
        acl.rt.set_context(ctx)
        while self.running:
            acl.rt.process_report(50)

    def release(self):
        self.gate.set()
        assert acl.rt.synchronize_stream(self.stream) == 0
        assert acl.rt.unsubscribe_report(self.tid, self.stream) == 0
        self.running = False
        assert acl.util.stop_thread(self.tid) == 0


def test_timeouts_expire_and_waits_report_not_ready(acl_dev):
    held, _ = acl.rt.create_stream()
    waiter, _ = acl.rt.create_stream()
    event, ret = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    assert ret == 0
    block = _BlockingCallback(held)
    try:
        assert acl.rt.record_event(event, held) == 0
        assert acl.rt.stream_wait_event(waiter, event) == 0
        assert acl.rt.query_event_wait_status(event) == \
            (acl.ACL_EVENT_WAIT_STATUS_NOT_READY, 0)
        assert acl.rt.synchronize_stream_with_timeout(waiter, 1) == \
            acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        assert acl.rt.synchronize_device_with_timeout(1) == \
            acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    finally:
        block.release()
    assert acl.rt.synchronize_stream_with_timeout(waiter, -1) == 0
    assert acl.rt.query_event_wait_status(event) == \
        (acl.ACL_EVENT_WAIT_STATUS_COMPLETE, 0)
    assert acl.rt.synchronize_device_with_timeout(-1) == 0
    acl.rt.destroy_event(event)
    for s in (held, waiter):
        assert acl.rt.destroy_stream(s) == 0


def test_query_device_status_reports_a_lost_device(acl_dev):
    from davinci.manager import Manager
    from .conftest import require_fault_privilege
    with Manager() as mgr:
        require_fault_privilege(mgr)
        assert acl.rt.query_device_status(0) == \
            (acl.ACL_RT_DEVICE_STATUS_NORMAL, 0)
        mgr.inject(0, "lost")
        try:
            assert acl.rt.query_device_status(0) == \
                (acl.ACL_RT_DEVICE_STATUS_ABNORMAL, 0)
        finally:
            acl.rt.reset_device_force(0)
            mgr.reset(0)
        assert acl.rt.query_device_status(0) == \
            (acl.ACL_RT_DEVICE_STATUS_NORMAL, 0)
    assert acl.rt.set_device(0) == 0                 # for the fixture
