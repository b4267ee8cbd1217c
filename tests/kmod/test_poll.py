"""poll() on a device node: the interrupt path."""
import select

import dvk


def test_poll_reports_notification(fd0):
    p = select.poll()
    p.register(fd0, select.POLLIN)
    assert p.poll(0) == []
    s = dvk.Stream(fd0)
    s.submit(dvk.Task(opcode=dvk.OP_NOP, count=1000,
                      flags=dvk.TASK_F_NOTIFY, user_data=0x1234))
    ev = p.poll(30000)
    assert ev and ev[0][1] & select.POLLIN
    n = dvk.ioctl(fd0, dvk.NOTIFY_WAIT, dvk.Notification(timeout_ms=1000))
    assert n.type == 1 and n.user_data == 0x1234 and n.status == 0
    assert p.poll(0) == []
    s.close()
