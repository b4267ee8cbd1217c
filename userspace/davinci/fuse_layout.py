# SPDX-License-Identifier: GPL-2.0
"""Where davinci-fused puts things, and what a crashed one leaves behind.

Shared by the daemon (``davinci-fused``, ``davinci-fused --cleanup``), the
runtime's discovery and ``davinci doctor``, so that all three agree:

* the default mountpoint: ``$XDG_RUNTIME_DIR/davinci``, else
  ``/tmp/davinci-<uid>``;
* mounts: ``/proc/self/mountinfo`` entries of type ``fuse.davinci``; the
  mounting user is the ``user_id=`` option FUSE records;
* device memory: one private directory per daemon,
  ``davinci-<uid>-<pid>-XXXXXXXX``, in ``/dev/shm`` (else
  ``$XDG_RUNTIME_DIR``, else beside the mountpoint), holding the arena files
  clients map.

A daemon killed with SIGKILL (or by the OOM killer) cannot clean up: its
mount stays, answering ENOTCONN (a *stale* mount), and its memory directory
stays in ``/dev/shm``, using memory until someone removes it.
:func:`find_leftovers` finds both for a user; :func:`clear_leftovers`
removes them.
"""

from __future__ import annotations

import errno
import glob
import os
import shutil
import subprocess
from dataclasses import dataclass

__all__ = ["MANAGER", "DEAD", "FSTYPE", "BACKING_PREFIX",
           "default_mountpoint", "mount_entry", "davinci_mounts",
           "mount_state", "pid_alive", "backing_candidates", "dir_usage",
           "Leftover", "find_leftovers", "clear_leftovers",
           "fusermount_unmount"]

#: The manager node's name in a mount.
MANAGER = "davinci_manager"
#: What a FUSE mount whose daemon died answers (the kernel aborted it).
DEAD = (errno.ENOTCONN, errno.ECONNABORTED)
#: mountinfo type of a davinci-fused mount (fsname and subtype "davinci").
FSTYPE = "fuse.davinci"
#: Name of a daemon's memory directory: % uid, then "<pid>-" and a suffix.
BACKING_PREFIX = "davinci-%d-"


