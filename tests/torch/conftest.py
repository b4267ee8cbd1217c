# SPDX-License-Identifier: GPL-2.0
"""tests/torch: torch_npu on whatever backend davinci discovery finds
(``DAVINCI_BACKEND=inproc`` or a FUSE mountpoint in ``DAVINCI_DEV_DIR``).
Skipped only where torch itself is not installed."""

import pytest

torch = pytest.importorskip("torch")
# One CPU thread: torch's OpenMP workers spin while they wait, and on a
# 2-core machine they starve the device's worker threads (a CPU training
# step measured 4 s for 30 steps with two threads, 0.05 s with one).
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def npu():
    """The torch_npu module (imported once: it registers the backend)."""
    import torch_npu
    if not torch.npu.is_available():
        pytest.fail("torch_npu found no davinci device: run with "
                    "DAVINCI_BACKEND=inproc or DAVINCI_DEV_DIR set")
    return torch_npu


@pytest.fixture
def clean(npu):
    """Synchronise and empty the allocator's cache around a test."""
    torch.npu.synchronize()
    torch.npu.empty_cache()
    yield
    torch.npu.synchronize()
    torch.npu.empty_cache()


# A gate holds npu streams back until the test releases it, independent of
# timing (as tests/conformance's Gate): a davinci stream of the device runs a
# long NOP and then records an event; held streams wait on that event until
# release() cancels the NOP.
GATE_US = 20_000_000


class Gate:
    def __init__(self, index: int = 0):
        from torch_npu import _devices
        ctx = _devices.context(index)
        self.stream = ctx.stream()
        self.event = ctx.event(timing=False)
        self.nop_seq = None

    def block(self, s) -> None:
        """Later work on torch.npu.Stream ``s`` waits for release() (the
        hold starts at the first block: synchronising the device before
        would wait for the NOP)."""
        if self.nop_seq is None:
            self.nop_seq = self.stream.nop(GATE_US)
            self.stream.record(self.event)
        s.davinci_stream.wait_event(self.event)

    def release(self) -> None:
        if self.nop_seq is not None:
            self.stream.cancel(self.nop_seq)
        self.stream.synchronize()

    @staticmethod
    def submitted(s) -> int:
        """Sequence of the last task queued on torch.npu.Stream ``s``."""
        return s.davinci_stream.query().submitted_seq

    @staticmethod
    def run_until_parked(s, waits) -> None:
        """Let stream ``s`` run as far as it can: return once it is idle or its
        next task is one of the event waits ``waits`` (sequences) and that wait
        has started (it stays parked until its event completes). The end state
        does not depend on timing."""
        import time
        from davinci import _uapi
        ds = s.davinci_stream
        while True:
            st = ds.query()
            if st.idle or st.error:
                return
            nxt = st.completed_seq + 1
            if nxt in waits and ds.task(nxt).state == \
                    _uapi.DAVINCI_TASK_RUNNING:
                return
            time.sleep(0.001)


@pytest.fixture
def gate(npu):
    torch.npu.synchronize()
    g = Gate()
    yield g
    if not g.stream.destroyed:
        g.release()
        g.stream.destroy()
        g.event.destroy()
    torch.npu.synchronize()
