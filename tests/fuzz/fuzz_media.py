# SPDX-License-Identifier: GPL-2.0
"""Fuzz acl.media's JPEG and PNG decode as a pyACL program calls them.

Mutated JPEG files (fuzz_jpeg.py's mutations) and PNG files (bytes flipped,
chunks cut, dropped or repeated, IHDR's fields set to boundary values, half
of them with every chunk's CRC recomputed so that the mutation reaches the
inflater) go through dvpp_jpeg_get_image_info / dvpp_png_get_image_info,
dvpp_*_predict_dec_size, and, where those accept the file,
dvpp_*_decode_async into device memory of the predicted size and
acl.rt.synchronize_stream. Every call must return ACL_SUCCESS or one of the
codes acl.media documents, the output desc's ret code must be one of them
too, no exception may escape pyACL, and the HBM in use must come back to
where it was after the unmutated seeds decoded, after each file (the
picture, its output and the descs freed). With the core built under
AddressSanitizer (make test-fuzz) the engines' reads and writes stay inside
those buffers.

    DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB=build/asan/libdavinci_core.so \\
        LD_PRELOAD=... python tests/fuzz/fuzz_media.py --seconds 30
"""

from __future__ import annotations

import argparse
import io
import os
import random
import struct
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fuzz_jpeg  # noqa: E402  (its seeds and mutations)

import acl  # noqa: E402
from acl import constants as C  # noqa: E402

#: what acl.media's docstring says its decodes return
DOCUMENTED = {C.ACL_SUCCESS, C.ACL_ERROR_INVALID_PARAM,
              C.ACL_ERROR_INVALID_FILE, C.ACL_ERROR_UNSUPPORTED_JPEG,
              C.ACL_ERROR_FORMAT_NOT_MATCH, C.ACL_ERROR_BAD_ALLOC}
#: a stream's answer to a decode the engine refused
SYNC = {C.ACL_SUCCESS, C.ACL_ERROR_RT_AICPU_EXCEPTION}
#: decodes of outputs above this are skipped (time, not safety)
MAX_OUT = 8 << 20
_BOUNDARY32 = (0, 1, 2, 31, 32, 33, 4095, 4096, 4097, 8192, 0x7FFFFFFF,
               0xFFFFFFFF)


def png_seeds() -> list[bytes]:
    from PIL import Image
    out = []
    px = fuzz_jpeg.photo(40, 33, seed=5)
    for mode, kw in (("RGB", {}), ("RGBA", {"compress_level": 9}),
                     ("L", {"compress_level": 0}), ("P", {}),
                     ("RGB", {"optimize": True})):
        im = Image.fromarray(px).convert(mode)
        b = io.BytesIO()
        im.save(b, "PNG", **kw)
        out.append(b.getvalue())
    b = io.BytesIO()
    Image.fromarray(px).save(b, "PNG", interlace=1)
    out.append(b.getvalue())
    return out


def _chunks(data: bytes) -> list[tuple[int, int]]:
    """(offset, length with its header and CRC) of each chunk."""
    out, i = [], 8
    while i + 12 <= len(data):
        n = struct.unpack(">I", data[i:i + 4])[0]
        if i + 12 + n > len(data):
            break
        out.append((i, n + 12))
        i += n + 12
    return out


def _recrc(b: bytearray) -> None:
    for off, n in _chunks(bytes(b)):
        body = bytes(b[off + 4:off + n - 4])
        b[off + n - 4:off + n] = struct.pack(">I", zlib.crc32(body))


def png_mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3))):
        chunks = _chunks(bytes(b))
        what = rng.random()
        if what < 0.4 and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif what < 0.55 and len(b) >= 29:
            # IHDR: width, height (32 bits), depth, colour, interlace
            field = rng.randrange(5)
            if field < 2:
                b[16 + 4 * field:20 + 4 * field] = struct.pack(
                    ">I", rng.choice(_BOUNDARY32))
            else:
                b[22 + field] = rng.choice((0, 1, 2, 3, 4, 6, 7, 8, 16, 255))
        elif what < 0.75 and len(chunks) > 1:
            off, n = chunks[rng.randrange(1, len(chunks))]
            if rng.random() < 0.5:
                del b[off:off + n]
            else:
                b[off:off] = bytes(b[off:off + n])
        elif what < 0.9:
            del b[rng.randrange(len(b) + 1):]
        else:
            b += bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 64)))
    if rng.random() < 0.5:
        _recrc(b)
    return bytes(b)


