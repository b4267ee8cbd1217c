"""Group HwHiAiUser: outsiders get EACCES, members can use the device;
the runtime, davinci info and npu-smi tell an outsider permission denied,
the node, its group and how to join it."""
import grp
import os
import pwd

import dvk


def run_as(groups, fn):
    """Run fn() in a child as user nobody with the given groups; exit code."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            nobody = pwd.getpwnam("nobody")
            os.setgroups(groups)
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            code = fn()
        except BaseException as e:  # noqa: B902
            print("child:", repr(e))
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def outsider():
    try:
        os.open(dvk.node(0), os.O_RDWR)
    except PermissionError:
        return 0
    return 2


def member():
    fd = dvk.open_dev(0)
    v = dvk.ioctl(fd, dvk.GET_VERSION, dvk.Version())
    a = dvk.alloc(fd, 1 << 20)
    os.close(fd)
    return 0 if v.backend == b"kmod" and a.alloc_size >= 1 << 20 else 3


def test_outsider_gets_eacces():
    assert run_as([], outsider) == 0


def test_member_can_use_device():
    gid = grp.getgrnam(dvk.GROUP).gr_gid
    assert run_as([gid], member) == 0


def manager_reset_denied():
    import errno
    import fcntl
    fd = os.open(os.path.join(dvk.DEV_DIR, "davinci_manager"), os.O_RDWR)
    # DAVINCI_IOCTL_MGMT_RESET of device 0: CAP_SYS_ADMIN only
    cmd = dvk._ioc(dvk._IOC_READ | dvk._IOC_WRITE, 0x83, 16)
    try:
        fcntl.ioctl(fd, cmd, bytearray(16), True)
    except OSError as e:
        return 0 if e.errno == errno.EPERM else 4
    finally:
        os.close(fd)
    return 5


def test_manager_privileged_ops_need_cap_sys_admin():
    gid = grp.getgrnam(dvk.GROUP).gr_gid
    assert run_as([gid], manager_reset_denied) == 0


def outsider_told_permission_denied():
    """As an outsider: davinci.Device, davinci info and npu-smi all say
    permission denied, name the node and HwHiAiUser and give the fix."""
    import contextlib
    import io

    import davinci
    from davinci import cli, npu_smi
    try:
        davinci.Device(0)
        return 2
    except davinci.DevicePermissionError as e:
        msg = str(e)
        print("child:", msg)
        if e.group != dvk.GROUP or "permission denied" not in msg or \
                dvk.node(0) not in msg or \
                "sudo usermod -aG %s $USER" % dvk.GROUP not in msg:
            return 3
    for main, args in ((cli.main, ["info"]), (npu_smi.main, ["info"])):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(io.StringIO()):
            rc = main(args)
        text = err.getvalue()
        print("child:", text)
        if rc == 0 or "permission denied" not in text or \
                dvk.GROUP not in text or "no davinci device" in text:
            return 4
    return 0


def test_outsider_told_permission_denied():
    # imported here: the tree may not be readable by nobody
    import davinci.access  # noqa: F401
    import davinci.cli  # noqa: F401
    import davinci.limits  # noqa: F401
    import davinci.npu_smi  # noqa: F401
    assert run_as([], outsider_told_permission_denied) == 0
