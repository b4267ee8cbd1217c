# SPDX-License-Identifier: GPL-2.0
"""The AIPP stage davinci-atc puts in front of a model converted with
--insert_op_conf: for each aipp_op, its model input becomes the u8
picture (YUV420SP_U8: [N, h * 3 / 2, w, 1]; RGB888_U8: [N, h, w, 3];
XRGB8888_U8: [N, h, w, 4], NHWC; a dynamic aipp_op's: [N,
max_src_image_size], ND) and the first device op of each gear is an AIPP
writing what the model's input was (NCHW [N, 3, H, W] of its float dtype).
A static stage's config is a weight; a dynamic one's is an extra model
input, ``ascend_dynamic_aipp_data`` (acl.mdl.set_input_aipp writes it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import omfile as F
from ..aipp import CONFIG_SIZE, AippConfig, picture_bytes
from .aipp_conf import AippOp, read_aipp_conf
from .builder import ConversionError, GearBuilder, Value

__all__ = ["Stage", "DYNAMIC_AIPP_INPUT", "plan"]

#: the extra input of a model with dynamic AIPP (pyACL's
#: ACL_DYNAMIC_AIPP_NAME)
DYNAMIC_AIPP_INPUT = F.DYNAMIC_AIPP_INPUT
_FLOATS = ("float32", "float16", "bfloat16")


@dataclass
class Stage:
    """The AIPP of one model input."""
    op: AippOp
    index: int                  # the model input it feeds
    height: int
    width: int
    pic_dims: list              # the picture input's dims (-1: the batch)
    pic_format: str
    src_size: int               # bytes of one picture
    config: "AippConfig | None"  # None: dynamic
    config_input: int = -1      # a dynamic stage's config input

    @property
    def dynamic(self) -> bool:
        return self.config is None

    def emit(self, gb: GearBuilder, pic: Value, cfg: "Value | None",
             shape, dtype: str, name: str) -> Value:
        """The AIPP op writing input ``name``'s ``shape`` x ``dtype``
        from ``pic`` (and the dynamic config ``cfg``)."""
        if cfg is None:
            cfg = gb.weight(np.frombuffer(self.config.pack(), np.uint8),
                            "uint8")
        x = gb.work(shape, dtype)
        return gb.emit("AIPP", x, pic, cfg,
                       params=dict(batch=int(shape[0]), channels=3,
                                   height=self.height, width=self.width,
                                   src_size=self.src_size),
                       where="the aipp_op of %s for input %r" % (
                           self.op.where(), name))


def plan(conf, names: list[str], dims: list[list[int]],
         dtypes: list[str]) -> dict[int, Stage]:
    """The stages of ``conf`` (a path or parsed aipp_ops) for the model
    inputs ``names`` of ``dims`` (after --input_shape) and ``dtypes``,
    by input index; refuses what the model's inputs cannot take."""
    ops = read_aipp_conf(conf) if isinstance(conf, str) else list(conf)
    stages: dict[int, Stage] = {}
    extra = len(names)
    for op in ops:
        rank = op.rank
        if op.name is not None:
            if op.name not in names:
                op.fail("related_input_name", "related_input_name %r: the "
                        "model's inputs are %s" % (op.name, names))
            rank = names.index(op.name)
        if not 0 <= rank < len(names):
            op.fail("related_input_rank", "related_input_rank %d: the model "
                    "has %d input(s)" % (rank, len(names)))
        if rank in stages:
            op.fail("related_input_rank", "a second aipp_op for input %d "
                    "(%r; the first is at %s)" % (rank, names[rank],
                                                  stages[rank].op.where()))
        d = dims[rank]
        if len(d) != 4 or d[1] != 3 or any(x < 1 for x in d[1:]):
            op.fail(None, "AIPP feeds an NCHW input of 3 channels and a "
                    "known size; input %r is %s (give --input_shape=%s:1,3,"
                    "H,W)" % (names[rank], d, names[rank]))
        if dtypes[rank] not in _FLOATS:
            op.fail(None, "AIPP writes float32, float16 or bfloat16; input "
                    "%r is %s" % (names[rank], dtypes[rank]))
        h, w = d[2], d[3]
        if op.mode == "dynamic":
            size = op.max_src_size
            if size > 1 << 28:
                op.fail("max_src_image_size", "max_src_image_size %d is "
                        "above davinci's 2^28 bytes" % size)
            stages[rank] = Stage(op, rank, h, w, [d[0], size], "ND", size,
                                 None)
            continue
        cfg = op.config(h, w)
        sw, sh = cfg.src_w, cfg.src_h
        pic = {"YUV420SP_U8": [d[0], sh * 3 // 2, sw, 1],
               "RGB888_U8": [d[0], sh, sw, 3],
               "XRGB8888_U8": [d[0], sh, sw, 4]}[cfg.input_format]
        stages[rank] = Stage(op, rank, h, w, pic, "NHWC",
                             picture_bytes(cfg.input_format, sw, sh), cfg)
    # the config inputs follow the model's, in the order of their inputs
    for st in sorted(stages.values(), key=lambda st: st.index):
        if st.dynamic:
            st.config_input = extra
            extra += 1
    return stages


def config_dims() -> list[int]:
    """The dims of a dynamic stage's config input."""
    return [CONFIG_SIZE]


def refuse_with_batches(stages: dict[int, Stage]) -> None:
    """Refuse dynamic AIPP in a dynamic-batch model (its config input
    would have to hold a set per picture); static AIPP takes any batch."""
    for st in stages.values():
        if st.dynamic and st.pic_dims[0] < 0:
            raise ConversionError(
                "--insert_op_conf %s: dynamic AIPP with --dynamic_batch_size "
                "is not supported (the config input has one set of "
                "parameters): convert a static batch" % st.op.where())
