# SPDX-License-Identifier: GPL-2.0
"""acl.prof: pyACL's profiling calls, writing a Perfetto trace.

    ret = acl.prof.init("/tmp/prof")
    config = acl.prof.create_config([0], acl.prof.ACL_AICORE_NONE, 0,
                                    acl.prof.ACL_PROF_ACL_API |
                                    acl.prof.ACL_PROF_TASK_TIME)
    ret = acl.prof.start(config)
    ...                                 # the work to profile
    ret = acl.prof.stop(config)     # writes /tmp/prof/davinci_<pid>_1.pftrace
    ret = acl.prof.destroy_config(config)
    ret = acl.prof.finalize()

ACL_PROF_TASK_TIME (or AICORE_METRICS) collects the devices' task records,
ACL_PROF_ACL_API (or RUNTIME_API) the host spans of acl and runtime calls.
Other data types and AI-core metrics are accepted and have nothing to
collect here. The trace is the one ``davinci trace`` writes: open it in
ui.perfetto.dev or summarise it with ``davinci trace-summary``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from . import _state as _S
from . import constants as C
from ._state import AclFail, api

__all__ = ["init", "finalize", "create_config", "destroy_config", "start",
           "stop"]

# aclprofDataTypeConfig bits (acl_prof.h)
ACL_PROF_ACL_API = 0x0001
ACL_PROF_TASK_TIME = 0x0002
ACL_PROF_AICORE_METRICS = 0x0004
ACL_PROF_AICPU = 0x0008
ACL_PROF_L2CACHE = 0x0010
ACL_PROF_HCCL_TRACE = 0x0020
ACL_PROF_TRAINING_TRACE = 0x0040
ACL_PROF_MSPROFTX = 0x0080
ACL_PROF_RUNTIME_API = 0x0100
_ALL_TYPES = 0x01FF

# aclprofAicoreMetrics
ACL_AICORE_ARITHMETIC_UTILIZATION = 0
ACL_AICORE_PIPE_UTILIZATION = 1
ACL_AICORE_MEMORY_BANDWIDTH = 2
ACL_AICORE_L0B_AND_WIDTH = 3
ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4
ACL_AICORE_MEMORY_UB = 5
ACL_AICORE_NONE = 0xFF
_METRICS = (0, 1, 2, 3, 4, 5, 0xFF)


@dataclass
class _Config:
    devices: list[int]
    data_types: int
    session: object | None = None


class _Prof:
    path: str | None = None
    configs: dict[int, _Config] = {}
    written = 0


@api()
def init(profiler_path: str):
    """Set the directory traces are written to (it must exist and be
    writable)."""
    if _Prof.path is not None:
        raise AclFail(C.ACL_ERROR_REPEAT_INITIALIZE,
                      "acl.prof.init was already called: call "
                      "acl.prof.finalize first")
    if not isinstance(profiler_path, str) or not profiler_path or \
            not os.path.isdir(profiler_path) or \
            not os.access(profiler_path, os.W_OK):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "profiler_path %r is not a writable directory: create "
                      "it first" % (profiler_path,))
    _Prof.path = profiler_path


@api()
def finalize():
    """End profiling; stops what still runs (writing its trace)."""
    if _Prof.path is None:
        raise AclFail(C.ACL_ERROR_UNINITIALIZE,
                      "acl.prof.finalize without acl.prof.init")
    for cfg in _Prof.configs.values():
        if cfg.session is not None:
            _write(cfg)
    _Prof.path = None


def create_config(device_id_list, aicore_metrics, aicore_events,
                  data_type_config) -> int:
    """prof_config: a profiling configuration (0 when invalid)."""
    where = "acl.prof.create_config"
    try:
        devices = [int(d) for d in device_id_list]
        metrics, types = int(aicore_metrics), int(data_type_config)
    except (TypeError, ValueError):
        _S.record_error(C.ACL_ERROR_INVALID_PARAM, "device_id_list must be "
                        "a list of ints and the metrics and data types ints",
                        where)
        return 0
    if not devices or metrics not in _METRICS or types & ~_ALL_TYPES:
        _S.record_error(C.ACL_ERROR_INVALID_PARAM,
                        "need at least one device, an ACL_AICORE_* metric and "
                        "ACL_PROF_* data types (got %r, %r, %#x)"
                        % (devices, metrics, types), where)
        return 0
    h = _S.new_handle()
    _Prof.configs[h] = _Config(devices, types)
    return h


def _config(h) -> _Config:
    cfg = _Prof.configs.get(h)
    if cfg is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%r is not a config of acl.prof.create_config" % (h,))
    return cfg


@api()
def destroy_config(profiler_config):
    cfg = _config(profiler_config)
    if cfg.session is not None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "the config is still "
                      "started: call acl.prof.stop first")
    del _Prof.configs[profiler_config]


@api()
def start(profiler_config):
    """Start collecting what the config names."""
    from davinci.trace import TraceSession
    if _Prof.path is None:
        raise AclFail(C.ACL_ERROR_UNINITIALIZE,
                      "acl.prof.start without acl.prof.init")
    cfg = _config(profiler_config)
    if cfg.session is not None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "the config is already started")
    device_data = cfg.data_types & (ACL_PROF_TASK_TIME |
                                    ACL_PROF_AICORE_METRICS)
    host_data = cfg.data_types & (ACL_PROF_ACL_API | ACL_PROF_RUNTIME_API)
    session = TraceSession(cfg.devices if device_data else [],
                           spans=bool(host_data))
    session.start()
    cfg.session = session


def _write(cfg: _Config) -> str:
    from davinci.trace import write_trace
    data = cfg.session.stop()
    cfg.session = None
    _Prof.written += 1
    path = os.path.join(_Prof.path, "davinci_%d_%d.pftrace"
                        % (os.getpid(), _Prof.written))
    try:
        write_trace(data, path)
    except OSError as exc:
        raise AclFail(C.ACL_ERROR_WRITE_FILE,
                      "cannot write %s: %s" % (path, exc)) from None
    return path


@api()
def stop(profiler_config):
    """Stop collecting and write the trace to the init directory."""
    cfg = _config(profiler_config)
    if cfg.session is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "acl.prof.stop of a config not started")
    _write(cfg)
