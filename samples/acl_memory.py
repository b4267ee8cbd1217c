#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The seed's memory-management snippet, runnable: malloc, host-to-device,
device-to-host, free; and the same through pinned host memory and an
asynchronous copy. Exit 0 when the data came back unchanged."""
import sys

import numpy as np

import acl
from _common import check   # check(ret, what): exit 1 unless ACL_SUCCESS


def main():
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")

    size = 1024 * 4                        # 1024 float32
    ptr, ret = acl.rt.malloc(size, acl.RT_MEM_MALLOC_NORMAL_ONLY)
    check(ret, "acl.rt.malloc")
    print("device memory at %#x" % ptr)

    host_data = np.random.default_rng(0).standard_normal(1024) \
        .astype(np.float32)
    check(acl.rt.memcpy(ptr, size, host_data.ctypes.data, size,
                        acl.RT_MEMCPY_HOST_TO_DEVICE), "memcpy H2D")
    result = np.empty(1024, dtype=np.float32)
    check(acl.rt.memcpy(result.ctypes.data, size, ptr, size,
                        acl.RT_MEMCPY_DEVICE_TO_HOST), "memcpy D2H")
    print("result[:5] =", result[:5])
    ok = np.array_equal(result, host_data)

    # pinned host memory: the device copies it with a task on a stream
    stream, ret = acl.rt.create_stream()
    check(ret, "acl.rt.create_stream")
    pinned, ret = acl.rt.malloc_host(size)
    check(ret, "acl.rt.malloc_host")
    check(acl.rt.memset(ptr, size, 0, size), "acl.rt.memset")
    check(acl.rt.memcpy_async(pinned, size, ptr, size,
                              acl.ACL_MEMCPY_DEVICE_TO_HOST, stream),
          "memcpy_async D2H")
    check(acl.rt.synchronize_stream(stream), "synchronize_stream")
    back = acl.util.ptr_to_bytes(pinned, size)
    ok = ok and back == bytes(size)
    print("pinned copy after memset: %s" % ("zeros" if back == bytes(size)
                                            else "WRONG"))

    check(acl.rt.free_host(pinned), "acl.rt.free_host")
    check(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    check(acl.rt.free(ptr), "acl.rt.free")   # device memory is freed by hand
    check(acl.rt.reset_device(0), "acl.rt.reset_device")
    check(acl.finalize(), "acl.finalize")
    print("memory management: %s" % ("OK" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
