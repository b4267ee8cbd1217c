# SPDX-License-Identifier: GPL-2.0
"""A :class:`TraceData` as a Perfetto trace (protobuf, track events), built
with the ``perfetto`` package's :class:`TraceProtoBuilder`.

Per device, under a track named ``davinciN``: a track per AI core and a
track per stream (task slices from start to end), an ``HBM in use`` counter,
and a ``device`` track of instants (doorbells, event records and waits,
faults, resets). The host call that submitted a task (Stream.submit or
launch), the queued instant of the take-in it was in (one for a batch),
its AI-core slice and its completion instant are joined by one flow. Host
spans go on the traced process's thread tracks. Every timestamp is
CLOCK_MONOTONIC, the clock the device stamps with; a clock snapshot makes
it the trace's clock.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from itertools import count

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    BuiltinClock, CounterDescriptor, TracePacket, TrackEvent)
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from .. import _uapi
from .data import TraceData
from .records import NO_CORE, TraceRecord

__all__ = ["build_trace", "write_trace", "SEQUENCE_ID"]

#: Flows drawn from one submission or take-in into its tasks, at most.
MAX_FLOWS = 4096

SEQUENCE_ID = 0x0DA
_CLOCK = BuiltinClock.BUILTIN_CLOCK_MONOTONIC

_MGMT_NAMES = {v: k[len("DAVINCI_MGMT_EV_"):] for k, v in vars(_uapi).items()
               if k.startswith("DAVINCI_MGMT_EV_")}
_FAULT_NAMES = {v: k[len("DAVINCI_FAULT_"):] for k, v in vars(_uapi).items()
                if k.startswith("DAVINCI_FAULT_")
                and k != "DAVINCI_FAULT_KINDS"}


class _Writer:
    def __init__(self, data: TraceData) -> None:
        self.data = data
        self.b = TraceProtoBuilder()
        self.uuids: dict[tuple, int] = {}
        self._next = count(1)
        self.flows: dict[tuple, int] = {}
        self.first = True

    def packet(self, ts: int | None = None) -> TracePacket:
        p = self.b.add_packet()
        p.trusted_packet_sequence_id = SEQUENCE_ID
        if self.first:
            p.sequence_flags = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            self.first = False
        if ts is not None:
            p.timestamp = ts
            p.timestamp_clock_id = _CLOCK
        return p

    def track(self, key: tuple, name: str, parent: int | None = None,
              rank: int | None = None, counter: bool = False) -> int:
        if key in self.uuids:
            return self.uuids[key]
        uuid = self.uuids[key] = next(self._next)
        d = self.packet().track_descriptor
        d.uuid = uuid
        d.name = name
        if parent is not None:
            d.parent_uuid = parent
        if rank is not None:
            d.sibling_order_rank = rank
        if counter:
            d.counter.unit = CounterDescriptor.UNIT_SIZE_BYTES
        return uuid

    def event(self, ts: int, track: int, kind: int, name: str = "",
              category: str = "", args: dict | None = None,
              flows: tuple[int, ...] = (), end_flows: tuple[int, ...] = ()
              ) -> TrackEvent:
        e = self.packet(ts).track_event
        e.type = kind
        e.track_uuid = track
        if name:
            e.name = name
        if category:
            e.categories.append(category)
        e.flow_ids.extend(flows)
        e.terminating_flow_ids.extend(end_flows)
        for k, v in (args or {}).items():
            a = e.debug_annotations.add()
            a.name = k
            if isinstance(v, str):
                a.string_value = v
            else:
                a.int_value = int(v)
        return e

    def slice(self, track: int, start: int, end: int, name: str,
              category: str, args: dict | None = None,
              flows: tuple[int, ...] = ()) -> None:
        self.event(start, track, TrackEvent.TYPE_SLICE_BEGIN, name, category,
                   args, flows)
        self.event(max(end, start), track, TrackEvent.TYPE_SLICE_END)

    def instant(self, track: int, ts: int, name: str, category: str,
                args: dict | None = None, flows: tuple[int, ...] = (),
                end_flows: tuple[int, ...] = ()) -> None:
        self.event(ts, track, TrackEvent.TYPE_INSTANT, name, category, args,
                   flows, end_flows)

    # -- clock and tracks -------------------------------------------------
    def clock_snapshot(self) -> None:
        snap = self.packet().clock_snapshot
        for clock, value in ((_CLOCK, time.monotonic_ns()),
                             (BuiltinClock.BUILTIN_CLOCK_BOOTTIME,
                              time.clock_gettime_ns(time.CLOCK_BOOTTIME))):
            c = snap.clocks.add()
            c.clock_id = clock
            c.timestamp = value
        snap.primary_trace_clock = _CLOCK

    def device_track(self, dev: int) -> int:
        return self.track(("dev", dev), "davinci%d" % dev, rank=dev)

    def core_track(self, dev: int, core: int) -> int:
        return self.track(("core", dev, core), "AI core %d" % core,
                          self.device_track(dev), rank=core)

    def stream_track(self, dev: int, pid: int, stream: int) -> int:
        who = self.data.processes.get(pid)
        name = "stream %d (pid %d%s)" % (stream, pid,
                                         ", %s" % who if who else "")
        return self.track(("stream", dev, pid, stream), name,
                          self.device_track(dev), rank=1000 + stream)

    def misc_track(self, dev: int) -> int:
        return self.track(("misc", dev), "device", self.device_track(dev),
                          rank=3000)

    def hbm_track(self, dev: int) -> int:
        return self.track(("hbm", dev), "HBM in use", self.device_track(dev),
                          rank=2000, counter=True)

    def flow(self, r: TraceRecord) -> int:
        return self.flow_of(r.device, r.pid, r.id, r.seq)

    def flow_of(self, device: int, pid: int, stream: int, seq: int) -> int:
        key = (device, pid, stream, seq)
        if key not in self.flows:
            self.flows[key] = (device << 56) | (len(self.flows) + 1)
        return self.flows[key]

    def flows_into(self, device: int, pid: int, stream: int, first: int,
                   count: int) -> tuple[int, ...]:
        """The flows into tasks ``first`` .. ``first + count - 1`` of a
        stream, at most :data:`MAX_FLOWS` of them."""
        return tuple(self.flow_of(device, pid, stream, seq) for seq in
                     range(first, first + min(count, MAX_FLOWS)))

    def thread_track(self, pid: int, tid: int, name: str) -> int:
        if ("proc", pid) not in self.uuids:
            uuid = self.uuids[("proc", pid)] = next(self._next)
            d = self.packet().track_descriptor
            d.uuid = uuid
            d.process.pid = pid
            d.process.process_name = self.data.processes.get(pid, "pid %d"
                                                             % pid)
        if ("thread", pid, tid) in self.uuids:
            return self.uuids[("thread", pid, tid)]
        uuid = self.uuids[("thread", pid, tid)] = next(self._next)
        d = self.packet().track_descriptor
        d.uuid = uuid
        d.thread.pid = pid
        d.thread.tid = tid
        d.thread.thread_name = name
        return uuid

    # -- records ----------------------------------------------------------
    def task(self, r: TraceRecord) -> None:
        st = self.stream_track(r.device, r.pid, r.id)
        args = {"stream": r.id, "seq": r.seq, "pid": r.pid}
        if r.type == _uapi.DAVINCI_TRACE_TASKS_QUEUED:
            args["count"] = r.arg0
            self.instant(st, r.timestamp_ns, "queued %d" % r.arg0, "task",
                         args, flows=self.flows_into(r.device, r.pid, r.id,
                                                     r.seq, r.arg0))
            return
        if r.type == _uapi.DAVINCI_TRACE_TASK_START:
            return      # the completion carries start, end and core
        status = _uapi.STATUS_NAMES.get(r.status, str(r.status))
        args.update(status=status, aicore=r.aicore, user_data=r.arg2)
        fid = self.flow(r)
        if r.arg0:
            if r.aicore != NO_CORE:
                self.slice(self.core_track(r.device, r.aicore), r.arg0,
                           r.arg1, r.op_name, "task", args, flows=(fid,))
            self.slice(st, r.arg0, r.arg1, r.op_name, "task", args)
        self.instant(st, r.arg1, "done %s" % r.op_name if r.status == 0
                     else "%s %s" % (status, r.op_name), "task", args,
                     end_flows=(fid,))

    def help(self, r: TraceRecord) -> None:
        """Another AI core's share of a task's chunks: a slice on that
        core's track (category "help": the task's own slice is on its
        owner's)."""
        self.slice(self.core_track(r.device, r.aicore), r.arg0, r.arg1,
                   r.op_name, "help", {"stream": r.id, "seq": r.seq,
                                       "pid": r.pid, "aicore": r.aicore,
                                       "user_data": r.arg2})

    def misc(self, r: TraceRecord) -> None:
        t = self.misc_track(r.device)
        if r.type == _uapi.DAVINCI_TRACE_DOORBELL:
            self.instant(t, r.timestamp_ns, "doorbell stream %d" % r.id,
                         "submit", {"stream": r.id, "sq_tail": r.arg0,
                                    "pid": r.pid})
        elif r.type in (_uapi.DAVINCI_TRACE_EVENT_RECORD,
                        _uapi.DAVINCI_TRACE_EVENT_WAIT):
            what = "record" if r.type == _uapi.DAVINCI_TRACE_EVENT_RECORD \
                else "host wait"
            self.instant(t, r.timestamp_ns, "event %d %s" % (r.id, what),
                         "event", {"event": r.id, "generation": r.seq,
                                   "pid": r.pid})
        elif r.type == _uapi.DAVINCI_TRACE_MGMT:
            name = _MGMT_NAMES.get(r.status, str(r.status))
            if r.arg0:
                name += " " + _FAULT_NAMES.get(r.arg0, str(r.arg0))
            self.instant(t, r.timestamp_ns, name, "fault",
                         {"health": r.id, "addr": r.arg1, "value": r.arg2})
        elif r.type in (_uapi.DAVINCI_TRACE_CTX_RESET,
                        _uapi.DAVINCI_TRACE_CTX_FAIL):
            self.instant(t, r.timestamp_ns, "context %s (pid %d)" % (
                "reset" if r.type == _uapi.DAVINCI_TRACE_CTX_RESET
                else "failed", r.pid), "fault", {"pid": r.pid})

    def memory(self, recs: list[TraceRecord]) -> None:
        hbm = [r for r in recs if r.id == 0]
        if not hbm:
            return
        first = hbm[0]
        before = first.arg2 - first.arg1 \
            if first.type == _uapi.DAVINCI_TRACE_MEM_ALLOC \
            else first.arg2 + first.arg1
        t = self.hbm_track(first.device)
        start = min(self.data.start_ns or first.timestamp_ns,
                    first.timestamp_ns)
        self.event(start, t, TrackEvent.TYPE_COUNTER).counter_value = before
        for r in hbm:
            self.event(r.timestamp_ns, t,
                       TrackEvent.TYPE_COUNTER).counter_value = r.arg2

    def build(self) -> bytes:
        self.clock_snapshot()
        by_dev: dict[int, list[TraceRecord]] = defaultdict(list)
        for r in sorted(self.data.records,
                        key=lambda r: (r.device, r.index)):
            by_dev[r.device].append(r)
        for dev, cores in sorted(self.data.aicores.items()):
            for core in range(cores):       # idle cores show, empty
                self.core_track(dev, core)
        for dev, recs in sorted(by_dev.items()):
            self.device_track(dev)
            if self.data.dropped.get(dev):
                self.instant(self.misc_track(dev), recs[0].timestamp_ns,
                             "%d records dropped" % self.data.dropped[dev],
                             "trace", {"dropped": self.data.dropped[dev]})
            for r in recs:
                if r.type in (_uapi.DAVINCI_TRACE_TASKS_QUEUED,
                              _uapi.DAVINCI_TRACE_TASK_START,
                              _uapi.DAVINCI_TRACE_TASK_COMPLETE):
                    self.task(r)
                elif r.type == _uapi.DAVINCI_TRACE_TASK_HELP:
                    self.help(r)
                elif r.type not in (_uapi.DAVINCI_TRACE_MEM_ALLOC,
                                    _uapi.DAVINCI_TRACE_MEM_FREE):
                    self.misc(r)
            self.memory([r for r in recs if r.type in (
                _uapi.DAVINCI_TRACE_MEM_ALLOC, _uapi.DAVINCI_TRACE_MEM_FREE)])
        for s in sorted(self.data.spans, key=lambda s: (s.start_ns,
                                                        -s.end_ns)):
            args = {"error": s.error} if s.error else None
            flows: tuple[int, ...] = ()
            if s.tasks:     # a submission: a flow into each task it made
                dev, stream, first, last = s.tasks
                flows = self.flows_into(dev, s.pid, stream, first,
                                        last - first + 1)
            self.slice(self.thread_track(s.pid, s.tid, s.thread_name),
                       s.start_ns, s.end_ns, s.name, s.category, args, flows)
        return self.b.serialize()


def build_trace(data: TraceData) -> bytes:
    """The Perfetto trace of ``data``, serialized."""
    return _Writer(data).build()


def write_trace(data: TraceData, path: str) -> None:
    """Write the Perfetto trace of ``data`` to ``path`` (atomically)."""
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(build_trace(data))
    os.replace(tmp, path)
