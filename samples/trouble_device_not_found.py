#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Troubleshooting 2: "device not found" at acl.rt.set_device(0).

Cause: no driver is loaded (no kernel module, no FUSE daemon), or the
runtime looks in the wrong place. The program points the runtime at an
empty directory (DAVINCI_DEV_DIR, with DAVINCI_BACKEND unset), shows the
error and its two fixes (load the kernel module: ``sudo modprobe davinci``;
or start the FUSE daemon: ``davinci-fused``), then restores the
environment it was started with and set_device succeeds. Exit 0 when the
error and the recovery are as documented.
"""
import os
import sys
import tempfile

import acl
import davinci
from _common import verdict

KEYS = ("DAVINCI_DEV_DIR", "DAVINCI_BACKEND")


def main():
    saved = {k: os.environ.get(k) for k in KEYS}
    with tempfile.TemporaryDirectory() as empty:
        os.environ.pop("DAVINCI_BACKEND", None)
        os.environ["DAVINCI_DEV_DIR"] = empty
        print("DAVINCI_DEV_DIR=%s (empty: no driver there)" % empty)
        try:
            ret = acl.init()
            print("acl.init() -> %d (a missing driver is reported by "
                  "set_device)" % ret)
            ret = acl.rt.set_device(0)
            msg = acl.get_recent_err_msg()
            print("acl.rt.set_device(0) -> %d" % ret)
            print("  " + msg)
            try:
                davinci.device_count()
                exc = None
            except davinci.DeviceNotFoundError as e:
                exc = e
            print("davinci.device_count() raises %s" % type(exc).__name__)
            acl.finalize()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    found = ret == acl.ACL_ERROR_RT_NO_DEVICE and "no davinci device" in \
        msg and exc is not None
    print("fix 1: load the kernel module:  sudo modprobe davinci")
    print("fix 2: or start the FUSE daemon: davinci-fused --devices 2")
    print("(here: back to the backend this program was started with)")
    assert acl.init() == acl.ACL_SUCCESS
    ret2 = acl.rt.set_device(0)
    print("acl.rt.set_device(0) -> %d" % ret2)
    if ret2 == acl.ACL_SUCCESS:
        acl.rt.reset_device(0)
    acl.finalize()
    return verdict("device not found", found and ret2 == acl.ACL_SUCCESS)


if __name__ == "__main__":
    sys.exit(main())
