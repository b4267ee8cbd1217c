# SPDX-License-Identifier: GPL-2.0
"""davinci-fused's limits on open contexts (--max-contexts-per-process,
--max-contexts-per-user) and the leftovers of a crashed daemon
(``davinci doctor`` finds them, ``davinci-fused --cleanup`` removes them).
"""

import errno
import os
import signal
import subprocess
import sys

import pytest

import fuse_helpers as H

import davinci
from davinci.discovery import Backend


def _limits(mp):
    with H.Node(os.path.join(mp, "davinci_manager")) as m:
        return m.ioctl(H.U.DAVINCI_IOCTL_GET_LIMITS, H.U.davinci_limits())


CHILD = r"""
import errno, os, sys
import fuse_helpers as H
import davinci
mp = sys.argv[1]
nodes = []
try:
    while len(nodes) < 10:
        nodes.append(H.Node(os.path.join(mp, "davinci%d" % (len(nodes) % 2))))
except OSError as e:
    print("opened", len(nodes), "errno", e.errno)
try:
    davinci.Device(0)
except davinci.ContextLimitError as e:
    print("LIMIT", e.limit, e.value, e)
"""


@pytest.fixture
def limited(fuse_ok, mountpoint):
    d = H.Daemon(mountpoint, extra=["--max-contexts-per-process", "3",
                                    "--max-contexts-per-user", "5"]).start()
    yield d
    assert d.stop(), d.log()


def test_context_limits(limited):
    mp = limited.mp
    lim = _limits(mp)
    assert (lim.contexts_per_process, lim.contexts_per_user) == (3, 5)
    nodes = [H.Node(os.path.join(mp, "davinci%d" % (i % 2)))
             for i in range(3)]
    try:
        # a fourth context of this process, on either device: EMFILE
        for i in range(2):
            assert H.errno_of(H.Node, os.path.join(mp, "davinci%d" % i)) \
                == errno.EMFILE
        # the runtime names the limit, its value and the daemon's flag
        with pytest.raises(davinci.ContextLimitError) as ei:
            davinci.Device(0, Backend("dir", mp))
        e = ei.value
        assert e.limit == "contexts_per_process" and e.value == 3
        assert "contexts per process limit 3" in str(e)
        assert "--max-contexts-per-process" in str(e)
        # another process of the same user gets the other two, then EUSERS
        env = H.child_env({"PYTHONPATH": H.HERE + os.pathsep + H.USERSPACE,
                           "DAVINCI_DEV_DIR": mp})
        r = subprocess.run([sys.executable, "-c", CHILD, mp], env=env,
                           capture_output=True, text=True, timeout=60)
        assert "opened 2 errno %d" % errno.EUSERS in r.stdout, \
            r.stdout + r.stderr
        line = [x for x in r.stdout.splitlines() if x.startswith("LIMIT")]
        assert line, r.stdout + r.stderr
        assert line[0].startswith("LIMIT contexts_per_user 5 ")
        assert "contexts per user limit 5" in line[0]
        assert "--max-contexts-per-user" in line[0]
    finally:
        for n in nodes:
            n.close()
    # closed (FUSE releases asynchronously): this process may open again
    assert H.wait_for(lambda: H.errno_of(
        lambda: H.Node(os.path.join(mp, "davinci0")).close()) == 0, 10)


def test_bad_limit_flag(fuse_ok, mountpoint):
    r = H.Daemon(mountpoint, extra=["--max-contexts-per-user", "-1"]).run()
    assert r.returncode == 1 and "--max-contexts-per-user" in r.stderr


def _doctor(mp):
    env = H.child_env({"DAVINCI_DEV_DIR": mp})
    return subprocess.run([sys.executable, "-m", "davinci.cli", "doctor"],
                          env=env, capture_output=True, text=True,
                          timeout=120)


def test_crashed_daemon_leftovers_found_and_cleaned(fuse_ok, mountpoint):
    d = H.Daemon(mountpoint, devices=1, hbm_mb=16, host_mb=8).start()
    with H.Node(os.path.join(d.mp, "davinci0")) as n:
        arena = bytes(n.mmap_info().arena_path[0]).split(b"\0")[0].decode()
        a = n.alloc(4 << 20)
        m = n.map(a.mmap_offset, 4 << 20)
        m[:] = b"\x5a" * (4 << 20)      # the memory file now holds 4 MiB
        m.close()
    memdir = os.path.dirname(os.path.dirname(arena))
    assert os.path.basename(memdir).startswith("davinci-%d-%d-"
                                               % (os.getuid(), d.pid))
    d.kill(signal.SIGKILL)
    assert H.wait_for(lambda: H.proc_dead(d.pid), 10)
    assert os.path.isdir(memdir)

    # doctor reports both, with the size and the command that clears each
    r = _doctor(d.mp)
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    assert "stale FUSE mount %s" % d.mp in out, out
    assert "fusermount -u -z %s" % d.mp in out, out
    assert "stale device memory directory %s" % memdir in out, out
    assert "rm -rf %s" % memdir in out, out
    size = [x for x in out.splitlines() if memdir in x and "MiB" in x]
    assert size and "davinci-fused pid %d" % d.pid in size[0], out
    assert float(size[0].split(" MiB")[0].rsplit("(", 1)[1]) >= 4.0, out
    assert "davinci-fused --cleanup" in out

    # --cleanup MOUNTPOINT removes them, says so, and exits
    cmd = [sys.executable, "-m", "davinci.fused", "--cleanup", d.mp]
    r = subprocess.run(cmd, env=H.child_env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "removed stale FUSE mount %s" % d.mp in r.stdout, r.stdout
    assert "removed stale device memory directory %s" % memdir in r.stdout
    assert "removed 2 of 2 leftover(s)" in r.stdout
    assert not os.path.exists(memdir)
    assert H.mnt.mount_entry(d.mp) is None
    assert not os.path.exists(d.pidfile)
    r = subprocess.run(cmd, env=H.child_env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and "nothing to clean" in r.stdout, r.stdout

    out = _doctor(d.mp).stdout
    assert "stale FUSE mount %s" % d.mp not in out, out
    assert memdir not in out, out
    # the mountpoint is usable again
    d2 = H.Daemon(mountpoint, devices=1).start()
    try:
        assert "stale mount" not in (d2.last.stderr or "")
        with H.Node(os.path.join(d2.mp, "davinci0")) as n:
            assert n.version().abi_major == 1
    finally:
        assert d2.stop()
