# SPDX-License-Identifier: GPL-2.0
"""davinci-fused run by an ordinary user: it mounts through the setuid
fusermount, that user's client allocates, copies and runs tasks with correct
results, and a second user cannot open the first user's nodes and is told
so: permission denied, whose daemon it is, start your own.

Runs when the tests run as root (to create the users and switch to them);
skipped otherwise.
"""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile

import pytest

import fuse_helpers as H

USERS = ("dvfuse1", "dvfuse2")

CLIENT = r"""
import errno, os, struct, sys
import fuse_helpers as H
from fuse_helpers import U
mp = sys.argv[1]
n = H.Node(os.path.join(mp, "davinci0"))
assert n.version().backend == b"fuse"
count = 1024
a, b, c = (n.alloc(count * 4) for _ in range(3))
ma, mb, mc = (n.map(x.mmap_offset, count * 4) for x in (a, b, c))
ma[:] = struct.pack("<%df" % count, *[float(i) for i in range(count)])
mb[:] = struct.pack("<%df" % count, *[0.5 * i for i in range(count)])
s = n.stream()
s.submit(U.davinci_task(opcode=U.DAVINCI_OP_ADD, dtype=U.DAVINCI_DTYPE_FLOAT32,
                        dst=c.dev_addr, src0=a.dev_addr, src1=b.dev_addr,
                        count=count),
         H.memcpy(a.dev_addr, c.dev_addr, count * 4))
w = s.wait()
assert w.status == U.DAVINCI_STATUS_OK, w.status
got = struct.unpack("<%df" % count, mc[:])
assert got == tuple(1.5 * i for i in range(count)), got[:8]
assert ma[:] == mc[:]
info = n.info()
print("OK uid=%d hbm_free=%d" % (os.getuid(), info.hbm_free))
"""

PROBE = r"""
import errno, os, sys
try:
    os.close(os.open(os.path.join(sys.argv[1], "davinci0"), os.O_RDWR))
    print("opened")
except OSError as e:
    print("errno", e.errno)
"""


OPEN_RUNTIME = r"""
import davinci
try:
    davinci.Device(0)
    print("opened")
except davinci.DevicePermissionError as e:
    print("DENIED", e)
except davinci.DavinciError as e:
    print("OTHER", type(e).__name__, e)
"""


def _run_as(user, py, args, env, timeout=60, extra=()):
    cmd = ["runuser", "-u", user, "--", "env", "-u", "XDG_RUNTIME_DIR",
           "HOME=/tmp",
           "PYTHONPATH=" + env["PYTHONPATH"],
           "DAVINCI_CORE_LIB=" + env["DAVINCI_CORE_LIB"]] + list(extra) + \
        [py] + args
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def users():
    if os.geteuid() != 0:
        pytest.skip("needs root to create and switch to test users")
    if not shutil.which("runuser") or not shutil.which("useradd"):
        pytest.skip("runuser/useradd missing")
    created = []
    for u in USERS:
        try:
            pwd.getpwnam(u)
        except KeyError:
            r = subprocess.run(["useradd", "--system", "--no-create-home",
                                "--shell", "/usr/sbin/nologin", u],
                               capture_output=True, text=True)
            if r.returncode != 0:
                pytest.skip("cannot create user %s: %s" % (u, r.stderr))
            created.append(u)
    yield USERS
    for u in created:
        subprocess.run(["userdel", u], capture_output=True)


