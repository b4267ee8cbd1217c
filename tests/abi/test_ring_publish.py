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


def _fenced_or_skip(address):
    hdr = _corelib.completion_header(address, fenced=True)
    if not isinstance(hdr, _corelib.FencedRingHeader):
        pytest.skip("no core library here")
    return hdr


def test_fenced_completion_header_reads_and_writes_the_ring():
    """The acquire loads and the release store see and change the same
    fields as the plain struct; the other fields read through."""
    hdr = _uapi.davinci_ring_header(entries=64, head=3, tail=9,
                                    seq=(1 << 40) + 5, status=7)
    fenced = _fenced_or_skip(ctypes.addressof(hdr))
    assert (fenced.seq, fenced.tail, fenced.head) == ((1 << 40) + 5, 9, 3)
    assert (fenced.entries, fenced.status) == (64, 7)
    fenced.head = 9
    assert hdr.head == 9 and hdr.tail == 9 and hdr.seq == (1 << 40) + 5
    hdr.tail, hdr.seq = 0xFFFFFFFF, 6
    assert fenced.tail == 0xFFFFFFFF and fenced.seq == 6


def test_a_stream_reads_completions_through_fenced_headers(monkeypatch):
    """A client on a CPU that reorders loads (arm64) reads its completion
    rings through the fenced header: tasks, their completions, a failure
    and a reset read back as through the plain one."""
    import numpy as np

    import davinci
    plain = _corelib.completion_header
    _fenced_or_skip(ctypes.addressof(_uapi.davinci_ring_header()))
    monkeypatch.setattr(_corelib, "completion_header",
                        lambda address: plain(address, fenced=True))
    with davinci.Device(0) as dev:
        s = dev.stream(cq_entries=16)
        with dev.malloc(4096) as b:
            for r in range(4):              # 40 entries wrap the CQ
                seqs = [s.memset(b, 10 * r + i) for i in range(1, 11)]
                s.synchronize()
                assert (b.numpy() == 10 * r + 10).all()
                assert [s.completion(q).ok for q in seqs] == [True] * 10
            assert s.overflow == 0
            bad = s.memset(b.dev_addr + (1 << 40), 0, 16)
            with pytest.raises(davinci.TaskFailedError) as ei:
                s.synchronize()
            assert ei.value.seq == bad
            s.reset()
            s.copy_from_host(b, np.full(4096, 9, np.uint8))
            assert (s.copy_to_host(b) == 9).all()
        s.destroy()
