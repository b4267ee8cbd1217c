#!/usr/bin/env python3
"""Measure the ulp error of a core function against its float64 reference
(numpy's or Python's math.erf, rounded to float32) over every float32 of its domain
(the unary ops: every non-NaN bit pattern; log: every positive finite one),
or every stride-th, and print the histogram and the worst inputs per range
of x. A gradient op runs with dy = 1 (the factor it multiplies dy by); pow
runs every x of the sweep against each exponent of POW_EXPONENTS.

    DAVINCI_CORE_LIB=... python tests/ops/ulp_sweep.py FUNCTION [stride]

FUNCTION: one of FUNCTIONS below (exp, log, tanh, sigmoid, erf, gelu,
gelu_tanh, silu, reciprocal, pow, tanh_grad, sigmoid_grad, gelu_grad,
gelu_tanh_grad, silu_grad), or tanh_grad_ties (an analysis, no core call).
"""
import math
import sys
import time

import numpy as np

import opslib as L


def _vectorised(fn):
    """A float64 math function over a numpy array (about 10M values/s)."""
    v = np.vectorize(fn, otypes=[np.float64])
    return lambda x: v(x) if np.size(x) else np.empty_like(x)


erf64 = _vectorised(math.erf)
erfc64 = _vectorised(math.erfc)

GELU_TANH = 1   # DAVINCI_GELU_TANH


def ulps(got, exp):
    g = got.view(np.int32).astype(np.int64)
    e = exp.view(np.int32).astype(np.int64)
    g = np.where(g < 0, -(1 << 31) - g, g)
    e = np.where(e < 0, -(1 << 31) - e, e)
    return np.abs(g - e)


def core_unary(opcode, imm=0):
    def run(x):
        out = np.empty_like(x)
        L.run(L.task(opcode, L.F32, dst=out, src0=x, count=x.size, imm=imm))
        return out
    return run


def core_grad(opcode, imm=0):
    """The op's dst for dy = 1 at each x (or y)."""
    def run(x):
        out = np.empty_like(x)
        dy = np.ones_like(x)
        L.run(L.task(opcode, L.F32, dst=out, src0=dy, src1=x, count=x.size,
                     imm=imm))
        return out
    return run


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


def _gelu_tanh_v(x):
    return 2.0 * np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)


def _gelu_erf_grad(x):
    return (0.5 * erfc64(-x / np.sqrt(2.0))
            + x * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi))


def _gelu_tanh_grad(x):
    v = _gelu_tanh_v(x)
    s = _sigmoid(v)
    dv = 2.0 * np.sqrt(2.0 / np.pi) * (1.0 + 3.0 * 0.044715 * x * x)
    return s * (1.0 + x * _sigmoid(-v) * dv)


def _silu_grad(x):
    s = _sigmoid(x)
    return s * (1.0 + x * _sigmoid(-x))


def _f32(fn, x):
    return fn(x.astype(np.float32))


# name -> (first and end bit pattern, the core's function, the float64 one)
ALL = (0, 1 << 32)
FUNCTIONS = {
    "exp": (ALL, core_unary(L.OP_EXP), np.exp),
    "log": ((1, 0x7f800000), L.logf, np.log),
    "tanh": (ALL, core_unary(L.OP_TANH), np.tanh),
    "sigmoid": (ALL, core_unary(L.OP_SIGMOID), _sigmoid),
    "erf": (ALL, core_unary(L.OP_ERF), erf64),
    "gelu": (ALL, core_unary(L.OP_GELU),
             lambda x: 0.5 * x * erfc64(-x / np.sqrt(2.0))),
    "gelu_tanh": (ALL, core_unary(L.OP_GELU, GELU_TANH),
                  lambda x: x * _sigmoid(_gelu_tanh_v(x))),
    "silu": (ALL, core_unary(L.OP_SILU), lambda x: x * _sigmoid(x)),
    "reciprocal": (ALL, core_unary(L.OP_RECIPROCAL), lambda x: 1.0 / x),
    # torch's formulas of y, bit for bit: 1 - y^2 rounded once (in
    # float64, then to float32: no float32 tie for |y| <= 1, which
    # "tanh_grad_ties" checks), and (1 - y) y in float32
    "tanh_grad": (ALL, core_grad(L.OP_TANH_GRAD), lambda y: 1.0 - y * y),
    "sigmoid_grad": (ALL, core_grad(L.OP_SIGMOID_GRAD), lambda y: _f32(
        lambda y: (np.float32(1) - y) * y, y)),
    "gelu_grad": (ALL, core_grad(L.OP_GELU_GRAD), _gelu_erf_grad),
    "gelu_tanh_grad": (ALL, core_grad(L.OP_GELU_GRAD, GELU_TANH),
                       _gelu_tanh_grad),
    "silu_grad": (ALL, core_grad(L.OP_SILU_GRAD), _silu_grad),
}

