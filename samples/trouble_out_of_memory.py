#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Troubleshooting 3: "out of memory" at acl.rt.malloc().

Cause: the device has too little free memory (too much allocated, or
fragmentation). The program reads free and total HBM
(acl.rt.get_mem_info), asks for more than is free, shows the error (with
requested, free and total bytes), then recovers: it frees what it holds,
and reset_device releases everything of the device. Exit 0 when the
failure changed nothing and the recovery worked.
"""
import sys

import acl
from _common import check, verdict   # samples/_common.py


def main():
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")
    free, total, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    check(ret, "get_mem_info")
    print("HBM total: %.2f MiB, free: %.2f MiB" % (total / 2**20,
                                                   free / 2**20))
    # hold half of what is free, as a program that forgot to free would
    held, ret = acl.rt.malloc(free // 2, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
    check(ret, "acl.rt.malloc (half)")
    free2, _, _ = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    want = free2 + (1 << 20)
    ptr, ret = acl.rt.malloc(want, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
    msg = acl.get_recent_err_msg()
    print("acl.rt.malloc(%d) -> ptr %#x, ret %d" % (want, ptr, ret))
    print("  " + msg)
    free3, _, _ = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    failed_cleanly = ret == acl.ACL_ERROR_RT_MEMORY_ALLOCATION and \
        ptr == 0 and "out of device memory" in msg and \
        ("requested %d bytes" % want) in msg and free3 >= free2
    print("fix: free what you no longer need (acl.rt.free), or reset the "
          "device (acl.rt.reset_device) to release everything")
    check(acl.rt.free(held), "acl.rt.free")
    free4, _, _ = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    ptr, ret = acl.rt.malloc(free2 + (1 << 20), acl.ACL_MEM_MALLOC_NORMAL_ONLY)
    print("after freeing: %.2f MiB free; the same request -> ret %d"
          % (free4 / 2**20, ret))
    recovered = ret == acl.ACL_SUCCESS
    check(acl.rt.reset_device(0), "acl.rt.reset_device")   # frees ptr too
    check(acl.finalize(), "acl.finalize")
    return verdict("out of memory", failed_cleanly and recovered,
                   "reported and recovered as documented")


if __name__ == "__main__":
    sys.exit(main())
