# SPDX-License-Identifier: GPL-2.0
"""acl.mdl: offline models, pyACL style.

    model_id, ret = acl.mdl.load_from_file("mlp.om")
    desc = acl.mdl.create_desc()
    ret = acl.mdl.get_desc(desc, model_id)
    size = acl.mdl.get_input_size_by_index(desc, 0)
    ...
    dataset = acl.mdl.create_dataset()
    _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(p, size))
    ret = acl.mdl.execute(model_id, inputs, outputs)

Models are davinci offline models made by ``davinci-atc`` from ONNX (see
:mod:`davinci.omfile`); loading one copies its weights to the device and
builds its task list once, and each execute submits that whole list at
once (:class:`davinci.model.Model`). A file that is not one (a real Ascend
.om, anything else) is refused with ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID
(145006), what Huawei's runtime returns for a file without its model magic;
a missing file with ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID (145002); an
unknown model id with ACL_ERROR_GE_EXEC_MODEL_ID_INVALID (145003).

A model converted with ``--dynamic_batch_size`` has an extra last input,
``ascend_mbatch_shape_data`` (ACL_DYNAMIC_TENSOR_NAME): give it a buffer of
``get_input_size_by_index`` bytes and pick the batch with
``set_dynamic_batch_size`` before each execute; one converted with
``--dynamic_image_size`` has it too, and ``set_dynamic_hw_size`` picks the
image size (``get_dynamic_hw`` lists them).
"""

from __future__ import annotations

import ctypes
import inspect
import os

from davinci import omfile as F
from davinci.errors import InvalidArgumentError
from davinci.model import Model

from .. import _desc as D
from .. import _state as S
from .. import constants as C
from .._opargs import ACL_DTYPES
from .._state import AclFail, api
from ..rt.memory import device_range, operand
from ._objects import (ACL_FORMATS, AclModel, Dataset, ModelDesc,
                       datasets, descs, get_dataset, get_model, io_at, models,
                       next_model_id)
from ._objects import get_desc as _desc_of
from . import aipp as _aipp
from .aipp import *  # noqa: F401,F403 - acl.mdl's dynamic AIPP

__all__ = [
    "load_from_file", "load_from_mem", "unload", "query_size",
    "query_size_from_mem", "create_desc", "get_desc", "destroy_desc",
    "get_num_inputs", "get_num_outputs", "get_input_size_by_index",
    "get_output_size_by_index", "get_input_dims", "get_input_dims_v2",
    "get_output_dims", "get_cur_output_dims", "get_input_name_by_index",
    "get_output_name_by_index", "get_input_index_by_name",
    "get_output_index_by_name", "get_input_data_type",
    "get_output_data_type", "get_input_format", "get_output_format",
    "get_dynamic_batch", "set_dynamic_batch_size", "get_dynamic_hw",
    "set_dynamic_hw_size", "create_dataset", "destroy_dataset",
    "add_dataset_buffer", "get_dataset_buffer", "get_dataset_num_buffers",
    "execute", "execute_async", *_aipp.__all__]


# -- loading ------------------------------------------------------------------
def _read_file(path) -> bytes:
    if not isinstance(path, str) or not os.path.isfile(path):
        raise AclFail(C.ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID,
                      "model file %r does not exist or is not a file" % (path,))
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise AclFail(C.ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID,
                      "cannot read model file %s: %s" % (path, exc)) from None


def read_model(model, model_size) -> bytes:
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)[:model_size]
    if not isinstance(model, int) or model == 0 or \
            not isinstance(model_size, int) or model_size <= 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "model must be a non-null pointer and model_size a "
                      "positive int, not %r, %r" % (model, model_size))
    hit = device_range(model, model_size, "model")
    if hit is not None:                 # device memory: read its mapping
        _, buf, off = hit
        return bytes(buf.numpy(dtype="uint8", shape=(model_size,),
                               offset=off))
    return ctypes.string_at(model, model_size)


def _parse(data: bytes) -> F.OfflineModel:
    try:
        return F.parse(data)
    except F.ModelFormatError as exc:
        raise AclFail(C.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID,
                      str(exc)) from None


def _load(data: bytes) -> int:
    dev = S.require_context().device
    _parse(data)                        # the format's errors, as aclError
    m = AclModel(next_model_id(), dev, Model(dev.dev, data))
    models[m.id] = m
    return m.id


@api(1, (0,))
def load_from_file(model_path):
    """(model_id, ret): load a davinci offline model file."""
    return _load(_read_file(model_path))


