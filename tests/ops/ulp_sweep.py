#!/usr/bin/env python3
"""Measure the ulp error of the core's exp (DAVINCI_OP_EXP, float32) or log
(dv_logf, the log of DAVINCI_OP_LOG_SOFTMAX) against numpy's float64
function rounded to float32, over every float32 of its domain (exp: every
non-NaN bit pattern; log: every positive finite one), or every stride-th.

    DAVINCI_CORE_LIB=... python tests/ops/ulp_sweep.py exp|log [stride]
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


def core_exp(x):
    out = np.empty_like(x)
    L.run(L.task(L.OP_EXP, L.F32, dst=out, src0=x, count=x.size))
    return out


# name -> (first and end bit pattern, the core's function, numpy's)
FUNCTIONS = {
    "exp": (0, 1 << 32, core_exp, np.exp),
    "log": (1, 0x7f800000, L.logf, np.log),
}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in FUNCTIONS:
        sys.exit("usage: ulp_sweep.py exp|log [stride]")
    first, end, core, ref_fn = FUNCTIONS[sys.argv[1]]
    stride = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    t0 = time.time()
    hist = np.zeros(8, np.int64)
    worst = (0, 0.0)
    total = 0
    chunk = 1 << 24
    for lo in range(first, end, chunk * stride):
        bits = np.arange(lo, min(lo + chunk * stride, end), stride,
                         dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        x = x[~np.isnan(x)]
        got = core(x)
        with np.errstate(all="ignore"):
            ref = ref_fn(x.astype(np.float64)).astype(np.float32)
        u = ulps(got, ref)
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
