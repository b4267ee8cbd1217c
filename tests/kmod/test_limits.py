"""Limits on open device files (contexts): the module parameters
max_contexts_per_process and max_contexts_per_user, writable at runtime;
EMFILE past the first, EUSERS past the second, over all devices; the
manager node and the OS layer's own contexts (sysfs reads) do not count;
DAVINCI_IOCTL_GET_LIMITS reports them and the runtime names them."""
import errno
import fcntl
import os

import pytest

import dvk
import davinci
import davinci.limits  # noqa: F401 (before a fork: messages need it)
from davinci import _uapi as U

PARAM = "/sys/module/davinci/parameters/"
NAMES = ("max_contexts_per_process", "max_contexts_per_user")


def read_param(name):
    with open(PARAM + name) as f:
        return int(f.read())


def write_param(name, value):
    with open(PARAM + name, "w") as f:
        f.write("%s\n" % value)


@pytest.fixture
def limits():
    """set(per_process, per_user); the old values come back afterwards."""
    old = {n: read_param(n) for n in NAMES}

    def set_(per_process, per_user):
        write_param(NAMES[0], per_process)
        write_param(NAMES[1], per_user)
    yield set_
    for n, v in old.items():
        write_param(n, v)


def get_limits(path):
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        lim = U.davinci_limits()
        fcntl.ioctl(fd, U.DAVINCI_IOCTL_GET_LIMITS, lim, True)
        return lim
    finally:
        os.close(fd)


def open_errno(i):
    try:
        os.close(dvk.open_dev(i))
    except OSError as e:
        return e.errno
    return 0


def test_parameters_and_get_limits(limits):
    assert os.stat(PARAM + NAMES[0]).st_mode & 0o777 == 0o644
    mgr = os.path.join(dvk.DEV_DIR, "davinci_manager")
    lim = get_limits(mgr)
    assert lim.contexts_per_process == read_param(NAMES[0])
    assert lim.contexts_per_user == read_param(NAMES[1])
    assert lim.tasks_per_stream == 16384
    assert list(lim.reserved) == [0] * 5
    limits(7, 9)
    for path in (mgr, dvk.node(0)):
        lim = get_limits(path)
        assert (lim.contexts_per_process, lim.contexts_per_user) == (7, 9)
    with pytest.raises(OSError) as ei:
        write_param(NAMES[0], "many")
    assert ei.value.errno == errno.EINVAL


def test_per_process(limits):
    limits(3, 0)
    fds = [dvk.open_dev(0), dvk.open_dev(1), dvk.open_dev(0)]
    try:
        assert open_errno(0) == errno.EMFILE
        assert open_errno(1) == errno.EMFILE
        # not contexts: the manager node, and sysfs's own short-lived ones
        os.close(os.open(os.path.join(dvk.DEV_DIR, "davinci_manager"),
                         os.O_RDWR))
        assert int(dvk.sysfs(0, "hbm_total")) > 0
        # the runtime names the limit, its value and the parameter
        with pytest.raises(davinci.ContextLimitError) as ei:
            davinci.Device(0)
        msg = str(ei.value)
        assert ei.value.limit == "contexts_per_process"
        assert ei.value.value == 3 and "limit 3" in msg, msg
        assert PARAM + NAMES[0] in msg, msg
        # what is open keeps working
        v = dvk.ioctl(fds[0], dvk.GET_VERSION, dvk.Version())
        assert v.backend == b"kmod"
        os.close(fds.pop())
        assert open_errno(1) == 0
        # lowering the limit keeps what is open; 0 lifts it
        limits(1, 0)
        dvk.ioctl(fds[1], dvk.GET_VERSION, dvk.Version())
        assert open_errno(0) == errno.EMFILE
        limits(0, 0)
        assert open_errno(0) == 0
    finally:
        for fd in fds:
            os.close(fd)


def test_per_user(limits):
    """Two processes of one user share its limit; another user has its
    own."""
    limits(0, 4)
    fds = [dvk.open_dev(0), dvk.open_dev(1)]
    try:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(r)
                mine = [dvk.open_dev(1), dvk.open_dev(0)]
                code = 0 if open_errno(0) == errno.EUSERS else 2
                try:
                    davinci.Device(0)
                    code = 3
                except davinci.ContextLimitError as e:
                    os.write(w, str(e).encode())
                    if e.limit != "contexts_per_user" or e.value != 4:
                        code = 4
                del mine
            finally:
                os._exit(code)
        os.close(w)
        msg = b""
        while True:
            chunk = os.read(r, 4096)
            if not chunk:
                break
            msg += chunk
        os.close(r)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, msg
        msg = msg.decode()
        assert "contexts per user limit 4" in msg and \
            PARAM + NAMES[1] in msg, msg
        # the child is gone, its files closed: room again
        assert open_errno(0) == 0
    finally:
        for fd in fds:
            os.close(fd)