@api(1, (0,))
def load_from_mem(model, model_size):
    """(model_id, ret): load a model from ``model_size`` bytes at pointer
    ``model`` (host memory, or device memory from acl.rt.malloc)."""
    return _load(read_model(model, model_size))


@api()
def unload(model_id):
    """ret: free the model's device memory, graphs and streams (all of
    them, even when its last run failed: then that failure's code)."""
    m = get_model(model_id)
    del models[m.id]
    m.model.unload()


def _sizes(om: F.OfflineModel) -> tuple[int, int]:
    return (max(om.workspace_size(g) for g in range(om.gears)),
            len(om.weights))


@api(2, (0, 0))
def query_size(file_name):
    """(work_size, weight_size, ret) the model needs on the device."""
    return _sizes(_parse(_read_file(file_name)))


@api(2, (0, 0))
def query_size_from_mem(model, model_size):
    """(work_size, weight_size, ret)"""
    return _sizes(_parse(read_model(model, model_size)))


# -- descriptions -------------------------------------------------------------
def create_desc():
    """model_desc: an empty description for get_desc to fill."""
    h = S.new_handle()
    descs[h] = ModelDesc()
    return h


@api()
def get_desc(model_desc, model_id):
    """ret: describe loaded model ``model_id`` in ``model_desc``."""
    _desc_of(model_desc).model = get_model(model_id)


@api()
def destroy_desc(model_desc):
    """ret"""
    _desc_of(model_desc)
    del descs[model_desc]


def _quiet(default, fn, name: str = ""):
    """A getter that returns the value alone, ``default`` on bad handles."""
    name = name or fn.__name__
    sig = inspect.signature(fn)

    def wrapper(*args):
        S.check_args(sig, "acl.mdl." + name, args, {})
        try:
            with S.lock:
                return fn(*args)
        except AclFail as exc:
            S.record_error(exc.code, exc.message, "acl.mdl." + name)
            return default
    wrapper.__name__ = name
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


def _om(desc) -> F.OfflineModel:
    return _desc_of(desc).om()


def _num_inputs(model_desc):
    """number of inputs (0 for a bad description)"""
    return len(_om(model_desc).inputs)


def _num_outputs(model_desc):
    """number of outputs"""
    return len(_om(model_desc).outputs)


def _input_size(model_desc, index):
    """bytes of input ``index`` (the largest batch of a dynamic model)"""
    d = _desc_of(model_desc)
    io_at(d.om().inputs, index, "input")
    return d.model.model.input_size(index)


def _output_size(model_desc, index):
    """bytes of output ``index`` (the largest batch of a dynamic model)"""
    d = _desc_of(model_desc)
    io_at(d.om().outputs, index, "output")
    return d.model.model.output_size(index)


get_num_inputs = _quiet(0, _num_inputs, "get_num_inputs")
get_num_outputs = _quiet(0, _num_outputs, "get_num_outputs")
get_input_size_by_index = _quiet(0, _input_size, "get_input_size_by_index")
get_output_size_by_index = _quiet(0, _output_size, "get_output_size_by_index")


def _dims(io: F.IoDesc, dims) -> dict:
    return {"name": io.name, "dimCount": len(dims), "dims": list(dims)}


@api(1, ({"name": "", "dimCount": 0, "dims": []},))
def get_input_dims(model_desc, index):
    """(dims, ret): {"name", "dimCount", "dims"}; -1 marks the dynamic
    batch."""
    io = io_at(_om(model_desc).inputs, index, "input")
    return _dims(io, io.dims)


get_input_dims_v2 = get_input_dims


@api(1, ({"name": "", "dimCount": 0, "dims": []},))
def get_output_dims(model_desc, index):
    """(dims, ret)"""
    io = io_at(_om(model_desc).outputs, index, "output")
    return _dims(io, io.dims)


@api(1, ({"name": "", "dimCount": 0, "dims": []},))
def get_cur_output_dims(model_desc, index):
    """(dims, ret): output ``index``'s dims in the batch size the model last
    ran with (the largest before the first execute)."""
    d = _desc_of(model_desc)
    om = d.om()
    io = io_at(om.outputs, index, "output")
    gear = d.model.cur_gear if d.model.cur_gear >= 0 else om.gears - 1
    return _dims(io, om.dims(io, gear))


def _name_at(kind: str):
    def get(model_desc, index):
        ios = getattr(_om(model_desc), kind + "s")
        return io_at(ios, index, kind).name
    get.__name__ = "get_%s_name_by_index" % kind
    return _quiet("", get)


get_input_name_by_index = _name_at("input")
get_output_name_by_index = _name_at("output")


