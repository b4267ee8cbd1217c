# SPDX-License-Identifier: GPL-2.0
"""acl.rt devices: set_device, reset_device, get_device, get_device_count,
get_run_mode, synchronize_device."""

from __future__ import annotations

import davinci

from davinci.manager import HEALTH_CRITICAL, Manager

from .. import _state as S
from .. import constants as C
from .._state import AclFail, api

__all__ = ["set_device", "reset_device", "reset_device_force", "get_device",
           "get_device_count", "synchronize_device",
           "synchronize_device_with_timeout", "get_run_mode",
           "query_device_status", "get_device_utilization_rate",
           "peek_at_last_error", "get_last_error"]


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
        _release(d)


def _release(d: S.AclDevice) -> None:
    cur = S.current_context()
    S.release_device(d)
    if cur is not None and cur.device is d:
        S.set_current_context(None)


@api()
def reset_device_force(device_id):
    """Release ``device_id`` whatever its set_device count: everything on
    it is freed."""
    check_id(device_id)
    d = S.devices.get(device_id)
    if d is None:
        raise AclFail(C.ACL_ERROR_RT_INVALID_DEVICEID,
                      "device %d was not set in this process" % device_id)
    d.refs = 0
    _release(d)


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


@api(locked=False)
def synchronize_device_with_timeout(timeout):
    """As synchronize_device; ``timeout`` in ms (-1: forever);
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when it runs out."""
    with S.lock:
        d = S.require_context().device
    try:
        d.dev.synchronize(None if timeout < 0 else timeout / 1000.0)
    except davinci.TimeoutError as exc:
        raise AclFail(C.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, str(exc)) from None


def _mgmt(device_id):
    check_id(device_id)
    m = Manager()
    try:
        if device_id not in m.devices():
            raise AclFail(C.ACL_ERROR_RT_INVALID_DEVICEID,
                          "there is no device %d" % device_id)
        return m.info(device_id)
    finally:
        m.close()


@api(1, (C.ACL_RT_DEVICE_STATUS_ABNORMAL,))
def query_device_status(device_id):
    """(status, ret): ACL_RT_DEVICE_STATUS_NORMAL unless the device's
    health is critical (lost, or failed until reset)."""
    info = _mgmt(device_id)
    return (C.ACL_RT_DEVICE_STATUS_ABNORMAL
            if info.health >= HEALTH_CRITICAL
            else C.ACL_RT_DEVICE_STATUS_NORMAL)


@api(1, ({},))
def get_device_utilization_rate(device_id):
    """(utilization, ret): {"cubeUtilization", "vectorUtilization",
    "aicpuUtilization", "memoryUtilization", "utilizationExtend"} in
    percent; the AI cores' busy share is both cube and vector, there is no
    AI CPU (-1)."""
    info = _mgmt(device_id)
    mem = 100 * info.hbm_used // info.hbm_total if info.hbm_total else 0
    return {"cubeUtilization": info.aicore_util,
            "vectorUtilization": info.aicore_util,
            "aicpuUtilization": -1, "memoryUtilization": mem,
            "utilizationExtend": 0}


def peek_at_last_error(level=C.ACL_RT_THREAD_LEVEL):
    """ret of this thread's last failed acl call (0: none); kept."""
    S.check_args_of("acl.rt.peek_at_last_error", (("level", level),))
    return S.last_error(clear=False)


def get_last_error(level=C.ACL_RT_THREAD_LEVEL):
    """ret of this thread's last failed acl call (0: none), then
    forgotten."""
    S.check_args_of("acl.rt.get_last_error", (("level", level),))
    return S.last_error(clear=True)
