# SPDX-License-Identifier: GPL-2.0
"""Streams: batch submission, completions, synchronisation, failure, reset,
cancel and timeouts (timing-independent: long work is held by a gate)."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import davinci
from davinci import _uapi
from davinci.stream import make_task

USERSPACE = os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "userspace")


def test_batch_submit_sequences_and_completions(dev):
    s = dev.stream(sq_entries=64, cq_entries=1024)
    tasks = [make_task(_uapi.DAVINCI_OP_NOP, user_data=i) for i in range(10)]
    seqs = s.submit(tasks)
    assert seqs == list(range(1, 11))
    s.synchronize(timeout=30)
    comps = s.drain()
    got = {c.seq: c for c in comps}
    # the wait may have read some of them already: all are kept
    assert set(got) <= set(seqs)
    for i, seq in enumerate(seqs):
        c = s.completion(seq)
        assert c is not None and c.ok and c.user_data == i
        assert c.opcode == _uapi.DAVINCI_OP_NOP
        assert c.end_ns >= c.start_ns > 0
    st = s.query()
    assert st.idle and st.submitted_seq == 10 and st.completed_seq == 10
    seqs2 = s.submit([make_task(_uapi.DAVINCI_OP_NOP)] * 3)
    assert seqs2 == [11, 12, 13]
    s.synchronize()


def test_batch_larger_than_ring(dev):
    s = dev.stream(sq_entries=16, cq_entries=16)
    seqs = s.submit([make_task(_uapi.DAVINCI_OP_NOP) for _ in range(100)])
    assert seqs == list(range(1, 101))
    s.synchronize()
    assert s.query().completed_seq == 100
    s.drain()


_REFILL_CHILD = """
import numpy as np
import davinci
from davinci import _uapi
with davinci.Device(0) as d:
    s = d.stream(sq_entries=16, cq_entries=16)
    batch = np.zeros(40, dtype=davinci.TASK_DTYPE)
    batch["opcode"] = _uapi.DAVINCI_OP_NOP
    for _ in range(1000):
        s.submit(batch)
    s.synchronize(timeout=60)
    print(s.query().completed_seq)
"""


def test_ring_refills_while_the_host_waits_for_room():
    """Batches larger than the ring, many times over: the device takes
    tasks in while the host finds the ring full and starts waiting for
    room. Whichever comes first, every submission finishes (a host that
    waited for the head to move on from where it first read it waited
    forever when the device had emptied the ring in between). In a child
    process, so that a hang fails here rather than in the next test."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (USERSPACE, os.environ.get("PYTHONPATH")) if p))
    try:
        p = subprocess.run([sys.executable, "-c", _REFILL_CHILD], env=env,
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("a submission larger than the ring never finished")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(1000 * 40)]


def test_stream_order(dev):
    s = dev.stream()
    with dev.malloc(4096) as b:
        for v in range(1, 50):
            s.memset(b, v)
        s.synchronize()
        assert (b.numpy() == 49).all()


def test_malformed_descriptor_rejects_whole_batch(dev):
    s = dev.stream(polled=False)
    good = make_task(_uapi.DAVINCI_OP_NOP)
    bad = make_task(_uapi.DAVINCI_OP_COUNT + 5)
    with pytest.raises(davinci.InvalidArgumentError) as ei:
        s.submit([good, bad, good])
    assert "nothing" in str(ei.value)
    assert s.query().submitted_seq == 0
    bad2 = make_task(_uapi.DAVINCI_OP_NOP)
    bad2.reserved[3] = 1
    with pytest.raises(davinci.InvalidArgumentError):
        s.submit([bad2])
    assert s.submit([good]) == [1]
    s.synchronize()


def test_polled_malformed_descriptor_fails_its_task(dev):
    """On a polled ring the device takes a malformed descriptor in and
    fails it; the tasks after it are aborted, those before it ran."""
    s = dev.stream()
    if not s.polled:
        pytest.skip("the driver has no polled rings")
    bad = make_task(_uapi.DAVINCI_OP_NOP)
    bad.reserved[3] = 1
    with dev.malloc(4096) as b:
        seqs = s.submit([make_task(_uapi.DAVINCI_OP_MEMSET, dst=b.dev_addr,
                                   count=4096, imm=7),
                         bad, make_task(_uapi.DAVINCI_OP_NOP)])
        assert seqs == [1, 2, 3]
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.synchronize()
        assert ei.value.status == _uapi.DAVINCI_STATUS_INVALID_TASK
        assert ei.value.seq == 2
        assert "malformed" in str(ei.value)
        assert [s.task(q).status for q in seqs] == [
            0, _uapi.DAVINCI_STATUS_INVALID_TASK,
            _uapi.DAVINCI_STATUS_ABORTED]
        assert (b.numpy() == 7).all()
        s.reset()
        s.nop(sync=True)


