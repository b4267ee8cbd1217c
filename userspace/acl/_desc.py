# SPDX-License-Identifier: GPL-2.0
"""aclTensorDesc and aclDataBuffer, pyACL style (top-level acl.* calls).

As in pyACL, handles are ints; constructors return the handle alone
(``desc = acl.create_tensor_desc(...)``), plain getters return the value
alone, and calls that can fail return ``ret`` (or ``(value, ret)`` for the
``_v2`` getters).
"""

from __future__ import annotations

import davinci

from . import _state as S
from . import constants as C
from . import util

__all__ = [
    "create_tensor_desc", "destroy_tensor_desc", "get_tensor_desc_type",
    "get_tensor_desc_format", "get_tensor_desc_num_dims",
    "get_tensor_desc_dim", "get_tensor_desc_dim_v2", "get_tensor_desc_size",
    "get_tensor_desc_element_count", "set_tensor_desc_name",
    "get_tensor_desc_name", "get_data_type_size", "create_data_buffer",
    "destroy_data_buffer", "get_data_buffer_addr", "get_data_buffer_size",
    "get_data_buffer_size_v2", "update_data_buffer", "data_type_size",
    "set_tensor_const",
]

#: bytes per element of each aclDataType
DTYPE_SIZE = {C.ACL_FLOAT: 4, C.ACL_FLOAT16: 2, C.ACL_INT8: 1,
              C.ACL_INT32: 4, C.ACL_UINT8: 1, C.ACL_INT16: 2,
              C.ACL_UINT16: 2, C.ACL_UINT32: 4, C.ACL_INT64: 8,
              C.ACL_UINT64: 8, C.ACL_DOUBLE: 8, C.ACL_BOOL: 1,
              C.ACL_BF16: 2}


class TensorDesc:
    def __init__(self, dtype: int, shape, fmt: int):
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        self.format = fmt
        self.name = ""
        #: set_tensor_const's data, copied when it was set (as aclSetTensorConst
        #: does): an input an operator reads when its data buffer is empty
        self.const: "bytes | None" = None
        # device copies of ``const``, one per device that ran with it
        self._staged: "list[davinci.Buffer]" = []

    def set_const(self, data: bytes) -> None:
        self.drop_staged()
        self.const = data

    def staged_address(self, dev: "davinci.Device") -> int:
        """Device address of ``const`` on ``dev`` (copied there the first
        time it is asked for; stays until the description is destroyed
        or made constant again)."""
        if self.const is None:
            raise ValueError("the tensor desc is not constant")
        for buf in self._staged:
            if buf.device is dev and not buf.freed:
                return buf.dev_addr
        buf = dev.malloc(max(len(self.const), 1))
        buf.write(self.const)
        self._staged.append(buf)
        return buf.dev_addr

    def drop_staged(self) -> None:
        """Free the device copies of ``const`` (tasks still reading one keep
        it until they end)."""
        staged, self._staged = self._staged, []
        for buf in staged:
            if not buf.freed:
                buf.free()

    @property
    def count(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self) -> int:
        return DTYPE_SIZE.get(self.dtype, 0)

    @property
    def nbytes(self) -> int:
        return self.count * self.itemsize


class DataBuffer:
    def __init__(self, ptr: int, size: int):
        self.ptr = ptr
        self.size = size


descs: "dict[int, TensorDesc]" = {}
buffers: "dict[int, DataBuffer]" = {}


def _desc(h) -> TensorDesc | None:
    return descs.get(h)


@S.checked
def create_tensor_desc(data_type, dims, format):  # noqa: A002 - pyACL name
    """desc: a tensor description (0 when the arguments are invalid)."""
    try:
        if isinstance(dims, int):
            dims = [dims]
        shape = [int(d) for d in (dims or [])]
    except (TypeError, ValueError):
        S.record_error(C.ACL_ERROR_INVALID_PARAM, "dims must be a list of "
                       "ints, not %r" % (dims,), "acl.create_tensor_desc")
        return 0
    if data_type not in DTYPE_SIZE or any(d < 0 for d in shape):
        S.record_error(C.ACL_ERROR_INVALID_PARAM,
                       "unknown data type %r or negative dimension in %r"
                       % (data_type, shape), "acl.create_tensor_desc")
        return 0
    h = S.new_handle()
    descs[h] = TensorDesc(int(data_type), shape, int(format))
    return h


@S.checked
def destroy_tensor_desc(desc):
    d = descs.pop(desc, None)
    if d is not None:
        d.drop_staged()


@S.checked
def get_tensor_desc_type(desc):
    d = _desc(desc)
    return d.dtype if d else C.ACL_DT_UNDEFINED


@S.checked
def get_tensor_desc_format(desc):
    d = _desc(desc)
    return d.format if d else C.ACL_FORMAT_UNDEFINED


