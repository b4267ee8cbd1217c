# SPDX-License-Identifier: GPL-2.0
"""Device management over the manager node (``davinci_manager``).

What ``npu-smi`` shows and does, as a Python API::

    from davinci.manager import Manager
    with Manager() as m:
        for i in m.devices():
            info = m.info(i)
            print(i, info.name, info.health_name, info.power_w, info.temp_c)
            for p in m.processes(i):
                print("  ", p.pid, p.name, p.hbm_bytes)
        m.inject(0, "ecc", addr=buf.dev_addr, size=4096)   # privileged
        m.reset(0)                                          # privileged
        for ev in m.events(since=0):                        # the log
            print(ev.describe())
        with m.subscribe() as sub:      # live: netlink on the kernel module
            for ev in sub.follow(timeout=10):
                print(ev.describe())

Backends: the kernel module's ``/dev/davinci_manager``, the FUSE daemon's
``<mountpoint>/davinci_manager`` or, with ``DAVINCI_BACKEND=inproc``, the
in-process core (whose devices are created on first use, as device opens do).

Privilege: reset and fault injection need CAP_SYS_ADMIN on the kernel
module, the daemon's owner on FUSE; the in-process backend treats its own
process as privileged unless ``Manager(privileged=False)``. Refused calls
raise :class:`ManagerPermissionError` (EPERM).
"""

from __future__ import annotations

import errno as _errno
import time
from dataclasses import asdict, dataclass, field

from . import _uapi
from .discovery import Backend, find_backend
from .errors import DavinciError, InvalidArgumentError, InvalidDeviceError, \
    from_errno
from .transport import DeviceNodeTransport

__all__ = ["Manager", "MgmtInfo", "DispatcherStats", "ProcessInfo",
           "MgmtEvent", "ManagerPermissionError", "HEALTH_NAMES",
           "HEALTH_CRITICAL",
           "FAULT_KINDS", "EVENT_NAMES", "process_name"]

#: Health code -> the word npu-smi prints.
HEALTH_NAMES = {
    _uapi.DAVINCI_HEALTH_OK: "OK",
    _uapi.DAVINCI_HEALTH_WARNING: "Warning",
    _uapi.DAVINCI_HEALTH_ALARM: "Alarm",
    _uapi.DAVINCI_HEALTH_CRITICAL: "Critical",
}

#: The health of a device lost, or failed until it is reset (the worst).
HEALTH_CRITICAL = _uapi.DAVINCI_HEALTH_CRITICAL

#: Fault name -> DAVINCI_FAULT_*.
FAULT_KINDS = {
    "ecc": _uapi.DAVINCI_FAULT_ECC,
    "hang": _uapi.DAVINCI_FAULT_HANG,
    "lost": _uapi.DAVINCI_FAULT_LOST,
    "throttle": _uapi.DAVINCI_FAULT_THROTTLE,
}
_FAULT_NAMES = {v: k for k, v in FAULT_KINDS.items()}

#: DAVINCI_MGMT_EV_* -> name.
EVENT_NAMES = {
    _uapi.DAVINCI_MGMT_EV_ADD: "add",
    _uapi.DAVINCI_MGMT_EV_REMOVE: "remove",
    _uapi.DAVINCI_MGMT_EV_HEALTH: "health",
    _uapi.DAVINCI_MGMT_EV_FAULT_INJECTED: "fault-injected",
    _uapi.DAVINCI_MGMT_EV_FAULT: "fault",
    _uapi.DAVINCI_MGMT_EV_RESET: "reset",
    _uapi.DAVINCI_MGMT_EV_LOST: "lost",
}


class ManagerPermissionError(DavinciError, PermissionError):
    """Reset or fault injection by an unprivileged caller (EPERM)."""


def health_name(h: int) -> str:
    return HEALTH_NAMES.get(h, "Unknown(%d)" % h)


def process_name(pid: int) -> str:
    """``/proc/<pid>/comm``, or "-" when the process is gone or hidden."""
    try:
        with open("/proc/%d/comm" % pid, encoding="utf-8",
                  errors="replace") as f:
            return f.read().strip() or "-"
    except OSError:
        return "-"