def test_polled_submission_needs_no_system_call(dev):
    """Tasks written to a polled ring run although nobody rings the
    doorbell or waits in the driver: the dispatcher finds them."""
    s = dev.stream(sq_entries=512)      # one publish for all of them
    if not s.polled:
        pytest.skip("the driver has no polled rings")
    tasks = davinci.task_array(300)
    tasks["opcode"] = _uapi.DAVINCI_OP_NOP
    before = dict(dev.transport.ioctl_counts)
    try:
        davinci.set_wait_mode("yield")
        assert s.submit(tasks) == list(range(1, 301))
        s.synchronize(timeout=30)
    finally:
        davinci.set_wait_mode("auto")
    calls = {cmd: n - before.get(cmd, 0)
             for cmd, n in dev.transport.ioctl_counts.items()}
    # only a sleeping dispatcher is worth a doorbell
    assert calls.get(_uapi.DAVINCI_IOCTL_DOORBELL, 0) <= 1
    assert calls.get(_uapi.DAVINCI_IOCTL_STREAM_WAIT, 0) == 0
    assert s.query().completed_seq == 300


@pytest.mark.parametrize("ntasks", [1, 15, 100])
def test_failure_named_whatever_the_drain(dev, ntasks):
    """The failed task that synchronize() names, and every task's
    completion, are right however many completions one read of the ring
    takes in: one, a few, or a batch (the runtime reads few of them
    without numpy)."""
    s = dev.stream(sq_entries=256, cq_entries=256)
    with dev.malloc(4096) as b:
        tasks = davinci.task_array(ntasks + 2)
        tasks["opcode"] = _uapi.DAVINCI_OP_NOP
        tasks["user_data"] = np.arange(ntasks + 2)
        bad = ntasks + 1       # seqs count from 1: the one before the last
        tasks[bad - 1]["opcode"] = _uapi.DAVINCI_OP_MEMSET
        tasks[bad - 1]["dst"] = b.dev_addr + 4096 * 1000    # not ours
        tasks[bad - 1]["count"] = 16
        s.submit(tasks[:1])
        s.synchronize(timeout=30)     # one read of one
        seqs = [1] + s.submit(tasks[1:])
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.synchronize(timeout=30)
        assert ei.value.seq == bad
        assert ei.value.status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
        statuses = [s.completion(q).status for q in seqs]
        assert [s.completion(q).user_data for q in seqs] == \
            list(range(ntasks + 2))
        assert statuses == [0] * (bad - 1) + [
            _uapi.DAVINCI_STATUS_INVALID_ADDRESS, _uapi.DAVINCI_STATUS_ABORTED]
        s.reset()


def test_task_failure_and_reset(dev):
    s = dev.stream()
    with dev.malloc(4096) as b:
        s.memset(b, 1)
        bad = s.memset(b.dev_addr + 4096 * 1000, 0, 16)   # not our memory
        after = s.memset(b, 2)
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.synchronize()
        e = ei.value
        assert e.status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
        assert e.status_name == "INVALID_ADDRESS"
        assert "INVALID_ADDRESS" in str(e) and "reset" in str(e)
        assert e.seq == bad
        assert s.query().error
        assert s.completion(after).status == _uapi.DAVINCI_STATUS_ABORTED
        assert (b.numpy() == 1).all()        # nothing touched after failure
        assert s.task(bad).status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
        s.reset()
        assert not s.query().error
        s.memset(b, 3, sync=True)
        assert (b.numpy() == 3).all()


def test_out_of_range_operand_touches_nothing(dev):
    s = dev.stream()
    with dev.malloc(4096) as a, dev.malloc(4096) as b:
        a.numpy()[:] = 7
        b.numpy()[:] = 9
        s.memcpy(b.dev_addr, a.dev_addr, 8192)   # runs past a and b
        with pytest.raises(davinci.TaskFailedError):
            s.synchronize()
        assert (b.numpy() == 9).all()


