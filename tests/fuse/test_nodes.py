# SPDX-License-Identifier: GPL-2.0
"""The ABI through davinci-fused's nodes: raw ioctls, coherent mappings,
concurrency, and what SIGKILL of a client or of the daemon does."""

import errno
import mmap
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import fuse_helpers as H
from fuse_helpers import U


def node(daemon, name="davinci0"):
    return H.Node(os.path.join(daemon.mp, name))


def test_get_version_and_info(daemon):
    with node(daemon) as n:
        v = n.version()
        assert v.abi_major == U.DAVINCI_ABI_MAJOR
        assert v.backend == b"fuse"
        assert v.driver_version
        info = n.info()
        assert info.index == 0
        assert info.hbm_total == 16 << 20
        assert info.hbm_free == info.hbm_total
        assert info.aicores == 2
        assert info.name.startswith(b"Ascend")


def test_manager_get_version(daemon):
    with node(daemon, "davinci_manager") as m:
        try:
            v = m.version()
        except OSError as e:
            if e.errno == errno.ENOTTY:
                pytest.skip("core built without dvc_manager_ioctl")
            raise
        assert v.abi_major == U.DAVINCI_ABI_MAJOR
        assert v.backend == b"fuse"
        # device ioctls are not the manager's
        assert H.errno_of(m.info) in (errno.ENOTTY, errno.EINVAL)


def test_mem_alloc_free_and_mmap_info(daemon):
    with node(daemon) as n:
        before = n.info().hbm_free
        a = n.alloc(10000)
        assert a.handle and a.alloc_size == 12288
        assert a.dev_addr >= 0x100000000
        assert n.info().hbm_free == before - a.alloc_size
        mi = n.mmap_info()
        assert mi.method == U.DAVINCI_MMAP_FILE
        for arena in range(U.DAVINCI_ARENAS):
            path = bytes(mi.arena_path[arena]).split(b"\0")[0].decode()
            st = os.stat(path)
            assert st.st_uid == os.getuid()
            assert os.stat(os.path.dirname(path)).st_mode & 0o077 == 0
        # too big: -ENOMEM, nothing changes
        assert H.errno_of(n.alloc, 64 << 20) == errno.ENOMEM
        assert H.errno_of(n.alloc, 0) == errno.EINVAL
        n.free(a.handle)
        assert n.info().hbm_free == before
        assert H.errno_of(n.free, a.handle) == errno.ENOENT


def test_contexts_are_per_open(daemon):
    with node(daemon) as n1, node(daemon) as n2:
        a = n1.alloc(4096)
        # another open file is another context: the handle is not its own
        assert H.errno_of(n2.free, a.handle) == errno.ENOENT
        before = n2.info().hbm_free
    # closing the file freed n1's memory (release -> context close)
    with node(daemon) as n3:
        assert H.wait_for(lambda: n3.info().hbm_free == before + 4096, 5)


def test_node_read_write_mmap_refused(daemon):
    with node(daemon) as n:
        assert H.errno_of(os.read, n.fd, 16) == errno.EINVAL
        assert H.errno_of(os.write, n.fd, b"x") == errno.EINVAL
        with pytest.raises((OSError, ValueError)):
            mmap.mmap(n.fd, 4096)
        assert H.errno_of(H.Node.ioctl, n, 0xDEAD0000, bytearray(8)) in (
            errno.ENOTTY, errno.EINVAL)