def _index_of(kind: str):
    @api(1, (-1,))
    def get(model_desc, name):
        for i, io in enumerate(getattr(_om(model_desc), kind + "s")):
            if io.name == name:
                return i
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "the model has no %s named %r" % (kind, name))
    get.__name__ = "get_%s_index_by_name" % kind
    return get


get_input_index_by_name = _index_of("input")
get_output_index_by_name = _index_of("output")


def _attr_at(kind: str, what: str, table: dict, default: int):
    def get(model_desc, index):
        io = io_at(getattr(_om(model_desc), kind + "s"), index, kind)
        return table[getattr(io, what)]
    get.__name__ = "get_%s_%s" % (kind, "data_type" if what == "dtype"
                                  else what)
    return _quiet(default, get)


#: a model's input and output types: the device's, and the integers
#: davinci-atc carries in a wider one (omfile.IO_ONLY_DTYPES)
_IO_DTYPES = {**ACL_DTYPES, "int16": C.ACL_INT16, "uint16": C.ACL_UINT16,
              "uint32": C.ACL_UINT32, "uint64": C.ACL_UINT64,
              "float64": C.ACL_DOUBLE}
get_input_data_type = _attr_at("input", "dtype", _IO_DTYPES,
                               C.ACL_DT_UNDEFINED)
get_output_data_type = _attr_at("output", "dtype", _IO_DTYPES,
                                C.ACL_DT_UNDEFINED)
get_input_format = _attr_at("input", "format", ACL_FORMATS,
                            C.ACL_FORMAT_UNDEFINED)
get_output_format = _attr_at("output", "format", ACL_FORMATS,
                             C.ACL_FORMAT_UNDEFINED)


@api(1, ({"batchCount": 0, "batch": []},))
def get_dynamic_batch(model_desc):
    """(batch_info, ret): {"batchCount", "batch"}, empty for a static
    model."""
    b = list(_om(model_desc).batches)
    return {"batchCount": len(b), "batch": b}


@api()
def set_dynamic_batch_size(model_id, dataset, index, batch_size):
    """ret: run the next execute of ``dataset`` with ``batch_size``;
    ``index`` is the model's ascend_mbatch_shape_data input."""
    m = get_model(model_id)
    ds = get_dataset(dataset)
    om = m.model.om
    if not om.batches:
        raise AclFail(C.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID,
                      "the model has a static batch: convert it with "
                      "--dynamic_batch_size to choose batch sizes")
    if index != len(om.inputs) - 1:
        raise AclFail(C.ACL_ERROR_GE_PARAM_INVALID,
                      "index %r is not the model's %s input (%d)"
                      % (index, F.MBATCH_INPUT, len(om.inputs) - 1))
    if batch_size not in om.batches:
        raise AclFail(C.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID,
                      "batch size %r is not one of the model's %s"
                      % (batch_size, om.batches))
    ds.batch = batch_size


@api(1, ({"hwCount": 0, "hw": []},))
def get_dynamic_hw(model_desc, index):
    """(hw_info, ret): {"hwCount", "hw": [[height, width], ...]} of a model
    converted with --dynamic_image_size, empty for any other."""
    hw = [list(p) for p in _om(model_desc).hw_sizes]
    return {"hwCount": len(hw), "hw": hw}


@api()
def set_dynamic_hw_size(model_id, dataset, index, height, width):
    """ret: run the next execute of ``dataset`` on images of ``height`` x
    ``width``; ``index`` is the model's ascend_mbatch_shape_data input."""
    m = get_model(model_id)
    ds = get_dataset(dataset)
    om = m.model.om
    if not om.hw_sizes:
        raise AclFail(C.ACL_ERROR_MODEL_NOT_DYNAMIC,
                      "the model has a static image size: convert it with "
                      "--input_shape=x:1,3,-1,-1 --dynamic_image_size="
                      "\"h,w;h,w\" to choose sizes")
    if index != len(om.inputs) - 1:
        raise AclFail(C.ACL_ERROR_GE_PARAM_INVALID,
                      "index %r is not the model's %s input (%d)"
                      % (index, F.MBATCH_INPUT, len(om.inputs) - 1))
    if [height, width] not in [list(p) for p in om.hw_sizes]:
        raise AclFail(C.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
                      "image size %r x %r is not one of the model's %s"
                      % (height, width, [list(p) for p in om.hw_sizes]))
    ds.hw = (height, width)


# -- datasets -----------------------------------------------------------------
def create_dataset():
    """dataset: an empty list of data buffers."""
    h = S.new_handle()
    datasets[h] = Dataset()
    return h


@api()
def destroy_dataset(dataset):
    """ret (the data buffers in it stay yours to destroy)."""
    get_dataset(dataset)
    del datasets[dataset]


