# SPDX-License-Identifier: GPL-2.0
"""The device trace ring and the Perfetto traces written from it.

Runs on the backend discovery finds: the in-process core
(DAVINCI_BACKEND=inproc) or a FUSE mount (DAVINCI_DEV_DIR). Each written
trace is parsed back with perfetto's protobuf classes (tests/trace/pftrace.py)
and checked against the workload that made it.
"""

import os
import subprocess
import sys

import pytest

import davinci
from davinci import _uapi
from davinci.trace import DeviceTraceReader, TraceData
from davinci.trace.perfetto_out import build_trace

from pftrace import parse

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "workload.py")
MONOTONIC = 3   # BUILTIN_CLOCK_MONOTONIC


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(os.path.dirname(os.path.dirname(HERE)), "userspace"),
         HERE] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                  if p])
    env.update(extra)
    return env


def _trace(tmp_path, *command, check_rc=0, extra=(), poll_ms=100):
    out = str(tmp_path / "t.pftrace")
    proc = subprocess.run(
        [sys.executable, "-m", "davinci.cli", "trace", "-o", out, *extra,
         "--", *command], env=_env(DAVINCI_TRACE_POLL_MS=str(poll_ms)),
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == check_rc, proc.stderr
    return out, proc


def _workload(*args):
    return [sys.executable, WORKLOAD, *(str(a) for a in args)]


@pytest.fixture
def dev():
    d = davinci.Device(0)
    yield d
    d.close()


def _mine(records):
    return [r for r in records if r.pid == os.getpid()]


def test_ring_records_each_task(dev):
    reader = DeviceTraceReader(dev)
    reader.set_enabled(True)
    streams = [dev.stream() for _ in range(3)]
    buf = dev.malloc(1 << 20)
    for s in streams:
        s.submit([davinci.make_task(_uapi.DAVINCI_OP_MEMSET, dst=buf.dev_addr,
                                    count=64, imm=1) for _ in range(5)])
    for s in streams:
        s.synchronize()
    buf.free()
    chunk = reader.read()
    recs = _mine(chunk.records)
    assert chunk.dropped == 0 and chunk.enabled
    aicores = dev.info.aicores
    for s in streams:
        for kind in ("TASK_START", "TASK_COMPLETE"):
            got = sorted(r.seq for r in recs
                         if r.kind == kind and r.id == s.stream_id)
            assert got == [1, 2, 3, 4, 5], (kind, s.stream_id, got)
        # one submit, one take-in: one record for its five tasks
        queued = [(r.seq, r.arg0) for r in recs
                  if r.kind == "TASKS_QUEUED" and r.id == s.stream_id]
        assert queued == [(1, 5)], (s.stream_id, queued)
    for r in recs:
        if r.kind == "TASK_COMPLETE":
            assert r.status == 0 and r.op_name == "MEMSET"
            assert 0 < r.arg0 <= r.arg1 == r.timestamp_ns
            assert r.aicore < aicores
    allocs = [r for r in recs if r.kind == "MEM_ALLOC" and r.arg1 == 1 << 20]
    frees = [r for r in chunk.records if r.kind == "MEM_FREE"
             and r.arg0 == buf.dev_addr]
    assert len(allocs) == 1 and len(frees) == 1
    assert allocs[0].arg0 == buf.dev_addr
    assert frees[0].arg2 == allocs[0].arg2 - (1 << 20)
    indices = [r.index for r in chunk.records]
    assert indices == list(range(indices[0], indices[0] + len(indices)))
    for s in streams:
        s.destroy()


def test_recording_can_be_switched_off(dev):
    reader = DeviceTraceReader(dev)
    s = dev.stream()
    try:
        reader.set_enabled(False)
        s.nop()
        s.synchronize()
        assert not [r for r in _mine(reader.read().records)
                    if r.kind.startswith("TASK")]
    finally:
        reader.set_enabled(True)
    s.nop()
    s.synchronize()
    assert len([r for r in _mine(reader.read().records)
                if r.kind == "TASK_COMPLETE"]) == 1
    q = _uapi.davinci_trace_read()
    q.flags = _uapi.DAVINCI_TRACE_F_ENABLE | _uapi.DAVINCI_TRACE_F_DISABLE
    with pytest.raises(davinci.InvalidArgumentError):
        dev.transport.ioctl(_uapi.DAVINCI_IOCTL_TRACE_READ, q)
    s.destroy()


def test_another_open_file_cannot_switch_my_trace_off(dev):
    """Recording is each open file's request: another one's "off" (or
    closing) leaves mine recording; mine gone, nobody records."""
    mine = DeviceTraceReader(dev)
    mine.set_enabled(True)
    other = davinci.Device(0)
    theirs = DeviceTraceReader(other)
    theirs.set_enabled(False)
    s = dev.stream()
    s.nop()
    s.synchronize()
    other.close()
    s.nop()
    s.synchronize()
    done = [r for r in _mine(mine.read().records)
            if r.kind == "TASK_COMPLETE" and r.id == s.stream_id]
    assert [r.seq for r in done] == [1, 2]
    mine.set_enabled(False)
    assert not mine.read().enabled
    s.nop()
    s.synchronize()
    assert not [r for r in _mine(mine.read().records)
                if r.kind.startswith("TASK")]
    s.destroy()


def test_full_ring_drops_oldest_and_says_how_many(dev, tmp_path):
    reader = DeviceTraceReader(dev, since=0)
    reader.set_enabled(True)
    reader.read()                     # whatever came before
    s = dev.stream(sq_entries=1024, cq_entries=1024)
    n = _uapi.DAVINCI_TRACE_CAPACITY
    for _ in range(n // 1024):
        s.submit([davinci.make_task(_uapi.DAVINCI_OP_NOP)] * 1024)
        s.synchronize()
    start = reader.since
    chunk = reader.read()
    written = reader.since - start
    assert written >= n                # a completion per NOP
    assert chunk.dropped == written - _uapi.DAVINCI_TRACE_CAPACITY
    assert len(chunk.records) == _uapi.DAVINCI_TRACE_CAPACITY
    assert chunk.records[0].index == start + chunk.dropped
    s.destroy()
    path = tmp_path / "drops.pftrace"
    path.write_bytes(build_trace(TraceData(records=chunk.records,
                                           dropped={0: chunk.dropped})))
    p = parse(str(path))
    said = [i for i in p.instants if i.cat == "trace"]
    assert [i.args["dropped"] for i in said] == [chunk.dropped]


def test_trace_command_matches_workload(tmp_path):
    tasks, streams, alloc = 40, 3, 8 << 20
    out, proc = _trace(tmp_path, *_workload(tasks, streams, alloc))
    p = parse(out)
    assert p.primary_clock == MONOTONIC and p.clock_ids == {MONOTONIC}
    host = [s for s in p.slices if s.cat == "runtime"]
    pids = {s.args.get("pid") for s in p.on("davinci0/stream")}
    assert len(pids) == 1
    pid = pids.pop()
    stream_tracks = {s.track for s in p.on("davinci0/stream")}
    assert len(stream_tracks) == streams
    for track in stream_tracks:
        sl = sorted((s for s in p.slices if s.track == track),
                    key=lambda s: s.ts)
        assert len(sl) == tasks and {s.name for s in sl} == {"MEMSET"}
        assert all(a.end <= b.ts for a, b in zip(sl, sl[1:]))  # in order
    cores = p.on("davinci0/AI core")
    check_tasks_within_host_window(p, host)
    assert len(cores) == tasks * streams
    for track in {s.track for s in cores}:
        sl = sorted((s for s in cores if s.track == track),
                    key=lambda s: s.ts)
        assert all(a.end <= b.ts for a, b in zip(sl, sl[1:]))  # one at once
    # every completed task has a start, and a flow queued -> core -> done
    done = [i for i in p.instants if i.name == "done MEMSET"]
    queued = [i for i in p.instants if i.name.startswith("queued ")]
    assert len(done) == sum(i.args["count"] for i in queued) \
        == tasks * streams
    core_flows = {f for s in cores for f in s.flows}
    assert sorted(f for i in queued for f in i.flows) == sorted(core_flows)
    assert {f for i in done for f in i.end_flows} == core_flows
    submits = [s for s in host if s.name == "Stream.submit"]
    assert {f for s in submits for f in s.flows} == core_flows
    # host spans of the workload's process, on the device's clock
    names = {s.name for s in host}
    assert {"Stream.submit", "Stream.synchronize", "Device.malloc",
            "Buffer.free"} <= names
    assert {pid_tid[0] for pid_tid in p.threads.values()} == {pid}
    first = min(s.ts for s in host)
    last = max(s.end for s in host)
    assert all(first <= s.ts <= s.end <= last
               for s in p.on("davinci0/stream"))
    # HBM in use rises by the big allocation and falls back
    values = [v for _, v in p.counters["davinci0/HBM in use"]]
    assert max(values) - values[-1] >= alloc
    assert "top ops by device time" in proc.stderr


def check_tasks_within_host_window(p, host):
    """Each task runs between the start of the Stream.submit that made it
    (the flow from the host span to the task's AI-core slice) and the end
    of the workload's last Stream.synchronize: a window the host measured
    on the same clock, not taken from the task slices."""
    submit_of = {f: s for s in host if s.name == "Stream.submit"
                 for f in s.flows}
    flow_of = {(s.args["stream"], s.args["seq"]): s.flows[0]
               for s in p.on("davinci0/AI core")}
    synced = max(s.end for s in host if s.name == "Stream.synchronize")
    by_stream = {}
    for s in p.on("davinci0/stream"):
        submit = submit_of[flow_of[(s.args["stream"], s.args["seq"])]]
        assert submit.ts <= s.ts <= s.end <= synced, (s, submit, synced)
        by_stream.setdefault(s.args["stream"], []).append((s, submit))
    for pairs in by_stream.values():
        wall = synced - min(submit.ts for _, submit in pairs)
        assert all(s.end - s.ts <= wall for s, _ in pairs)


def test_task_outside_the_host_window_fails_the_check(tmp_path):
    """The window check catches a task slice that ends after the host's
    last synchronize returned, or starts before its submit."""
    out, _ = _trace(tmp_path, *_workload(3, 1, 4096), extra=("-q",))
    p = parse(out)
    host = [s for s in p.slices if s.cat == "runtime"]
    check_tasks_within_host_window(p, host)
    synced = max(s.end for s in host if s.name == "Stream.synchronize")
    late = next(s for s in p.on("davinci0/stream"))
    late.end = synced + 1
    with pytest.raises(AssertionError):
        check_tasks_within_host_window(p, host)
    late.end, late.ts = late.ts, min(s.ts for s in host) - 1
    with pytest.raises(AssertionError):
        check_tasks_within_host_window(p, host)


def test_failing_command_still_writes_its_trace(tmp_path):
    out, _ = _trace(tmp_path, *_workload(10, 2, 4096, "fail"), check_rc=3)
    p = parse(out)
    assert len(p.on("davinci0/AI core")) == 20
    out, _ = _trace(tmp_path, sys.executable, "-c",
                    "import os; os._exit(5)", check_rc=5)
    assert parse(out).slices == []
    out, proc = _trace(tmp_path, "/nonexistent/command", check_rc=127)
    assert os.path.exists(out)


def test_crashing_command_keeps_what_was_recorded(tmp_path):
    """Killed by SIGKILL after its tasks: the trace has them and the host
    calls the tracer spooled before the kill, on every backend."""
    tasks, streams = 6, 2
    out, _ = _trace(tmp_path, *_workload(tasks, streams, 4096, "crash"),
                    check_rc=128 + 9, extra=("-q",))
    p = parse(out)
    assert len(p.on("davinci0/AI core")) == tasks * streams
    submits = [s for s in p.slices if s.name == "Stream.submit"]
    assert len(submits) == streams
    assert {f for s in submits for f in s.flows} == \
        {f for s in p.on("davinci0/AI core") for f in s.flows}


def test_trace_command_reports_drops(tmp_path):
    n = _uapi.DAVINCI_TRACE_CAPACITY // 2
    out, proc = _trace(tmp_path, *_workload(n, 1, 4096), extra=("-q",),
                       poll_ms=0)
    p = parse(out)
    said = [i for i in p.instants if i.cat == "trace"]
    assert len(said) == 1 and said[0].args["dropped"] > 0
    assert "records dropped" in proc.stderr
    assert 0 < len(p.on("davinci0/AI core")) < n


def test_polling_loses_nothing_of_a_long_run(tmp_path):
    """More records than the ring holds, spread over a second: read every
    20 ms, none is dropped."""
    n = _uapi.DAVINCI_TRACE_CAPACITY // 2
    out, _ = _trace(tmp_path, *_workload(n, 1, 4096, "slow"),
                    extra=("-q",), poll_ms=20)
    p = parse(out)
    assert not [i for i in p.instants if i.cat == "trace"]
    assert len(p.on("davinci0/AI core")) == n


def test_environment_switch(tmp_path):
    path = str(tmp_path / "env-%p.pftrace")
    proc = subprocess.run(_workload(5, 1, 4096), capture_output=True,
                          text=True, timeout=120,
                          env=_env(DAVINCI_TRACE=path))
    assert proc.returncode == 0, proc.stderr
    written = [f for f in os.listdir(tmp_path) if f.startswith("env-")]
    assert len(written) == 1 and written[0] != "env-%p.pftrace"
    p = parse(str(tmp_path / written[0]))
    assert len([s for s in p.on("davinci0/stream")]) == 5
    assert any(s.name == "Stream.submit" for s in p.slices)


def test_acl_prof(tmp_path, dev):
    code = """
import acl, sys
acl.init(); acl.rt.set_device(0)
assert acl.prof.init(sys.argv[1]) == 0
cfg = acl.prof.create_config([0], acl.prof.ACL_AICORE_NONE, 0,
                             acl.prof.ACL_PROF_ACL_API |
                             acl.prof.ACL_PROF_TASK_TIME)
assert cfg and acl.prof.start(cfg) == 0
s, ret = acl.rt.create_stream()
p, ret = acl.rt.malloc(1 << 20, 0)
assert acl.rt.memset(p, 1 << 20, 7, 1 << 20) == 0
assert acl.rt.synchronize_stream(s) == 0
assert acl.prof.stop(cfg) == 0
assert acl.prof.stop(cfg) != 0
assert acl.prof.destroy_config(cfg) == 0
assert acl.prof.finalize() == 0
assert acl.prof.create_config([], 0, 0, 0) == 0
"""
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)],
                          env=_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].endswith(".pftrace")
    p = parse(str(tmp_path / files[0]))
    assert [s.name for s in p.on("davinci0/AI core")] == ["MEMSET"]
    # every AI core has its track, idle ones too
    cores = {n for n in p.names.values() if n.startswith("AI core")}
    assert len(cores) == dev.info.aicores
    acl_calls = {s.name for s in p.slices if s.cat == "acl"}
    assert {"acl.rt.malloc", "acl.rt.memset",
            "acl.rt.synchronize_stream"} <= acl_calls


