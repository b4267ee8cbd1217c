# SPDX-License-Identifier: GPL-2.0
"""Helpers for the davinci-fused tests: start/stop the daemon, and a small
raw-ioctl client (davinci._uapi + fcntl.ioctl + mmap of the arena files).

Also importable by client subprocesses (they add this directory to
sys.path), including ones running as another user.
"""

import ctypes
import errno
import fcntl
import mmap
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
USERSPACE = os.path.join(REPO, "userspace")
if USERSPACE not in sys.path:
    sys.path.insert(0, USERSPACE)
if os.path.dirname(HERE) not in sys.path:
    sys.path.append(os.path.dirname(HERE))     # tests/, for polling.py

from davinci import _uapi as U  # noqa: E402
from davinci.fused import mount as mnt  # noqa: E402
from polling import wait_for  # noqa: E402,F401

NODES = ["davinci_manager"]


def child_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = USERSPACE + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("DAVINCI_DEV_DIR", None)
    if extra:
        env.update(extra)
    return env


def proc_dead(pid):
    """True when @pid is gone or a zombie (init may reap slowly)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("State:"):
                    return "Z" in line.split()[1]
    except OSError:
        return True
    return False


class Daemon:
    """davinci-fused on @mountpoint, started daemonised (the command returns
    once the nodes answer), optionally as another user via runuser."""

    def __init__(self, mountpoint, devices=2, hbm_mb=16, host_mb=8,
                 aicores=2, python=None, user=None, env=None, extra=()):
        self.mp = os.path.abspath(mountpoint)
        self.args = ["--devices", str(devices), "--hbm-mb", str(hbm_mb),
                     "--host-mb", str(host_mb), "--aicores", str(aicores)]
        self.args += list(extra)
        self.python = python or sys.executable
        self.user = user
        self.env = child_env(env)
        self.pidfile = self.mp + ".pid"
        self.logfile = self.mp + ".log"
        self.pid = None
        self.last = None

    def command(self):
        cmd = [self.python, "-m", "davinci.fused"] + self.args + [self.mp]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", "env", "-u",
                   "XDG_RUNTIME_DIR",
                   "PYTHONPATH=" + self.env.get("PYTHONPATH", ""),
                   "DAVINCI_CORE_LIB=" + self.env.get("DAVINCI_CORE_LIB", ""),
                   "HOME=/tmp"] + cmd
        return cmd

    def run(self, timeout=60):
        """Run the start command; CompletedProcess (does not raise)."""
        self.last = subprocess.run(self.command(), env=self.env,
                                   capture_output=True, text=True,
                                   timeout=timeout)
        if self.last.returncode == 0:
            self.pid = mnt.read_pidfile(self.pidfile)
        return self.last

    def start(self):
        r = self.run()
        assert r.returncode == 0, "daemon failed to start:\n%s\n%s\n%s" % (
            r.stdout, r.stderr, self.log())
        assert self.pid, "no pid file at %s" % self.pidfile
        return self

    def log(self):
        try:
            with open(self.logfile) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def mounted(self):
        return mnt.mount_entry(self.mp) is not None

    def kill(self, sig=signal.SIGTERM):
        os.kill(self.pid, sig)

    def stop(self, timeout=15):
        """SIGTERM and wait until it has unmounted and exited."""
        if self.pid and not proc_dead(self.pid):
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            wait_for(lambda: proc_dead(self.pid), timeout)
        if self.mounted():
            mnt.fusermount_unmount(self.mp)
        if not self.user:
            mnt.clean_stale_backing(self.mp)
        return not self.mounted()


class Node:
    """An open device node and raw ioctls on it."""

    def __init__(self, path, flags=os.O_RDWR):
        self.path = path
        self.fd = os.open(path, flags | os.O_CLOEXEC)
        self._arenas = {}

    def ioctl(self, cmd, arg=None):
        if arg is None:
            fcntl.ioctl(self.fd, cmd, 0)
            return None
        fcntl.ioctl(self.fd, cmd, arg, True)
        return arg

    def close(self):
        for f in self._arenas.values():
            f.close()
        self._arenas.clear()
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- queries -----------------------------------------------------------
    def version(self):
        return self.ioctl(U.DAVINCI_IOCTL_GET_VERSION, U.davinci_version())

    def info(self):
        return self.ioctl(U.DAVINCI_IOCTL_DEVICE_INFO,
                          U.davinci_device_info())

    def mmap_info(self):
        return self.ioctl(U.DAVINCI_IOCTL_MMAP_INFO, U.davinci_mmap_info())

    def alloc(self, size, flags=0):
        return self.ioctl(U.DAVINCI_IOCTL_MEM_ALLOC,
                          U.davinci_mem_alloc(size=size, flags=flags))

    def free(self, handle):
        self.ioctl(U.DAVINCI_IOCTL_MEM_FREE, U.davinci_mem_free(handle=handle))

    # --- memory ------------------------------------------------------------
    def map(self, mmap_offset, length):
        """mmap @length bytes at an ioctl's mmap offset, the way the runtime
        does on the FUSE backend: the arena file at the in-arena offset."""
        mi = self.mmap_info()
        assert mi.method == U.DAVINCI_MMAP_FILE, mi.method
        arena = mmap_offset >> U.DAVINCI_MMAP_ARENA_SHIFT
        off = mmap_offset & ((1 << U.DAVINCI_MMAP_ARENA_SHIFT) - 1)
        path = bytes(mi.arena_path[arena]).split(b"\0")[0].decode()
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        try:
            return mmap.mmap(fd, length, mmap.MAP_SHARED,
                             mmap.PROT_READ | mmap.PROT_WRITE, offset=off)
        finally:
            os.close(fd)

    # --- streams -----------------------------------------------------------
    def stream(self, entries=64, priority=0):
        return Stream(self, entries, priority)


class Stream:
    """A stream with its submission ring mapped."""

    def __init__(self, node, entries, priority):
        self.node = node
        sc = node.ioctl(U.DAVINCI_IOCTL_STREAM_CREATE, U.davinci_stream_create(
            sq_entries=entries, cq_entries=entries, priority=priority))
        self.id = sc.stream_id
        self.sq = node.map(sc.sq_mmap_offset, sc.sq_size)
        self.hdr = U.davinci_ring_header.from_buffer(self.sq)
        self.entries = self.hdr.entries

    def submit(self, *tasks):
        tail = self.hdr.tail
        for t in tasks:
            slot = tail % self.entries
            off = U.DAVINCI_RING_ENTRIES_OFFSET + slot * ctypes.sizeof(t)
            self.sq[off:off + ctypes.sizeof(t)] = bytes(t)
            tail = (tail + 1) & 0xFFFFFFFF
        self.hdr.tail = tail
        db = self.node.ioctl(U.DAVINCI_IOCTL_DOORBELL, U.davinci_doorbell(
            stream_id=self.id, sq_tail=tail))
        return db.last_seq

    def wait(self, seq=0, timeout_ms=10000):
        w = self.node.ioctl(U.DAVINCI_IOCTL_STREAM_WAIT, U.davinci_stream_wait(
            stream_id=self.id, timeout_ms=timeout_ms, seq=seq))
        return w

    def close(self):
        del self.hdr
        self.sq.close()


def nop(us):
    return U.davinci_task(opcode=U.DAVINCI_OP_NOP, count=us)


def memcpy(dst, src, n):
    return U.davinci_task(opcode=U.DAVINCI_OP_MEMCPY, dst=dst, src0=src,
                          count=n)


def memset(dst, byte, n):
    return U.davinci_task(opcode=U.DAVINCI_OP_MEMSET, dst=dst, imm=byte,
                          count=n)


def errno_of(fn, *args):
    """The errno fn(*args) fails with, or 0."""
    try:
        fn(*args)
    except OSError as e:
        return e.errno
    return 0


__all__ = ["Daemon", "Node", "Stream", "nop", "memcpy", "memset", "errno_of",
           "wait_for", "proc_dead", "child_env", "mnt", "U", "errno"]
