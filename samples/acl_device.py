#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The seed's device-management snippet, runnable: init, count, set, reset.

The seed writes ``device_count = acl.get_device_count()``; pyACL returns
``(value, ret)``, so the program unpacks the pair. Exit 0 when every call
returned ACL_SUCCESS.
"""
import sys

import acl
from _common import check   # check(ret, what): exit 1 unless ACL_SUCCESS


def main():
    check(acl.init(), "acl.init")                 # load the driver, check ABI
    device_count, ret = acl.get_device_count()    # how many NPUs
    check(ret, "acl.get_device_count")
    print("NPU devices: %d" % device_count)
    if device_count < 1:
        print("no device to use")
        return 1
    device_id = 0
    check(acl.rt.set_device(device_id), "acl.rt.set_device")   # take device 0
    cur, ret = acl.rt.get_device()
    check(ret, "acl.rt.get_device")
    print("current device: %d" % cur)
    free, total, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    check(ret, "acl.rt.get_mem_info")
    print("HBM: %d MiB free of %d MiB" % (free >> 20, total >> 20))
    check(acl.rt.reset_device(device_id), "acl.rt.reset_device")  # release
    check(acl.finalize(), "acl.finalize")
    print("device management: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
