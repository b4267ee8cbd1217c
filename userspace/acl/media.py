# SPDX-License-Identifier: GPL-2.0
"""acl.media: DVPP memory. There is no DVPP engine on the simulated device,
so dvpp_malloc is plain device memory (HBM) usable by every task."""

from __future__ import annotations

from . import constants as C
from . import rt

__all__ = ["dvpp_malloc", "dvpp_free"]


def dvpp_malloc(size):
    """(dev_ptr, ret): device memory for media data."""
    return rt.malloc(size, C.ACL_MEM_MALLOC_HUGE_FIRST)


def dvpp_free(dev_ptr):
    """ret: free memory from dvpp_malloc."""
    return rt.free(dev_ptr)
