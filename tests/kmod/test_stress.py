"""Races between hot add/remove, bind/unbind and users of the device."""
import errno
import mmap
import os
import threading

import dvk
from polling import wait_for

ROUNDS = int(os.environ.get("DAVINCI_STRESS_ROUNDS", "25"))
ID = 11


def test_open_use_close_vs_add_remove():
    stop = threading.Event()
    errors = []
    done = [0]

    def user():
        while not stop.is_set():
            try:
                fd = dvk.open_dev(ID)
            except OSError as e:
                if e.errno not in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
                    errors.append(e)
                continue
            try:
                a = dvk.alloc(fd, 1 << 20)
                m = mmap.mmap(fd, a.alloc_size, offset=a.mmap_offset)
                m[:8] = b"12345678"
                s = dvk.Stream(fd, entries=16)
                s.submit(*[dvk.Task(opcode=dvk.OP_MEMSET, dst=a.dev_addr,
                                    count=a.alloc_size, imm=7)
                           for _ in range(4)])
                s.wait(timeout_ms=2000)
                assert m[:8] in (b"12345678", b"\x07" * 8)
                s.close()
                m.close()
                done[0] += 1
            except OSError as e:
                if e.errno not in (errno.ENODEV, errno.ETIMEDOUT):
                    errors.append(e)
            except Exception as e:  # noqa: BLE001
                errors.append(e)
            finally:
                os.close(fd)

    threads = [threading.Thread(target=user) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for i in range(ROUNDS):
            dvk.bus_write("new_device", "%d 16 1" % ID)
            wait_for(lambda: os.path.exists(dvk.node(ID)), timeout=5,
                     step=0.01)
            if i % 2:
                with open(os.path.join(dvk.SYS_BUS, "drivers", "davinci",
                                       "unbind"), "w") as f:
                    f.write("davinci%d" % ID)
                with open(os.path.join(dvk.SYS_BUS, "drivers", "davinci",
                                       "bind"), "w") as f:
                    f.write("davinci%d" % ID)
            dvk.bus_write("del_device", str(ID))
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[:3]
    assert not os.path.exists(dvk.node(ID))