@pytest.fixture(scope="module")
def shared(users, core_lib):
    """A world-readable copy of the package, the helpers and the core, so
    the test users can run them whatever the repo's permissions are."""
    d = tempfile.mkdtemp(prefix="davinci-unpriv-", dir="/tmp")
    os.chmod(d, 0o755)
    py = os.path.join(d, "py")
    shutil.copytree(os.path.join(H.USERSPACE, "davinci"),
                    os.path.join(py, "davinci"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(os.path.join(H.HERE, "fuse_helpers.py"), py)
    shutil.copy(os.path.join(os.path.dirname(H.HERE), "polling.py"), py)
    lib = os.path.join(d, "libdavinci_core.so")
    shutil.copy(core_lib, lib)
    for root, dirs, files in os.walk(d):
        for x in dirs:
            os.chmod(os.path.join(root, x), 0o755)
        for x in files:
            os.chmod(os.path.join(root, x), 0o644)
    os.chmod(lib, 0o755)
    env = {"PYTHONPATH": py, "DAVINCI_CORE_LIB": lib}
    # an interpreter the users can run, with fusepy
    for cand in (sys.executable, "/opt/davinci-venv/bin/python"):
        r = _run_as(users[0], cand, ["-c", "import fuse, davinci._corelib as c;"
                                     " c.load()"], env)
        if r.returncode == 0:
            break
    else:
        shutil.rmtree(d, ignore_errors=True)
        pytest.skip("no python with fusepy that %s can run (tried %s and "
                    "/opt/davinci-venv/bin/python): %s"
                    % (users[0], sys.executable, r.stderr[-500:]))
    yield d, cand, env
    shutil.rmtree(d, ignore_errors=True)


def test_unprivileged_daemon_client_and_isolation(fuse_ok, users, shared):
    d, py, env = shared
    u1, u2 = users
    pw1 = pwd.getpwnam(u1)
    home = os.path.join(d, u1)
    os.mkdir(home, 0o755)
    os.chown(home, pw1.pw_uid, pw1.pw_gid)
    mp = os.path.join(home, "mnt")
    daemon = H.Daemon(mp, devices=1, hbm_mb=16, host_mb=8, python=py,
                      user=u1, env=env)
    r = daemon.run()
    assert r.returncode == 0, r.stderr + daemon.log()
    try:
        fstype, _src = H.mnt.mount_entry(mp)
        assert fstype == "fuse.davinci"
        # the daemon runs as u1
        with open("/proc/%d/status" % daemon.pid) as f:
            uid_line = [x for x in f if x.startswith("Uid:")][0]
        assert int(uid_line.split()[1]) == pw1.pw_uid

        r = _run_as(u1, py, ["-c", CLIENT, mp], env)
        assert r.returncode == 0 and r.stdout.startswith("OK"), \
            r.stdout + r.stderr

        # another user is refused by the kernel: the mount is u1's only
        r = _run_as(u2, py, ["-c", PROBE, mp], env)
        assert r.stdout.strip() == "errno 13", r.stdout + r.stderr
        # ... and the runtime, davinci info and npu-smi say permission
        # denied, whose daemon it is and what to do, not "no device found"
        at = ["DAVINCI_DEV_DIR=" + mp]
        r = _run_as(u2, py, ["-c", OPEN_RUNTIME], env, extra=at)
        out = r.stdout + r.stderr
        assert r.stdout.startswith("DENIED"), out
        assert "permission denied" in out and "davinci-fused run by %s" \
            % u1 in out and "start your own" in out, out
        assert "no davinci device found" not in out, out
        for tool in (["-m", "davinci.cli", "info"],
                     ["-m", "davinci.npu_smi", "info"]):
            r = _run_as(u2, py, tool, env, extra=at)
            assert r.returncode != 0, r.stdout + r.stderr
            assert "permission denied" in r.stderr, r.stdout + r.stderr
            assert "davinci-fused run by %s" % u1 in r.stderr, r.stderr
            assert "no davinci device found" not in r.stderr, r.stderr
        # without DAVINCI_DEV_DIR u2 has no daemon: not found, but told
        # whose daemon there is and that it is private
        r = _run_as(u2, py, ["-m", "davinci.cli", "info"], env)
        assert "no davinci device found" in r.stderr, r.stdout + r.stderr
        assert "other users' davinci-fused serve" in r.stderr, r.stderr
        assert "%s (%s)" % (mp, u1) in r.stderr, r.stderr
        # root too, unless fuse's allow_sys_admin_access is set
        r = subprocess.run([sys.executable, "-c", PROBE, mp],
                           capture_output=True, text=True)
        assert r.stdout.strip() in ("errno 13", "opened")
    finally:
        if daemon.pid:
            subprocess.run(["kill", "-TERM", str(daemon.pid)])
            H.wait_for(lambda: H.proc_dead(daemon.pid), 15)
        gone = H.wait_for(lambda: H.mnt.mount_entry(mp) is None, 5)
        if not gone:
            H.mnt.fusermount_unmount(mp)
        assert gone, "unprivileged daemon did not unmount on SIGTERM:\n" + \
            daemon.log()
