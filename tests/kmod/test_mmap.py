"""mmap of device memory: data path, validation, lifetime."""
import ctypes
import errno
import mmap
import os

import pytest

import dvk
from polling import wait_for

PAGE = mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAP_FAILED = ctypes.c_void_p(-1).value


def test_memcpy_through_mapped_memory(fd0):
    a = dvk.alloc(fd0, 1 << 20)
    b = dvk.alloc(fd0, 1 << 20)
    ma = mmap.mmap(fd0, a.alloc_size, offset=a.mmap_offset)
    mb = mmap.mmap(fd0, b.alloc_size, offset=b.mmap_offset)
    pattern = bytes(range(256)) * 4096
    ma[:] = pattern
    s = dvk.Stream(fd0)
    db = s.submit(dvk.Task(opcode=dvk.OP_MEMCPY, dst=b.dev_addr,
                           src0=a.dev_addr, count=1 << 20))
    w = s.wait(db.last_seq)
    assert w.status == 0
    assert mb[:] == pattern
    s.close()
    ma.close()
    mb.close()


def test_pinned_host_memory_maps(fd0):
    h = dvk.alloc(fd0, 8192, dvk.MEM_HOST)
    m = mmap.mmap(fd0, h.alloc_size, offset=h.mmap_offset)
    m[:5] = b"hello"
    assert m[:5] == b"hello"
    m.close()


def test_mmap_rejects(fd0):
    a = dvk.alloc(fd0, 2 * PAGE)
    with pytest.raises(PermissionError):
        mmap.mmap(fd0, PAGE, prot=mmap.PROT_READ | mmap.PROT_EXEC,
                  offset=a.mmap_offset)
    with pytest.raises(OSError) as e:
        mmap.mmap(fd0, PAGE, flags=mmap.MAP_PRIVATE, offset=a.mmap_offset)
    assert e.value.errno == errno.EINVAL
    # Past the end of the buffer, and offsets nobody handed out.
    for size, off in ((3 * PAGE, a.mmap_offset),
                      (PAGE, a.mmap_offset + 64 * (1 << 20)),
                      (PAGE, 7 << 40), (PAGE, 0x7FFFF000)):
        with pytest.raises(OSError):
            mmap.mmap(fd0, size, offset=off)


def test_mapping_outlives_free_and_split():
    base = int(dvk.sysfs(0, "hbm_used"))
    fd = dvk.open_dev(0)
    a = dvk.alloc(fd, 4 * PAGE)
    addr = libc.mmap(None, 4 * PAGE, mmap.PROT_READ | mmap.PROT_WRITE,
                     mmap.MAP_SHARED, fd, a.mmap_offset)
    assert addr != MAP_FAILED
    buf = (ctypes.c_ubyte * (4 * PAGE)).from_address(addr)
    buf[0] = 1
    buf[3 * PAGE] = 3
    # Free the buffer while mapped: the memory stays valid.
    dvk.ioctl(fd, dvk.MEM_FREE, dvk.U64(v=a.handle))
    buf[PAGE] = 2
    # Split the VMA: unmap pages 1-2, keep 0 and 3.
    assert libc.munmap(addr + PAGE, 2 * PAGE) == 0
    assert buf[0] == 1 and buf[3 * PAGE] == 3
    os.close(fd)
    # The file stays open through the mappings; still usable, and the
    # module stays pinned.
    buf[0] = 5
    assert buf[0] == 5
    import subprocess
    assert subprocess.run(["rmmod", "davinci"],
                          capture_output=True).returncode != 0
    assert libc.munmap(addr, PAGE) == 0
    assert libc.munmap(addr + 3 * PAGE, PAGE) == 0
    assert wait_for(lambda: int(dvk.sysfs(0, "hbm_used")) == base)


def test_ring_mapping(fd0):
    s = dvk.Stream(fd0, entries=16)
    hdr = bytes(s.sq[:16])
    entries = int.from_bytes(hdr[8:12], "little")
    assert entries == 16
    s.close()
