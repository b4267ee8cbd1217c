# SPDX-License-Identifier: GPL-2.0
"""Mountpoint housekeeping for davinci-fused: default locations, busy and
stale mount detection, unmount, pid and backing directories."""

import errno
import fcntl
import glob
import os
import shutil
import struct
import subprocess

MANAGER = "davinci_manager"

# What a FUSE mount whose daemon died answers (the kernel aborted it).
DEAD = (errno.ENOTCONN, errno.ECONNABORTED)

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


def default_mountpoint() -> str:
    """$XDG_RUNTIME_DIR/davinci, or /tmp/davinci-<uid> when it is unset."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "davinci")
    return "/tmp/davinci-%d" % os.getuid()


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


def mount_entry(mp: str):
    """(fstype, source) of the mount at @mp from /proc/self/mountinfo, or
    None when @mp is not a mountpoint."""
    mp = os.path.abspath(mp)
    found = None
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 10 or _unescape(parts[4]) != mp:
                    continue
                sep = parts.index("-")
                found = (parts[sep + 1], parts[sep + 2])
    except OSError:
        return None
    return found


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


BACKING_PREFIX = "davinci-%d-"


def backing_candidates(mp: str):
    rd = os.environ.get("XDG_RUNTIME_DIR")
    out = ["/dev/shm"]
    if rd:
        out.append(rd)
    out.append(os.path.dirname(os.path.abspath(mp)))
    return out


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


def clean_stale_backing(mp: str, log=None) -> None:
    """Remove backing directories of our uid whose daemon is dead."""
    me = os.getuid()
    for d in backing_candidates(mp):
        for path in glob.glob(os.path.join(d, BACKING_PREFIX % me + "*")):
            name = os.path.basename(path)
            try:
                pid = int(name.split("-")[2])
                st = os.lstat(path)
            except (ValueError, IndexError, OSError):
                continue
            if st.st_uid != me or not os.path.isdir(path) or pid_alive(pid):
                continue
            shutil.rmtree(path, ignore_errors=True)
            if log:
                log("removed stale device memory directory %s (daemon pid %d "
                    "is gone)" % (path, pid))
