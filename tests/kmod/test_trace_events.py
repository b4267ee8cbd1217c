"""The module's tracepoints (kmod/linux/davinci_trace.h) through tracefs:
enabled, a workload run, read back; they agree with the device's trace ring
(DAVINCI_IOCTL_TRACE_READ), which the same hooks feed."""
import os
import re
import subprocess
import sys

import pytest

import davinci
from davinci import _uapi
from davinci.manager import Manager
from davinci.trace import DeviceTraceReader

TRACEFS = "/sys/kernel/tracing"
EVENTS = ("doorbell", "tasks_queued", "task_start", "task_complete",
          "task_help",
          "mem_alloc", "mem_free", "event_record", "event_wait", "fault",
          "reset", "mgmt", "ctx_reset", "ctx_fail")
LINE = re.compile(r"\b(davinci_\w+): (.*)$")


def _write(name, text):
    with open(os.path.join(TRACEFS, name), "w") as f:
        f.write(text)


@pytest.fixture
def tracefs():
    if not os.path.isdir(os.path.join(TRACEFS, "events")):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS],
                       check=False)
    if not os.path.isdir(os.path.join(TRACEFS, "events")):
        pytest.skip("tracefs cannot be mounted")
    assert os.path.isdir(os.path.join(TRACEFS, "events", "davinci"))
    _write("trace", "")
    _write("events/davinci/enable", "1")
    yield
    _write("events/davinci/enable", "0")
    _write("trace", "")


def _parse(lines):
    """(event without its davinci_ prefix, fields) of each davinci line."""
    out = []
    for line in lines:
        m = LINE.search(line)
        if m:
            fields = dict(kv.split("=", 1) for kv in m.group(2).split())
            out.append((m.group(1)[len("davinci_"):], fields))
    return out


def _events():
    with open(os.path.join(TRACEFS, "trace")) as f:
        return _parse(f)


def test_every_event_is_defined():
    base = os.path.join(TRACEFS, "events", "davinci")
    if not os.path.isdir(base):
        pytest.skip("tracefs not mounted")
    assert sorted(os.listdir(base)) == sorted(
        ["enable", "filter"] + ["davinci_" + e for e in EVENTS])


def test_workload_shows_in_tracefs_and_ring(tracefs):
    pid = str(os.getpid())
    with davinci.Device(0) as dev:
        ring = DeviceTraceReader(dev)
        ring.set_enabled(True)      # the ring records while a file asks
        buf = dev.malloc(1 << 20)
        polled = dev.stream()
        rung = dev.stream(polled=False)
        ev = dev.event()
        for s in (polled, rung):
            s.submit([davinci.make_task(_uapi.DAVINCI_OP_MEMSET,
                                        dst=buf.dev_addr, count=64, imm=3)
                      for _ in range(4)])
        ev.record(rung)
        for s in (polled, rung):
            s.synchronize()
        ev.synchronize()
        buf.free()
        records = [r for r in ring.read().records if r.pid == os.getpid()]
        ids = {polled.stream_id, rung.stream_id}
    _write("events/davinci/enable", "0")
    got = [(e, f) for e, f in _events() if f.get("pid", pid) == pid]
    for kind in ("task_start", "task_complete"):
        seqs = sorted((int(f["stream"]), int(f["seq"])) for e, f in got
                      if e == kind and f["opcode"] == "2")
        assert seqs == sorted((i, n) for i in ids for n in range(1, 5)), kind
        ring_seqs = sorted((r.id, r.seq) for r in records
                           if r.kind == kind.upper() and r.opcode == 2)
        assert ring_seqs == seqs
    # a take-in is one event naming its first task and how many
    queued = sorted((int(f["stream"]), int(f["seq"]) + k) for e, f in got
                    if e == "tasks_queued" and int(f["stream"]) in ids
                    for k in range(int(f["count"])))
    assert len(set(queued)) == len(queued)
    assert {(i, n) for i in ids for n in range(1, 5)} <= set(queued)
    assert queued == sorted((r.id, r.seq + k) for r in records
                            if r.kind == "TASKS_QUEUED" and r.id in ids
                            for k in range(r.arg0))
    done = [f for e, f in got if e == "task_complete"]
    assert all(f["status"] == "0" and int(f["start_ns"]) <= int(f["end_ns"])
               for f in done)
    assert any(e == "doorbell" and int(f["stream"]) == rung.stream_id
               for e, f in got)
    # a free is logged when the memory returns, maybe after its context
    sizes = [(e, int(f["size"])) for e, f in _events()
             if e.startswith("mem_")]
    assert ("mem_alloc", 1 << 20) in sizes and ("mem_free", 1 << 20) in sizes
    assert any(e == "event_record" for e, _ in got)


