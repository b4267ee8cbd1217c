# SPDX-License-Identifier: GPL-2.0
"""A known workload for the trace tests.

usage: workload.py TASKS STREAMS ALLOC_BYTES [fail|slow]

STREAMS streams of TASKS MEMSET tasks each (64 bytes into one buffer per
stream), synchronized; one extra allocation of ALLOC_BYTES, freed. With
"fail", it exits with status 3 after the tasks completed; with "slow", it
sleeps 50 ms after each batch of 256.
"""

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
