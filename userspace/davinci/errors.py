# SPDX-License-Identifier: GPL-2.0
"""Exceptions of the davinci runtime.

Every exception derives from :class:`DavinciError` and carries the driver's
``errno`` (a positive errno, or None) and ``status`` (a ``DAVINCI_STATUS_*``
task status, or None). Messages say what happened and what to do about it.
"""

from __future__ import annotations

import builtins
import errno as _errno
import os

from . import _uapi

#: errnos meaning the driver is gone: module unloaded, device removed, or
#: the FUSE daemon died (ECONNABORTED reaches a client blocked in a wait)
LOST_ERRNOS = (_errno.ENODEV, _errno.ENOTCONN, _errno.ECONNABORTED,
               _errno.EIO, _errno.ENXIO, _errno.ESHUTDOWN, _errno.EPIPE)

__all__ = [
    "DavinciError", "DeviceNotFoundError", "InvalidDeviceError",
    "DriverVersionMismatchError", "OutOfMemoryError", "InvalidHandleError",
    "InvalidArgumentError", "DeviceLostError", "TaskFailedError",
    "TimeoutError", "ShapeError", "DTypeError", "BusyError",
    "LimitError", "ContextLimitError", "QueueFullError",
    "DevicePermissionError",
    "MisalignedOperandError", "status_name", "from_errno",
]


class DavinciError(Exception):
    """Base of every davinci runtime error.

    Attributes:
        message: what happened and what to do.
        errno: positive errno from the driver, or None.
        status: ``DAVINCI_STATUS_*`` of a failed task, or None.
    """

    def __init__(self, message: str, errno: int | None = None,
                 status: int | None = None):
        Exception.__init__(self, message)
        self.message = message
        self.errno = errno
        self.status = status

    def __str__(self) -> str:
        return self.message


class DeviceNotFoundError(DavinciError):
    """No davinci device (no kernel module, no FUSE daemon) or no such index."""


class InvalidDeviceError(DeviceNotFoundError, ValueError):
    """A device index outside 0..device_count()-1."""


class DriverVersionMismatchError(DavinciError):
    """The driver speaks an ABI major version this runtime does not."""


class OutOfMemoryError(DavinciError, MemoryError):
    """The device (or pinned host) pool has no free range of that size.

    Attributes: requested, free, total, largest_free (bytes).
    """

    def __init__(self, message: str, errno: int | None = _errno.ENOMEM,
                 requested: int = 0, free: int = 0, total: int = 0,
                 largest_free: int = 0):
        DavinciError.__init__(self, message, errno)
        self.requested = requested
        self.free = free
        self.total = total
        self.largest_free = largest_free


class InvalidHandleError(DavinciError):
    """A buffer, stream or event that was freed, destroyed or never existed."""


class InvalidArgumentError(DavinciError, ValueError):
    """The driver or the runtime rejected an argument."""


class MisalignedOperandError(InvalidArgumentError):
    """An op operand's device address is not a multiple of its element
    size; nothing was submitted.

    Attributes: operand (its name), address (device address), dtype (name)
    and alignment (bytes the address must be a multiple of).
    """

    def __init__(self, message: str, operand: str = "", address: int = 0,
                 dtype: str = "", alignment: int = 1):
        InvalidArgumentError.__init__(self, message, _errno.EINVAL)
        self.operand = operand
        self.address = address
        self.dtype = dtype
        self.alignment = alignment


class BusyError(DavinciError):
    """The object is in use (EBUSY / EALREADY)."""


class LimitError(DavinciError):
    """A driver limit was reached (see :mod:`davinci.limits`).

    Attributes: limit (its name as :class:`davinci.limits.Limits` spells
    it, e.g. ``"contexts_per_process"``) and value (the limit, or None when
    the driver could not say). The message names both and what to do.
    """

    def __init__(self, message: str, errno: int | None = None,
                 limit: str = "", value: int | None = None):
        DavinciError.__init__(self, message, errno)
        self.limit = limit
        self.value = value


