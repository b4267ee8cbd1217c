# SPDX-License-Identifier: GPL-2.0
"""A small baseline JPEG encoder for the decoder's tests: the layouts
libjpeg-turbo (Pillow) can decode but does not write, namely any sampling
factors (4:4:0, luma at 2 x 2 with full-size chroma) and one scan per
component (non-interleaved sequential). Its quant tables, Huffman tables
(T.81 annex K, as libjpeg writes them) and YCbCr planes are given; the
forward DCT is numpy's float64, rounded: the decoder's output is compared
with libjpeg-turbo's decode of the same file, not with the planes.
"""

from __future__ import annotations

import struct

import numpy as np

ZIGZAG = np.array([
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
    12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
    35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63])

# T.81 K.3: bits (counts per length 1..16) and values
DC_BITS = [[0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
           [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]]
DC_VALS = [list(range(12)), list(range(12))]
AC_BITS = [[0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D],
           [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77]]
AC_VALS = [bytes.fromhex(
    "01020300041105122131410613516107227114328191a1082342b1c11552d1f0"
    "2433627282090a161718191a25262728292a3435363738393a43444546474849"
    "4a535455565758595a636465666768696a737475767778797a83848586878889"
    "8a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5"
    "c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8"
    "f9fa"), bytes.fromhex(
    "000102031104052131061241510761711322328108144291a1b1c109233352f0"
    "156272d10a162434e125f11718191a262728292a35363738393a434445464748"
    "494a535455565758595a636465666768696a737475767778797a828384858687"
    "88898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3"
    "c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8"
    "f9fa")]
# T.81 K.1, at about libjpeg's quality 90 (each entry / 5, at least 1)
_Q_LUMA = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
           14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
           18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113,
           92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100,
           103, 99]
_Q_CHROMA = [17, 18, 24, 47] + [99] * 4 + [18, 21, 26, 66] + [99] * 4 + \
    [24, 26, 56] + [99] * 5 + [47, 66] + [99] * 38