def test_timeout_and_cancel(dev, gate):
    s = dev.stream()
    s.nop(1)
    s.synchronize(timeout=30)
    gate.block(s)
    with dev.malloc(4096) as b:
        b.numpy()[:] = 0
        s1 = s.memset(b, 1)
        s2 = s.memset(b, 2)
        with pytest.raises(davinci.TimeoutError) as ei:
            s.synchronize(timeout=0.05)
        assert isinstance(ei.value, TimeoutError)
        # the wait block and two memsets remain of four tasks
        assert "(1 of 4 tasks done)" in str(ei.value)
        assert s.task(s2).state == _uapi.DAVINCI_TASK_QUEUED
        assert s.cancel(s2) is True
        assert not s.query().idle
        gate.release()
        s.synchronize(timeout=30)
        assert s.completion(s1).ok
        assert s.completion(s2).status == _uapi.DAVINCI_STATUS_CANCELLED
        assert (b.numpy() == 1).all()
        assert not s.query().error        # cancelling is not a failure
        assert s.cancel(s1) is False      # already complete


def test_cancel_running_nop(dev):
    s = dev.stream()
    seq = s.nop(20_000_000)
    assert s.cancel(seq)
    s.synchronize(timeout=30)
    assert s.completion(seq).status == _uapi.DAVINCI_STATUS_CANCELLED


def test_unknown_task(dev):
    s = dev.stream()
    with pytest.raises(davinci.InvalidHandleError):
        s.task(5)


def test_destroyed_stream(dev):
    s = dev.stream()
    s.nop()
    s.destroy()
    with pytest.raises(davinci.InvalidHandleError):
        s.nop()
    s.destroy()   # idempotent


def test_stream_context_manager(dev):
    with dev.malloc(4096) as b:
        with dev.stream() as s:
            s.memset(b, 5)
        assert s.destroyed
        assert (b.numpy() == 5).all()


def test_priorities(dev):
    for p in (0, 3, 7):
        s = dev.stream(priority=p)
        assert s.query().priority == p
        s.destroy()
    with pytest.raises(davinci.InvalidArgumentError):
        dev.stream(priority=8)


def test_notify_and_notifications(dev):
    s = dev.stream()
    while dev.wait_notification(0) is not None:
        pass
    s.notify(0xC0FFEE)
    s.nop(notify=True, user_data=7)
    s.synchronize()
    n1 = dev.wait_notification(5)
    n2 = dev.wait_notification(5)
    assert n1.type == _uapi.DAVINCI_NOTIFY_USER and n1.user_data == 0xC0FFEE
    assert n2.type == _uapi.DAVINCI_NOTIFY_COMPLETION and n2.user_data == 7
    assert n1.stream_id == s.stream_id and n2.seq == 2
    assert dev.wait_notification(0) is None


def test_many_streams_in_parallel(dev):
    streams = [dev.stream() for _ in range(8)]
    bufs = [dev.malloc(64 * 1024) for _ in streams]
    for i, (s, b) in enumerate(zip(streams, bufs)):
        for _ in range(5):
            s.memset(b, i + 1)
    dev.synchronize()
    for i, b in enumerate(bufs):
        assert (b.numpy() == i + 1).all()
    np.testing.assert_equal(dev.mem_info().ctx_allocations, 8)


def test_threads_share_a_device(dev):
    import threading
    errors = []

    def worker(k):
        try:
            s = dev.stream()
            with dev.malloc(256 * 1024) as b:
                for v in range(20):
                    s.memset(b, (k * 20 + v) % 256)
                s.synchronize(timeout=60)
                assert (b.numpy() == (k * 20 + 19) % 256).all()
            s.destroy()
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_large_copies(dev, rng):
    s = dev.stream()
    n = 48 << 20
    data = rng.integers(0, 256, n, dtype=np.uint8)
    with dev.malloc(n) as a, dev.malloc(n) as b:
        s.copy_from_host(a, data)
        s.memcpy(b, a)
        out = np.empty_like(data)
        s.copy_to_host(b, out)
        assert np.array_equal(out, data)


