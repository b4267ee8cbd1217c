# SPDX-License-Identifier: GPL-2.0
"""davinci-fused lifecycle: mount, nodes, SIGTERM/SIGINT, busy and stale
mountpoints, daemonisation."""

import errno
import os
import signal
import stat
import subprocess
import sys

import fuse_helpers as H


def test_mount_nodes_and_sigterm_unmounts(daemon):
    mp = daemon.mp
    fstype, source = H.mnt.mount_entry(mp)
    assert fstype == "fuse.davinci" and source == "davinci"
    assert sorted(os.listdir(mp)) == ["davinci0", "davinci1",
                                      "davinci_manager"]
    for name in os.listdir(mp):
        st = os.stat(os.path.join(mp, name))
        assert stat.S_ISREG(st.st_mode)
        assert stat.S_IMODE(st.st_mode) == 0o660
        assert st.st_uid == os.getuid()
    assert not os.path.exists(os.path.join(mp, "davinci2"))
    # the nodes answer at once: the start command returned only when ready
    with H.Node(os.path.join(mp, "davinci1")) as n:
        assert n.info().index == 1
    backing = os.path.dirname(os.path.dirname(
        bytes(H.Node(os.path.join(mp, "davinci0")).mmap_info().arena_path[0])
        .split(b"\0")[0].decode()))
    assert stat.S_IMODE(os.stat(backing).st_mode) == 0o700
    assert H.mnt.read_pidfile(daemon.pidfile) == daemon.pid

    daemon.kill(signal.SIGTERM)
    assert H.wait_for(lambda: not daemon.mounted(), 10), daemon.log()
    assert H.wait_for(lambda: H.proc_dead(daemon.pid), 10)
    assert not os.path.exists(daemon.pidfile)
    assert not os.path.exists(backing), "device memory files left behind"
    assert os.listdir(mp) == []
    assert "SIGTERM" in daemon.log()


def test_sigint_unmounts_foreground(fuse_ok, mountpoint):
    d = H.Daemon(mountpoint)
    p = subprocess.Popen(d.command()[:-1] + ["--foreground", d.mp],
                         env=d.env, stderr=subprocess.PIPE, text=True)
    try:
        assert H.wait_for(lambda: H.mnt.mount_entry(d.mp) and
                          H.mnt.nodes_answer(d.mp), 20)
        p.send_signal(signal.SIGINT)
        assert p.wait(15) == 0
        err = p.stderr.read()
        assert "SIGINT" in err and "stopped" in err
        assert not d.mounted()
    finally:
        if p.poll() is None:
            p.kill()
        d.stop()


def test_busy_mountpoint_refused(daemon, tmp_path):
    other = H.Daemon(daemon.mp)
    r = other.run()
    assert r.returncode == 1
    assert "busy" in r.stderr and "already mounted" in r.stderr
    # the first daemon is unharmed
    assert H.mnt.nodes_answer(daemon.mp)

    full = tmp_path / "full"
    full.mkdir()
    (full / "somefile").write_text("x")
    r = H.Daemon(str(full)).run()
    assert r.returncode == 1
    assert "not empty" in r.stderr
    assert not H.mnt.mount_entry(str(full))


def test_stale_mount_detected_and_cleaned(fuse_ok, mountpoint):
    d = H.Daemon(mountpoint).start()
    with H.Node(os.path.join(d.mp, "davinci0")) as n:
        arena = bytes(n.mmap_info().arena_path[0]).split(b"\0")[0].decode()
    stale_dir = os.path.dirname(os.path.dirname(arena))
    d.kill(signal.SIGKILL)
    assert H.wait_for(lambda: H.proc_dead(d.pid), 10)
    assert H.errno_of(os.listdir, d.mp) in H.mnt.DEAD
    assert H.mnt.mount_state(d.mp) == "stale"

    d2 = H.Daemon(mountpoint)
    try:
        r = d2.run()
        assert r.returncode == 0, r.stderr + d2.log()
        assert "stale mount" in r.stderr
        assert "removed stale device memory directory" in r.stderr
        assert not os.path.exists(stale_dir)
        with H.Node(os.path.join(d.mp, "davinci0")) as n:
            assert n.version().abi_major == 1
    finally:
        assert d2.stop()


def test_default_mountpoint(monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1234")
    assert H.mnt.default_mountpoint() == "/run/user/1234/davinci"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert H.mnt.default_mountpoint() == "/tmp/davinci-%d" % os.getuid()


def test_bad_arguments(fuse_ok, mountpoint):
    r = subprocess.run([sys.executable, "-m", "davinci.fused", "--devices",
                        "0", mountpoint], env=H.child_env(),
                       capture_output=True, text=True)
    assert r.returncode == 1 and "--devices" in r.stderr


def test_sigterm_with_busy_clients_is_prompt(fuse_ok, mountpoint):
    """A client blocked in a wait gets -ENODEV at once (device lost), the
    daemon unmounts without waiting for it, later calls get ENOTCONN."""
    import threading
    import time
    d = H.Daemon(mountpoint).start()
    n = H.Node(os.path.join(d.mp, "davinci0"))
    try:
        n.alloc(1 << 20)
        got = []
        th = threading.Thread(target=lambda: got.append(H.errno_of(
            n.ioctl, H.U.DAVINCI_IOCTL_NOTIFY_WAIT,
            H.U.davinci_notification(timeout_ms=30000))))
        th.start()
        time.sleep(0.3)
        d.kill(signal.SIGTERM)
        th.join(5)
        assert not th.is_alive()
        assert got[0] in (0, errno.ENODEV) + H.mnt.DEAD
        assert H.wait_for(lambda: not d.mounted(), 5)
        assert H.wait_for(lambda: H.proc_dead(d.pid), 5)
        assert H.errno_of(n.info) in (errno.ENODEV,) + H.mnt.DEAD
        assert "closing 1 context(s) still open" in d.log()
    finally:
        n.close()
        d.stop()
