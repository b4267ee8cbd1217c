#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Kill soak: SIGKILL many clients in the middle of their work, then check
that the driver got everything back and still works.

usage: kill_soak.py [--clients N] [--parallel P] [--device I] [--seed S]

Each client is forked from this process, opens a device and works in one
of three ways until it is killed: allocating and mapping memory,
submitting batches of tasks, or blocked in a wait (a notification, a
stream or a raw 60 s wait ioctl). The parent kills it a random moment
after it said it started. Afterwards every device must show no process,
no HBM and no pinned host memory in use, and run a matmul correctly.
Run it against the nodes of a backend: the kernel module's /dev, or a
FUSE mount through DAVINCI_DEV_DIR.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import select
import signal
import sys
import time

import numpy as np

import davinci
from davinci import _uapi, ops
from davinci.manager import Manager

WORKS = ("alloc", "submit", "wait")
DIE_LIMIT_S = 10.0
GATE_US = 20_000_000


def _work(kind: str, index: int, rng: random.Random, ready: int) -> None:
    dev = davinci.Device(index)
    if kind == "alloc":
        os.write(ready, b"r")
        keep = []
        while True:
            b = dev.malloc(rng.choice((4096, 65536, 1 << 20, 2 << 20)))
            b.numpy()[:64] = 7
            keep.append(b)
            if len(keep) > 8:
                keep.pop(rng.randrange(len(keep))).free()
    s = dev.stream()
    if kind == "submit":
        buf = dev.malloc(1 << 20)
        task = _uapi.davinci_task(opcode=_uapi.DAVINCI_OP_MEMSET,
                                  dst=buf.dev_addr, count=1 << 20, imm=3)
        os.write(ready, b"r")
        while True:
            for _ in range(64):
                s.submit([task] * 32)
            s.synchronize()     # stay below the per-stream task limit
    s.nop(GATE_US)
    how = rng.choice(("notification", "stream", "raw"))
    os.write(ready, b"r")
    if how == "notification":
        dev.wait_notification(timeout=None)
    elif how == "stream":
        s.synchronize()
    else:
        dev.transport.ioctl(_uapi.DAVINCI_IOCTL_NOTIFY_WAIT,
                            _uapi.davinci_notification(timeout_ms=60000))


def _child(kind: str, index: int, seed: int, ready: int) -> None:
    code = 0
    try:
        _work(kind, index, random.Random(seed), ready)
    except BaseException as e:      # noqa: B902 - reported to the parent
        sys.stderr.write("kill-soak: %s client failed: %r\n" % (kind, e))
        code = 1
    os._exit(code)


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.started = collections.Counter()
        self.killed = collections.Counter()
        self.failed = collections.Counter()
        self.slowest_death = 0.0
        self.unkillable = 0
        self.live: dict[int, tuple[str, int, float]] = {}  # rfd -> child

    def spawn(self, n: int) -> None:
        kind = WORKS[n % len(WORKS)]
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _child(kind, self.args.device, self.args.seed * 1000003 + n, w)
        os.close(w)
        self.started[kind] += 1
        self.live[r] = (kind, pid, time.monotonic())

    def kill(self, r: int, said_ready: bool) -> None:
        kind, pid, _ = self.live.pop(r)
        os.close(r)
        if said_ready:
            time.sleep(self.rng.uniform(0, 0.005))
        t0 = time.monotonic()
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() - t0 > DIE_LIMIT_S:
                self.unkillable += 1
                os.waitpid(pid, 0)
                status = -1
                break
            time.sleep(0.001)
        self.slowest_death = max(self.slowest_death, time.monotonic() - t0)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            self.killed[kind] += 1
        else:
            self.failed[kind] += 1

    def run(self) -> None:
        n = 0
        last_report = time.monotonic()
        while n < self.args.clients or self.live:
            while n < self.args.clients and \
                    len(self.live) < self.args.parallel:
                self.spawn(n)
                n += 1
            readable, _, _ = select.select(list(self.live), [], [], 1.0)
            for r in readable:
                self.kill(r, os.read(r, 1) == b"r")
            for r, (_, _, t) in list(self.live.items()):
                if time.monotonic() - t > 30:
                    self.kill(r, False)     # never said it started
            if time.monotonic() - last_report > 10:
                last_report = time.monotonic()
                print("kill-soak: %d of %d clients killed"
                      % (sum(self.killed.values()), self.args.clients),
                      flush=True)


def _drained(mgr: Manager, timeout: float):
    """Wait until no device has a process or memory in use."""
    end = time.monotonic() + timeout
    while True:
        busy = [(i, mgr.info(i)) for i in mgr.devices()]
        busy = [(i, m) for i, m in busy
                if m.processes or m.hbm_used or m.host_used]
        if not busy or time.monotonic() > end:
            return busy
        time.sleep(0.05)


def _smoke(index: int) -> bool:
    a = np.random.default_rng(1).random((64, 32), dtype=np.float32)
    b = np.random.default_rng(2).random((32, 16), dtype=np.float32)
    with davinci.Device(index) as dev:
        s = dev.stream()
        c = ops.matmul(dev.tensor(a), dev.tensor(b), stream=s)
        s.synchronize(timeout=60)
        return bool(np.allclose(c.numpy(), a @ b, rtol=1e-5, atol=1e-5))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=10000)
    p.add_argument("--parallel", type=int, default=8)
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)

    with Manager() as mgr:
        busy = _drained(mgr, 30)
        if busy:
            print("kill-soak: device %d is in use before the soak; run it on "
                  "an idle device" % busy[0][0], file=sys.stderr)
            return 2
    t0 = time.monotonic()
    soak = Soak(args)
    soak.run()
    took = time.monotonic() - t0
    with Manager() as mgr:
        busy = _drained(mgr, 60)
    smoke = _smoke(args.device)

    print("kill-soak: %d clients in %.1f s: started %s, killed %s, failed "
          "before the kill %s; slowest death %.3f s, %d outlived SIGKILL by "
          "%.0f s" % (args.clients, took, dict(soak.started),
                      dict(soak.killed), dict(soak.failed),
                      soak.slowest_death, soak.unkillable, DIE_LIMIT_S))
    for i, m in busy:
        print("kill-soak: FAIL: davinci%d still has %d process(es), %d bytes "
              "of HBM and %d of pinned host memory in use"
              % (i, m.processes, m.hbm_used, m.host_used))
    if not smoke:
        print("kill-soak: FAIL: the matmul smoke test gave wrong results")
    ok = not busy and smoke and not soak.unkillable and \
        not sum(soak.failed.values())
    print("kill-soak: %s" % ("PASS: everything came back" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
