# SPDX-License-Identifier: GPL-2.0
"""Find the davinci backend and open devices on it.

Order:

1. ``DAVINCI_BACKEND=inproc``: the in-process core (tests, no daemon).
2. ``DAVINCI_DEV_DIR`` when set: nodes in that directory.
3. ``/dev`` when ``/dev/davinci_manager`` is a character device (kernel
   module).
4. The FUSE daemon's default mountpoint (``$XDG_RUNTIME_DIR/davinci``, else
   ``/tmp/davinci-<uid>``) when ``<mountpoint>/davinci_manager`` exists.
5. Otherwise :class:`DeviceNotFoundError` saying how to start either (and
   naming other users' daemons, whose nodes only they can open).

Nodes that exist but that this user may not open (not in the module's
group, another user's FUSE mount) give :class:`DevicePermissionError`
naming the node, its group or owner and the fix, never "not found".
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass

from . import _uapi
from .errors import (DeviceNotFoundError,
                     DriverVersionMismatchError, InvalidDeviceError, from_errno)
from .inproc import InProcessTransport, inproc_device_count
from .transport import DeviceNodeTransport, Transport

__all__ = ["Backend", "find_backend", "device_count", "open_device",
           "fuse_default_mountpoint", "manager_version", "check_version",
           "NOT_FOUND_MESSAGE"]

NOT_FOUND_MESSAGE = ("no davinci device found: load the kernel module "
                     "(sudo modprobe davinci) or start the FUSE daemon "
                     "(davinci-fused)")

_NODE_RE = re.compile(r"^davinci(\d+)$")


def fuse_default_mountpoint() -> str:
    """Where ``davinci-fused`` mounts by default."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "davinci")
    return "/tmp/davinci-%d" % os.getuid()


@dataclass(frozen=True)
class Backend:
    """A discovered backend.

    kind: "inproc", "kmod" (``/dev``), "fuse" (the default FUSE mountpoint)
    or "dir" (``DAVINCI_DEV_DIR``). dev_dir: directory holding the nodes
    (None for inproc).
    """
    kind: str
    dev_dir: str | None

    def device_indices(self) -> list[int]:
        if self.kind == "inproc":
            return list(range(inproc_device_count()))
        try:
            names = os.listdir(self.dev_dir)
        except OSError:
            return []
        out = []
        for name in names:
            m = _NODE_RE.match(name)
            if m:
                out.append(int(m.group(1)))
        return sorted(out)

    def device_count(self) -> int:
        return len(self.device_indices())

    def node_path(self, index: int) -> str:
        return os.path.join(self.dev_dir, "davinci%d" % index)

    def manager_path(self) -> str:
        return os.path.join(self.dev_dir, "davinci_manager")

    def describe(self) -> str:
        if self.kind == "inproc":
            return "in-process core (DAVINCI_BACKEND=inproc)"
        return "%s (%s)" % (self.dev_dir, self.kind)


