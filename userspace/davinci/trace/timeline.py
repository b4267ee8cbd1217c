# SPDX-License-Identifier: GPL-2.0
"""A written Perfetto trace read back (with the ``perfetto`` package's
protobuf classes) as tracks, slices, instants and counters: what the
terminal summary and the picture draw from."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (Trace,
                                                               TrackEvent)

__all__ = ["Track", "Slice", "Timeline", "load_timeline", "parse_timeline"]


@dataclass
class Track:
    """A track: ``group`` is its parent's name ("davinci0"), or the process
    name for a host thread."""
    uuid: int
    name: str
    group: str
    counter: bool = False


@dataclass
class Slice:
    track: Track
    name: str
    category: str
    start_ns: int
    end_ns: int
    args: dict

    @property
    def dur_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass
class Timeline:
    tracks: dict[int, Track] = field(default_factory=dict)
    slices: list[Slice] = field(default_factory=list)
    instants: list[Slice] = field(default_factory=list)
    counters: dict[int, list[tuple[int, float]]] = field(
        default_factory=lambda: defaultdict(list))

    def tracks_named(self, prefix: str) -> list[Track]:
        return sorted((t for t in self.tracks.values()
                       if t.name.startswith(prefix)),
                      key=lambda t: (t.group, t.name))

    def span(self) -> tuple[int, int]:
        """First and last timestamp of any slice, instant or counter."""
        ts = [s.start_ns for s in self.slices + self.instants] + \
             [s.end_ns for s in self.slices] + \
             [t for values in self.counters.values() for t, _ in values]
        return (min(ts), max(ts)) if ts else (0, 0)


def _args(e: TrackEvent) -> dict:
    out = {}
    for a in e.debug_annotations:
        out[a.name] = a.string_value if a.HasField("string_value") \
            else a.int_value
    return out


def parse_timeline(blob: bytes) -> Timeline:
    """The timeline of a serialized trace (as :mod:`.perfetto_out` writes
    it: slices begin and end on one track, in order). Raises ValueError
    when ``blob`` is not a trace."""
    trace = Trace()
    try:
        trace.ParseFromString(blob)
    except DecodeError as exc:
        raise ValueError("not a Perfetto trace: %s" % exc) from None
    tl = Timeline()
    names: dict[int, str] = {}
    procs: dict[int, str] = {}
    for p in trace.packet:
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.HasField("process"):
                procs[d.process.pid] = "%s (pid %d)" % (
                    d.process.process_name, d.process.pid)
            elif d.HasField("thread"):
                name = d.thread.thread_name or "tid %d" % d.thread.tid
                tl.tracks[d.uuid] = Track(d.uuid, name, procs.get(
                    d.thread.pid, "pid %d" % d.thread.pid))
            else:
                names[d.uuid] = d.name
                if d.parent_uuid:
                    tl.tracks[d.uuid] = Track(d.uuid, d.name,
                                              names.get(d.parent_uuid, ""),
                                              d.HasField("counter"))
    open_: dict[int, list[tuple]] = defaultdict(list)
    for p in trace.packet:
        if not p.HasField("track_event"):
            continue
        e = p.track_event
        track = tl.tracks.get(e.track_uuid)
        if track is None:
            continue
        if e.type == TrackEvent.TYPE_SLICE_BEGIN:
            open_[e.track_uuid].append((p.timestamp, e))
        elif e.type == TrackEvent.TYPE_SLICE_END and open_[e.track_uuid]:
            start, b = open_[e.track_uuid].pop()
            tl.slices.append(Slice(track, b.name, ",".join(b.categories),
                                   start, p.timestamp, _args(b)))
        elif e.type == TrackEvent.TYPE_INSTANT:
            tl.instants.append(Slice(track, e.name, ",".join(e.categories),
                                     p.timestamp, p.timestamp, _args(e)))
        elif e.type == TrackEvent.TYPE_COUNTER:
            tl.counters[e.track_uuid].append((p.timestamp, e.counter_value))
    return tl


def load_timeline(path: str) -> Timeline:
    with open(path, "rb") as f:
        return parse_timeline(f.read())