@api(1, (0,))
def add_dataset_buffer(dataset, data_buffer):
    """(dataset, ret): append ``data_buffer``."""
    ds = get_dataset(dataset)
    if data_buffer not in D.buffers:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%r is not a data buffer from acl.create_data_buffer"
                      % (data_buffer,))
    ds.buffers.append(data_buffer)
    return dataset


def _dataset_buffer(dataset, index):
    """data_buffer at ``index`` (0 when out of range)"""
    ds = get_dataset(dataset)
    return io_at(ds.buffers, index, "dataset buffer")


def _dataset_num(dataset):
    """number of data buffers"""
    return len(get_dataset(dataset).buffers)


get_dataset_buffer = _quiet(0, _dataset_buffer, "get_dataset_buffer")
get_dataset_num_buffers = _quiet(0, _dataset_num, "get_dataset_num_buffers")


# -- execution ----------------------------------------------------------------
def _addresses(m: AclModel, ds_in: Dataset, ds_out: Dataset, gear: int
               ) -> list[int]:
    model = m.model
    om = model.om
    addrs = []
    for kind, ds, ios, size in (("input", ds_in, om.inputs, model.input_size),
                                ("output", ds_out, om.outputs,
                                 model.output_size)):
        if len(ds.buffers) != len(ios):
            raise AclFail(C.ACL_ERROR_GE_PARAM_INVALID,
                          "the model has %d %ss, the dataset holds %d buffers"
                          % (len(ios), kind, len(ds.buffers)))
        for i, (h, io) in enumerate(zip(ds.buffers, ios)):
            b = D.buffers.get(h)
            if b is None:
                raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                              "%s %d: data buffer %r was destroyed"
                              % (kind, i, h))
            need = size(i, gear)
            if b.size < need:
                raise AclFail(C.ACL_ERROR_GE_PARAM_INVALID,
                              "%s %d (%s): the data buffer has %d bytes, the "
                              "model needs %d" % (kind, i, io.name, b.size,
                                                  need))
            addrs.append(operand(b.ptr, need, "%s %d" % (kind, i)))
    return addrs


def _prepare(model_id, input, output, stream=None):  # noqa: A002 - pyACL
    m = get_model(model_id)
    ctx = S.require_context()
    if ctx.device is not m.device:
        raise AclFail(C.ACL_ERROR_RT_MODEL_CONTEXT,
                      "model %d was loaded on device %d; the current context "
                      "is on device %d" % (m.id, m.device.id, ctx.device.id))
    ds_in, ds_out = get_dataset(input), get_dataset(output)
    om = m.model.om
    gear = 0
    if om.batches:
        if not ds_in.batch:
            raise AclFail(C.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID,
                          "the model has a dynamic batch: call "
                          "acl.mdl.set_dynamic_batch_size(model_id, dataset, "
                          "%d, batch) with one of %s first"
                          % (len(om.inputs) - 1, om.batches))
        gear = m.model.gear_of(ds_in.batch)
    if om.hw_sizes:
        if not ds_in.hw:
            raise AclFail(C.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
                          "the model has dynamic image sizes: call "
                          "acl.mdl.set_dynamic_hw_size(model_id, dataset, %d, "
                          "height, width) with one of %s first"
                          % (len(om.inputs) - 1,
                             [list(p) for p in om.hw_sizes]))
        gear = m.model.gear_of_hw(*ds_in.hw)
    addrs = _addresses(m, ds_in, ds_out, gear)
    try:
        m.model.check_io(addrs, gear)
    except InvalidArgumentError as exc:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, str(exc)) from None
    s = m.model.stream if stream is None else S.get_stream(stream).stream
    if s.device is not m.model.device:
        raise AclFail(C.ACL_ERROR_RT_STREAM_MODEL,
                      "the stream belongs to another device than model %d"
                      % m.id)
    return m, s, addrs, gear


@api(locked=False)
def execute(model_id, input, output):  # noqa: A002 - pyACL's names
    """ret: run the model once and wait for it."""
    with S.lock:
        m, s, addrs, gear = _prepare(model_id, input, output)
        m.model.execute(s, addrs, gear)
        m.cur_gear = gear
    m.model.wait(s)


@api()
def execute_async(model_id, input, output, stream):  # noqa: A002
    """ret: enqueue one run of the model on ``stream``."""
    if stream is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "execute_async needs a stream from "
                      "acl.rt.create_stream")
    m, s, addrs, gear = _prepare(model_id, input, output, stream)
    m.model.execute(s, addrs, gear)
    m.cur_gear = gear
