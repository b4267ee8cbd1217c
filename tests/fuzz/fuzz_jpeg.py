# SPDX-License-Identifier: GPL-2.0
"""Fuzz the core's JPEG decoder (kmod/core/jpegd.h) through libdavinci_core.

Mutates JPEG files made by Pillow (every subsampling, grey, progressive,
restart markers): bytes flipped, the fields of the frame header, Huffman
and quant tables, scan headers and restart interval overwritten with
boundary values, segments dropped, duplicated or swapped, markers
inserted, files cut or extended. Every mutant must be refused with a
documented errno or decoded, parse and decode must agree, and with the
core built under AddressSanitizer (make test-fuzz) no access may leave the
input, output or scratch buffer: each is a malloc'd block of exactly the
size asked for, so ASan's red zones border it.

    DAVINCI_CORE_LIB=build/asan/libdavinci_core.so LD_PRELOAD=... \\
        python tests/fuzz/fuzz_jpeg.py --seconds 30
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import errno
import os
import random
import struct
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ops"))

import jpegdlib as J  # noqa: E402
from test_jpegd import encode, photo  # noqa: E402

DOCUMENTED = {0, -errno.EINVAL, -errno.EOPNOTSUPP, -errno.E2BIG}
_BOUNDARY8 = (0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 63, 64, 0x7F, 0x80, 0xFE, 0xFF)
_BOUNDARY16 = (0, 1, 2, 3, 8, 16, 17, 0x100, 0x1FFF, 0x2000, 0x2001, 0x7FFF,
               0x8000, 0xFFFE, 0xFFFF)
#: decodes of declared sizes above this are skipped (time, not safety)
MAX_DIM = 1024

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]


def seeds() -> list[bytes]:
    out = []
    for i, (w, h) in enumerate([(21, 13), (40, 33), (8, 8), (97, 5)]):
        px = photo(w, h, seed=i)
        out += [encode(px, quality=80, subsampling=2),
                encode(px, quality=95, subsampling=0, progressive=True),
                encode(px, quality=60, subsampling=1, progressive=True,
                       restart_marker_blocks=2),
                encode(px, quality=70, subsampling=2, restart_marker_blocks=1),
                encode(px[..., 0], quality=75, progressive=i % 2 == 1)]
    return out


def _field(b: bytearray, segs, rng: random.Random) -> None:
    """Overwrite a header field of a random segment."""
    pos, m, ln = rng.choice(segs)
    if rng.random() < 0.3:
        off, size = 2, 2            # the length
    elif m in (0xC0, 0xC1, 0xC2):
        off, size = rng.choice([(4, 1), (5, 2), (7, 2), (9, 1)] +
                               [(10 + 3 * i + k, 1) for i in range(3)
                                for k in range(3)])
    elif m == 0xDA:
        ns = b[pos + 4] if pos + 4 < len(b) else 1
        off, size = rng.choice([(4, 1)] + [(5 + k, 1) for k in
                                           range(2 * ns + 3)])
    elif m in (0xC4, 0xDB, 0xDD):
        off, size = rng.randrange(4, max(5, min(ln, 40))), 1
    else:
        off, size = rng.randrange(2, max(3, ln)), 1
    at = pos + off
    if at + size > len(b):
        return
    if size == 2:
        v = rng.choice(_BOUNDARY16) if rng.random() < 0.7 else \
            rng.getrandbits(16)
        struct.pack_into(">H", b, at, v)
    else:
        b[at] = rng.choice(_BOUNDARY8) if rng.random() < 0.7 else \
            rng.getrandbits(8)


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        segs = J.segments(bytes(b))
        what = rng.random()
        if what < 0.35 and segs:
            _field(b, segs, rng)
        elif what < 0.6 and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif what < 0.7 and b:
            i = rng.randrange(len(b))
            b[i:i] = bytes([0xFF, rng.choice((0xD0, 0xD3, 0xD7, 0xD9, 0xDA,
                                              0xC4, 0xDB, 0xDD, 0x00,
                                              0xFF))])
        elif what < 0.8 and len(segs) > 1:
            # drop, duplicate or swap segments (scans out of order)
            i, j = rng.sample(range(len(segs)), 2)
            (pi, _, li), (pj, _, lj) = segs[i], segs[j]
            si, sj = bytes(b[pi:pi + li]), bytes(b[pj:pj + lj])
            op = rng.randrange(3)
            if op == 0:
                del b[pi:pi + li]
            elif op == 1:
                b[pj:pj] = si
            elif pi < pj:
                b[pi:pj + lj] = sj + bytes(b[pi + li:pj]) + si
            else:
                b[pj:pi + li] = si + bytes(b[pj + lj:pi]) + sj
        elif what < 0.9:
            del b[rng.randrange(len(b) + 1):]
        else:
            b += bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 64)))
    return bytes(b)


def _exact(n: int) -> int:
    p = _libc.malloc(max(1, n))
    if not p:
        raise MemoryError(n)
    return p


def run_one(data: bytes, stats: dict) -> None:
    lib = J.lib()
    src = _exact(len(data))
    ctypes.memmove(src, data, len(data))
    out = scratch = None
    try:
        info = J.Info()
        pret = lib.dvc_jpegd_parse(src, len(data), MAX_DIM,
                                   ctypes.byref(info))
        if pret not in DOCUMENTED:
            raise AssertionError("parse returned %d" % pret)
        if pret:
            stats["refused"] += 1
            ret = lib.dvc_jpegd_decode(src, len(data), MAX_DIM, None, 0,
                                       None, 0, None)
            if ret != pret:
                raise AssertionError("parse said %d, decode %d" % (pret, ret))
            return
        out = _exact(info.out_size)
        scratch = _exact(info.scratch_size)
        got = J.Info()
        ret = lib.dvc_jpegd_decode(src, len(data), MAX_DIM, out,
                                   info.out_size, scratch, info.scratch_size,
                                   ctypes.byref(got))
        if ret not in DOCUMENTED:
            raise AssertionError("decode returned %d" % ret)
        if bytes(got) != bytes(info):
            raise AssertionError("decode's info is not parse's")
        stats["decoded" if ret == 0 else "refused_late"] += 1
    finally:
        for p in (src, out, scratch):
            if p:
                _libc.free(p)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    corpus = seeds()
    stats = dict.fromkeys(("cases", "refused", "refused_late", "decoded"), 0)
    for c in corpus:
        J.decode(c)
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        data = mutate(rng.choice(corpus), rng)
        stats["cases"] += 1
        try:
            run_one(data, stats)
        except Exception:
            print("fuzz_jpeg: seed %d, case %d: unexpected result"
                  % (args.seed, stats["cases"]), file=sys.stderr)
            with open("fuzz_jpeg-crash.jpg", "wb") as f:
                f.write(data)
            print("fuzz_jpeg: the input is in fuzz_jpeg-crash.jpg",
                  file=sys.stderr)
            raise
    print("fuzz_jpeg: seed %d: %s" % (
        args.seed, ", ".join("%s %d" % kv for kv in stats.items())))
    return 0 if stats["decoded"] and stats["refused"] else 1


if __name__ == "__main__":
    np.seterr(all="raise")
    sys.exit(main())
