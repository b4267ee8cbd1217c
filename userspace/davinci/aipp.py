# SPDX-License-Identifier: GPL-2.0
"""AIPP, ATC's AI pre-processing stage (DOC: AIPP in davinci.h): the
struct davinci_aipp_config that DAVINCI_OP_AIPP reads at its src1, and the
host reference of what the op computes (kmod/core/NUMERICS.md, AIPP).

:class:`AippConfig` holds one config as CANN's aipp_op names its fields;
:meth:`AippConfig.pack` gives its bytes, :func:`reference` the image the
device writes for a picture (numpy, float32 arithmetic as the core does
it, then one rounding to the output dtype).
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass, field, fields

import numpy as np

from . import _uapi
from .errors import InvalidArgumentError

__all__ = ["AippConfig", "FORMATS", "CONFIG_SIZE", "picture_bytes",
           "reference", "f32_bits", "config_from_bytes"]

#: CANN's input_format names -> DAVINCI_AIPP_*
FORMATS = {"YUV420SP_U8": _uapi.DAVINCI_AIPP_YUV420SP_U8,
           "XRGB8888_U8": _uapi.DAVINCI_AIPP_XRGB8888_U8,
           "RGB888_U8": _uapi.DAVINCI_AIPP_RGB888_U8}
#: bytes of a struct davinci_aipp_config
CONFIG_SIZE = ctypes.sizeof(_uapi.davinci_aipp_config)
#: the largest picture side and picture the device takes
MAX_DIM = 8192
MAX_SRC = 1 << 28


def f32_bits(x: float) -> int:
    """The IEEE bits of ``x`` rounded to float32."""
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def picture_bytes(fmt: str, w: int, h: int) -> int:
    """Bytes of a ``w`` x ``h`` picture of CANN format ``fmt``."""
    per = {"YUV420SP_U8": 1.5, "XRGB8888_U8": 4, "RGB888_U8": 3}[fmt]
    return int(w * h * per)


@dataclass
class AippConfig:
    """One AIPP config, in CANN's aipp_op terms (src_image_size_w/h,
    csc_switch, rbuv_swap_switch, ax_swap_switch, matrix_r*c*,
    input_bias_*, output_bias_*, crop and load_start_pos_*, crop_size_*,
    padding and *_padding_size, padding_value, mean_chn_*, min_chn_*,
    var_reci_chn_*)."""
    input_format: str = "YUV420SP_U8"
    src_w: int = 0
    src_h: int = 0
    csc: bool = False
    rbuv_swap: bool = False
    ax_swap: bool = False
    matrix: list = field(default_factory=lambda: [0] * 9)
    input_bias: list = field(default_factory=lambda: [0] * 3)
    output_bias: list = field(default_factory=lambda: [0] * 3)
    crop: bool = False
    crop_x: int = 0
    crop_y: int = 0
    crop_w: int = 0
    crop_h: int = 0
    padding: bool = False
    pad_left: int = 0
    pad_right: int = 0
    pad_top: int = 0
    pad_bottom: int = 0
    padding_value: float = 0.0
    mean: list = field(default_factory=lambda: [0] * 4)
    min: list = field(default_factory=lambda: [0.0] * 4)
    var_reci: list = field(default_factory=lambda: [1.0] * 4)

    def copy(self) -> "AippConfig":
        return AippConfig(**{f.name: (list(getattr(self, f.name))
                                      if isinstance(getattr(self, f.name),
                                                    list)
                                      else getattr(self, f.name))
                             for f in fields(self)})

    def out_size(self) -> tuple[int, int]:
        """(height, width) of the image it makes."""
        w = self.crop_w if self.crop else self.src_w
        h = self.crop_h if self.crop else self.src_h
        if self.padding:
            w += self.pad_left + self.pad_right
            h += self.pad_top + self.pad_bottom
        return h, w

    def check(self, height: int | None = None, width: int | None = None,
              src_size: int | None = None) -> None:
        """Raise InvalidArgumentError, saying what to change, for a config
        the device would refuse (the checks of kmod/core/aipp.c)."""
        def bad(msg: str) -> None:
            raise InvalidArgumentError("AIPP config: " + msg)
        if self.input_format not in FORMATS:
            bad("input_format %r: davinci's AIPP takes %s" % (
                self.input_format, ", ".join(FORMATS)))
        if self.ax_swap and self.input_format != "XRGB8888_U8":
            bad("ax_swap_switch is for XRGB8888_U8 pictures only")
        for name in ("src_w", "src_h"):
            if not 1 <= getattr(self, name) <= MAX_DIM:
                bad("src_image_size_%s = %d: give 1 .. %d" % (
                    name[-1], getattr(self, name), MAX_DIM))
        yuv = self.input_format == "YUV420SP_U8"
        if yuv and (self.src_w % 2 or self.src_h % 2):
            bad("a YUV420SP_U8 picture has an even width and height, not "
                "%d x %d" % (self.src_w, self.src_h))
        size = picture_bytes(self.input_format, self.src_w, self.src_h)
        if src_size is not None and size > src_size:
            bad("a %d x %d %s picture is %d bytes, more than the %d the "
                "model's input holds (max_src_image_size)" % (
                    self.src_w, self.src_h, self.input_format, size,
                    src_size))
        if self.crop:
            if self.crop_w < 1 or self.crop_h < 1 or \
                    self.crop_x + self.crop_w > self.src_w or \
                    self.crop_y + self.crop_h > self.src_h:
                bad("the crop %d x %d at (%d, %d) is not inside the %d x %d "
                    "picture" % (self.crop_w, self.crop_h, self.crop_x,
                                 self.crop_y, self.src_w, self.src_h))
            if yuv and (self.crop_x % 2 or self.crop_y % 2):
                bad("load_start_pos_w and load_start_pos_h are even for "
                    "YUV420SP_U8 (got %d, %d)" % (self.crop_x, self.crop_y))
        if any(v < 0 for v in (self.crop_x, self.crop_y, self.pad_left,
                               self.pad_right, self.pad_top,
                               self.pad_bottom)):
            bad("crop positions and padding sizes are not negative")
        if height is not None and self.out_size() != (height, width):
            bad("the crop and padding make %d x %d (h x w), and the model "
                "takes %d x %d: change crop_size_w/h or the padding sizes"
                % (*self.out_size(), height, width))
        for i, m in enumerate(self.matrix):
            if not -32768 <= m <= 32767:
                bad("matrix_r%dc%d = %d: give -32768 .. 32767"
                    % (i // 3, i % 3, m))
        for name in ("input_bias", "output_bias"):
            for i, v in enumerate(getattr(self, name)):
                if not 0 <= v <= 255:
                    bad("%s_%d = %d: give 0 .. 255" % (name, i, v))
        for i, v in enumerate(self.mean):
            if not -32768 <= v <= 32767:
                bad("mean_chn_%d = %d: give -32768 .. 32767" % (i, v))
        for name in ("min", "var_reci"):
            for i, v in enumerate(getattr(self, name)):
                if not np.isfinite(np.float32(v)):
                    bad("%s_chn_%d = %r is not a finite float32"
                        % (name, i, v))
        if self.padding and not np.isfinite(np.float32(self.padding_value)):
            bad("padding_value %r is not a finite float32"
                % self.padding_value)

    def switches(self) -> int:
        return ((_uapi.DAVINCI_AIPP_CSC if self.csc else 0) |
                (_uapi.DAVINCI_AIPP_RBUV_SWAP if self.rbuv_swap else 0) |
                (_uapi.DAVINCI_AIPP_AX_SWAP if self.ax_swap else 0) |
                (_uapi.DAVINCI_AIPP_CROP if self.crop else 0) |
                (_uapi.DAVINCI_AIPP_PADDING if self.padding else 0))

    def pack(self) -> bytes:
        """The struct davinci_aipp_config's bytes."""
        c = _uapi.davinci_aipp_config()
        c.version = _uapi.DAVINCI_AIPP_CONFIG_VERSION
        c.input_format = FORMATS.get(self.input_format, 0)
        c.src_w, c.src_h = self.src_w, self.src_h
        c.switches = self.switches()
        c.matrix[:] = [int(v) for v in self.matrix]
        c.input_bias[:] = [int(v) for v in self.input_bias]
        c.output_bias[:] = [int(v) for v in self.output_bias]
        if self.crop:
            c.crop_x, c.crop_y = self.crop_x, self.crop_y
            c.crop_w, c.crop_h = self.crop_w, self.crop_h
        if self.padding:
            c.pad_left, c.pad_right = self.pad_left, self.pad_right
            c.pad_top, c.pad_bottom = self.pad_top, self.pad_bottom
            c.padding_value = f32_bits(self.padding_value)
        c.mean[:] = [int(v) for v in self.mean]
        c.min[:] = [f32_bits(v) for v in self.min]
        c.var_reci[:] = [f32_bits(v) for v in self.var_reci]
        return bytes(c)


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def config_from_bytes(raw: bytes) -> AippConfig:
    """The AippConfig of a struct davinci_aipp_config's bytes; raises
    InvalidArgumentError for a version, switch bits or reserved words the
    device refuses (:meth:`AippConfig.check` says the rest)."""
    if len(raw) != CONFIG_SIZE:
        raise InvalidArgumentError("AIPP config: %d bytes, not %d"
                                   % (len(raw), CONFIG_SIZE))
    c = _uapi.davinci_aipp_config.from_buffer_copy(raw)
    known = (_uapi.DAVINCI_AIPP_CSC | _uapi.DAVINCI_AIPP_RBUV_SWAP |
             _uapi.DAVINCI_AIPP_AX_SWAP | _uapi.DAVINCI_AIPP_CROP |
             _uapi.DAVINCI_AIPP_PADDING)
    if c.version != _uapi.DAVINCI_AIPP_CONFIG_VERSION or \
            c.switches & ~known or any(c.reserved):
        raise InvalidArgumentError(
            "AIPP config: version %d, switches %#x, reserved %s: the device "
            "takes version %d, switches within %#x and zeros"
            % (c.version, c.switches, list(c.reserved),
               _uapi.DAVINCI_AIPP_CONFIG_VERSION, known))
    names = {v: k for k, v in FORMATS.items()}
    sw = c.switches
    cfg = AippConfig(names.get(c.input_format, "format %d" % c.input_format),
                     c.src_w, c.src_h, csc=bool(sw & _uapi.DAVINCI_AIPP_CSC),
                     rbuv_swap=bool(sw & _uapi.DAVINCI_AIPP_RBUV_SWAP),
                     ax_swap=bool(sw & _uapi.DAVINCI_AIPP_AX_SWAP),
                     matrix=list(c.matrix), input_bias=list(c.input_bias),
                     output_bias=list(c.output_bias),
                     crop=bool(sw & _uapi.DAVINCI_AIPP_CROP),
                     crop_x=c.crop_x, crop_y=c.crop_y, crop_w=c.crop_w,
                     crop_h=c.crop_h,
                     padding=bool(sw & _uapi.DAVINCI_AIPP_PADDING),
                     pad_left=c.pad_left, pad_right=c.pad_right,
                     pad_top=c.pad_top, pad_bottom=c.pad_bottom,
                     padding_value=_f32(c.padding_value),
                     mean=list(c.mean), min=[_f32(b) for b in c.min],
                     var_reci=[_f32(b) for b in c.var_reci])
    return cfg


