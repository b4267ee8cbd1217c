# SPDX-License-Identifier: GPL-2.0
"""Top-level system calls of pyACL: get_soc_name, app_log, and the last
error of the thread (acl.rt.peek_at_last_error / get_last_error)."""

from __future__ import annotations

import logging

import davinci

from . import _state as S
from . import constants as C

__all__ = ["get_soc_name", "app_log"]

_app_log = logging.getLogger("acl.app")
_LEVELS = {C.ACL_DEBUG: logging.DEBUG, C.ACL_INFO: logging.INFO,
           C.ACL_WARNING: logging.WARNING, C.ACL_ERROR: logging.ERROR}


def get_soc_name() -> str:
    """The SoC name of the current device (of device 0 before set_device),
    "" when there is no device."""
    ctx = S.current_context()
    if ctx is not None:
        return ctx.device.dev.info.name
    try:
        with davinci.Device(0) as d:
            return d.info.name
    except davinci.DavinciError:
        return ""


def app_log(log_level, message) -> None:
    """Write ``message`` to the application log (the "acl.app" logger) at
    ``log_level`` (ACL_DEBUG, ACL_INFO, ACL_WARNING, ACL_ERROR)."""
    S.check_args_of("acl.app_log", (("log_level", log_level),
                                    ("message", message)))
    _app_log.log(_LEVELS.get(log_level, logging.ERROR), "%s", message)
