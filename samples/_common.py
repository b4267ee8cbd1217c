# SPDX-License-Identifier: GPL-2.0
"""What the samples share (not a sample itself): check() after each acl
call, and the troubleshooting samples' verdict()."""
import sys

import acl


def check(ret, what):
    """Exit 1 with acl's recent error message unless ``ret`` is
    ACL_SUCCESS."""
    if ret != acl.ACL_SUCCESS:
        print("%s failed: %d %s" % (what, ret, acl.get_recent_err_msg()))
        sys.exit(1)


def verdict(story, ok, documented="reported as documented"):
    """Print whether the troubleshooting ``story`` went as documented; the
    exit status (0 when ``ok``)."""
    print("%s: %s" % (story, documented if ok else "NOT as documented"))
    return 0 if ok else 1