def _channels(cfg: AippConfig, pic: np.ndarray) -> np.ndarray:
    """The raw channels (3, h, w) int32 of the whole picture."""
    w, h = cfg.src_w, cfg.src_h
    flat = np.asarray(pic, np.uint8).reshape(-1)
    if cfg.input_format == "YUV420SP_U8":
        y = flat[:w * h].reshape(h, w).astype(np.int32)
        uv = flat[w * h:w * h * 3 // 2].reshape(h // 2, w // 2, 2)
        uv = uv.repeat(2, axis=0).repeat(2, axis=1).astype(np.int32)
        u, v = uv[..., 0], uv[..., 1]
        if cfg.rbuv_swap:
            u, v = v, u
        return np.stack([y, u, v])
    per = 3 if cfg.input_format == "RGB888_U8" else 4
    px = flat[:w * h * per].reshape(h, w, per).astype(np.int32)
    if per == 4:
        px = px[..., 0:3] if cfg.ax_swap else px[..., 1:4]
    ch = np.moveaxis(px, -1, 0)
    return ch[::-1].copy() if cfg.rbuv_swap else ch


def reference(cfg: AippConfig, pic, dtype: str = "float16") -> np.ndarray:
    """What DAVINCI_OP_AIPP writes for ``pic`` (the picture's bytes) and
    ``cfg``: a (3, h, w) array of ``dtype`` (float16 or float32), by
    NUMERICS.md's formulas."""
    ch = _channels(cfg, pic)
    if cfg.crop:
        ch = ch[:, cfg.crop_y:cfg.crop_y + cfg.crop_h,
                cfg.crop_x:cfg.crop_x + cfg.crop_w]
    if cfg.csc:
        m = np.asarray(cfg.matrix, np.int64).reshape(3, 3)
        d = ch.astype(np.int64) - np.asarray(cfg.input_bias,
                                             np.int64)[:, None, None]
        acc = np.einsum("ij,jhw->ihw", m, d)
        ch = np.clip((acc >> 8) + np.asarray(cfg.output_bias,
                                             np.int64)[:, None, None],
                     0, 255)
    mean = np.asarray(cfg.mean[:3], np.int64)[:, None, None]
    diff = (ch.astype(np.int64) - mean).astype(np.float32)
    mn = np.asarray(cfg.min[:3], np.float32)[:, None, None]
    var = np.asarray(cfg.var_reci[:3], np.float32)[:, None, None]
    val = (diff - mn) * var
    if cfg.padding:
        h, w = cfg.out_size()
        out = np.full((3, h, w), np.float32(cfg.padding_value), np.float32)
        out[:, cfg.pad_top:cfg.pad_top + val.shape[1],
            cfg.pad_left:cfg.pad_left + val.shape[2]] = val
        val = out
    return val.astype(dtype)
