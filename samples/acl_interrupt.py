#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The seed's interrupt snippet, runnable, and the pyACL way of doing it.

1. The seed's calls: register_interrupt_callback(fn, user_data), then
   launch_task_with_interrupt(stream, task_config). The CPU goes on with
   other work; when the task completes the device raises a notification
   (the interrupt) and the runtime's callback thread calls
   fn(interrupt_type, task_id, user_data).
2. pyACL's calls: a thread loops on acl.rt.process_report, is subscribed to
   the stream with acl.rt.subscribe_report, and acl.rt.launch_callback puts
   callbacks into the stream (one blocking, one not).

Exit 0 when every callback ran exactly once, off the main thread, in order.
"""
import sys
import threading

import numpy as np

import acl
from _common import check   # check(ret, what): exit 1 unless ACL_SUCCESS


def main():
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    check(ret, "acl.rt.create_stream")
    n = 4096
    x = np.arange(n, dtype=np.float32)
    ptrs = []
    for _ in range(3):
        p, ret = acl.rt.malloc(x.nbytes, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        check(ret, "acl.rt.malloc")
        ptrs.append(p)
    ptr_x, ptr_y, ptr_z = ptrs
    for p in (ptr_x, ptr_y):
        check(acl.rt.memcpy(p, x.nbytes, x.ctypes.data, x.nbytes,
                            acl.ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
    task_config = {"op_type": "VectorAdd", "input_x": ptr_x,
                   "input_y": ptr_y, "output_z": ptr_z, "count": n}

    # -- 1. the seed's interrupt callback ---------------------------------
    main_thread = threading.get_ident()
    got = []
    done = threading.Event()

    def interrupt_callback(interrupt_type, task_id, user_data):
        print("interrupt type: %d, task ID: %d, user data: %r"
              % (interrupt_type, task_id, user_data))
        got.append((interrupt_type, task_id, user_data,
                    threading.get_ident() != main_thread))
        done.set()      # keep it short: wake whoever waits

    check(acl.rt.register_interrupt_callback(interrupt_callback, "seed"),
          "register_interrupt_callback")
    task_id, ret = acl.rt.launch_task_with_interrupt(stream, task_config)
    check(ret, "launch_task_with_interrupt")
    print("CPU goes on with other work...")
    busy = sum(i * i for i in range(10000))       # the "other work"
    if not done.wait(60):
        print("no interrupt within 60 s")
        return 1
    ok = got == [(acl.rt.RT_INTERRUPT_TASK_DONE, task_id, "seed", True)]
    print("interrupt received on the callback thread: %s (busy=%d)"
          % (ok, busy))

    # -- 2. pyACL: subscribe_report / launch_callback / process_report ----
    running = [True]

    def process_callback(args_list):
        context, timeout_ms = args_list
        acl.rt.set_context(context)
        while running[0]:
            acl.rt.process_report(timeout_ms)  # runs our callbacks here

    context, ret = acl.rt.get_context()
    check(ret, "get_context")
    tid, ret = acl.util.start_thread(process_callback, [context, 100])
    check(ret, "acl.util.start_thread")
    check(acl.rt.subscribe_report(tid, stream), "subscribe_report")
    order = []

    def callback(user_data):
        order.append((user_data, threading.get_ident() == tid))

    for i in range(4):
        check(acl.rt.launch_task(stream, task_config)[1], "launch_task")
        check(acl.rt.launch_callback(callback, i, i % 2, stream),
              "launch_callback")
    check(acl.rt.synchronize_stream(stream), "synchronize_stream")
    order.append("synchronized")
    print("callback order:", order)
    # callback 3 blocks the stream, and callbacks run in stream order on one
    # thread: all four ran before synchronize_stream returned
    ok2 = order == [(0, True), (1, True), (2, True), (3, True),
                    "synchronized"]
    check(acl.rt.unsubscribe_report(tid, stream), "unsubscribe_report")
    running[0] = False
    check(acl.util.stop_thread(tid), "acl.util.stop_thread")
    for p in ptrs:
        check(acl.rt.free(p), "acl.rt.free")
    check(acl.rt.destroy_stream(stream), "destroy_stream")
    check(acl.rt.reset_device(0), "acl.rt.reset_device")
    check(acl.finalize(), "acl.finalize")
    print("interrupt handling: %s" % ("OK" if ok and ok2 else "FAILED"))
    return 0 if ok and ok2 else 1


if __name__ == "__main__":
    sys.exit(main())