class Media:
    """A channel and a stream, and the checks each call's answer meets."""

    def __init__(self):
        for what, ret in (("acl.init", acl.init()),
                          ("set_device", acl.rt.set_device(0))):
            assert ret == 0, (what, ret)
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0
        self.m = acl.media
        self.channel = self.m.dvpp_create_channel_desc()
        assert self.m.dvpp_create_channel(self.channel) == 0

    def hbm_in_use(self) -> int:
        free, total, ret = acl.rt.get_mem_info(C.ACL_HBM_MEM)
        assert ret == 0
        return total - free

    @staticmethod
    def _documented(what: str, ret: int) -> None:
        if ret not in DOCUMENTED:
            raise AssertionError("%s returned %d, which acl.media does not "
                                 "document" % (what, ret))

    def run_one(self, data: bytes, png: bool, stats: dict) -> None:
        m = self.m
        kind = "png" if png else "jpeg"
        host = acl.util.bytes_to_ptr(data)
        *_, ret = getattr(m, "dvpp_%s_get_image_info" % kind)(host, len(data))
        self._documented(kind + " get_image_info", ret)
        fmt = C.PIXEL_FORMAT_UNKNOWN if png else \
            C.PIXEL_FORMAT_YUV_SEMIPLANAR_420
        size, ret = getattr(m, "dvpp_%s_predict_dec_size" % kind)(
            host, len(data), C.PIXEL_FORMAT_RGB_888 if png else fmt)
        self._documented(kind + " predict_dec_size", ret)
        if ret or not 0 < size <= MAX_OUT:
            stats["refused"] += 1
            return
        src, ret = m.dvpp_malloc(len(data))
        assert ret == 0
        out, ret = m.dvpp_malloc(size)
        assert ret == 0
        desc = m.dvpp_create_pic_desc()
        try:
            assert acl.rt.memcpy(src, len(data), host, len(data),
                                 C.ACL_MEMCPY_HOST_TO_DEVICE) == 0
            for field, value in (("data", out), ("size", size),
                                 ("format", C.PIXEL_FORMAT_RGB_888 if png
                                  else fmt)):
                assert getattr(m, "dvpp_set_pic_desc_" + field)(
                    desc, value) == 0
            ret = getattr(m, "dvpp_%s_decode_async" % kind)(
                self.channel, src, len(data), desc, self.stream)
            self._documented(kind + " decode_async", ret)
            if ret == 0:
                sync = acl.rt.synchronize_stream(self.stream)
                if sync not in SYNC:
                    raise AssertionError("synchronize_stream returned %d"
                                         % sync)
                code = m.dvpp_get_pic_desc_ret_code(desc)
                self._documented(kind + " decode's ret code", code)
                if (sync == 0) != (code == 0):
                    raise AssertionError("synchronize %d, ret code %d" % (
                        sync, code))
                stats["decoded" if sync == 0 else "refused_late"] += 1
                if sync:
                    # a failed task leaves its stream failed, every later
                    # task aborted: a program carries on with a new one
                    assert acl.rt.destroy_stream(self.stream) == 0
                    self.stream, ret = acl.rt.create_stream()
                    assert ret == 0
            else:
                stats["refused"] += 1
        finally:
            assert m.dvpp_destroy_pic_desc(desc) == 0
            assert m.dvpp_free(out) == 0
            assert m.dvpp_free(src) == 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    corpora = {False: fuzz_jpeg.seeds(), True: png_seeds()}
    mutators = {False: fuzz_jpeg.mutate, True: png_mutate}
    media = Media()
    stats = dict.fromkeys(("cases", "refused", "refused_late", "decoded"), 0)
    # the seeds decode first: what a stream keeps for itself (its
    # parameter-block slab) is then in the baseline, not counted as lost
    for png, corpus in corpora.items():
        for data in corpus:
            media.run_one(data, png, dict.fromkeys(stats, 0))
    base = media.hbm_in_use()
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        png = rng.random() < 0.5
        data = mutators[png](rng.choice(corpora[png]), rng)
        stats["cases"] += 1
        try:
            media.run_one(data, png, stats)
            used = media.hbm_in_use()
            if used != base:
                raise AssertionError("HBM in use %d after the file, %d "
                                     "before" % (used, base))
        except Exception:
            name = "fuzz_media-crash." + ("png" if png else "jpg")
            with open(name, "wb") as f:
                f.write(data)
            print("fuzz_media: seed %d, case %d: unexpected result; the "
                  "input is in %s" % (args.seed, stats["cases"], name),
                  file=sys.stderr)
            raise
    print("fuzz_media: seed %d: %s" % (
        args.seed, ", ".join("%s %d" % kv for kv in stats.items())))
    return 0 if stats["decoded"] and stats["refused"] else 1


if __name__ == "__main__":
    sys.exit(main())
