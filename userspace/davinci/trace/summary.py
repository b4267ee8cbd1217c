# SPDX-License-Identifier: GPL-2.0
"""The terminal summary of a trace: top ops by device time, per-core
utilisation, streams, host calls, HBM peak."""

from __future__ import annotations

from collections import defaultdict

from .timeline import Timeline

__all__ = ["summarize"]


def _ms(ns: float) -> str:
    return "%.3f ms" % (ns / 1e6)


def _top(rows: dict[str, list[int]], top: int) -> list[str]:
    out = []
    ranked = sorted(rows.items(), key=lambda kv: -sum(kv[1]))[:top]
    for name, durs in ranked:
        out.append("  %-28s %7d %14s %14s" % (
            name[:28], len(durs), _ms(sum(durs)), _ms(sum(durs) / len(durs))))
    return out


def summarize(tl: Timeline, top: int = 10) -> str:
    """A few tables of ``tl`` for the terminal."""
    t0, t1 = tl.span()
    wall = max(t1 - t0, 1)
    lines = ["trace: %s of wall time" % _ms(wall)]
    cores = tl.tracks_named("AI core")
    ops: dict[str, list[int]] = defaultdict(list)
    busy: dict[int, int] = defaultdict(int)
    for s in tl.slices:
        if s.track.name.startswith("AI core"):
            if s.category != "help":    # (a task's time is its own slice)
                ops[s.name].append(s.dur_ns)
            busy[s.track.uuid] += s.dur_ns
    lines.append("")
    lines.append("top ops by device time        count    device time"
                 "           mean")
    lines += _top(ops, top) or ["  (no tasks ran)"]
    lines.append("")
    lines.append("AI core utilisation")
    for c in cores:
        lines.append("  %-10s %-14s %6.1f %%  (%s busy)" % (
            c.group, c.name, 100.0 * busy[c.uuid] / wall, _ms(busy[c.uuid])))
    streams = tl.tracks_named("stream")
    if streams:
        lines.append("")
        lines.append("streams")
        for st in streams:
            sl = [s for s in tl.slices if s.track is st]
            lines.append("  %-10s %-40s %6d tasks %14s" % (
                st.group, st.name[:40], len(sl), _ms(sum(s.dur_ns
                                                         for s in sl))))
    host: dict[str, list[int]] = defaultdict(list)
    for s in tl.slices:
        if s.category in ("runtime", "acl"):
            host[s.name].append(s.dur_ns)
    if host:
        lines.append("")
        lines.append("top host calls                count      host time"
                     "           mean")
        lines += _top(host, top)
    for uuid, values in tl.counters.items():
        track = tl.tracks[uuid]
        lines.append("")
        lines.append("%s %s: peak %d MiB" % (
            track.group, track.name, max(v for _, v in values) // (1 << 20)))
    dropped = [s for s in tl.instants if s.category == "trace"]
    for s in dropped:
        lines.append("%s: %s (the ring overflowed: read it more often)"
                     % (s.track.group, s.name))
    return "\n".join(lines)
