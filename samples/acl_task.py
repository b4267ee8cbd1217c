#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The seed's task-scheduling snippet, runnable: a VectorAdd task on a
stream with acl.rt.launch_task(stream, task_config), then
stream_synchronize. Exit 0 when z == x + y."""
import sys

import numpy as np

import acl
from _common import check   # check(ret, what): exit 1 unless ACL_SUCCESS


def upload(array):
    ptr, ret = acl.rt.malloc(array.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "acl.rt.malloc")
    check(acl.rt.memcpy(ptr, array.nbytes, array.ctypes.data, array.nbytes,
                        acl.ACL_MEMCPY_HOST_TO_DEVICE), "memcpy H2D")
    return ptr


def main():
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    check(ret, "acl.rt.create_stream")
    print("stream created: %#x" % stream)

    rng = np.random.default_rng(1)
    x = rng.random(1024, dtype=np.float32)
    y = rng.random(1024, dtype=np.float32)
    ptr_x, ptr_y = upload(x), upload(y)
    ptr_z, ret = acl.rt.malloc(x.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "acl.rt.malloc")

    task_config = {"op_type": "VectorAdd", "input_x": ptr_x,
                   "input_y": ptr_y, "output_z": ptr_z, "count": 1024}
    task_id, ret = acl.rt.launch_task(stream, task_config)
    check(ret, "acl.rt.launch_task")
    print("task submitted: %d" % task_id)
    check(acl.rt.stream_synchronize(stream), "acl.rt.stream_synchronize")
    print("task complete")

    z = np.empty_like(x)
    check(acl.rt.memcpy(z.ctypes.data, z.nbytes, ptr_z, z.nbytes,
                        acl.ACL_MEMCPY_DEVICE_TO_HOST), "memcpy D2H")
    ok = np.array_equal(z, x + y)
    print("z == x + y: %s" % ok)
    for p in (ptr_x, ptr_y, ptr_z):
        check(acl.rt.free(p), "acl.rt.free")
    check(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    check(acl.rt.reset_device(0), "acl.rt.reset_device")
    check(acl.finalize(), "acl.finalize")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
