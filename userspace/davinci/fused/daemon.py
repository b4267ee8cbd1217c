# SPDX-License-Identifier: GPL-2.0
"""davinci-fused: the device core served as /dev-like nodes over FUSE.

The mount holds davinci0..N-1 and davinci_manager, regular files of mode
0660 owned by the mounting user. Without allow_other only that user can
reach the mount at all (the kernel refuses everyone else, root included),
so another user cannot open the nodes.

  open(davinciN)      -> dvc_context_open_as(caller's pid, caller's uid):
                         EMFILE / EUSERS past the limits on open contexts
                         per process / per user (--max-contexts-per-*)
  release             -> dvc_context_close (the kernel sends RELEASE when the
                         last fd closes, also when the client was SIGKILLed)
  ioctl               -> dvc_ioctl_interruptible / dvc_manager_ioctl_priv on
                         the _IOC_SIZE bytes FUSE passes (restricted
                         ioctl); -errno back. A wait ends with -EINTR once
                         FUSE says its caller was interrupted (a signal or
                         SIGKILL), as the module's waits do.
                         The manager's reset and fault injection are
                         privileged: allowed for the daemon's owner only
  read/write          -> -EINVAL; mmap of a node is refused by the kernel
                         (direct_io)

Device memory: each device's arenas are files in a private 0700 directory
(normally /dev/shm/davinci-<uid>-<pid>-XXXX/devN/); DAVINCI_IOCTL_MMAP_INFO
reports DAVINCI_MMAP_FILE with their paths and clients map them directly,
MAP_SHARED: coherent and zero-copy both ways, no FUSE page cache involved.

Threads: libfuse 2's multithreaded loop runs each request on a worker thread
and the core is called through ctypes.CDLL, which drops the GIL, so a
blocking wait ioctl occupies one worker and nothing else. libfuse 2's loop
starts another worker whenever none is idle (measured: 20 clients blocked in
NOTIFY_WAIT, 25 daemon threads, a 21st client answered in under 1 ms).

Stopping (SIGINT, SIGTERM, SIGHUP): the devices are marked lost so blocked
waiters return -ENODEV at once, the FUSE loop is told to exit and unmounts
(libfuse runs fusermount -u -z), contexts still open are closed, the devices
destroyed and the memory directory removed.
"""

import ctypes
import errno
import faulthandler
import itertools
import logging
import os
import shutil
import signal
import stat
import threading
import time

from .. import _corelib, _uapi
from . import mount as mnt

log = logging.getLogger("davinci-fused")

try:
    import fuse as _fusepy
except ImportError as _e:      # pragma: no cover - reported by main()
    _fusepy = None
    _fuse_import_error = _e
else:
    _fuse_import_error = None

FUSE_IOCTL_COMPAT = 1 << 0
FUSE_IOCTL_DIR = 1 << 4


_Base = _fusepy.Operations if _fusepy else object
# libfuse's fuse_interrupted(): true once the kernel sent FUSE_INTERRUPT for
# the request the calling worker thread serves. Passed to the core as a C
# function pointer, so the core polls it without the GIL.
_fuse_interrupted = (ctypes.cast(_fusepy._libfuse.fuse_interrupted,
                                 ctypes.c_void_p) if _fusepy else None)



