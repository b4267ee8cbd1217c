# SPDX-License-Identifier: GPL-2.0
"""Publishing a polled ring's tail: the library's barrier and the fallback
for a tree without the library store the tail and return the flags the
dispatcher set."""

import ctypes

import pytest

from davinci import _corelib, _uapi


@pytest.mark.parametrize("publisher", ["library", "lock"])
def test_publish_stores_the_tail_and_reads_the_flags(publisher):
    publish = (_corelib.ring_publisher() if publisher == "library"
               else _corelib.publish_with_lock)
    if publisher == "library" and publish is _corelib.publish_with_lock:
        pytest.skip("no core library here")
    hdr = _uapi.davinci_ring_header(entries=64, tail=7)
    addr = ctypes.addressof(hdr)
    assert publish(addr, 8) == 0
    assert hdr.tail == 8
    hdr.flags = _uapi.DAVINCI_RING_F_NEED_WAKEUP
    assert publish(addr, 0xFFFFFFFF) == _uapi.DAVINCI_RING_F_NEED_WAKEUP
    assert hdr.tail == 0xFFFFFFFF and hdr.head == 0 and hdr.entries == 64