class ContextLimitError(LimitError):
    """Opening a device was refused: this process (EMFILE,
    ``contexts_per_process``) or this user (EUSERS, ``contexts_per_user``)
    holds the most open contexts the driver allows."""


class QueueFullError(BusyError, LimitError):
    """A doorbell would queue more tasks on one stream than the driver
    allows (EBUSY, ``tasks_per_stream``); nothing of the batch was taken
    in."""

    def __init__(self, message: str, errno: int | None = _errno.EBUSY,
                 limit: str = "tasks_per_stream", value: int | None = None):
        LimitError.__init__(self, message, errno, limit, value)


class DevicePermissionError(DavinciError, PermissionError):
    """A device node exists but this user may not open it (EACCES/EPERM).

    Attributes: path (the node or mount), group (the group that may open
    it, for the kernel module), owner (the user whose davinci-fused serves
    it, for FUSE). The message says how to get access.
    """

    def __init__(self, message: str, errno: int | None = _errno.EACCES,
                 path: str = "", group: str | None = None,
                 owner: str | None = None):
        DavinciError.__init__(self, message, errno)
        self.path = path
        self.group = group
        self.owner = owner


class DeviceLostError(DavinciError):
    """The device is gone: module unloaded, device removed, daemon died."""


class TaskFailedError(DavinciError):
    """A task completed with a status other than OK.

    Attributes: status (``DAVINCI_STATUS_*``), status_name, stream_id, seq,
    opcode (when known).
    """

    def __init__(self, message: str, status: int | None = None,
                 stream_id: int | None = None, seq: int | None = None,
                 opcode: int | None = None):
        DavinciError.__init__(self, message, None, status)
        self.status_name = status_name(status) if status is not None else None
        self.stream_id = stream_id
        self.seq = seq
        self.opcode = opcode


class TimeoutError(DavinciError, builtins.TimeoutError):  # noqa: A001
    """A wait ran out of time (the work may still complete later)."""

    def __init__(self, message: str, errno: int | None = _errno.ETIMEDOUT,
                 status: int | None = None):
        DavinciError.__init__(self, message, errno, status)


class ShapeError(DavinciError, ValueError):
    """Operand shapes do not fit the op; nothing was submitted."""


class DTypeError(DavinciError, TypeError):
    """Operand dtypes are not supported by the op; nothing was submitted."""


def status_name(status: int) -> str:
    """``DAVINCI_STATUS_*`` code -> its name, e.g. ``INVALID_ADDRESS``."""
    return _uapi.STATUS_NAMES.get(status, "STATUS_%d" % status)


_STATUS_HINTS = {
    _uapi.DAVINCI_STATUS_INVALID_ADDRESS:
        "an operand lies outside one live allocation of this context; check "
        "the buffers' sizes and that none was freed",
    _uapi.DAVINCI_STATUS_INVALID_TASK:
        "the device rejected the task: a malformed descriptor (unknown "
        "opcode, dtype or flags, a non-zero unused field) or a shape or "
        "dtype the op does not allow",
    _uapi.DAVINCI_STATUS_ABORTED:
        "an earlier task on the stream failed; reset the stream",
    _uapi.DAVINCI_STATUS_CANCELLED: "the task was cancelled by the host",
    _uapi.DAVINCI_STATUS_TIMEOUT:
        "the task ran longer than the device watchdog allows "
        "(task_timeout_ms); split the work or raise the timeout",
    _uapi.DAVINCI_STATUS_ECC_ERROR:
        "the device reported a memory error; reset the device",
    _uapi.DAVINCI_STATUS_DEVICE_LOST:
        "the device is gone; reopen it once it is back",
    _uapi.DAVINCI_STATUS_INVALID_EVENT:
        "the event the task used was destroyed before it ran",
    _uapi.DAVINCI_STATUS_MISALIGNED:
        "an operand is not aligned to its element size; its device address "
        "must be a multiple of the element size (4 bytes for float32 and "
        "int32, 2 for float16 and bfloat16)",
    _uapi.DAVINCI_STATUS_QUEUE_FAULT:
        "the submission ring's tail was moved more than the ring holds "
        "ahead of the device's head (a corrupted ring); reset the stream",
}


