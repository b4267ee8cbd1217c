# SPDX-License-Identifier: GPL-2.0
"""A written trace parsed with the perfetto package's own protobuf classes,
independently of davinci.trace's reader: tracks, slices (begin/end paired
per track), instants, counters and flows."""

from collections import defaultdict
from dataclasses import dataclass, field

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


@dataclass
class Ev:
    track: str
    name: str
    cat: str
    ts: int
    end: int
    args: dict
    flows: tuple
    end_flows: tuple


@dataclass
class Parsed:
    names: dict = field(default_factory=dict)        # uuid -> name
    parent: dict = field(default_factory=dict)       # uuid -> parent uuid
    threads: dict = field(default_factory=dict)      # uuid -> (pid, tid)
    slices: list = field(default_factory=list)
    instants: list = field(default_factory=list)
    counters: dict = field(default_factory=lambda: defaultdict(list))
    clock_ids: set = field(default_factory=set)
    primary_clock: int = 0

    def on(self, prefix):
        return [s for s in self.slices if s.track.startswith(prefix)]


def parse(path) -> Parsed:
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    out = Parsed()
    stacks = defaultdict(list)
    for p in trace.packet:
        if p.HasField("clock_snapshot"):
            out.primary_clock = p.clock_snapshot.primary_trace_clock
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.HasField("thread"):
                out.threads[d.uuid] = (d.thread.pid, d.thread.tid)
                out.names[d.uuid] = "thread %d" % d.thread.tid
            elif d.HasField("process"):
                out.names[d.uuid] = "process %d" % d.process.pid
            else:
                out.names[d.uuid] = d.name
            if d.parent_uuid:
                out.parent[d.uuid] = d.parent_uuid
        if not p.HasField("track_event"):
            continue
        out.clock_ids.add(p.timestamp_clock_id)
        e = p.track_event
        name = out.names[e.track_uuid]
        parent = out.names.get(out.parent.get(e.track_uuid), "")
        track = "%s/%s" % (parent, name) if parent else name
        args = {a.name: (a.string_value if a.HasField("string_value")
                         else a.int_value) for a in e.debug_annotations}
        ev = Ev(track, e.name, ",".join(e.categories), p.timestamp,
                p.timestamp, args, tuple(e.flow_ids),
                tuple(e.terminating_flow_ids))
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            stacks[e.track_uuid].append(ev)
            ev.uuid = e.track_uuid
        elif e.type == pb.TrackEvent.TYPE_SLICE_END:
            b = stacks[e.track_uuid].pop()
            b.end = p.timestamp
            out.slices.append(b)
        elif e.type == pb.TrackEvent.TYPE_INSTANT:
            out.instants.append(ev)
        elif e.type == pb.TrackEvent.TYPE_COUNTER:
            out.counters[track].append((p.timestamp, e.counter_value))
    assert not any(stacks.values()), "slices left open"
    return out
