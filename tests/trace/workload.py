# SPDX-License-Identifier: GPL-2.0
"""A known workload for the trace tests.

usage: workload.py TASKS STREAMS ALLOC_BYTES [fail|slow|crash]

STREAMS streams of TASKS MEMSET tasks each (64 bytes into one buffer per
stream), synchronized; one extra allocation of ALLOC_BYTES, freed. With
"fail", it exits with status 3 after the tasks completed; with "slow", it
sleeps 50 ms after each batch of 256; with "crash", under `davinci trace`,
it waits until its tracer has spooled its last Stream.synchronize, then
kills itself with SIGKILL (no atexit, nothing flushed at exit).
"""

import glob
import json
import os
import signal
import sys
import time

import davinci


def main() -> int:
    tasks, streams, alloc = (int(a) for a in sys.argv[1:4])
    dev = davinci.Device(0)
    big = dev.malloc(alloc)
    ss = [dev.stream(sq_entries=1024, cq_entries=1024)
          for _ in range(streams)]
    bufs = [dev.malloc(4096) for _ in ss]
    for s, b in zip(ss, bufs):
        for i in range(0, tasks, 256):
            s.submit([davinci.make_task(davinci._uapi.DAVINCI_OP_MEMSET,
                                        dst=b.dev_addr, count=64, imm=7)
                      for _ in range(min(256, tasks - i))])
            if sys.argv[4:] == ["slow"]:
                s.synchronize()
                time.sleep(0.05)
    for s in ss:
        s.synchronize()
    big.free()
    if sys.argv[4:] == ["fail"]:
        raise SystemExit(3)
    if sys.argv[4:] == ["crash"]:
        wait_spooled("Stream.synchronize")
        os.kill(os.getpid(), signal.SIGKILL)
    return 0


def wait_spooled(name: str) -> None:
    """Until a chunk of this process in DAVINCI_TRACE_SPOOL holds a span
    ``name`` (at most 60 s)."""
    pattern = os.path.join(os.environ["DAVINCI_TRACE_SPOOL"],
                           "%d.*.json" % os.getpid())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for path in glob.glob(pattern):
            with open(path) as f:
                if any(s[0] == name for s in json.load(f)["spans"]):
                    return
        time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(main())