def default_mountpoint(uid: int | None = None) -> str:
    """$XDG_RUNTIME_DIR/davinci, or /tmp/davinci-<uid> when it is unset."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "davinci")
    return "/tmp/davinci-%d" % (os.getuid() if uid is None else uid)


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _mountinfo():
    """(mountpoint, fstype, source, super options) of every mount."""
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.readlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) < 10 or "-" not in parts:
            continue
        sep = parts.index("-")
        if len(parts) < sep + 3:
            continue
        sopts = parts[sep + 3] if len(parts) > sep + 3 else ""
        out.append((_unescape(parts[4]), parts[sep + 1], parts[sep + 2],
                    sopts))
    return out


def mount_entry(mp: str):
    """(fstype, source) of the mount at @mp from /proc/self/mountinfo, or
    None when @mp is not a mountpoint."""
    mp = os.path.abspath(mp)
    found = None
    for point, fstype, source, _opts in _mountinfo():
        if point == mp:
            found = (fstype, source)
    return found


def davinci_mounts():
    """[(mountpoint, uid)] of every davinci-fused mount; uid is the user
    who mounted it (FUSE's user_id option), or None when not recorded."""
    out = []
    for point, fstype, _source, opts in _mountinfo():
        if fstype != FSTYPE:
            continue
        uid = None
        for opt in opts.split(","):
            if opt.startswith("user_id="):
                try:
                    uid = int(opt[len("user_id="):])
                except ValueError:
                    pass
        out.append((point, uid))
    return out


def mount_state(mp: str) -> str:
    """One of: missing, notdir, stale, mounted, empty, nonempty."""
    try:
        os.stat(mp)
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        if e.errno in DEAD:
            return "stale"
        if e.errno == errno.EACCES and mount_entry(mp):
            return "mounted"    # someone else's FUSE mount
        raise
    if mount_entry(mp):
        # stat of the root may be answered from cached attributes; statfs
        # always reaches the daemon
        try:
            os.statvfs(mp)
        except OSError as e:
            if e.errno in DEAD:
                return "stale"
        return "mounted"
    if not os.path.isdir(mp):
        return "notdir"
    try:
        if os.listdir(mp):
            return "nonempty"
    except OSError as e:
        if e.errno in DEAD:
            return "stale"
        raise
    return "empty"


def fusermount_unmount(mp: str, lazy: bool = True) -> bool:
    """Unmount @mp with fusermount -u [-z]; True when it is gone."""
    cmd = ["fusermount", "-u", "-q"] + (["-z"] if lazy else []) + [mp]
    try:
        subprocess.run(cmd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        pass
    if mount_entry(mp) and os.getuid() == 0:
        subprocess.run(["umount", "-l", mp], stderr=subprocess.DEVNULL,
                       check=False)
    return mount_entry(mp) is None


def pid_alive(pid: int) -> bool:
    """True when @pid runs (a zombie, not yet reaped, counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def backing_candidates(mp: str | None = None) -> "list[str]":
    """Directories a daemon serving @mp may put its memory directory in,
    in the order it tries them (the default mountpoint when None)."""
    rd = os.environ.get("XDG_RUNTIME_DIR")
    out = ["/dev/shm"]
    if rd:
        out.append(rd)
    out.append(os.path.dirname(os.path.abspath(mp or default_mountpoint())))
    return out


def dir_usage(path: str) -> int:
    """Bytes of memory (or disk) the files under @path take (du)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


@dataclass(frozen=True)
class Leftover:
    """Something a crashed davinci-fused left behind.

    kind: "mount" (a stale mount: its daemon is gone, ENOTCONN) or "memory"
    (a device memory directory whose daemon pid is gone). size: bytes it
    takes (0 for a mount). pid: the dead daemon's pid (memory only).
    command: the shell command that clears it.
    """
    kind: str
    path: str
    size: int = 0
    pid: int = 0

    @property
    def command(self) -> str:
        if self.kind == "mount":
            return "fusermount -u -z %s" % self.path
        return "rm -rf %s" % self.path

    def describe(self) -> str:
        if self.kind == "mount":
            return "stale FUSE mount %s (its davinci-fused is gone: stat " \
                   "fails with ENOTCONN)" % self.path
        return "stale device memory directory %s (%s) of davinci-fused " \
               "pid %d, which is gone" % (self.path, _size_text(self.size),
                                         self.pid)


def _size_text(n: int) -> str:
    if n >= 1 << 20:
        return "%.1f MiB" % (n / (1 << 20))
    if n >= 1 << 10:
        return "%.1f KiB" % (n / (1 << 10))
    return "%d bytes" % n


def _stale(mp: str) -> bool:
    try:
        os.stat(mp)
        os.statvfs(mp)
    except OSError as e:
        return e.errno in DEAD
    return False


def find_leftovers(uid: int | None = None,
                   mountpoints: "list[str] | None" = None,
                   pids: "set[int] | None" = None) -> "list[Leftover]":
    """What crashed daemons of user @uid (default: the caller) left: stale
    davinci mounts and memory directories whose daemon pid is dead.

    @mountpoints: look at these mounts only (default: every davinci mount
    of the user). @pids: only memory directories of these daemon pids
    (default: of every dead one). Memory directories are looked for where a
    daemon would have made them (:func:`backing_candidates`) for the
    default mountpoint and each mount looked at."""
    me = os.getuid() if uid is None else uid
    out = []
    if mountpoints is None:
        places = [mp for mp, owner in davinci_mounts()
                  if owner is None or owner == me]
    else:
        places = [os.path.abspath(mp) for mp in mountpoints]
    mine = {mp for mp, owner in davinci_mounts()
            if owner is None or owner == me}
    for mp in places:
        if mp in mine and _stale(mp):
            out.append(Leftover("mount", mp))
    dirs = []
    for mp in [None] + places:
        for d in backing_candidates(mp):
            if d not in dirs:
                dirs.append(d)
    seen = set()
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, BACKING_PREFIX % me
                                                  + "*"))):
            if path in seen:
                continue
            seen.add(path)
            try:
                pid = int(os.path.basename(path).split("-")[2])
                st = os.lstat(path)
            except (ValueError, IndexError, OSError):
                continue
            if pids is not None and pid not in pids:
                continue
            if st.st_uid != me or not os.path.isdir(path) or \
                    os.path.islink(path) or pid_alive(pid):
                continue
            out.append(Leftover("memory", path, dir_usage(path), pid))
    return out


def clear_leftovers(leftovers: "list[Leftover]", log=None) -> "list[Leftover]":
    """Remove @leftovers (stale mounts first); returns those removed.
    ``log(text)`` is told about each, removed or not."""
    done = []
    for lo in sorted(leftovers, key=lambda x: x.kind != "mount"):
        if lo.kind == "mount":
            ok = fusermount_unmount(lo.path, lazy=True)
        else:
            shutil.rmtree(lo.path, ignore_errors=True)
            ok = not os.path.lexists(lo.path)
        if ok:
            done.append(lo)
        if log:
            log("%s %s" % ("removed" if ok else "could not remove",
                           lo.describe()) +
                ("" if ok else "; try: %s" % lo.command))
    return done