def _process_of(tid: int) -> int:
    """The process (thread group) of the thread FUSE names as the caller:
    per-process usage is per process, as on the kernel module (tgid)."""
    try:
        with open("/proc/%d/status" % tid) as f:
            for line in f:
                if line.startswith("Tgid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return tid

class DavinciFS(_Base):
    """fusepy operations (raw_fi=True) over a list of CoreDevice."""

    use_ns = True

    def __init__(self, devices):
        self.devices = list(devices)
        self.nodes = {"/davinci%d" % d.index: d for d in self.devices}
        self.nodes["/" + mnt.MANAGER] = None
        self.uid, self.gid = os.getuid(), os.getgid()
        self.t0 = time.time_ns()
        self.handles = {}           # fh -> (path, CoreContext or None)
        self._fh = itertools.count(1)
        self._lock = threading.Lock()
        self.stopping = False
        self.fuse_ptr = None
        self.lib = _corelib.load()
        self.opens = 0
        self.ioctls = 0

    # --- lifecycle -------------------------------------------------------
    def init(self, path):
        ctxp = _fusepy._libfuse.fuse_get_context()
        self.fuse_ptr = ctxp.contents.fuse
        log.info("mounted, serving %d device(s)", len(self.devices))

    def destroy(self, path):
        log.info("FUSE session ends")

    # --- namespace -------------------------------------------------------
    def getattr(self, path, fh=None):
        t = self.t0
        if path == "/":
            return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2,
                        st_uid=self.uid, st_gid=self.gid, st_size=0,
                        st_atime=t, st_mtime=t, st_ctime=t)
        if path in self.nodes:
            return dict(st_mode=stat.S_IFREG | 0o660, st_nlink=1,
                        st_uid=self.uid, st_gid=self.gid, st_size=0,
                        st_atime=t, st_mtime=t, st_ctime=t)
        raise _fusepy.FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        if path != "/":
            raise _fusepy.FuseOSError(errno.ENOTDIR)
        return [".", ".."] + [p[1:] for p in self.nodes]

    def access(self, path, amode):
        if path != "/" and path not in self.nodes:
            raise _fusepy.FuseOSError(errno.ENOENT)
        return 0

    def statfs(self, path):
        return dict(f_bsize=4096, f_frsize=4096, f_namemax=255)

    # --- files -----------------------------------------------------------
    def open(self, path, fi):
        if path not in self.nodes:
            raise _fusepy.FuseOSError(errno.ENOENT)
        if self.stopping:
            raise _fusepy.FuseOSError(errno.ENODEV)
        if fi.flags & os.O_TRUNC:
            raise _fusepy.FuseOSError(errno.EINVAL)
        dev = self.nodes[path]
        ctx = None
        if dev is not None:
            uid, _gid, tid = _fusepy.fuse_get_context()
            pid = _process_of(tid)
            try:
                ctx = dev.open_context(pid, uid=uid)
                # the daemon's owner reads every user's trace records
                ctx.set_trace_all(uid == self.uid)
            except OSError as e:
                log.warning("open %s by pid %d: %s", path, pid, e)
                raise _fusepy.FuseOSError(e.errno or errno.EIO)
        with self._lock:
            fh = next(self._fh)
            self.handles[fh] = (path, ctx)
            self.opens += 1
        fi.fh = fh
        fi.direct_io = 1
        fi.keep_cache = 0
        fi.nonseekable = 1
        return 0

    def release(self, path, fi):
        with self._lock:
            entry = self.handles.pop(fi.fh, None)
        if entry and entry[1] is not None:
            entry[1].close()
        return 0

    def flush(self, path, fi):
        return 0

    def read(self, path, size, offset, fi):
        raise _fusepy.FuseOSError(errno.EINVAL)

    def write(self, path, data, offset, fi):
        raise _fusepy.FuseOSError(errno.EINVAL)

    def truncate(self, path, length, fh=None):
        raise _fusepy.FuseOSError(errno.EINVAL)

    def ioctl(self, path, cmd, arg, fi, flags, data):
        if flags & (FUSE_IOCTL_DIR | FUSE_IOCTL_COMPAT):
            return -errno.ENOTTY
        entry = self.handles.get(fi.fh)
        if entry is None:
            return -errno.EBADF
        self.ioctls += 1
        size = _uapi.ioc_size(cmd)
        if size == 0 or not data:
            scratch = ctypes.create_string_buffer(max(size, 8))
            data = ctypes.addressof(scratch)
        elif _uapi.ioc_dir(cmd) == _uapi.IOC_READ:
            # libfuse hands an uninitialised out buffer for _IOR: the
            # kernel zero-fills, so do we
            ctypes.memset(data, 0, size)
        ctx = entry[1]
        if ctx is None:
            # reset and fault injection: the daemon's owner only
            uid, _gid, _pid = _fusepy.fuse_get_context()
            return self.lib.dvc_manager_ioctl_priv(
                cmd, data, 1 if uid == self.uid else 0)
        # A caller interrupted while we wait for it (Ctrl-C, SIGKILL) waits
        # in the kernel for our answer: waits poll libfuse's flag and end.
        return ctx.ioctl_interruptible(cmd, data, _fuse_interrupted)

    def take_handles(self) -> list:
        """Every (path, context) still open, forgotten by the mount."""
        with self._lock:
            left = list(self.handles.values())
            self.handles.clear()
        return left


