"""Minimal, self-contained ioctl helpers for the kernel-module tests.

These tests exercise the Linux binding (davinci.ko) directly, so they do
not depend on the Python runtime: a few ctypes mirrors of
kmod/include/uapi/davinci.h are enough.
"""
import ctypes
import fcntl
import os

DEV_DIR = os.environ.get("DAVINCI_DEV_DIR", "/dev")
SYS_BUS = "/sys/bus/davinci"
SYS_CLASS = "/sys/class/davinci"
GROUP = "HwHiAiUser"

_IOC_WRITE, _IOC_READ = 1, 2


def _ioc(d, nr, size):
    return (d << 30) | (size << 16) | (0xDA << 8) | nr


class S(ctypes.Structure):
    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % (f[0], getattr(self, f[0])) for f in self._fields_))


class Version(S):
    _fields_ = [("abi_major", ctypes.c_uint32), ("abi_minor", ctypes.c_uint32),
                ("features", ctypes.c_uint64),
                ("driver_version", ctypes.c_char * 32),
                ("backend", ctypes.c_char * 32)]


class DeviceInfo(S):
    _fields_ = [("index", ctypes.c_uint32), ("aicores", ctypes.c_uint32),
                ("hbm_total", ctypes.c_uint64), ("hbm_free", ctypes.c_uint64),
                ("host_total", ctypes.c_uint64), ("host_free", ctypes.c_uint64),
                ("task_timeout_ms", ctypes.c_uint32), ("health", ctypes.c_uint32),
                ("name", ctypes.c_char * 32), ("serial", ctypes.c_char * 32)]


class MemAlloc(S):
    _fields_ = [("size", ctypes.c_uint64), ("flags", ctypes.c_uint32),
                ("pad", ctypes.c_uint32), ("handle", ctypes.c_uint64),
                ("dev_addr", ctypes.c_uint64), ("mmap_offset", ctypes.c_uint64),
                ("alloc_size", ctypes.c_uint64)]


class U64(S):
    _fields_ = [("v", ctypes.c_uint64)]