TORCH_STEP = """
import torch, torch_npu
x = torch.ones(8, 8, device="npu")
y = torch.full((8, 8), 2.0, device="npu")
z = torch.mm(x + y, y)
torch.npu.synchronize()
assert z.cpu()[0, 0].item() == 48.0
"""


def test_torch_op_spans(tmp_path):
    """A torch step on npu tensors: an ``aten::`` span per op on the
    program's thread, enclosing the runtime calls and the device tasks it
    launched."""
    pytest.importorskip("torch")
    out, proc = _trace(tmp_path, sys.executable, "-c", TORCH_STEP,
                       extra=("-q",))
    p = parse(out)
    ops = [s for s in p.slices if s.cat == "torch"]
    assert {"aten::add.Tensor", "aten::mm"} <= {s.name for s in ops}
    assert len({s.track for s in ops}) == 1
    runtime = [s for s in p.slices if s.cat == "runtime"]
    for op in ("aten::add.Tensor", "aten::mm"):
        span = next(s for s in ops if s.name == op)
        inner = {f for s in runtime if s.track == span.track
                 and span.ts <= s.ts <= s.end <= span.end for f in s.flows}
        tasks = {s.name for s in p.on("davinci0/AI core")
                 if set(s.flows) & inner}
        assert tasks, (op, inner)
        assert op != "aten::mm" or tasks == {"MATMUL"}, tasks