def test_device_synchronize_while_other_threads_destroy_streams(dev):
    """Device.synchronize() settles every stream of the device; a stream
    another thread destroys meanwhile is no error (8 threads share it)."""
    import threading
    errors = []
    stop = threading.Event()

    def churn():
        try:
            while not stop.is_set():
                s = dev.stream()
                s.nop()
                s.destroy()
        except Exception as e:      # noqa: BLE001 - reported below
            errors.append(e)

    def sync():
        try:
            for _ in range(200):
                dev.synchronize(timeout=60)
        except Exception as e:      # noqa: BLE001 - reported below
            errors.append(e)

    churners = [threading.Thread(target=churn) for _ in range(4)]
    syncers = [threading.Thread(target=sync) for _ in range(4)]
    for t in churners + syncers:
        t.start()
    for t in syncers:
        t.join()
    stop.set()
    for t in churners:
        t.join()
    assert errors == []


def test_per_stream_wait_mode_spins_without_a_wait_ioctl(dev):
    """A stream made with wait_mode="spin" waits in shared memory even when
    the process's mode is block (pyACL's ACL_STREAM_FAST_SYNC)."""
    s = dev.stream(wait_mode="spin")
    old = davinci.set_wait_mode("block")
    try:
        with dev.malloc(1 << 20) as b:
            before = dev.transport.ioctl_counts[
                _uapi.DAVINCI_IOCTL_STREAM_WAIT]
            for v in range(20):
                s.memset(b, v)
                s.synchronize(timeout=30)
            assert dev.transport.ioctl_counts[
                _uapi.DAVINCI_IOCTL_STREAM_WAIT] == before
            assert (b.numpy() == 19).all()
    finally:
        davinci.set_wait_mode(old)
    with pytest.raises(davinci.InvalidArgumentError):
        dev.stream(wait_mode="sometimes")


def test_block_mode_sleeps_in_the_driver(dev, gate):
    """In block mode a wait for unfinished work goes to the wait ioctl at
    once (CUDA's blocking sync) instead of spinning on the ring."""
    s = dev.stream()
    gate.block(s)
    seq = s.nop()
    waits = _uapi.DAVINCI_IOCTL_STREAM_WAIT
    before = dev.transport.ioctl_counts[waits]
    old = davinci.set_wait_mode("block")
    errors = []

    def sync():
        try:
            s.synchronize(timeout=60)
        except Exception as exc:  # reported by the main thread
            errors.append(exc)

    waiter = threading.Thread(target=sync)
    try:
        waiter.start()
        deadline = time.monotonic() + 30
        while dev.transport.ioctl_counts[waits] == before and \
                time.monotonic() < deadline and waiter.is_alive():
            time.sleep(0.01)
        entered = dev.transport.ioctl_counts[waits] > before
    finally:
        gate.release()
        waiter.join(60)
        davinci.set_wait_mode(old)
    assert entered, "a blocking wait never reached STREAM_WAIT"
    assert errors == []
    assert s.completion(seq).ok


@pytest.mark.parametrize("mode", ["spin", "yield", "block", "auto"])
def test_wait_mode_from_the_environment(mode):
    """DAVINCI_WAIT_MODE sets the process's mode; a bad value is refused
    with the names that work."""
    code = "import davinci; print(davinci.wait_mode().value)"
    env = dict(os.environ, DAVINCI_WAIT_MODE=mode,
               PYTHONPATH=USERSPACE + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [mode]
    env["DAVINCI_WAIT_MODE"] = "sometimes"
    bad = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0
    assert "unknown wait mode 'sometimes'" in bad.stderr
    assert "spin" in bad.stderr and "block" in bad.stderr


def test_completions_name_the_ai_core(dev):
    """A task an AI core ran says which; a notification names none."""
    if dev.version.abi_minor < 3:
        pytest.skip("drivers before ABI 1.3 leave the field zero")
    s = dev.stream()
    with dev.malloc(1 << 20) as b:
        mem = s.memset(b, 1)
        note = s.notify(7)
        s.synchronize()
        assert s.completion(mem).aicore in range(dev.info.aicores)
        assert s.completion(note).aicore is None
    s.destroy()


def test_streams_and_their_rings_in_the_host_pool(dev):
    """Device.streams lists the live streams; each one's rings take
    ring_bytes of the pinned host pool, outside ctx_used, until it is
    destroyed."""
    before = dev.info.host_free
    s = dev.stream(sq_entries=1024, cq_entries=512)
    assert s in dev.streams
    assert s.ring_bytes >= 1024 * 128 + 512 * 64
    assert before - dev.info.host_free == s.ring_bytes
    s.destroy()
    assert s not in dev.streams
    assert dev.info.host_free == before
