#!/usr/bin/env python3
"""Measure the ulp error of the core's exp (DAVINCI_OP_EXP, float32) against
numpy's float64 exp rounded to float32, over every float32 in a range of
bit patterns (default: all of them; pass a stride to sample).

    DAVINCI_CORE_LIB=... python tests/ops/exp_ulp_sweep.py [stride]
"""
import sys
import time

import numpy as np

import opslib as L


def ulps(got, exp):
    g = got.view(np.int32).astype(np.int64)
    e = exp.view(np.int32).astype(np.int64)
    g = np.where(g < 0, -(1 << 31) - g, g)
    e = np.where(e < 0, -(1 << 31) - e, e)
    return np.abs(g - e)


def main():
    stride = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    t0 = time.time()
    hist = np.zeros(8, np.int64)
    worst = (0, 0.0)
    total = 0
    chunk = 1 << 24
    for lo in range(0, 1 << 32, chunk * stride):
        bits = np.arange(lo, min(lo + chunk * stride, 1 << 32), stride,
                         dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        x = x[~np.isnan(x)]
        out = np.empty_like(x)
        t = L.task(L.OP_EXP, L.F32, dst=out, src0=x, count=x.size)
        L.run(t)
        with np.errstate(all="ignore"):
            ref = np.exp(x.astype(np.float64)).astype(np.float32)
        u = ulps(out, ref)
        hist += np.bincount(np.minimum(u, 7), minlength=8)
        i = int(np.argmax(u))
        if u[i] > worst[0]:
            worst = (int(u[i]), float(x[i]))
        total += x.size
    print("inputs: %d (stride %d), %.1f s" % (total, stride, time.time() - t0))
    print("max ulp error: %d at x = %r" % worst)
    for k in range(8):
        if hist[k]:
            print("  %s ulp: %d (%.6f%%)" % ("%d" % k if k < 7 else ">=7",
                                            hist[k], 100.0 * hist[k] / total))


if __name__ == "__main__":
    main()
