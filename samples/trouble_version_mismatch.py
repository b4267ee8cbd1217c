#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Troubleshooting 1: "driver version mismatch" at acl.init().

Cause: the runtime and the driver speak different ABI majors (on real
Ascend: a CANN toolkit and a driver package of different releases).
The program shows the versions (the driver's GET_VERSION, like
``cat /usr/local/Ascend/driver/version.info``), then simulates a runtime
built for the next ABI major by changing the major this process's runtime
supports, and shows the error with both versions; then it restores the
runtime (the fix: install a matching runtime and driver) and acl.init()
succeeds. Exit 0 when the mismatch was reported as documented.
"""
import sys

import davinci
from davinci import _uapi

import acl
from _common import verdict


def main():
    with davinci.Device(0) as dev:
        v = dev.version
    print("driver: version %s, ABI %d.%d, backend %s"
          % (v.driver_version, v.abi_major, v.abi_minor, v.backend))
    print("runtime: davinci %s, ABI %d.%d" % (
        davinci.__version__, *davinci.ABI_VERSION))

    real = _uapi.DAVINCI_ABI_MAJOR
    _uapi.DAVINCI_ABI_MAJOR = real + 1      # a runtime from another release
    try:
        ret = acl.init()
        msg = acl.get_recent_err_msg()
        print("acl.init() with a runtime for ABI %d.x -> %d" % (real + 1, ret))
        print("  " + msg)
        try:
            davinci.Device(0).close()
            exc = None
        except davinci.DriverVersionMismatchError as e:
            exc = e
        print("davinci.Device(0) raises %s" % type(exc).__name__)
    finally:
        _uapi.DAVINCI_ABI_MAJOR = real
    reported = ret != acl.ACL_SUCCESS and "version mismatch" in msg and \
        ("ABI %d." % v.abi_major) in msg and ("%d.x" % (real + 1)) in msg \
        and exc is not None
    print("fix: install the driver that matches the runtime (or the other "
          "way round), e.g. the same release of both")
    ret2 = acl.init()
    print("acl.init() with the matching runtime -> %d" % ret2)
    if ret2 == acl.ACL_SUCCESS:
        acl.finalize()
    return verdict("version mismatch", reported and ret2 == acl.ACL_SUCCESS)


if __name__ == "__main__":
    sys.exit(main())
