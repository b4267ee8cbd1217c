"""The davinci bus: new_device/del_device, bind/unbind, device lost."""
import errno
import mmap
import os
import select

import pytest

import dvk
from polling import wait_for

DRV = os.path.join(dvk.SYS_BUS, "drivers", "davinci")


def exists(i):
    return os.path.exists(dvk.node(i))


@pytest.fixture
def extra():
    made = []

    def make(i, *geom):
        dvk.bus_write("new_device", " ".join(str(x) for x in (i,) + geom))
        made.append(i)
        assert wait_for(lambda: exists(i))
        return i

    yield make
    for i in made:
        try:
            dvk.bus_write("del_device", str(i))
        except OSError:
            pass


def test_new_and_del_device(extra):
    extra(7, 16, 1)
    assert int(dvk.sysfs(7, "hbm_total")) == 16 << 20
    assert int(dvk.sysfs(7, "aicores")) == 1
    fd = dvk.open_dev(7)
    info = dvk.ioctl(fd, dvk.DEVICE_INFO, dvk.DeviceInfo())
    assert info.index == 7 and info.hbm_total == 16 << 20
    os.close(fd)
    dvk.bus_write("del_device", "7")
    assert wait_for(lambda: not exists(7))
    assert not os.path.exists(os.path.join(dvk.SYS_CLASS, "davinci7"))


@pytest.mark.parametrize("text,err", [
    ("0", errno.EEXIST), ("9 3", errno.EINVAL), ("9 0", errno.EINVAL),
    ("9 16 0", errno.EINVAL), ("64", errno.EINVAL), ("x", errno.EINVAL),
    ("9 16 1 5", errno.EINVAL)])
def test_new_device_rejects(text, err):
    with pytest.raises(OSError) as e:
        dvk.bus_write("new_device", text)
    assert e.value.errno == err
    assert not exists(9)


def test_del_device_rejects():
    for text, err in (("42", errno.ENOENT), ("x", errno.EINVAL)):
        with pytest.raises(OSError) as e:
            dvk.bus_write("del_device", text)
        assert e.value.errno == err


def test_del_device_while_open(extra):
    extra(8, 16, 1)
    fd = dvk.open_dev(8)
    a = dvk.alloc(fd, 1 << 20)
    m = mmap.mmap(fd, a.alloc_size, offset=a.mmap_offset)
    m[:4] = b"live"
    s = dvk.Stream(fd)
    s.submit(*[dvk.Task(opcode=dvk.OP_NOP, count=100000) for _ in range(20)])
    dvk.bus_write("del_device", "8")
    assert wait_for(lambda: not exists(8))
    # The context fails cleanly, the mapping stays safe to touch.
    with pytest.raises(OSError) as e:
        dvk.ioctl(fd, dvk.DEVICE_INFO, dvk.DeviceInfo())
    assert e.value.errno == errno.ENODEV
    with pytest.raises(OSError) as e:
        dvk.alloc(fd, 4096)
    assert e.value.errno == errno.ENODEV
    p = select.poll()
    p.register(fd, select.POLLIN)
    assert p.poll(5000)
    assert m[:4] == b"live"
    m[:4] = b"dead"
    s.close()
    m.close()
    os.close(fd)
    # The id is free again.
    extra(8, 16, 1)


def test_unbind_bind_while_other_busy(fd0):
    s = dvk.Stream(fd0)
    db = s.submit(*[dvk.Task(opcode=dvk.OP_NOP, count=50000)
                    for _ in range(20)])
    fd1 = dvk.open_dev(1)
    with open(os.path.join(DRV, "unbind"), "w") as f:
        f.write("davinci1")
    assert wait_for(lambda: not exists(1))
    assert not os.path.exists(os.path.join(DRV, "davinci1"))
    with pytest.raises(OSError) as e:
        dvk.ioctl(fd1, dvk.DEVICE_INFO, dvk.DeviceInfo())
    assert e.value.errno == errno.ENODEV
    os.close(fd1)
    with open(os.path.join(DRV, "bind"), "w") as f:
        f.write("davinci1")
    assert wait_for(lambda: exists(1))
    fd1 = dvk.open_dev(1)
    info = dvk.ioctl(fd1, dvk.DEVICE_INFO, dvk.DeviceInfo())
    assert info.index == 1 and info.hbm_free == info.hbm_total
    os.close(fd1)
    # Device 0 was not disturbed.
    w = s.wait(db.last_seq)
    assert w.status == 0 and w.completed_seq == db.last_seq
    s.close()


def test_uevents_on_add_remove(extra):
    import socket
    sk = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 15)
    sk.bind((0, 1))
    sk.settimeout(10)
    extra(10, 16, 1)
    dvk.bus_write("del_device", "10")
    seen = set()
    try:
        while not {"add", "remove"} <= seen:
            msg = sk.recv(65536).split(b"\0")
            head = msg[0].decode(errors="replace")
            if head.endswith("davinci10") and "SUBSYSTEM=davinci" in \
                    [x.decode(errors="replace") for x in msg]:
                seen.add(head.split("@")[0])
    except socket.timeout:
        pass
    sk.close()
    assert {"add", "remove"} <= seen
