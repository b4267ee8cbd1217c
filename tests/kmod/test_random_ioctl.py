"""A bounded random-ioctl run from an unprivileged process.

Random command numbers (mostly the real ones), directions, sizes and
contents, on device and manager nodes. Blocking commands get a zero
timeout so the run stays bounded. Afterwards the devices still work, and
the guest script checks dmesg and the leak accounting at rmmod.
"""
import fcntl
import grp
import os
import random

import dvk
from test_perms import run_as

COUNT = int(os.environ.get("DAVINCI_RANDOM_IOCTLS", "12000"))
NRS = [0x00, 0x01, 0x02, 0x03, 0x10, 0x11, 0x12, 0x13, 0x20, 0x21, 0x22,
       0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x30, 0x31, 0x32, 0x33, 0x34,
       0x40, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85]
# nr -> offset of a __u32 timeout_ms field to force to 0
TIMEOUTS = {0x23: 4, 0x28: 0, 0x34: 4, 0x40: 0}
BAD_ADDRS = [0x10, 0xFFF, 0xFFFF800000000000, 0xFFFFFFFFFFFFF000]


def fuzz(seed):
    rnd = random.Random(seed)
    fds = [dvk.open_dev(0), dvk.open_dev(1),
           os.open(os.path.join(dvk.DEV_DIR, "davinci_manager"), os.O_RDWR)]
    for i in range(COUNT):
        fd = rnd.choice(fds)
        nr = rnd.choice(NRS) if rnd.random() < 0.9 else rnd.randrange(256)
        typ = 0xDA if rnd.random() < 0.95 else rnd.randrange(256)
        d = rnd.randrange(4)
        size = rnd.choice([0, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96,
                           520, rnd.randrange(1024), rnd.randrange(1 << 14)])
        cmd = (d << 30) | (size << 16) | (typ << 8) | nr
        buf = bytearray(rnd.getrandbits(8) for _ in range(min(size, 1024)))
        if size > 1024:
            buf += bytes(size - 1024)
        if rnd.random() < 0.5:
            # small ids and handles hit live objects more often
            for off in range(0, min(len(buf), 64) - 3, 4):
                if rnd.random() < 0.5:
                    buf[off:off + 4] = rnd.randrange(4).to_bytes(4, "little")
        if nr in TIMEOUTS and len(buf) >= TIMEOUTS[nr] + 4:
            o = TIMEOUTS[nr]
            buf[o:o + 4] = bytes(4)
        try:
            if rnd.random() < 0.03:
                dvk.raw_ioctl(fd, cmd, rnd.choice(BAD_ADDRS))
            elif size == 0:
                fcntl.ioctl(fd, cmd, 0)
            else:
                fcntl.ioctl(fd, cmd, buf, True)
        except OSError:
            pass
        if i % 500 == 499:
            # start over now and then: close frees everything
            os.close(fds[0])
            fds[0] = dvk.open_dev(0)
    for fd in fds:
        os.close(fd)
    return 0


def random_task(rnd, addrs):
    """Mostly well-formed descriptors with random shapes and addresses."""
    t = dvk.Task()
    t.opcode = rnd.randrange(20) if rnd.random() < 0.95 else rnd.randrange(1 << 16)
    t.dtype = rnd.randrange(4) if rnd.random() < 0.95 else rnd.randrange(256)
    if t.opcode == 18:
        t.dst_dtype = rnd.randrange(4)
    t.flags = rnd.choice([0, 0, 1, 2, 4, 6, rnd.getrandbits(32)])
    for f in ("dst", "src0", "src1"):
        base = rnd.choice(addrs)
        setattr(t, f, max(0, base + rnd.choice([0, 0, 4, 4096, -4,
                                                rnd.randrange(1 << 21)])))
    t.count = rnd.choice([0, 1, 7, 64, 1000, rnd.randrange(1 << 20)])
    t.m, t.n, t.k = (rnd.randrange(65) for _ in range(3))
    t.imm = rnd.getrandbits(32)
    if t.opcode in (3, 4):
        t.event_id = rnd.randrange(3)
    if rnd.random() < 0.05:
        t.reserved[rnd.randrange(len(t.reserved))] = 1
    if rnd.random() < 0.05:     # a parameter block, of the right shape or not
        t.params = max(0, rnd.choice(addrs) + rnd.choice([0, 8, -8]))
        t.params_size = rnd.choice([136, 136, 8, rnd.getrandbits(32)])
        t.params_version = rnd.choice([1, 1, 0, rnd.getrandbits(32)])
    if rnd.random() < 0.05:
        t.pad0 = 1
    return t


def fuzz_rings(seed):
    """Random descriptors through real rings: kernel-mode op kernels on
    valid, foreign and out-of-range memory."""
    import mmap
    rnd = random.Random(seed)
    fd = dvk.open_dev(0)
    bufs = [dvk.alloc(fd, rnd.choice([4096, 65536, 1 << 20]))
            for _ in range(4)]
    bufs.append(dvk.alloc(fd, 65536, dvk.MEM_HOST))
    for b in bufs:
        m = mmap.mmap(fd, b.alloc_size, offset=b.mmap_offset)
        m[:] = rnd.randbytes(b.alloc_size)
        m.close()
    addrs = [b.dev_addr for b in bufs] + [0, 1 << 47, bufs[0].dev_addr +
                                          bufs[0].alloc_size]
    streams = [dvk.Stream(fd, entries=64) for _ in range(2)]
    for i in range(COUNT // 20):
        s = rnd.choice(streams)
        n = rnd.randrange(1, 8)
        try:
            s.submit(*[random_task(rnd, addrs) for _ in range(n)])
        except OSError:
            s.tail -= n  # rejected batch: nothing was taken in
        if rnd.random() < 0.5:
            try:
                s.wait(timeout_ms=30000)
            except OSError:
                pass
            try:
                s.reset()  # a failed task stops the stream until reset
            except OSError:
                pass
    for s in streams:
        s.close()
    os.close(fd)
    return 0


def run_unprivileged(fn):
    """Run ``fn`` in a child as a member of the device group; device 0's
    DEVICE_INFO after it exited 0."""
    gid = grp.getgrnam(dvk.GROUP).gr_gid
    assert run_as([gid], fn) == 0
    fd = dvk.open_dev(0)
    info = dvk.ioctl(fd, dvk.DEVICE_INFO, dvk.DeviceInfo())
    os.close(fd)
    return info


def test_random_ioctls_unprivileged():
    info = run_unprivileged(lambda: fuzz(20261130))
    assert info.hbm_free == info.hbm_total


def test_random_descriptors_unprivileged():
    info = run_unprivileged(lambda: fuzz_rings(7))
    assert info.hbm_free == info.hbm_total
    assert info.host_free == info.host_total
