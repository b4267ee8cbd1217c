# SPDX-License-Identifier: GPL-2.0
"""Mountpoint housekeeping for davinci-fused: default locations, busy and
stale mount detection, unmount, pid and backing directories.

The layout itself (mountpoints, memory directories, what a crashed daemon
leaves) lives in :mod:`davinci.fuse_layout`, shared with the runtime and
``davinci doctor``; its names are re-exported here."""

import errno
import fcntl
import os
import struct

from ..fuse_layout import (BACKING_PREFIX, DEAD, MANAGER,  # noqa: F401
                           backing_candidates, clear_leftovers,
                           default_mountpoint, find_leftovers,
                           fusermount_unmount, mount_entry, mount_state,
                           pid_alive)

# _IOR(0xDA, 0x00, struct davinci_version): 4 + 4 + 8 + 32 + 32 = 80 bytes.
VERSION_SIZE = 80
GET_VERSION = (2 << 30) | (VERSION_SIZE << 16) | (0xDA << 8) | 0x00


def runtime_dir() -> str:
    """$XDG_RUNTIME_DIR, else a private /tmp/davinci-<uid>-run."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return xdg
    d = "/tmp/davinci-%d-run" % os.getuid()
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(d)
    if st.st_uid != os.getuid() or not os.path.isdir(d) or os.path.islink(d):
        raise OSError(errno.EPERM, "%s is not a directory owned by you" % d)
    return d


def nodes_answer(mp: str) -> bool:
    """True when davinci_manager at @mp answers GET_VERSION."""
    try:
        fd = os.open(os.path.join(mp, MANAGER), os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        buf = bytearray(VERSION_SIZE)
        fcntl.ioctl(fd, GET_VERSION, buf, True)
        major = struct.unpack_from("<I", buf, 0)[0]
        return major >= 1
    except OSError as e:
        # the daemon answered, even if its core lacks the manager ioctls
        return e.errno in (errno.ENOTTY, errno.EINVAL)
    finally:
        os.close(fd)


def state_paths(mp: str):
    """(pidfile, logfile) for a daemon serving @mp: beside the mountpoint
    (<mp>.pid, <mp>.log) when its parent is writable, else in the runtime
    directory."""
    mp = os.path.abspath(mp)
    parent = os.path.dirname(mp) or "/"
    if os.access(parent, os.W_OK) and not _sticky_foreign(parent):
        return mp + ".pid", mp + ".log"
    base = "davinci-fused" + mp.replace("/", "_")
    rd = runtime_dir()
    return os.path.join(rd, base + ".pid"), os.path.join(rd, base + ".log")


def _sticky_foreign(d: str) -> bool:
    """A shared sticky directory (/tmp) we do not own: predictable names
    there could be taken by another user, so use the runtime dir instead."""
    try:
        st = os.stat(d)
    except OSError:
        return True
    return bool(st.st_mode & 0o1000) and st.st_uid != os.getuid()


def write_pidfile(path: str, pid: int) -> None:
    try:
        st = os.lstat(path)
        if st.st_uid == os.getuid() and not os.path.islink(path):
            os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                 | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w") as f:
        f.write("%d\n" % pid)


def read_pidfile(path: str):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def remove_pidfile(path: str, pid: int) -> None:
    if read_pidfile(path) == pid:
        try:
            os.unlink(path)
        except OSError:
            pass


def open_log(path: str) -> int:
    """fd of @path opened for appending (O_NOFOLLOW, mode 0600)."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                   | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


def make_backing_dir(mp: str) -> str:
    """A private (0700) directory for the arena files: in /dev/shm when
    possible, so clients' MAP_SHARED mappings are plain shared memory."""
    import tempfile
    prefix = BACKING_PREFIX % os.getuid() + "%d-" % os.getpid()
    last = None
    for d in backing_candidates(mp):
        if not (os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK)):
            continue
        try:
            return tempfile.mkdtemp(prefix=prefix, dir=d)
        except OSError as e:
            last = e
    raise OSError(last.errno if last else errno.ENOENT,
                  "no writable directory for the device memory files "
                  "(tried %s)" % ", ".join(backing_candidates(mp)))


def clean_stale_backing(mp: str, log=None) -> "list":
    """Remove memory directories of our uid whose daemon is dead (where a
    daemon serving @mp would have made them); returns the Leftovers."""
    mem = [lo for lo in find_leftovers(mountpoints=[mp])
           if lo.kind == "memory"]
    return clear_leftovers(mem, log)
