# SPDX-License-Identifier: GPL-2.0
"""Fuzz the offline-model parser (davinci.omfile.parse) and loader.

Mutates valid models made by davinci-atc (bytes flipped, fields of the
header, section table, tensor and op records overwritten with boundary
values, files cut or extended) and checks that every mutant is refused
with ModelFormatError or accepted; an accepted mutant is loaded on the
in-process device, run, and unloaded, where only davinci errors may come
out, and never a task the device refuses as malformed, outside the
model's memory or misaligned. At the end the device must hold no memory:
nothing leaked.

    DAVINCI_BACKEND=inproc python tests/fuzz/fuzz_om.py --seconds 60
"""

from __future__ import annotations

import argparse
import os
import random
import struct
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

import davinci  # noqa: E402
from davinci import atc, omfile as F  # noqa: E402
from davinci import _uapi  # noqa: E402
from davinci.errors import DavinciError, TaskFailedError  # noqa: E402
from davinci.model import Model  # noqa: E402
from tests.conformance._onnx_models import mlp  # noqa: E402

_BOUNDARY = (0, 1, 2, 7, 8, 63, 64, 0x7F, 0xFF, 0xFFFF, 0x7FFFFFFF,
             0xFFFFFFFF, 1 << 32, 1 << 40, (1 << 63) - 1, (1 << 64) - 1)


#: task statuses of a model the parser should have refused: what it accepts
#: the device runs
REFUSED = (_uapi.DAVINCI_STATUS_INVALID_TASK,
           _uapi.DAVINCI_STATUS_INVALID_ADDRESS,
           _uapi.DAVINCI_STATUS_MISALIGNED)


def _cnn() -> bytes:
    """A CNN whose ops take parameter blocks (CONV2D, MAXPOOL2D, AVGPOOL2D)
    and strided blocks (the bias ADD, a Concat's IDENTITYs)."""
    from onnx import helper
    from tests.conformance._onnx_models import model
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)

    def n(op, ins, outs, **attrs):
        return helper.make_node(op, ins, outs, name=outs[0], **attrs)
    return atc.convert(model(
        [n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         n("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         n("AveragePool", ["c"], ["q"], kernel_shape=[2, 2],
           strides=[2, 2]),
         n("Concat", ["p", "q"], ["y"], axis=1)],
        [("x", [1, 2, 6, 6])], [("y", [1, 8, 3, 3])],
        [("w", w), ("b", np.ones(4, np.float32))]))


def _aipp_cnn() -> bytes:
    """A Conv behind a static AIPP stage (its config a weight) whose
    picture is cropped and padded, and one of a gear per image size."""
    from onnx import helper
    from davinci.atc.aipp_conf import parse_aipp_conf
    from tests.conformance._onnx_models import model
    w = np.ones((2, 3, 1, 1), np.float32)
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="c")],
              [("x", [1, 3, 4, 6])], [("y", [1, 2, 4, 6])], [("w", w)])
    conf = parse_aipp_conf(
        "aipp_op {\n aipp_mode : static\n input_format : YUV420SP_U8\n"
        " src_image_size_w : 8\n src_image_size_h : 6\n csc_switch : true\n"
        " crop : true\n load_start_pos_w : 2\n crop_size_w : 4\n"
        " crop_size_h : 4\n padding : true\n left_padding_size : 1\n"
        " right_padding_size : 1\n mean_chn_0 : 10\n var_reci_chn_1 : 0.5\n"
        "}\n")
    return atc.convert(m, insert_op_conf=conf)


def _hw_cnn() -> bytes:
    from onnx import helper
    from tests.conformance._onnx_models import model
    w = np.ones((2, 3, 1, 1), np.float32)
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="c")],
              [("x", [1, 3, "h", "w"])], [("y", None)], [("w", w)])
    return atc.convert(m, input_shape="x:1,3,-1,-1",
                       dynamic_image_size="4,6;2,2")


def seeds() -> list[bytes]:
    m, _ = mlp(n_in=16, hidden=8, n_out=4)
    return [atc.convert(m, input_shape="x:2,16"),
            atc.convert(m, input_shape="x:-1,16", dynamic_batch_size="1,3"),
            _cnn(), _aipp_cnn(), _hw_cnn()]