class _Record:
    """Base of the records below: to_dict() gives the fields as a dict (for
    JSON)."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class DispatcherStats(_Record):
    """How the device's dispatcher, which polls the rings of polled
    streams, went to sleep (struct davinci_mgmt_info's dispatch_* fields,
    as KVM's halt-poll statistics): ``sleeps`` it took, of them the
    ``cpu_wanted`` ones begun early because another thread wanted its CPU,
    the doorbells (``kicks``) that woke it, how often its idle time grew
    and shrank, and that idle time now."""
    sleeps: int
    cpu_wanted: int
    kicks: int
    grows: int
    shrinks: int
    idle_ns: int

    @classmethod
    def from_struct(cls, m: _uapi.davinci_mgmt_info) -> "DispatcherStats":
        return cls(m.dispatch_sleeps, m.dispatch_cpu_wanted,
                   m.dispatch_kicks, m.dispatch_grows, m.dispatch_shrinks,
                   m.dispatch_idle_ns)


@dataclass
class MgmtInfo(_Record):
    """One device as the manager reports it (struct davinci_mgmt_info)."""
    index: int
    name: str
    serial: str
    board_name: str
    board_id: int
    firmware_version: str
    driver_version: str
    bus_id: str
    health: int
    health_name: str
    aicores: int
    aicore_util: int
    power_w: float
    temp_c: float
    hbm_total: int
    hbm_used: int
    host_total: int
    host_used: int
    huge_total: int
    huge_used: int
    processes: int
    task_timeout_ms: int
    throttle_pct: int
    faults_armed: list = field(default_factory=list)
    faults_fired: dict = field(default_factory=dict)
    resets: int = 0
    tasks_completed: int = 0
    busy_ns: int = 0
    #: None from a driver without DAVINCI_FEAT_DISPATCH_STATS (ABI < 1.5)
    dispatcher: "DispatcherStats | None" = None

    @classmethod
    def from_struct(cls, m: _uapi.davinci_mgmt_info,
                    dispatch_stats: bool = True) -> "MgmtInfo":
        return cls(
            index=m.index, name=_uapi.cstr(m.name),
            serial=_uapi.cstr(m.serial),
            board_name=_uapi.cstr(m.board_name), board_id=m.board_id,
            firmware_version=_uapi.cstr(m.firmware_version),
            driver_version=_uapi.cstr(m.driver_version),
            bus_id=_uapi.cstr(m.bus_id), health=m.health,
            health_name=health_name(m.health), aicores=m.aicores,
            aicore_util=m.aicore_util, power_w=m.power_mw / 1000.0,
            temp_c=m.temp_mc / 1000.0, hbm_total=m.hbm_total,
            hbm_used=m.hbm_used, host_total=m.host_total,
            host_used=m.host_used, huge_total=m.huge_total,
            huge_used=m.huge_used, processes=m.processes,
            task_timeout_ms=m.task_timeout_ms, throttle_pct=m.throttle_pct,
            faults_armed=[n for n, k in FAULT_KINDS.items()
                          if m.fault_armed & (1 << k)],
            faults_fired={n: m.faults_fired[k]
                          for n, k in FAULT_KINDS.items()},
            resets=m.resets, tasks_completed=m.tasks_completed,
            busy_ns=m.busy_ns,
            dispatcher=DispatcherStats.from_struct(m) if dispatch_stats
            else None)

    @property
    def hbm_free(self) -> int:
        return self.hbm_total - self.hbm_used


@dataclass
class ProcessInfo(_Record):
    """One context (open file) on a device."""
    device: int
    pid: int
    name: str
    hbm_bytes: int
    host_bytes: int
    streams: int


@dataclass
class MgmtEvent(_Record):
    """One record of the management event log."""
    seq: int
    timestamp_ns: int
    device: int
    type: str
    fault: str
    status: str
    health: str
    old_health: str
    addr: int
    value: int

    @classmethod
    def from_fields(cls, seq: int, timestamp_ns: int, device: int, type: int,
                    fault: int, status: int, health: int, old_health: int,
                    addr: int, value: int) -> "MgmtEvent":
        """From the numbers of struct davinci_mgmt_event (or the netlink
        attributes that carry them)."""
        return cls(
            seq=seq, timestamp_ns=timestamp_ns, device=device,
            type=EVENT_NAMES.get(type, "type%d" % type),
            fault=_FAULT_NAMES.get(fault, "") if fault else "",
            status=_uapi.STATUS_NAMES.get(status, str(status))
            if status else "",
            health=health_name(health), old_health=health_name(old_health),
            addr=addr, value=value)

    @classmethod
    def from_struct(cls, e: _uapi.davinci_mgmt_event) -> "MgmtEvent":
        return cls.from_fields(e.seq, e.timestamp_ns, e.device, e.type,
                               e.fault, e.status, e.health, e.old_health,
                               e.addr, e.value)

    def describe(self) -> str:
        """One human-readable line, as ``npu-smi events`` prints it."""
        what = {
            "add": "device added",
            "remove": "device removed",
            "health": "health %s -> %s" % (self.old_health, self.health),
            "reset": "reset: %d context(s) failed" % self.value,
            "lost": "device lost",
        }.get(self.type)
        if self.type == "fault-injected":
            what = "fault injected: %s" % self.fault
            if self.fault == "ecc":
                what += " at %#x size %s" % (
                    self.addr, self.value or "all of HBM")
            elif self.fault == "hang" and self.value:
                what += " (watchdog %d ms)" % self.value
            elif self.fault == "throttle":
                what += " %d%%" % self.value if self.value else " off"
        elif self.type == "fault":
            what = "fault fired: %s, task status %s" % (self.fault,
                                                       self.status)
            if self.fault == "ecc":
                what += " at %#x" % self.addr
        if what is None:
            what = self.type
        return "seq %d npu %d %s (health %s)" % (self.seq, self.device, what,
                                                self.health)


class Manager:
    """The manager node of the discovered backend.

    Raises :class:`davinci.DeviceNotFoundError` (with both ways to start a
    driver) when there is none.
    """

    def __init__(self, backend: Backend | None = None,
                 privileged: bool = True):
        self.backend = backend or find_backend()
        self._t = None
        self._privileged = privileged
        self._features: int | None = None
        if self.backend.kind == "inproc":
            from .inproc import inproc_core_device, inproc_device_count
            for i in range(inproc_device_count()):
                inproc_core_device(i)
            self.description = "in-process manager"
        else:
            self._t = DeviceNodeTransport(self.backend.manager_path())
            self.description = self.backend.manager_path()

    # --- plumbing ---------------------------------------------------------
    def _ioctl(self, cmd: int, arg, what: str):
        if self._t is None:
            from . import _corelib
            ret = _corelib.manager_ioctl(cmd, arg, self._privileged)
        else:
            ret = self._t.try_ioctl(cmd, arg)
            ret = -ret if ret else 0
        if ret < 0:
            raise self._error(-ret, cmd, what)
        return arg

    def _error(self, err: int, cmd: int, what: str) -> DavinciError:
        name = _uapi.IOCTL_NAMES.get(cmd, hex(cmd))
        where = "%s (DAVINCI_IOCTL_%s on %s)" % (what, name,
                                                  self.description)
        if err == _errno.EPERM:
            return ManagerPermissionError(
                "%s: operation not permitted: device reset and fault "
                "injection need root (CAP_SYS_ADMIN) on the kernel module, "
                "or to be the user who runs davinci-fused" % where, err)
        if err == _errno.ENOTTY:
            return DavinciError(
                "%s: the driver does not support management requests (ABI "
                "< 1.1); update the davinci driver" % where, err)
        return from_errno(err, where)

    def close(self) -> None:
        if self._t is not None:
            self._t.close()
            self._t = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- queries ------------------------------------------------------------
    def version(self) -> _uapi.davinci_version:
        """DAVINCI_IOCTL_GET_VERSION of the manager."""
        return self._ioctl(_uapi.DAVINCI_IOCTL_GET_VERSION,
                           _uapi.davinci_version(), "driver version")

    def devices(self) -> "list[int]":
        """Indices of the live devices, ascending."""
        lst = self._ioctl(_uapi.DAVINCI_IOCTL_MGMT_LIST,
                          _uapi.davinci_mgmt_list(), "device list")
        n = min(lst.count, _uapi.DAVINCI_MGMT_MAX_DEVICES)
        return [int(lst.index[i]) for i in range(n)]

    def _check_index(self, index: int, err: DavinciError):
        if err.errno == _errno.ENODEV and not isinstance(err,
                                                         InvalidDeviceError):
            try:
                devs = self.devices()
            except DavinciError:
                return err
            if index not in devs:
                return InvalidDeviceError(
                    "NPU %d does not exist (devices: %s)"
                    % (index, ", ".join(map(str, devs)) or "none"),
                    _errno.ENODEV)
        return err

    def _device_ioctl(self, index: int, cmd: int, arg, what: str):
        """_ioctl on NPU ``index``: InvalidDeviceError when it does not
        exist."""
        try:
            return self._ioctl(cmd, arg, what)
        except DavinciError as e:
            raise self._check_index(index, e) from None

    def features(self) -> int:
        """The driver's DAVINCI_FEAT_* bits (asked once)."""
        if self._features is None:
            self._features = int(self.version().features)
        return self._features

    def info(self, index: int) -> MgmtInfo:
        """Management information of NPU ``index``."""
        m = _uapi.davinci_mgmt_info(index=index)
        self._device_ioctl(index, _uapi.DAVINCI_IOCTL_MGMT_INFO, m,
                           "information of NPU %d" % index)
        return MgmtInfo.from_struct(m, bool(
            self.features() & _uapi.DAVINCI_FEAT_DISPATCH_STATS))

    def processes(self, index: int) -> "list[ProcessInfo]":
        """Contexts open on NPU ``index``: pid, process name, memory."""
        p = _uapi.davinci_mgmt_procs(index=index)
        self._device_ioctl(index, _uapi.DAVINCI_IOCTL_MGMT_PROCS, p,
                           "processes of NPU %d" % index)
        out = []
        for i in range(min(p.count, _uapi.DAVINCI_MGMT_MAX_PROCS)):
            e = p.proc[i]
            out.append(ProcessInfo(index, int(e.pid), process_name(e.pid),
                                   int(e.hbm_bytes), int(e.host_bytes),
                                   int(e.streams)))
        return out

    # --- actions --------------------------------------------------------------
    def reset(self, index: int) -> int:
        """Reset NPU ``index`` (privileged): every open context fails with
        device lost and must reopen; faults are cleared, health is OK.
        Returns the number of contexts failed."""
        r = _uapi.davinci_mgmt_reset(index=index)
        self._device_ioctl(index, _uapi.DAVINCI_IOCTL_MGMT_RESET, r,
                           "reset of NPU %d" % index)
        return int(r.contexts)

    def inject(self, index: int, kind: str, addr: int = 0, size: int = 0,
               level: int = 0, timeout_ms: int = 0) -> None:
        """Inject a fault into NPU ``index`` (privileged).

        kind: "ecc" (the next task touching ``[addr, addr+size)``, or any
        HBM when size is 0, fails with ECC_ERROR; health Alarm), "hang" (the
        next AI-core task hangs until the watchdog, or ``timeout_ms``, fails
        it with TIMEOUT; health Alarm), "lost" (every context sees device
        lost; health Critical until reset), "throttle" (tasks take
        ``level`` percent longer, 1..1000; 0 ends it; health Warning).
        """
        k = FAULT_KINDS.get(kind)
        if k is None:
            raise InvalidArgumentError(
                "unknown fault %r: use one of %s"
                % (kind, ", ".join(sorted(FAULT_KINDS))))
        f = _uapi.davinci_mgmt_fault(index=index, kind=k, addr=addr,
                                     size=size, level=level,
                                     timeout_ms=timeout_ms)
        self._device_ioctl(index, _uapi.DAVINCI_IOCTL_MGMT_INJECT, f,
                           "%s fault injection into NPU %d" % (kind, index))

    # --- events ------------------------------------------------------------
    def read_events(self, since: int = 0, device: int | None = None):
        """One DAVINCI_IOCTL_MGMT_EVENTS call: (events, next_seq,
        overflow)."""
        e = _uapi.davinci_mgmt_events(
            since_seq=since,
            device=_uapi.DAVINCI_MGMT_ALL_DEVICES if device is None
            else device)
        self._ioctl(_uapi.DAVINCI_IOCTL_MGMT_EVENTS, e, "event log")
        evs = [MgmtEvent.from_struct(e.ev[i])
               for i in range(min(e.count, _uapi.DAVINCI_MGMT_MAX_EVENTS))]
        return evs, int(e.next_seq), bool(e.overflow)

    def events(self, since: int = 0,
               device: int | None = None) -> "list[MgmtEvent]":
        """Every logged event after sequence number ``since``, oldest
        first (each device keeps its last 64)."""
        out = []
        while True:
            evs, nxt, _ = self.read_events(since, device)
            if not evs:
                return out
            out.extend(evs)
            since = nxt

    def last_seq(self) -> int:
        """Sequence number of the latest event (0 when none)."""
        evs = self.events(0)
        return evs[-1].seq if evs else 0

    def is_kernel_module(self) -> bool:
        """True when the driver behind the manager is davinci.ko."""
        return self._t is not None and \
            _uapi.cstr(self.version().backend) == "kmod"

    def subscribe(self, device: int | None = None, source: str = "auto",
                  interval: float = 0.2):
        """Start receiving events; returns a subscription with
        ``follow(timeout, count)``, ``close()`` and ``source``.

        source: "netlink" (the kernel module's multicast group, read with
        pyroute2), "log" (polls the manager's event log every ``interval``
        s: FUSE and in-process) or "auto" (netlink on the kernel module
        when pyroute2 is installed, else the log)."""
        if source not in ("auto", "netlink", "log"):
            raise InvalidArgumentError(
                "event source %r: use auto, netlink or log" % source)
        if source == "netlink" or (source == "auto" and
                                   self.is_kernel_module()):
            from . import netlink
            if source == "netlink" or netlink.available():
                return _NetlinkSubscription(netlink.DavinciNetlink(), device)
        return _LogSubscription(self, device, interval)

    def follow(self, since: int | None = None, device: int | None = None,
               timeout: float | None = None, count: int | None = None,
               interval: float = 0.2, source: str = "auto"):
        """Yield events as they happen, until ``count`` events or
        ``timeout`` seconds. With ``since``, first the logged events after
        that sequence number; nothing is lost or repeated between the two
        because the subscription starts before the log is read."""
        end = None if timeout is None else time.monotonic() + timeout
        n = 0
        last = 0
        with self.subscribe(device, source, interval) as sub:
            replay = self.events(since, device) if since is not None else []
            for ev in replay:
                yield ev
                last = ev.seq
                n += 1
                if count is not None and n >= count:
                    return
            while count is None or n < count:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return
                for ev in sub.follow(timeout=left, count=None if count is None
                                     else count - n):
                    if ev.seq <= last:
                        continue
                    yield ev
                    last = ev.seq
                    n += 1


class _Subscription:
    """What Manager.subscribe() returns: follow(timeout, count), close()."""
    source = ""

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _LogSubscription(_Subscription):
    """Events by polling DAVINCI_IOCTL_MGMT_EVENTS from the current end of
    the log."""
    source = "log"

    def __init__(self, mgr: Manager, device: int | None, interval: float):
        self._mgr = mgr
        self._device = device
        self._interval = interval
        self._since = mgr.last_seq()

    def follow(self, timeout: float | None = None, count: int | None = None):
        end = None if timeout is None else time.monotonic() + timeout
        n = 0
        while True:
            evs, _, _ = self._mgr.read_events(self._since, self._device)
            for ev in evs:
                self._since = ev.seq
                yield ev
                n += 1
                if count is not None and n >= count:
                    return
            if evs:
                continue
            if end is not None and time.monotonic() >= end:
                return
            time.sleep(self._interval)


class _NetlinkSubscription(_Subscription):
    """Events from the kernel module's netlink multicast group."""
    source = "netlink"

    def __init__(self, nl, device: int | None):
        self._nl = nl
        self._device = device
        nl.subscribe()

    def follow(self, timeout: float | None = None, count: int | None = None):
        return self._nl.follow(timeout=timeout, count=count,
                               device=self._device)

    def close(self) -> None:
        self._nl.close()