def _is_chardev(path: str) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def _stale(path: str) -> bool:
    """True when ``path`` is a FUSE mount whose daemon died (ENOTCONN)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ENOTCONN
    return False


def _stale_error(path: str) -> DeviceNotFoundError:
    return DeviceNotFoundError(
        "no davinci device found: the FUSE daemon serving %s is gone (stale "
        "mount, ENOTCONN); start davinci-fused again (it cleans the stale "
        "mount) or load the kernel module (sudo modprobe davinci)" % path,
        errno.ENOTCONN)


def _permission_denied(dev_dir: str):
    """A DevicePermissionError when ``dev_dir`` or its manager node exists
    but this user may not look at it (another user's FUSE mount), else
    None."""
    for path in (dev_dir, os.path.join(dev_dir, "davinci_manager")):
        try:
            os.stat(path)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                from .access import node_permission_error
                return node_permission_error(path, exc.errno)
            return None
    return None


def find_backend() -> Backend:
    """Discover the backend; raises :class:`DeviceNotFoundError`, or
    :class:`DevicePermissionError` for nodes this user may not open."""
    if os.environ.get("DAVINCI_BACKEND", "").lower() == "inproc":
        return Backend("inproc", None)
    env_dir = os.environ.get("DAVINCI_DEV_DIR")
    if env_dir:
        denied = _permission_denied(env_dir)
        if denied is not None:
            raise denied
        if _stale(env_dir):
            raise _stale_error(env_dir)
        if not os.path.exists(os.path.join(env_dir, "davinci_manager")) and \
                not any(_NODE_RE.match(n) for n in _listdir(env_dir)):
            raise DeviceNotFoundError(
                "no davinci device found in DAVINCI_DEV_DIR=%s: start the FUSE "
                "daemon there (davinci-fused %s) or unset DAVINCI_DEV_DIR"
                % (env_dir, env_dir))
        return Backend("dir", env_dir)
    if _is_chardev("/dev/davinci_manager"):
        return Backend("kmod", "/dev")
    mnt = fuse_default_mountpoint()
    if os.path.exists(os.path.join(mnt, "davinci_manager")):
        return Backend("fuse", mnt)
    if _stale(mnt):
        raise _stale_error(mnt)
    from .access import foreign_mounts_hint
    raise DeviceNotFoundError(NOT_FOUND_MESSAGE + foreign_mounts_hint())


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def device_count() -> int:
    """Number of davinci devices on the discovered backend."""
    return find_backend().device_count()


#: Highest ABI minor a range can name ("any minor of this major").
ABI_MINOR_ANY = 0xFFFF


def runtime_abi_range() -> "tuple[tuple[int, int], tuple[int, int]]":
    """The driver ABI versions this runtime accepts, ((major, minor) lowest,
    (major, minor) highest): ABI major DAVINCI_ABI_MAJOR, any minor (minors
    only add; features are checked by their bits).

    ``DAVINCI_RUNTIME_ABI_RANGE="2.0-2.65535"`` (or ``"2.0"``) overrides it,
    to reproduce a runtime built for another driver."""
    env = os.environ.get("DAVINCI_RUNTIME_ABI_RANGE", "").strip()
    if env:
        try:
            parts = [tuple(int(x) for x in p.split(".", 1))
                     for p in env.split("-", 1)]
            lo = parts[0]
            hi = parts[1] if len(parts) > 1 else (lo[0], ABI_MINOR_ANY)
            if len(lo) == 2 and len(hi) == 2:
                return lo, hi
        except ValueError:
            pass
    major = _uapi.DAVINCI_ABI_MAJOR
    return (major, 0), (major, ABI_MINOR_ANY)


def _fmt_abi(v: "tuple[int, int]") -> str:
    return "%d.x" % v[0] if v[1] == ABI_MINOR_ANY else "%d.%d" % v


def check_version(ver: _uapi.davinci_version, where: str) -> None:
    """Raise :class:`DriverVersionMismatchError` unless the driver's ABI is
    inside :func:`runtime_abi_range`."""
    lo, hi = runtime_abi_range()
    got = (int(ver.abi_major), int(ver.abi_minor))
    if lo <= got <= hi:
        return
    from . import version_info
    pkg = version_info.read()
    pkg_ver = version_info.get(pkg, "Version") or "?"
    rng = "%d.x" % lo[0] if lo[0] == hi[0] and hi[1] == ABI_MINOR_ANY and \
        lo[1] == 0 else "%s..%s" % (_fmt_abi(lo), _fmt_abi(hi))
    raise DriverVersionMismatchError(
        "driver version mismatch: %s speaks ABI %d.%d (driver %s, backend "
        "%s) but this runtime supports ABI %s (runtime ABI %d.%d, driver "
        "package %s per %s); install a driver whose ABI is %s (davinci "
        "driver %d.x: reload the module or restart davinci-fused from the "
        "same package) or a runtime built for ABI %d.%d"
        % (where, got[0], got[1], _uapi.cstr(ver.driver_version) or "?",
           _uapi.cstr(ver.backend) or "?", rng, _uapi.DAVINCI_ABI_MAJOR,
           _uapi.DAVINCI_ABI_MINOR, pkg_ver, version_info.default_path(),
           rng, lo[0], got[0], got[1]))


def open_device(index: int, backend: Backend | None = None) -> Transport:
    """Open a context on device ``index`` and check the driver's version.

    Raises :class:`InvalidDeviceError` for an index out of range,
    :class:`DeviceNotFoundError` when no backend exists,
    :class:`DriverVersionMismatchError` on an ABI major mismatch.
    """
    if backend is None:
        backend = find_backend()
    if not isinstance(index, int) or isinstance(index, bool):
        raise InvalidDeviceError("device index must be an int, not %r"
                                 % (index,))
    indices = backend.device_indices()
    if index not in indices:
        if indices:
            rng = "valid indices: %s" % ", ".join(map(str, indices))
        else:
            rng = "the backend has no devices"
        raise InvalidDeviceError(
            "device %d does not exist on %s (%d device(s); %s); use "
            "davinci.device_count() to see how many there are"
            % (index, backend.describe(), len(indices), rng))
    if backend.kind == "inproc":
        t: Transport = InProcessTransport(index)
    else:
        t = DeviceNodeTransport(backend.node_path(index), index)
    try:
        ver = _uapi.davinci_version()
        t.ioctl(_uapi.DAVINCI_IOCTL_GET_VERSION, ver)
        check_version(ver, t.description)
    except BaseException:
        t.close()
        raise
    return t


def manager_version(backend: Backend | None = None) -> _uapi.davinci_version:
    """GET_VERSION on the manager node (no context needed)."""
    if backend is None:
        backend = find_backend()
    ver = _uapi.davinci_version()
    if backend.kind == "inproc":
        from . import _corelib
        ret = _corelib.manager_ioctl(_uapi.DAVINCI_IOCTL_GET_VERSION, ver)
        if ret < 0:
            raise from_errno(-ret, "GET_VERSION on the in-process manager")
        return ver
    path = backend.manager_path()
    t = DeviceNodeTransport(path)
    try:
        t.ioctl(_uapi.DAVINCI_IOCTL_GET_VERSION, ver)
    finally:
        t.close()
    return ver


