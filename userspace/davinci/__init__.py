# SPDX-License-Identifier: GPL-2.0
"""davinci: Python runtime library of the davinci virtual NPU.

Drives the kernel module (``/dev/davinciN``) or the FUSE daemon
(``davinci-fused``) through the ioctl ABI of ``kmod/include/uapi/davinci.h``,
or an in-process device core (``DAVINCI_BACKEND=inproc``).

>>> import davinci, numpy as np
>>> with davinci.Device(0) as dev:
...     a = dev.tensor(np.arange(4, dtype=np.float32))
...     print(davinci.ops.add(a, a).numpy())
[0. 2. 4. 6.]
"""

from . import _uapi
from .discovery import Backend, find_backend, fuse_default_mountpoint
from .errors import (BusyError, ContextLimitError, DavinciError,
                     DeviceLostError, DeviceNotFoundError,
                     DevicePermissionError, DriverVersionMismatchError,
                     DTypeError, InvalidArgumentError, InvalidDeviceError,
                     InvalidHandleError, LimitError, OutOfMemoryError,
                     QueueFullError, ShapeError, TaskFailedError,
                     TimeoutError)
from .device import (Device, DeviceInfo, Notification, NotificationType,
                     Version)
from .capabilities import Capabilities
from .memory import Buffer, MemInfo
from .stream import (TASK_DTYPE, Completion, Stream, StreamState, TaskInfo,
                     make_task, task_array)
from .waiting import WaitMode, set_wait_mode, wait_mode
from .event import Event, EventState
from .graph import Graph
from . import ops
from .ops import DeviceTensor

__version__ = "1.0.0"

#: ABI major/minor this runtime speaks.
ABI_VERSION = (_uapi.DAVINCI_ABI_MAJOR, _uapi.DAVINCI_ABI_MINOR)

float32 = "float32"
float16 = "float16"
bfloat16 = "bfloat16"
int32 = "int32"


def device_count() -> int:
    """Number of davinci devices; raises DeviceNotFoundError when there is
    no backend at all."""
    return find_backend().device_count()


def backend() -> Backend:
    """The backend discovery finds (see davinci.discovery)."""
    return find_backend()


__all__ = [
    "Device", "DeviceInfo", "Version", "Notification", "NotificationType",
    "Capabilities",
    "Buffer", "MemInfo",
    "Stream", "Completion", "StreamState", "TaskInfo", "make_task",
    "task_array", "TASK_DTYPE", "Graph", "WaitMode", "set_wait_mode",
    "wait_mode",
    "Event",
    "EventState", "DeviceTensor", "ops", "device_count", "backend",
    "find_backend", "fuse_default_mountpoint", "Backend",
    "DavinciError", "DeviceNotFoundError", "InvalidDeviceError",
    "DriverVersionMismatchError", "OutOfMemoryError", "InvalidHandleError",
    "InvalidArgumentError", "BusyError", "DeviceLostError", "TaskFailedError",
    "TimeoutError", "ShapeError", "DTypeError", "LimitError",
    "ContextLimitError", "QueueFullError", "DevicePermissionError",
    "float32", "float16", "bfloat16", "int32", "ABI_VERSION",
]

# DAVINCI_TRACE=FILE traces this process (davinci.trace.env).
from .trace.env import start_from_environment as _trace_from_environment
_trace_from_environment()