class StreamCreate(S):
    _fields_ = [("sq_entries", ctypes.c_uint32), ("cq_entries", ctypes.c_uint32),
                ("priority", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("stream_id", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("sq_mmap_offset", ctypes.c_uint64),
                ("cq_mmap_offset", ctypes.c_uint64),
                ("sq_size", ctypes.c_uint64), ("cq_size", ctypes.c_uint64)]


class Doorbell(S):
    _fields_ = [("stream_id", ctypes.c_uint32), ("sq_tail", ctypes.c_uint32),
                ("first_seq", ctypes.c_uint64), ("last_seq", ctypes.c_uint64)]


class StreamWait(S):
    _fields_ = [("stream_id", ctypes.c_uint32), ("timeout_ms", ctypes.c_uint32),
                ("seq", ctypes.c_uint64), ("status", ctypes.c_uint32),
                ("pad", ctypes.c_uint32), ("completed_seq", ctypes.c_uint64)]


class Notification(S):
    _fields_ = [("timeout_ms", ctypes.c_uint32), ("type", ctypes.c_uint32),
                ("stream_id", ctypes.c_uint32), ("status", ctypes.c_uint32),
                ("seq", ctypes.c_uint64), ("user_data", ctypes.c_uint64),
                ("timestamp_ns", ctypes.c_uint64), ("dropped", ctypes.c_uint32),
                ("pad", ctypes.c_uint32)]


class Task(S):
    _fields_ = [("opcode", ctypes.c_uint16), ("dtype", ctypes.c_uint8),
                ("dst_dtype", ctypes.c_uint8), ("pad0", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("event_id", ctypes.c_uint32),
                ("user_data", ctypes.c_uint64), ("dst", ctypes.c_uint64),
                ("src0", ctypes.c_uint64), ("src1", ctypes.c_uint64),
                ("count", ctypes.c_uint64), ("m", ctypes.c_uint32),
                ("n", ctypes.c_uint32), ("k", ctypes.c_uint32),
                ("imm", ctypes.c_uint32), ("params", ctypes.c_uint64),
                ("params_size", ctypes.c_uint32),
                ("params_version", ctypes.c_uint32),
                ("src2", ctypes.c_uint64), ("reserved", ctypes.c_uint64 * 4)]


assert ctypes.sizeof(Task) == 128

GET_VERSION = _ioc(_IOC_READ, 0x00, ctypes.sizeof(Version))
DEVICE_INFO = _ioc(_IOC_READ, 0x01, ctypes.sizeof(DeviceInfo))
CTX_RESET = _ioc(0, 0x03, 0)
MEM_ALLOC = _ioc(_IOC_READ | _IOC_WRITE, 0x10, ctypes.sizeof(MemAlloc))
MEM_FREE = _ioc(_IOC_WRITE, 0x11, 8)
STREAM_CREATE = _ioc(_IOC_READ | _IOC_WRITE, 0x20, ctypes.sizeof(StreamCreate))
DOORBELL = _ioc(_IOC_READ | _IOC_WRITE, 0x22, ctypes.sizeof(Doorbell))
STREAM_RESET = _ioc(_IOC_WRITE, 0x24, 8)
STREAM_WAIT = _ioc(_IOC_READ | _IOC_WRITE, 0x23, ctypes.sizeof(StreamWait))
NOTIFY_WAIT = _ioc(_IOC_READ | _IOC_WRITE, 0x40, ctypes.sizeof(Notification))

OP_NOP, OP_MEMCPY, OP_MEMSET = 0, 1, 2
OP_ADD = 6
TASK_F_NOTIFY = 1
MEM_HOST = 1 << 8
RING_ENTRIES_OFFSET = 64


def ioctl(fd, cmd, arg=None):
    """ioctl with a ctypes struct (mutated in place); returns it."""
    if arg is None:
        fcntl.ioctl(fd, cmd, 0)
        return None
    fcntl.ioctl(fd, cmd, arg, True)
    return arg


_libc = ctypes.CDLL(None, use_errno=True)
_libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong]
_libc.ioctl.restype = ctypes.c_int


def raw_ioctl(fd, cmd, addr):
    """ioctl with a raw (possibly bad) user address; returns 0 or -errno."""
    if _libc.ioctl(fd, cmd, addr) < 0:
        return -ctypes.get_errno()
    return 0


def node(i):
    return os.path.join(DEV_DIR, "davinci%d" % i)


def open_dev(i=0):
    return os.open(node(i), os.O_RDWR | os.O_CLOEXEC)


def sysfs(i, attr):
    with open(os.path.join(SYS_CLASS, "davinci%d" % i, attr)) as f:
        return f.read().strip()


def bus_write(attr, text):
    with open(os.path.join(SYS_BUS, attr), "w") as f:
        f.write(text)


def alloc(fd, size, flags=0):
    return ioctl(fd, MEM_ALLOC, MemAlloc(size=size, flags=flags))


class Stream:
    """A stream with its submission ring mapped."""

    def __init__(self, fd, entries=64):
        import mmap
        self.fd = fd
        self.sc = ioctl(fd, STREAM_CREATE,
                        StreamCreate(sq_entries=entries, cq_entries=entries))
        self.id = self.sc.stream_id
        self.entries = entries
        self.sq = mmap.mmap(fd, self.sc.sq_size, mmap.MAP_SHARED,
                            mmap.PROT_READ | mmap.PROT_WRITE,
                            offset=self.sc.sq_mmap_offset)
        self.tail = 0

    def submit(self, *tasks):
        for t in tasks:
            slot = self.tail % self.entries
            off = RING_ENTRIES_OFFSET + slot * 128
            self.sq[off:off + 128] = bytes(t)
            self.tail += 1
        return ioctl(self.fd, DOORBELL,
                     Doorbell(stream_id=self.id, sq_tail=self.tail & 0xffffffff))

    def wait(self, seq=0, timeout_ms=60000):
        return ioctl(self.fd, STREAM_WAIT,
                     StreamWait(stream_id=self.id, timeout_ms=timeout_ms,
                                seq=seq))

    def reset(self):
        return ioctl(self.fd, STREAM_RESET, U64(v=self.id))

    def close(self):
        self.sq.close()
