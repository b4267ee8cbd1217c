# SPDX-License-Identifier: GPL-2.0
"""The kernel module's generic netlink family ``davinci``, read with pyroute2.

Only the kernel module registers the family (FUSE and in-process backends
have no kernel side). Numbers are those of
``kmod/include/uapi/davinci_netlink.h``::

    from davinci.netlink import DavinciNetlink
    with DavinciNetlink() as nl:
        print(nl.devices(), nl.info(0)["serial"])
        nl.subscribe()                       # multicast group "events"
        for ev in nl.follow(timeout=10):     # davinci.manager.MgmtEvent
            print(ev.describe())

Needs pyroute2 (``pip install davinci[netlink]``).
"""

from __future__ import annotations

import asyncio
import errno
import time
from collections import deque
from typing import Iterator

from .errors import DavinciError, DeviceNotFoundError, InvalidDeviceError
from .manager import MgmtEvent

try:
    from pyroute2.netlink import NLM_F_REQUEST, genlmsg
    from pyroute2.netlink.exceptions import NetlinkError
    from pyroute2.netlink.generic import AsyncGenericNetlinkSocket
except ImportError:  # pragma: no cover - exercised where pyroute2 is absent
    genlmsg = object
    AsyncGenericNetlinkSocket = None

__all__ = ["DavinciNetlink", "FAMILY", "EVENTS_GROUP", "available"]

FAMILY = "davinci"
EVENTS_GROUP = "events"
VERSION = 1

CMD_LIST, CMD_INFO, CMD_EVENT = 1, 2, 3

_ATTRS = (
    ("UNSPEC", "none"),
    ("DEVICE", "uint32"),
    ("HEALTH", "uint32"),
    ("AICORES", "uint32"),
    ("AICORE_UTIL", "uint32"),
    ("POWER_MW", "uint32"),
    ("TEMP_MC", "uint32"),
    ("HBM_TOTAL", "uint64"),
    ("HBM_USED", "uint64"),
    ("PROCESSES", "uint32"),
    ("NAME", "asciiz"),
    ("SERIAL", "asciiz"),
    ("BUS_ID", "asciiz"),
    ("DRIVER_VERSION", "asciiz"),
    ("EV_SEQ", "uint64"),
    ("EV_TIMESTAMP", "uint64"),
    ("EV_TYPE", "uint32"),
    ("EV_FAULT", "uint32"),
    ("EV_STATUS", "uint32"),
    ("EV_HEALTH", "uint32"),
    ("EV_OLD_HEALTH", "uint32"),
    ("EV_ADDR", "uint64"),
    ("EV_VALUE", "uint64"),
    ("PAD", "none"),
)
_INFO_KEYS = [n for n, _ in _ATTRS[1:14]]


class davinci_nlmsg(genlmsg):
    """A message of the family: genl header + DAVINCI_NL_A_* attributes."""
    prefix = "DAVINCI_NL_A_"
    nla_map = tuple(("DAVINCI_NL_A_" + n, t) for n, t in _ATTRS)


def available() -> bool:
    """True when pyroute2 is importable (the family may still be absent)."""
    return AsyncGenericNetlinkSocket is not None