@S.checked
def get_tensor_desc_num_dims(desc):
    d = _desc(desc)
    return len(d.shape) if d else 0


@S.checked
def get_tensor_desc_dim(desc, index):
    d = _desc(desc)
    if d is None or not isinstance(index, int) or \
            not 0 <= index < len(d.shape):
        return -1
    return d.shape[index]


@S.checked
def get_tensor_desc_dim_v2(desc, index):
    """(dim_size, ret)"""
    d = _desc(desc)
    if d is None:
        S.record_error(C.ACL_ERROR_INVALID_PARAM, "no tensor desc %r"
                       % (desc,), "acl.get_tensor_desc_dim_v2")
        return -1, C.ACL_ERROR_INVALID_PARAM
    if not isinstance(index, int) or not 0 <= index < len(d.shape):
        S.record_error(C.ACL_ERROR_INVALID_PARAM, "index %r outside 0..%d"
                       % (index, len(d.shape) - 1),
                       "acl.get_tensor_desc_dim_v2")
        return -1, C.ACL_ERROR_INVALID_PARAM
    return d.shape[index], C.ACL_SUCCESS


@S.checked
def get_tensor_desc_size(desc):
    """Bytes of the described tensor (element count x element size)."""
    d = _desc(desc)
    return d.nbytes if d else 0


@S.checked
def get_tensor_desc_element_count(desc):
    d = _desc(desc)
    return d.count if d else 0


@S.checked
def set_tensor_desc_name(desc, name):
    d = _desc(desc)
    if d is not None:
        d.name = str(name)


@S.checked
def get_tensor_desc_name(desc):
    d = _desc(desc)
    return d.name if d else ""


@S.checked
def get_data_type_size(data_type):
    return DTYPE_SIZE.get(data_type, 0)


@S.checked
def data_type_size(data_type):
    """Bytes per element of ``data_type`` (0 for an unknown type), the
    documented name of get_data_type_size."""
    return DTYPE_SIZE.get(data_type, 0)


@S.checked
def set_tensor_const(desc, data_buffer, length):
    """ret: mark the tensor described by ``desc`` constant, its data the
    ``length`` bytes at host pointer ``data_buffer``, copied now (0 and 0:
    an empty constant). acl.op's operators read a constant input from
    here when its data buffer is empty (pointer 0 or size 0) or None."""
    if length < 0 or (length and not data_buffer):
        raise TypeError("acl.set_tensor_const() takes a pointer (int) and a "
                        "length (int >= 0, 0 for an empty buffer)")
    d = _desc(desc)
    if d is None:
        S.record_error(C.ACL_ERROR_INVALID_PARAM, "no tensor desc %r"
                       % (desc,), "acl.set_tensor_const")
        return C.ACL_ERROR_INVALID_PARAM
    try:
        data = util.ptr_to_bytes(data_buffer, length) if length else b""
    except ValueError as exc:
        S.record_error(C.ACL_ERROR_INVALID_PARAM, "%s (the constant's data "
                       "must be host memory)" % exc, "acl.set_tensor_const")
        return C.ACL_ERROR_INVALID_PARAM
    d.set_const(data)
    return C.ACL_SUCCESS


@S.checked
def create_data_buffer(data, size):
    """data_buffer: describes ``size`` bytes at pointer ``data``."""
    if not isinstance(data, int) or not isinstance(size, int) or size < 0:
        S.record_error(C.ACL_ERROR_INVALID_PARAM,
                       "data must be a pointer (int) and size an int >= 0",
                       "acl.create_data_buffer")
        return 0
    h = S.new_handle()
    buffers[h] = DataBuffer(data, size)
    return h


@S.checked
def destroy_data_buffer(data_buffer):
    """ret"""
    if buffers.pop(data_buffer, None) is None:
        S.record_error(C.ACL_ERROR_INVALID_PARAM, "no data buffer %r"
                       % (data_buffer,), "acl.destroy_data_buffer")
        return C.ACL_ERROR_INVALID_PARAM
    return C.ACL_SUCCESS


@S.checked
def get_data_buffer_addr(data_buffer):
    b = buffers.get(data_buffer)
    return b.ptr if b else 0


@S.checked
def get_data_buffer_size_v2(data_buffer):
    b = buffers.get(data_buffer)
    return b.size if b else 0


get_data_buffer_size = get_data_buffer_size_v2


@S.checked
def update_data_buffer(data_buffer, data, size):
    """ret"""
    b = buffers.get(data_buffer)
    if b is None or not isinstance(data, int) or not isinstance(size, int):
        return C.ACL_ERROR_INVALID_PARAM
    b.ptr, b.size = data, size
    return C.ACL_SUCCESS
