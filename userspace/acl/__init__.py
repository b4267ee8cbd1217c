# SPDX-License-Identifier: GPL-2.0
"""acl: a pyACL-compatible API over the davinci runtime.

    import acl
    ret = acl.init()
    ret = acl.rt.set_device(0)
    ptr, ret = acl.rt.malloc(1024, acl.ACL_MEM_MALLOC_HUGE_FIRST)

Every function returns ``ret`` (an aclError code, 0 on success) or
``(value..., ret)``; as in pyACL, constructors of descriptions
(``acl.create_tensor_desc``, ``acl.create_data_buffer``,
``acl.op.create_attr``) return the handle alone and plain getters the value
alone.

Modules: ``acl.rt`` (devices, contexts, streams, memory, events, callbacks:
subscribe_report / launch_callback / process_report, and the seed article's
launch_task / register_interrupt_callback / launch_task_with_interrupt),
``acl.op`` (single-operator execution: execute_v2), ``acl.mdl`` (offline
models from davinci-atc: load, describe, execute), ``acl.util`` (pointers,
start_thread / stop_thread), ``acl.media`` (dvpp_malloc / dvpp_free).

Failures are logged on the "acl" logger and the last message is returned by
:func:`get_recent_err_msg`.
"""

from __future__ import annotations

import json
import os

from . import constants
from .constants import *  # noqa: F401,F403
from . import _state as _S
from ._state import AclFail, api
from . import rt, util, op, media, prof
from . import mdl
from ._system import app_log, get_soc_name
from ._desc import *  # noqa: F401,F403
from . import _desc

__all__ = ["init", "finalize", "get_recent_err_msg", "get_device_count",
           "rt", "util", "op", "media", "prof", "mdl",
           "constants", "app_log", "get_soc_name"] + list(_desc.__all__)


@api()
def init(config_path: str = ""):
    """Initialise ACL. Checks the driver's ABI version when a driver is
    present ("driver version mismatch" otherwise); a missing driver is
    reported later by acl.rt.set_device."""
    if _S.initialized:
        raise AclFail(constants.ACL_ERROR_REPEAT_INITIALIZE,
                      "acl.init was already called: call acl.finalize first")
    if config_path:
        if not os.path.isfile(config_path):
            raise AclFail(constants.ACL_ERROR_INVALID_FILE,
                          "config file %s does not exist" % config_path)
        try:
            with open(config_path) as f:
                text = f.read()
            if text.strip():
                json.loads(text)
        except (OSError, ValueError) as exc:
            raise AclFail(constants.ACL_ERROR_PARSE_FILE,
                          "cannot parse %s: %s" % (config_path, exc)) from None
    import davinci
    from davinci import discovery
    try:
        backend = discovery.find_backend()
    except davinci.DeviceNotFoundError:
        backend = None      # reported by acl.rt.set_device
    if backend is not None:
        try:
            ver = discovery.manager_version(backend)
        except davinci.DriverVersionMismatchError:
            raise
        except davinci.DavinciError:
            ver = None
        if ver is not None:
            discovery.check_version(ver, "the davinci driver")
        elif backend.device_count():
            # no manager answer: ask the first device (checks the version)
            davinci.Device(backend.device_indices()[0], backend).close()
    _S.initialized = True


@api()
def finalize():
    """Release every device still set and finish ACL."""
    for d in list(_S.devices.values()):
        _S.release_device(d)
    rt.callback.reset()
    _S.set_current_context(None)
    _S.initialized = False


def get_recent_err_msg() -> str:
    """The message of the last failed call in this thread, then ''."""
    return _S.recent_error()


@api(1, (0,))
def get_device_count():
    """(count, ret): the seed article's top-level spelling of
    acl.rt.get_device_count."""
    return rt.device.device_count()
