"""Group HwHiAiUser: outsiders get EACCES, members can use the device."""
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
