#!/usr/bin/env python3
"""Measure the ulp error of the core's log (dv_logf, the log of
DAVINCI_OP_LOG_SOFTMAX) against numpy's float64 log rounded to float32,
over every positive finite float32 (default) or every stride-th one.

    DAVINCI_CORE_LIB=... python tests/ops/log_ulp_sweep.py [stride]
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
    chunk = 1 << 24
    for lo in range(1, 0x7f800000, chunk * stride):
        bits = np.arange(lo, min(lo + chunk * stride, 0x7f800000), stride,
                         dtype=np.uint32)
        x = bits.view(np.float32)
        got = L.logf(x)
        ref = np.log(x.astype(np.float64)).astype(np.float32)
        u = ulps(got, ref)
        hist += np.bincount(np.minimum(u, 7), minlength=8)
        i = int(u.argmax())
        if u[i] > worst[0]:
            worst = (int(u[i]), float(x[i]))
    total = int(hist.sum())
    print("inputs: %d positive finite float32 (stride %d), %.0f s"
          % (total, stride, time.time() - t0))
    for k in range(8):
        if hist[k]:
            print("  %d ulp: %d (%.4f %%)" % (k, hist[k],
                                            100.0 * hist[k] / total))
    print("max error: %d ulp (at x = %r)" % worst)


if __name__ == "__main__":
    main()