#: pow's exponents: integers (odd, even, negative), halves, the large
#: ones whose results over- and underflow, and a few irrational-looking
POW_EXPONENTS = np.array([2.0, 3.0, -1.0, -2.0, 0.5, -0.5, 1.5, 7.0, 0.1,
                          -3.7, 2.5, 11.3, 1e-3, 27.0, -40.5, 100.0,
                          1.0 / 3.0, np.pi], np.float32)

#: ranges of |x| the worst errors are reported for
BANDS = (0.0, 1e-30, 1.0, 4.0, 16.0, np.inf)


def tanh_grad_ties():
    """Every float32 0 <= y <= 1: is float32(float64(1 - y^2)) the one
    rounding of 1 - y^2? y^2 is exact in float64; where 1 - y^2 is not,
    its float64 rounding must not land on a float32 tie."""
    ties = 0
    top = int(np.float32(1.0).view(np.uint32))
    for lo in range(0, top + 1, 1 << 26):
        y = np.arange(lo, min(lo + (1 << 26), top + 1), dtype=np.uint32
                      ).view(np.float32).astype(np.float64)
        y2 = y * y
        d = 1.0 - y2
        m = d * 2.0 ** 25
        tie = (m == np.floor(m)) & (np.mod(m, 2) == 1) & (d >= 0.5)
        ties += int((tie & ((1.0 - d) != y2)).sum())
    print("float64 ties of 1 - y^2 for 0 <= y <= 1: %d (0: TANH_GRAD "
          "rounds 1 - y^2 once)" % ties)


def core_pow(x, y):
    out = np.empty_like(x)
    L.run(L.task(L.OP_POW, L.F32, dst=out, src0=x, src1=y, count=x.size))
    return out


def sweep(first, end, stride, core, ref_fn):
    hist = np.zeros(8, np.int64)
    worst, absw = {}, {}
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
        u[np.isnan(ref) & np.isnan(got)] = 0
        u[np.isnan(ref) != np.isnan(got)] = 1 << 30
        with np.errstate(all="ignore"):
            ab = np.abs(got.astype(np.float64) - ref) * 2.0 ** 24
        ab[~np.isfinite(ab)] = 0
        hist += np.bincount(np.minimum(u, 7), minlength=8)
        ax = np.abs(x)
        for b in range(len(BANDS) - 1):
            sel = (ax >= BANDS[b]) & (ax < BANDS[b + 1])
            if sel.any():
                i = int(np.argmax(np.where(sel, u, -1)))
                if u[i] > worst.get(b, (-1, 0.0))[0]:
                    worst[b] = (int(u[i]), float(x[i]))
                a = float(np.max(ab[sel]))
                absw[b] = max(absw.get(b, 0.0), a)
        total += x.size
    return hist, worst, absw, total


def report(hist, worst, absw, total):
    print("max ulp error: %d" % max(w[0] for w in worst.values()))
    for b in sorted(worst):
        print("  |x| in [%g, %g): max %d ulp at x = %r; max |error| %.3g"
              " x 2^-24" % (BANDS[b], BANDS[b + 1], worst[b][0], worst[b][1],
                           absw[b]))
    for k in range(8):
        if hist[k]:
            print("  %s ulp: %d (%.6f%%)" % ("%d" % k if k < 7 else ">=7",
                                            hist[k], 100.0 * hist[k] / total))


def main():
    names = sorted(FUNCTIONS) + ["pow", "tanh_grad_ties"]
    if len(sys.argv) < 2 or sys.argv[1] not in names:
        sys.exit("usage: ulp_sweep.py %s [stride]" % "|".join(names))
    stride = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    t0 = time.time()
    if sys.argv[1] == "tanh_grad_ties":
        tanh_grad_ties()
        return
    if sys.argv[1] == "pow":
        hist, worst, absw, total = np.zeros(8, np.int64), {}, {}, 0
        for y in POW_EXPONENTS:
            def core(x, y=y):
                return core_pow(x, np.full_like(x, y))

            def ref(x, y=y):
                return np.power(x, np.float64(y))
            h, w, a, t = sweep(0, 1 << 32, stride, core, ref)
            print("y = %r: max %d ulp" % (float(y), max(
                v[0] for v in w.values())))
            hist += h
            total += t
            for b, v in w.items():
                if v[0] > worst.get(b, (-1, 0.0))[0]:
                    worst[b] = v
                absw[b] = max(absw.get(b, 0.0), a[b])
    else:
        (first, end), core, ref_fn = FUNCTIONS[sys.argv[1]]
        hist, worst, absw, total = sweep(first, end, stride, core, ref_fn)
    print("inputs: %d (stride %d), %.1f s" % (total, stride, time.time() - t0))
    report(hist, worst, absw, total)


if __name__ == "__main__":
    main()