#: INVALID_TASK's meaning for the ops whose task fails for its data, by
#: the op's name: the DVPP engines refusing their input, an indexed op's
#: index outside its table, a VPC picture breaking DVPP's rules
_ENGINE_REFUSED = ("the engine refused its input (a corrupt or unsupported "
                   "file: the result record says why)")
_INDEX_OUT_OF_RANGE = ("an index out of range: an index in src1 outside "
                       "[0, n) of the table's rows (DOC: indexed ops); "
                       "nothing was written")
_OP_INVALID_TASK_HINTS = {
    "JPEGD_DECODE": _ENGINE_REFUSED, "PNGD_DECODE": _ENGINE_REFUSED,
    "JPEGE_ENCODE": "the engine refused its input (a picture it does not "
    "take, or a file larger than dst_size: the result record says why)",
    "INDEX_SELECT": _INDEX_OUT_OF_RANGE, "INDEX_ADD": _INDEX_OUT_OF_RANGE,
    "VPC_RESIZE": "a picture, rect or scale DVPP's VPC rules refuse (DOC: "
    "DVPP VPC): check it with davinci.dvpp.check_vpc",
}
_OP_INVALID_TASK_HINTS["VPC_CROP"] = _OP_INVALID_TASK_HINTS["VPC_RESIZE"]
_OP_INVALID_TASK_HINTS["VPC_CONVERT_COLOR"] = \
    _OP_INVALID_TASK_HINTS["VPC_RESIZE"]


def status_hint(status: int, opcode: int | None = None) -> str:
    """What a ``DAVINCI_STATUS_*`` of a failed task means and what to do;
    with the failed task's ``opcode``, what it means for that op (a DVPP
    engine's INVALID_TASK is its input refused, an indexed op's an index
    out of range)."""
    if status == _uapi.DAVINCI_STATUS_INVALID_TASK and opcode is not None:
        hint = _OP_INVALID_TASK_HINTS.get(_uapi.OP_NAMES.get(opcode, ""))
        if hint is not None:
            return hint
    return _STATUS_HINTS.get(status, "see the driver log")


def from_errno(err: int, what: str) -> DavinciError:
    """Build the exception for a positive errno ``err`` from operation ``what``."""
    name = _errno.errorcode.get(err, "E%d" % err)
    text = "%s failed: %s (%s)" % (what, os.strerror(err), name)
    if err == _errno.ENOMEM:
        return OutOfMemoryError(text + "; free memory or request less", err)
    if err == _errno.ENOENT:
        return InvalidHandleError(
            text + "; the object was freed, destroyed or belongs to another "
            "context", err)
    if err == _errno.ETIMEDOUT:
        return TimeoutError(text + "; the work is still running, wait longer "
                            "or cancel it", err)
    if err in LOST_ERRNOS:
        return DeviceLostError(
            text + "; the device is gone (module unloaded, device removed or "
            "davinci-fused died): restart the driver and reopen the device",
            err)
    if err == _errno.EINVAL:
        return InvalidArgumentError(text + "; the driver rejected an argument",
                                    err)
    if err == _errno.ENOTTY:
        return DavinciError(
            text + "; the driver does not know this request: it may be older "
            "than the runtime, update it", err)
    if err in (_errno.EBUSY, _errno.EALREADY):
        return BusyError(text, err)
    if err == _errno.EOVERFLOW:
        return InvalidArgumentError(text + "; a size overflows", err)
    if err in (_errno.EACCES, _errno.EPERM):
        return DavinciError(
            text + "; no permission to use the device (check the node's "
            "owner and group)", err)
    return DavinciError(text, err)
