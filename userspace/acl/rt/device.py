# SPDX-License-Identifier: GPL-2.0
"""acl.rt devices: set_device, reset_device, get_device, get_device_count,
get_run_mode, synchronize_device."""

from __future__ import annotations

import davinci

from .. import _state as S
from .. import constants as C
from .._state import AclFail, api

__all__ = ["set_device", "reset_device", "get_device", "get_device_count",
           "synchronize_device", "get_run_mode"]


def device_count() -> int:
    """Number of devices of the backend discovery finds."""
    return davinci.find_backend().device_count()


@api(1, (0,))
def get_device_count():
    """(count, ret)"""
    return device_count()


def check_id(device_id) -> int:
    """``device_id``, refused (ACL_ERROR_RT_INVALID_DEVICEID) unless an int."""
    if not isinstance(device_id, int) or isinstance(device_id, bool):
        raise AclFail(C.ACL_ERROR_RT_INVALID_DEVICEID,
                      "device id must be an int, not %r" % (device_id,))
    return device_id


def open_device(device_id: int) -> S.AclDevice:
    """Device ``device_id`` with one more reference: opened, with its
    default context, by the first reference."""
    d = S.devices.get(device_id)
    if d is None:
        d = S.AclDevice(device_id, davinci.Device(device_id))
        d.default_ctx = S.AclContext(d, default=True)
        S.contexts[d.default_ctx.handle] = d.default_ctx
        S.devices[device_id] = d
    d.refs += 1
    return d


@api()
def set_device(device_id):
    """Open device ``device_id`` (reference counted) and make its default
    context current in this thread."""
    d = open_device(check_id(device_id))
    S.set_current_context(d.default_ctx)


@api()
def reset_device(device_id):
    """Release ``device_id``; the last release frees everything on it."""
    check_id(device_id)
    d = S.devices.get(device_id)
    if d is None:
        raise AclFail(C.ACL_ERROR_RT_INVALID_DEVICEID,
                      "device %d was not set in this process: call "
                      "acl.rt.set_device(%d) first" % (device_id, device_id))
    d.refs -= 1
    if d.refs <= 0:
        cur = S.current_context()
        S.release_device(d)
        if cur is not None and cur.device is d:
            S.set_current_context(None)


@api(1, (-1,))
def get_device():
    """(device_id, ret) of the current context."""
    return S.require_context().device.id


@api(1, (C.ACL_HOST,))
def get_run_mode():
    """(ACL_HOST, ret): the runtime always runs on the host."""
    return C.ACL_HOST


@api(locked=False)
def synchronize_device():
    """Wait for every stream of the current device."""
    with S.lock:
        d = S.require_context().device
    d.dev.synchronize()