def test_faults_and_resets_are_traced(tracefs):
    with Manager() as m:
        m.inject(1, "throttle", level=50)
        m.inject(1, "throttle", level=0)
        m.reset(1)
    got = _events()
    faults = [f for e, f in got if e == "fault" and f["dev"] == "1"]
    assert faults
    assert all(f["fault"] == str(_uapi.DAVINCI_FAULT_THROTTLE)
               for f in faults)
    assert any(e == "reset" and f["dev"] == "1" for e, f in got)


def test_davinci_trace_on_the_module(tmp_path):
    """`davinci trace` on /dev/davinci*: the launcher reads the module's
    ring, so even a command that dies leaves its tasks in the trace."""
    here = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "trace")
    sys.path.insert(0, here)
    from pftrace import parse
    out = str(tmp_path / "t.pftrace")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(os.path.dirname(os.path.dirname(here)), "userspace"),
         here]))
    proc = subprocess.run(
        [sys.executable, "-m", "davinci.cli", "trace", "-q", "-o", out, "--",
         sys.executable, os.path.join(here, "workload.py"), "6", "2", "4096",
         "fail"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 3, proc.stderr
    p = parse(out)
    assert len(p.on("davinci0/AI core")) == 12
    assert len({s.track for s in p.on("davinci0/stream")}) == 2
    assert any(s.name == "Stream.submit" for s in p.slices)


# The kernel's own tools: how each records the davinci events around a
# command, and how it prints what it recorded.
TOOLS = {
    "trace-cmd": (["trace-cmd", "record", "-q", "-e", "davinci", "-o"],
                  ["trace-cmd", "report", "-i"]),
    "perf": (["perf", "record", "-q", "-a", "-e", "davinci:*", "-o"],
             ["perf", "script", "-i"]),
}


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_kernel_tools_record_the_module(tracefs, tmp_path, tool):
    """`trace-cmd record -e davinci` / `perf record -e 'davinci:*'` around
    a workload, then `trace-cmd report` / `perf script`, hold every task of
    it."""
    if subprocess.run(["sh", "-c", "command -v " + tool],
                      capture_output=True).returncode:
        pytest.fail("%s is not installed (scripts/install-deps.sh installs "
                    "it with the VM packages)" % tool)
    record, report = TOOLS[tool]
    here = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "trace")
    env = dict(os.environ, PYTHONPATH=os.path.join(
        os.path.dirname(os.path.dirname(here)), "userspace"))
    dat = str(tmp_path / "trace.dat")
    rec = subprocess.run(
        record + [dat, sys.executable, os.path.join(here, "workload.py"),
                  "5", "2", "8192"],
        env=env, capture_output=True, text=True, timeout=600)
    assert rec.returncode == 0, rec.stderr
    rep = subprocess.run(report + [dat], capture_output=True, text=True,
                         timeout=300)
    assert rep.returncode == 0, rep.stderr
    got = _parse(rep.stdout.splitlines())
    for kind in ("task_start", "task_complete"):
        memsets = [f for e, f in got if e == kind and
                   f["opcode"] == str(_uapi.DAVINCI_OP_MEMSET)]
        assert len(memsets) == 10, (kind, len(memsets))
    assert sum(int(f["count"]) for e, f in got if e == "tasks_queued") == 10
    sizes = [int(f["size"]) for e, f in got if e == "mem_alloc"]
    assert 8192 in sizes