def _record_fields(data: bytes) -> list[tuple[int, str]]:
    """(offset, struct format) of every header, table and record field."""
    out = [(8, "<H"), (10, "<H"), (12, "<H"), (14, "<H"), (16, "<I"),
           (20, "<I"), (24, "<Q")]
    try:
        nsect = struct.unpack_from("<I", data, 20)[0]
    except struct.error:
        return out
    # the op record of the file's format minor (1.2: 56 bytes with src2)
    op_size = F._op_struct(struct.unpack_from("<H", data, 10)[0]).size
    for i in range(min(nsect, 16)):
        base = 64 + 24 * i
        out += [(base, "<I"), (base + 4, "<I"), (base + 8, "<Q"),
                (base + 16, "<Q")]
        try:
            kind, count, off, size = struct.unpack_from("<IIQQ", data, base)
        except struct.error:
            break
        rec = {F.SECT_TENSORS: (24, ((0, "<B"), (1, "<B"), (2, "<H"),
                                     (4, "<I"), (8, "<Q"), (16, "<Q"))),
               F.SECT_OPS: (op_size, (
                   (0, "<H"), (2, "<H"), (4, "<B"), (5, "<B"), (6, "<H"),
                   (8, "<I"), (12, "<I"), (16, "<I"), (20, "<I"), (24, "<I"),
                   (28, "<Q"), (36, "<I"), (40, "<I"), (44, "<I"),
                   (48, "<I")) + (((52, "<I"),) if op_size > 52 else ()))
               }.get(kind)
        if rec and off + size <= len(data):
            for r in range(min(count, size // rec[0])):
                out += [(off + r * rec[0] + o, f) for o, f in rec[1]]
        elif kind == F.SECT_PARAMS and off + size <= len(data):
            # the parameter blocks' fields: u32s (u64 strides are pairs)
            out += [(off + o, "<I") for o in range(0, size - 3, 4)]
    return out


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        what = rng.random()
        if what < 0.55:
            fields = [(o, f) for o, f in _record_fields(bytes(b))
                      if o + struct.calcsize(f) <= len(b)]
            if not fields:
                continue
            off, fmt = rng.choice(fields)
            bits = struct.calcsize(fmt) * 8
            v = rng.choice(_BOUNDARY) if rng.random() < 0.6 \
                else rng.getrandbits(bits)
            if rng.random() < 0.3:
                v = struct.unpack_from(fmt, b, off)[0] + rng.choice((-1, 1))
            struct.pack_into(fmt, b, off, v % (1 << bits))
        elif what < 0.8 and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif what < 0.9:
            del b[rng.randrange(len(b) + 1):]
        else:
            b += bytes(rng.randrange(1, 200))
    return bytes(b)


def run_one(dev, data: bytes, stats: dict) -> None:
    try:
        om = F.parse(data)
    except F.ModelFormatError:
        stats["refused"] += 1
        return
    stats["accepted"] += 1
    try:
        mod = Model(dev, data)
    except DavinciError:
        stats["load_failed"] += 1
        return
    bufs = []
    try:
        gear = om.gears - 1
        sizes = [mod.input_size(i, gear) for i in range(len(om.inputs))] + \
            [mod.output_size(j, gear) for j in range(len(om.outputs))]
        bufs = [dev.malloc(max(1, s)) for s in sizes]
        for b in bufs:
            b.write(np.random.default_rng(0).integers(
                0, 255, b.size, np.uint8))
        s = mod.stream
        mod.execute(s, [b.dev_addr for b in bufs], gear)
        s.synchronize(timeout=30)
        stats["ran"] += 1
    except TaskFailedError as exc:
        if exc.status in REFUSED:
            raise AssertionError("the device refused a task of a model the "
                                 "parser accepted: %s" % exc) from exc
        stats["run_failed"] += 1
        if mod.stream.query().error:
            mod.stream.reset()
    except DavinciError:
        stats["run_failed"] += 1
        if mod.stream.query().error:
            mod.stream.reset()
    finally:
        for b in bufs:
            b.free()
        mod.unload()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    corpus = seeds()
    stats = dict.fromkeys(("cases", "refused", "accepted", "load_failed",
                           "ran", "run_failed"), 0)
    deadline = time.monotonic() + args.seconds
    with davinci.Device(0) as dev:
        for c in corpus:
            F.parse(c)
        while time.monotonic() < deadline:
            data = mutate(rng.choice(corpus), rng)
            stats["cases"] += 1
            try:
                run_one(dev, data, stats)
            except Exception:
                print("fuzz_om: seed %d, case %d: unexpected exception"
                      % (args.seed, stats["cases"]), file=sys.stderr)
                path = "fuzz_om-crash.om"
                with open(path, "wb") as f:
                    f.write(data)
                print("fuzz_om: the input is in %s" % path, file=sys.stderr)
                raise
        used = dev.mem_info().ctx_used
    print("fuzz_om: seed %d: %s; HBM left in use: %d bytes"
          % (args.seed, ", ".join("%s %d" % kv for kv in stats.items()),
             used))
    return 1 if used else 0


if __name__ == "__main__":
    sys.exit(main())
