#!/usr/bin/env python3
"""Throughput of the op kernels through dv_op_run (ctypes), next to numpy:
512x512 float32 matmul (GFLOP/s) and a 16M-element float32 add (GB/s,
counting 12 bytes moved per element).

    DAVINCI_CORE_LIB=... python tests/ops/bench_ops.py
"""
import time

import numpy as np

import opslib as L


def best(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main():
    rng = np.random.default_rng(1)
    n = 512
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    t = L.task(L.OP_MATMUL, L.F32, dst=c, src0=a, src1=b, m=n, n=n, k=n)
    assert L.validate(t) == 0
    flop = 2.0 * n ** 3
    for name, flags in (("", 0), (" trans_b", L.F_TRANS_B)):
        t.flags = flags
        s = best(lambda: L.run_raw(t, 0, n), 10)
        print("matmul 512^3 float32%s: dv_op_run %.2f GFLOP/s" %
              (name, flop / s / 1e9))
    s = best(lambda: np.matmul(a, b, out=c), 10)
    print("matmul 512^3 float32: numpy    %.2f GFLOP/s" % (flop / s / 1e9))
    for dt, name in ((L.F16, "float16"), (L.BF16, "bfloat16")):
        ah = L.narrow(a, dt)
        bh = L.narrow(b, dt)
        ch = np.zeros((n, n), L.NP_STORAGE[dt])
        th = L.task(L.OP_MATMUL, dt, dst=ch, src0=ah, src1=bh, m=n, n=n, k=n)
        s = best(lambda: L.run_raw(th, 0, n), 3)
        print("matmul 512^3 %s: dv_op_run %.2f GFLOP/s" % (name, flop / s / 1e9))

    m = 16 << 20
    x = rng.standard_normal(m).astype(np.float32)
    y = rng.standard_normal(m).astype(np.float32)
    z = np.zeros(m, np.float32)
    t = L.task(L.OP_ADD, L.F32, dst=z, src0=x, src1=y, count=m)
    assert L.validate(t) == 0
    byt = 12.0 * m
    s = best(lambda: L.run_raw(t, 0, m), 5)
    print("add 16M float32: dv_op_run %.2f GB/s (%.1f ms)" % (byt / s / 1e9,
                                                          s * 1e3))
    ch = L.chunk_units(t)

    def chunked():
        for b0 in range(0, m, ch):
            L.run_raw(t, b0, min(m, b0 + ch))
    s = best(chunked, 5)
    print("add 16M float32: dv_op_run in %d-element chunks %.2f GB/s" %
          (ch, byt / s / 1e9))
    s = best(lambda: np.add(x, y, out=z), 5)
    print("add 16M float32: numpy    %.2f GB/s (%.1f ms)" % (byt / s / 1e9,
                                                          s * 1e3))
    t = L.task(L.OP_EXP, L.F32, dst=z, src0=x, count=m)
    s = best(lambda: L.run_raw(t, 0, m), 3)
    print("exp 16M float32: dv_op_run %.0f Melem/s" % (m / s / 1e6))
    s = best(lambda: np.exp(x, out=z), 3)
    print("exp 16M float32: numpy    %.0f Melem/s" % (m / s / 1e6))


if __name__ == "__main__":
    main()
