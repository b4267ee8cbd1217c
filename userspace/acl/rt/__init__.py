# SPDX-License-Identifier: GPL-2.0
"""acl.rt: pyACL's runtime API (devices, contexts, streams, memory, events).

Conventions exactly as pyACL: each function returns ``ret`` or
``(value..., ret)`` where ``ret`` is an aclError code (0 on success).
Pointers are ints: device pointers are device virtual addresses, host
pointers are process addresses.

Host-to-device ``memcpy`` copies with one ``memmove`` from the host pointer
straight into the mapped destination buffer (zero-copy mapping);
device-to-host the other way round; device-to-device is a MEMCPY task on the
device. ``memcpy_async`` uses device MEMCPY tasks: directly when the host
side is pinned memory from ``malloc_host``, else through a pinned staging
buffer (device-to-host results reach the host pointer when the stream is
synchronized).

One module a subject, all of their calls here under their pyACL names:
``device`` (set_device, reset_device, ...), ``context``, ``stream``,
``memory`` (malloc, memcpy, memset, ...), ``event``, ``callback``
(subscribe_report / launch_callback / process_report) and ``task`` (the
seed article's launch_task / register_interrupt_callback /
launch_task_with_interrupt).
"""

from __future__ import annotations

from . import callback, context, device, event, memory, stream, task
from .callback import *  # noqa: F401,F403
from .context import *  # noqa: F401,F403
from .device import *  # noqa: F401,F403
from .event import *  # noqa: F401,F403
from .memory import *  # noqa: F401,F403
from .stream import *  # noqa: F401,F403
from .task import *  # noqa: F401,F403
from .task import RT_INTERRUPT_TASK_DONE, RT_INTERRUPT_TASK_FAULT

__all__ = (device.__all__ + context.__all__ + stream.__all__ + memory.__all__
           + event.__all__ + callback.__all__ + task.__all__)
