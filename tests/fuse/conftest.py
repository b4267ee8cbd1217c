# SPDX-License-Identifier: GPL-2.0
"""Fixtures of the davinci-fused tests: each test starts its own daemon on a
temporary mountpoint with small devices and stops it."""

import glob
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fuse_helpers as H  # noqa: E402


def _fuse_skip_reason():
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing: FUSE is not available on this machine"
    if not shutil.which("fusermount"):
        return "fusermount is missing (apt install fuse)"
    try:
        import fuse  # noqa: F401
    except (ImportError, OSError, EnvironmentError) as e:
        return "fusepy or libfuse 2 is missing (pip install fusepy; apt " \
               "install libfuse2): %s" % e
    return None


@pytest.fixture(scope="session")
def core_lib(tmp_path_factory):
    """Path of a loadable libdavinci_core, exported as DAVINCI_CORE_LIB;
    built from the sources into a temp dir when no build is found."""
    from davinci import _corelib
    try:
        _corelib.load()
        return os.environ.get("DAVINCI_CORE_LIB") or _corelib._lib._name
    except OSError:
        pass
    out = str(tmp_path_factory.mktemp("core") / "libdavinci_core.so")
    srcs = sorted(glob.glob(os.path.join(H.REPO, "kmod/core/*.c")) +
                  glob.glob(os.path.join(H.REPO,
                                         "userspace/libdavinci_core/*.c")))
    r = subprocess.run(
        ["gcc", "-std=gnu11", "-O2", "-g", "-fPIC", "-shared", "-pthread",
         "-ffp-contract=off", "-I", os.path.join(H.REPO, "kmod/core"),
         "-I", os.path.join(H.REPO, "kmod/include"),
         "-I", os.path.join(H.REPO, "userspace/libdavinci_core")]
        + srcs + ["-o", out],
        capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("cannot build libdavinci_core: %s" % r.stderr[-2000:])
    os.environ["DAVINCI_CORE_LIB"] = out
    return out


@pytest.fixture(scope="session")
def fuse_ok(core_lib):
    reason = _fuse_skip_reason()
    if reason:
        pytest.skip(reason)
    return True


@pytest.fixture
def mountpoint(tmp_path):
    return str(tmp_path / "mnt")


@pytest.fixture
def daemon(fuse_ok, mountpoint):
    d = H.Daemon(mountpoint, devices=2, hbm_mb=16, host_mb=8)
    d.start()
    yield d
    ok = d.stop()
    assert ok, "daemon did not unmount:\n" + d.log()
