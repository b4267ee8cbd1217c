# SPDX-License-Identifier: GPL-2.0
"""What a trace holds before it is written: device records, host spans,
process names, and how many records each device's ring dropped."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .records import TraceRecord
from .spans import Span

__all__ = ["TraceData"]


@dataclass
class TraceData:
    """Device records (every device), host spans, ``pid -> name`` of the
    traced processes, ``device -> records dropped``, ``device -> AI cores``
    of the devices read, and the traced window (``time.monotonic_ns()``)."""
    records: list[TraceRecord] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    processes: dict[int, str] = field(default_factory=dict)
    dropped: dict[int, int] = field(default_factory=dict)
    aicores: dict[int, int] = field(default_factory=dict)
    start_ns: int = 0
    end_ns: int = 0

    def merge(self, other: "TraceData") -> None:
        """Add ``other``'s content (another process of the same run)."""
        self.records.extend(other.records)
        self.spans.extend(other.spans)
        self.processes.update(other.processes)
        self.aicores.update(other.aicores)
        for dev, n in other.dropped.items():
            self.dropped[dev] = self.dropped.get(dev, 0) + n
        if other.start_ns and (not self.start_ns
                               or other.start_ns < self.start_ns):
            self.start_ns = other.start_ns
        self.end_ns = max(self.end_ns, other.end_ns)

    def to_json(self) -> str:
        return json.dumps({
            "records": [r.to_list() for r in self.records],
            "spans": [s.to_list() for s in self.spans],
            "processes": {str(k): v for k, v in self.processes.items()},
            "dropped": {str(k): v for k, v in self.dropped.items()},
            "aicores": {str(k): v for k, v in self.aicores.items()},
            "start_ns": self.start_ns, "end_ns": self.end_ns})

    @classmethod
    def from_json(cls, text: str) -> "TraceData":
        d = json.loads(text)
        return cls([TraceRecord.from_list(r) for r in d["records"]],
                   [Span.from_list(s) for s in d["spans"]],
                   {int(k): v for k, v in d["processes"].items()},
                   {int(k): int(v) for k, v in d["dropped"].items()},
                   {int(k): int(v) for k, v in d["aicores"].items()},
                   int(d["start_ns"]), int(d["end_ns"]))