def test_coherence_both_ways(daemon):
    """Host writes through a mapping are seen by the next task; task results
    are seen through a mapping that already existed. No flush needed."""
    size = 1 << 20
    with node(daemon) as n:
        src, dst = n.alloc(size), n.alloc(size)
        msrc, mdst = n.map(src.mmap_offset, size), n.map(dst.mmap_offset, size)
        # touch the destination first so its pages are already mapped in
        assert mdst[:16] == bytes(16)
        pattern = bytes(range(256)) * (size // 256)
        msrc[:] = pattern
        s = n.stream()
        seq = s.submit(H.memcpy(dst.dev_addr, src.dev_addr, size))
        w = s.wait(seq)
        assert w.status == U.DAVINCI_STATUS_OK
        assert mdst[:] == pattern
        # and back: the host rewrites dst, a task copies it over src, a task
        # sets a range: all visible in the existing mappings
        mdst[:4096] = b"\xa5" * 4096
        s.submit(H.memcpy(src.dev_addr, dst.dev_addr, 4096),
                 H.memset(src.dev_addr + 8192, 0x5A, 100))
        assert s.wait().status == U.DAVINCI_STATUS_OK
        assert msrc[:4096] == b"\xa5" * 4096
        assert msrc[4096:8192] == pattern[4096:8192]
        assert msrc[8192:8292] == b"\x5a" * 100
        assert msrc[8292:8300] == pattern[8292:8300]
        # a fresh mapping sees the same bytes
        m2 = n.map(src.mmap_offset, size)
        assert m2[:] == msrc[:]
        for m in (m2, msrc, mdst):
            m.close()
        s.close()


def test_blocking_waits_do_not_stall_other_clients(daemon):
    """NOTIFY_WAIT and STREAM_WAIT block in their FUSE worker threads;
    another client is served completely while they are still blocked."""
    results = {}

    def notify_wait():
        with node(daemon) as n:
            e = H.errno_of(n.ioctl, U.DAVINCI_IOCTL_NOTIFY_WAIT,
                           U.davinci_notification(timeout_ms=4000))
            results.setdefault("notify", []).append(e)

    def stream_wait():
        with node(daemon, "davinci1") as n:
            s = n.stream()
            seq = s.submit(H.nop(4_000_000))
            w = s.wait(seq, timeout_ms=20000)
            results["stream"] = w.status
            s.close()

    # more blocked clients than libfuse 3's default of 10 worker threads
    threads = [threading.Thread(target=notify_wait) for _ in range(11)]
    threads.append(threading.Thread(target=stream_wait))
    for t in threads:
        t.start()
    time.sleep(0.3)
    with node(daemon) as other:
        for _ in range(50):
            other.info()
        a = other.alloc(4096)
        other.free(a.handle)
    # the other client finished while every wait was still blocked
    assert not results, "a blocked wait returned early: %r" % results
    for t in threads:
        t.join(30)
    assert results["notify"] == [errno.ETIMEDOUT] * 11
    assert results["stream"] == U.DAVINCI_STATUS_OK


CLIENT = r"""
import os, sys, time
sys.path.insert(0, %(here)r)
import fuse_helpers as H
n = H.Node(%(node)r)
a = n.alloc(4 << 20)
m = n.map(a.mmap_offset, 4 << 20)
m[:] = b"\x11" * (4 << 20)
s = n.stream()
s.submit(*[H.nop(2_000_000) for _ in range(8)])
print("ready", flush=True)
time.sleep(60)
"""


def test_sigkill_client_mid_stream_frees_everything(daemon):
    with node(daemon) as mon:
        before = mon.info().hbm_free
        p = subprocess.Popen(
            [sys.executable, "-c", CLIENT % dict(
                here=H.HERE, node=os.path.join(daemon.mp, "davinci0"))],
            stdout=subprocess.PIPE, text=True, env=H.child_env())
        try:
            assert p.stdout.readline().strip() == "ready"
            assert mon.info().hbm_free <= before - (4 << 20)
            time.sleep(0.2)      # a NOP task is running now
            p.send_signal(signal.SIGKILL)
            p.wait(10)
        finally:
            if p.poll() is None:
                p.kill()
        assert H.wait_for(lambda: mon.info().hbm_free == before, 10), \
            "HBM not returned: %d != %d" % (mon.info().hbm_free, before)
        mi = U.davinci_mem_info(flags=U.DAVINCI_MEM_HOST)
        mon.ioctl(U.DAVINCI_IOCTL_MEM_INFO, mi)
        assert mi.free == mi.total, "pinned host / ring memory not returned"
    assert not H.proc_dead(daemon.pid)
    assert H.mnt.nodes_answer(daemon.mp)


def test_sigkill_daemon_gives_clients_a_prompt_error(fuse_ok, mountpoint):
    d = H.Daemon(mountpoint).start()
    n = H.Node(os.path.join(d.mp, "davinci0"))
    try:
        s = n.stream()
        seq = s.submit(H.nop(20_000_000))
        got = {}

        def blocked():
            t = time.monotonic()
            got["errno"] = H.errno_of(s.wait, seq, 30000)
            got["t"] = time.monotonic() - t

        th = threading.Thread(target=blocked)
        th.start()
        time.sleep(0.3)
        d.kill(signal.SIGKILL)
        th.join(5)
        assert not th.is_alive(), "a waiting client hangs after daemon death"
        assert got["errno"] in H.mnt.DEAD
        assert H.errno_of(n.info) in H.mnt.DEAD
        assert H.errno_of(H.Node, os.path.join(d.mp, "davinci1")) in \
            H.mnt.DEAD
        s.close()
    finally:
        n.close()
        assert H.wait_for(lambda: H.proc_dead(d.pid), 10)
        d.stop()