class Server:
    """Creates the devices, mounts, serves until a signal, tears down."""

    def __init__(self, mountpoint, devices=1, hbm_mb=256, host_mb=64,
                 aicores=2, task_timeout_ms=30000, poll_idle_us=0,
                 poll_idle_max_us=0, pidfile=None, debug=False):
        self.mountpoint = os.path.abspath(mountpoint)
        self.ndevices = devices
        self.hbm_bytes = hbm_mb << 20
        self.host_bytes = host_mb << 20
        self.aicores = aicores
        self.task_timeout_ms = task_timeout_ms
        self.poll_idle_us = poll_idle_us
        self.poll_idle_max_us = poll_idle_max_us
        self.pidfile = pidfile
        self.debug = debug
        self.backing_dir = None
        self.devices = []
        self.fs = None
        self.thread = None
        self.error = None
        self.stop_event = threading.Event()
        self.stop_signal = None

    # --- setup -------------------------------------------------------------
    def _create_devices(self):
        self.backing_dir = mnt.make_backing_dir(self.mountpoint)
        os.chmod(self.backing_dir, 0o700)
        for i in range(self.ndevices):
            d = os.path.join(self.backing_dir, "dev%d" % i)
            os.mkdir(d, 0o700)
            self.devices.append(_corelib.CoreDevice(
                i, aicores=self.aicores, hbm_bytes=self.hbm_bytes,
                host_bytes=self.host_bytes,
                task_timeout_ms=self.task_timeout_ms, backing_dir=d,
                backend="fuse", poll_idle_us=self.poll_idle_us,
                poll_idle_max_us=self.poll_idle_max_us))
        log.info("%d device(s), %d MiB HBM and %d MiB host memory each, "
                 "%d AI cores, memory files in %s", self.ndevices,
                 self.hbm_bytes >> 20, self.host_bytes >> 20, self.aicores,
                 self.backing_dir)

    def _run_fuse(self):
        try:
            _fusepy.FUSE(self.fs, self.mountpoint, raw_fi=True,
                         foreground=True, nothreads=False, debug=self.debug,
                         fsname="davinci", subtype="davinci",
                         default_permissions=True, direct_io=True,
                         attr_timeout=1.0, entry_timeout=1.0)
        except BaseException as e:     # noqa: B902 - reported by main thread
            self.error = e
        finally:
            self.stop_event.set()

    def _on_signal(self, signum, frame):
        self.stop_signal = signum
        self.stop_event.set()

    def start(self):
        """Create devices and mount; returns once the FUSE thread runs."""
        if _fusepy is None:
            raise RuntimeError("fusepy is not installed (pip install fusepy):"
                               " %s" % _fuse_import_error)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        signal.signal(signal.SIGUSR2, lambda s, f: None)
        # SIGUSR1 writes every thread's stack to the log: what a hung
        # daemon is doing (scripts/with-fuse.sh asks when a command fails)
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        self._create_devices()
        self.fs = DavinciFS(self.devices)
        self.thread = threading.Thread(target=self._run_fuse,
                                       name="fuse-loop", daemon=True)
        self.thread.start()

    def wait_ready(self, timeout=20.0) -> bool:
        """True once the mount is up and davinci_manager answers."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not self.thread.is_alive():
                return False
            if mnt.mount_entry(self.mountpoint) and \
                    mnt.nodes_answer(self.mountpoint):
                return True
            time.sleep(0.02)
        return False

    # --- run and stop ------------------------------------------------------
    def serve_forever(self):
        while not self.stop_event.is_set():
            self.stop_event.wait(0.5)
        if self.stop_signal is not None:
            log.info("%s: unmounting %s",
                     signal.Signals(self.stop_signal).name, self.mountpoint)
        elif self.error is not None:
            log.error("FUSE loop failed: %s", self.error)
        else:
            log.info("%s was unmounted", self.mountpoint)
        self.stop()

    def _poke(self):
        # Any request makes a worker go round its loop and notice the exit
        # flag; a lookup of a name that does not exist is never cached.
        try:
            os.stat(os.path.join(self.mountpoint, ".stop-%d" % time.time_ns()))
        except OSError:
            pass

    def stop(self):
        fs = self.fs
        if fs is not None:
            fs.stopping = True
        # wake every blocked waiter: they return -ENODEV at once
        for d in self.devices:
            d.lost()
        t = self.thread
        if t is not None and t.is_alive():
            if fs is not None and fs.fuse_ptr:
                _fusepy._libfuse.fuse_exit(ctypes.c_void_p(fs.fuse_ptr))
                threading.Thread(target=self._poke, daemon=True).start()
                t.join(2.0)
            if t.is_alive():
                # not mounted yet, or the loop did not wake: unmount under it
                mnt.fusermount_unmount(self.mountpoint, lazy=True)
            deadline = time.monotonic() + 10
            while t.is_alive() and time.monotonic() < deadline:
                try:
                    signal.pthread_kill(t.ident, signal.SIGUSR2)
                except (ProcessLookupError, OSError):
                    break
                t.join(0.2)
            if t.is_alive():
                log.error("FUSE loop did not stop; exiting anyway")
        if mnt.mount_entry(self.mountpoint):
            mnt.fusermount_unmount(self.mountpoint, lazy=True)
        if fs is not None:
            left = fs.take_handles()
            if left:
                log.info("closing %d context(s) still open", len(left))
            for _path, ctx in left:
                if ctx is not None:
                    ctx.close()
        for d in self.devices:
            d.close()
        self.devices = []
        if self.backing_dir:
            shutil.rmtree(self.backing_dir, ignore_errors=True)
            self.backing_dir = None
        if self.pidfile:
            mnt.remove_pidfile(self.pidfile, os.getpid())
        log.info("stopped")