QUANT = [np.maximum(1, np.array(q) // 5).reshape(8, 8)
         for q in (_Q_LUMA, _Q_CHROMA)]


def _codes(bits: list[int], vals) -> dict[int, tuple[int, int]]:
    """symbol -> (code, length), T.81 annex C."""
    out, code, k = {}, 0, 0
    for length, n in enumerate(bits, 1):
        for _ in range(n):
            out[vals[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    return out


class _Bits:
    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, v: int, n: int) -> None:
        self.acc = (self.acc << n) | (v & ((1 << n) - 1))
        self.n += n
        while self.n >= 8:
            self.n -= 8
            byte = (self.acc >> self.n) & 0xFF
            self.out.append(byte)
            if byte == 0xFF:
                self.out.append(0)

    def flush(self) -> bytes:
        if self.n:
            self.put((1 << (8 - self.n)) - 1, 8 - self.n)
        return bytes(self.out)


def _dct_matrix() -> np.ndarray:
    c = np.array([[np.cos((2 * x + 1) * u * np.pi / 16) for x in range(8)]
                  for u in range(8)])
    c[0] /= np.sqrt(2)
    return c / 2


_C = _dct_matrix()


def _blocks(plane: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantized coefficients (natural order) of each 8 x 8 block."""
    h, w = plane.shape
    b = plane.reshape(h // 8, 8, w // 8, 8).transpose(0, 2, 1, 3) - 128.0
    coef = np.einsum("ux,ijxy,vy->ijuv", _C, b, _C)
    return np.rint(coef / q).astype(np.int64)


def _magnitude(v: int) -> tuple[int, int]:
    s = int(abs(v)).bit_length()
    return s, (v if v >= 0 else v + (1 << s) - 1)


def _block(bits: _Bits, blk: np.ndarray, pred: int, dc, ac) -> int:
    zz = blk.reshape(64)[ZIGZAG]
    s, v = _magnitude(int(zz[0]) - pred)
    bits.put(*dc[s])
    if s:
        bits.put(v, s)
    run = 0
    for c in zz[1:]:
        if c == 0:
            run += 1
            continue
        while run > 15:
            bits.put(*ac[0xF0])
            run -= 16
        s, v = _magnitude(int(c))
        bits.put(*ac[(run << 4) | s])
        bits.put(v, s)
        run = 0
    if run:
        bits.put(*ac[0x00])
    return int(zz[0])


def _pad(plane: np.ndarray, h: int, w: int) -> np.ndarray:
    return np.pad(plane, ((0, h - plane.shape[0]), (0, w - plane.shape[1])),
                  mode="edge").astype(np.float64)


def encode(planes: list[np.ndarray], factors: list[tuple[int, int]],
           scans: list[list[int]] | None = None,
           restart_interval: int = 0) -> bytes:
    """A baseline JPEG of @planes (Y, or Y Cb Cr, each at its component's
    sampling: ceil(W * h / hmax) x ceil(H * v / vmax)), with sampling
    factors @factors [(h, v)...], its components in @scans (default: one
    interleaved scan) and a restart interval (counted in MCUs)."""
    height, width = planes[0].shape
    hmax = max(h for h, _ in factors)
    vmax = max(v for _, v in factors)
    ncomp = len(planes)
    mcux = -(-width // (8 * hmax))
    mcuy = -(-height // (8 * vmax))
    coefs, chk = [], []
    for i, (p, (h, v)) in enumerate(zip(planes, factors)):
        assert p.shape == (-(-height * v // vmax), -(-width * h // hmax))
        coefs.append(_blocks(_pad(p, mcuy * v * 8, mcux * h * 8),
                             QUANT[min(i, 1)]))
        # blocks a one-component scan codes (T.81 A.2.2)
        chk.append((-(-p.shape[0] // 8), -(-p.shape[1] // 8)))
    dc = [_codes(DC_BITS[t], DC_VALS[t]) for t in (0, 1)]
    ac = [_codes(AC_BITS[t], AC_VALS[t]) for t in (0, 1)]
    out = bytearray(b"\xff\xd8")
    for t in (0, 1):
        out += b"\xff\xdb\x00\x43" + bytes([t]) + bytes(
            QUANT[t].reshape(64)[ZIGZAG].astype(np.uint8))
    out += b"\xff\xc0" + struct.pack(">HBHHB", 8 + 3 * ncomp, 8, height,
                                     width, ncomp)
    for i, (h, v) in enumerate(factors):
        out += bytes([i + 1, h << 4 | v, min(i, 1)])
    for cls, bits_, vals in ((0, DC_BITS, DC_VALS), (1, AC_BITS, AC_VALS)):
        for t in (0, 1):
            body = bytes([cls << 4 | t]) + bytes(bits_[t]) + bytes(vals[t])
            out += b"\xff\xc4" + struct.pack(">H", 2 + len(body)) + body
    if restart_interval:
        out += b"\xff\xdd\x00\x04" + struct.pack(">H", restart_interval)
    for scan in scans or [list(range(ncomp))]:
        out += b"\xff\xda" + struct.pack(">HB", 6 + 2 * len(scan), len(scan))
        for i in scan:
            out += bytes([i + 1, min(i, 1) << 4 | min(i, 1)])
        out += b"\x00\x3f\x00"
        if len(scan) == 1:
            units = [(r, c) for r in range(chk[scan[0]][0])
                     for c in range(chk[scan[0]][1])]
        else:
            units = [(r, c) for r in range(mcuy) for c in range(mcux)]
        bits, pred, rst = _Bits(), [0] * ncomp, 0
        for n, (r, c) in enumerate(units):
            if restart_interval and n and n % restart_interval == 0:
                out += bits.flush() + bytes([0xFF, 0xD0 + rst])
                rst = (rst + 1) % 8
                bits, pred = _Bits(), [0] * ncomp
            for i in scan:
                t = min(i, 1)
                h, v = (1, 1) if len(scan) == 1 else factors[i]
                for by in range(v):
                    for bx in range(h):
                        blk = coefs[i][r * v + by, c * h + bx]
                        pred[i] = _block(bits, blk, pred[i], dc[t], ac[t])
        out += bits.flush()
    return bytes(out + b"\xff\xd9")