def test_summary_and_png(tmp_path):
    out, _ = _trace(tmp_path, *_workload(8, 2, 4096))
    png = str(tmp_path / "t.png")
    proc = subprocess.run([sys.executable, "-m", "davinci.cli",
                           "trace-summary", out, "--png", png], env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "MEMSET" in proc.stdout and "AI core utilisation" in proc.stdout
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    bad = tmp_path / "bad.pftrace"
    bad.write_bytes(b"not a trace")
    proc = subprocess.run([sys.executable, "-m", "davinci.cli",
                           "trace-summary", str(bad)], env=_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "cannot read" in proc.stderr


def test_a_shared_task_shows_on_every_core_that_ran_its_chunks(dev):
    """A matmul of many chunks runs on every idle AI core: each core that
    ran some of them has a TASK_HELP record inside the task's span, on a
    core other than the owner's, and the trace's utilisation counts it."""
    from davinci import ops
    from davinci.trace.summary import summarize
    from davinci.trace.timeline import parse_timeline
    import numpy as np

    if dev.info.aicores < 2:
        pytest.skip("one AI core: nothing to share")
    reader = DeviceTraceReader(dev)
    reader.set_enabled(True)
    rng = np.random.default_rng(0)
    a = dev.tensor(rng.standard_normal((768, 768)).astype(np.float32))
    b = dev.tensor(rng.standard_normal((768, 768)).astype(np.float32))
    s = dev.stream()
    helps, recs = [], []
    # an idle core joins within the task's tens of milliseconds; a few
    # tries leave room for a machine busy with other work
    for _ in range(20):
        ops.matmul(a, b, stream=s)
        s.synchronize()
        chunk = reader.read()
        recs += _mine(chunk.records)
        helps = [r for r in recs if r.kind == "TASK_HELP"]
        if helps:
            break
    assert helps, "no AI core but the owner ran a chunk of 20 matmuls"
    done = {(r.id, r.seq): r for r in recs if r.kind == "TASK_COMPLETE"}
    for h in helps:
        owner = done[(h.id, h.seq)]
        assert h.op_name == owner.op_name == "MATMUL"
        assert h.aicore != owner.aicore and h.aicore < dev.info.aicores
        assert owner.arg0 <= h.arg0 <= h.arg1 <= owner.arg1
        assert h.index < owner.index      # written before its completion
    data = TraceData(records=recs, aicores={recs[0].device:
                                            dev.info.aicores})
    tl = parse_timeline(build_trace(data))
    helped = [sl for sl in tl.slices if sl.category == "help"]
    assert len(helped) == len(helps) and all(
        sl.track.name.startswith("AI core") and sl.name == "MATMUL"
        for sl in helped)
    # the helper cores' busy time in the summary is their help
    report = summarize(tl)
    for core in {sl.track.name for sl in helped}:
        line = next(ln for ln in report.splitlines() if core in ln)
        assert "(0.000 ms busy)" not in line, report
    a.free()
    b.free()
    s.destroy()