class DavinciNetlink:
    """A generic netlink socket bound to the family ``davinci``.

    Raises :class:`DeviceNotFoundError` when the family is not registered
    (the kernel module is not loaded) and :class:`DavinciError` when
    pyroute2 is missing.
    """

    def __init__(self) -> None:
        if not available():
            raise DavinciError(
                "reading the kernel module's netlink events needs pyroute2: "
                "pip install 'davinci[netlink]' (or pip install pyroute2)")
        self._loop = asyncio.new_event_loop()
        self._sock = AsyncGenericNetlinkSocket()
        try:
            self._run(self._sock.bind(FAMILY, davinci_nlmsg))
        except NetlinkError as e:
            self.close()
            if e.code == errno.ENOENT:
                raise DeviceNotFoundError(
                    "no generic netlink family %r: the davinci kernel module "
                    "is not loaded (sudo modprobe davinci)" % FAMILY,
                    errno.ENOENT) from None
            raise DavinciError("netlink family %r: %s" % (FAMILY, e),
                               e.code) from None
        self._subscribed = False
        # a datagram may carry several events; those not yet yielded
        self._pending: deque = deque()

    def _run(self, coro, timeout: float | None = None):
        if timeout is not None:
            coro = asyncio.wait_for(coro, timeout)
        return self._loop.run_until_complete(coro)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if not self._loop.is_closed():
            self._loop.close()

    def __enter__(self) -> "DavinciNetlink":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def groups(self) -> "dict[str, int]":
        """The family's multicast groups: name -> group id."""
        return dict(self._sock.mcast_groups)

    # --- requests -----------------------------------------------------------
    def _request(self, cmd: int, device: int | None = None) -> list:
        msg = davinci_nlmsg()
        msg["cmd"] = cmd
        msg["version"] = VERSION
        if device is not None:
            msg["attrs"].append(["DAVINCI_NL_A_DEVICE", device])

        async def collect():
            return [m async for m in await self._sock.nlm_request(
                msg, msg_type=self._sock.prid, msg_flags=NLM_F_REQUEST)]
        try:
            return self._run(collect(), timeout=10)
        except NetlinkError as e:
            if e.code == errno.ENODEV and device is not None:
                raise InvalidDeviceError("NPU %d does not exist" % device,
                                         e.code) from None
            raise DavinciError("netlink request %d: %s" % (cmd, e),
                               e.code) from None

    def devices(self) -> "list[int]":
        """DAVINCI_NL_CMD_LIST: indices of the live devices."""
        out = []
        for m in self._request(CMD_LIST):
            out.extend(v for k, v in m["attrs"] if k == "DAVINCI_NL_A_DEVICE")
        return out

    def info(self, index: int) -> dict:
        """DAVINCI_NL_CMD_INFO: the device's attributes, keyed by their
        lower-case names without the prefix (``serial``, ``hbm_total``...)."""
        (m,) = self._request(CMD_INFO, index)
        return {k.lower(): m.get_attr("DAVINCI_NL_A_" + k)
                for k in _INFO_KEYS}

    # --- events -------------------------------------------------------------
    def subscribe(self) -> None:
        """Join the multicast group ``events``; follow() reads from it."""
        if not self._subscribed:
            self._sock.add_membership(EVENTS_GROUP)
            self._subscribed = True

    def _next_batch(self, timeout: float | None) -> list:
        async def one_datagram():
            return [m async for m in self._sock.get()]
        try:
            return self._run(one_datagram(), timeout)
        except asyncio.TimeoutError:
            return []
        except NetlinkError as e:
            raise DavinciError(
                "netlink event stream: %s; events may have been lost (the "
                "manager's event log keeps each device's last 64: npu-smi "
                "events --all)" % e, e.code) from None

    def follow(self, timeout: float | None = None, count: int | None = None,
               device: int | None = None) -> Iterator[MgmtEvent]:
        """Yield the events multicast since subscribe(), until ``count``
        events or ``timeout`` seconds (None: forever)."""
        self.subscribe()
        end = None if timeout is None else time.monotonic() + timeout
        n = 0
        while count is None or n < count:
            left = None if end is None else max(0.0, end - time.monotonic())
            batch = [] if self._pending else self._next_batch(left)
            if not batch and not self._pending and left == 0.0:
                return
            self._pending.extend(batch)
            while self._pending:
                m = self._pending.popleft()
                if m["cmd"] != CMD_EVENT:
                    continue
                ev = _event(m)
                if device is not None and ev.device != device:
                    continue
                yield ev
                n += 1
                if count is not None and n >= count:
                    return


def _event(m) -> MgmtEvent:
    def a(name: str) -> int:
        return m.get_attr("DAVINCI_NL_A_" + name) or 0
    return MgmtEvent.from_fields(
        seq=a("EV_SEQ"), timestamp_ns=a("EV_TIMESTAMP"), device=a("DEVICE"),
        type=a("EV_TYPE"), fault=a("EV_FAULT"), status=a("EV_STATUS"),
        health=a("EV_HEALTH"), old_health=a("EV_OLD_HEALTH"),
        addr=a("EV_ADDR"), value=a("EV_VALUE"))
