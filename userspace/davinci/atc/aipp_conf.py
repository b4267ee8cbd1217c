# SPDX-License-Identifier: GPL-2.0
"""ATC's --insert_op_conf: the AIPP config file (protobuf text format, as
Ascend's samples write it) read into :class:`AippOp` blocks.

    aipp_op {
        aipp_mode : static          # or dynamic
        related_input_rank : 0
        input_format : YUV420SP_U8
        src_image_size_w : 224
        csc_switch : true
        matrix_r0c0 : 256  matrix_r0c1 : 0  matrix_r0c2 : 359
        ...
    }

Several aipp_op blocks each name the model input they pre-process
(related_input_rank, default 0). Unknown keys, bad values and features
davinci's AIPP does not have (resize, rotation, single-line mode, YUV400)
are refused with a :class:`~davinci.atc.builder.ConversionError` naming
the file's line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..aipp import FORMATS, AippConfig
from .builder import ConversionError

__all__ = ["AippOp", "parse_aipp_conf", "read_aipp_conf"]

#: CANN's template defaults when csc_switch is true and the matrix is not
#: given: BT.601 narrow range YUV to BGR (the rows are B, G, R)
DEFAULT_MATRIX = [298, 516, 0, 298, -100, -208, 298, 0, 409]
DEFAULT_INPUT_BIAS = [16, 128, 128]

_INT_KEYS = (["related_input_rank", "max_src_image_size", "src_image_size_w",
              "src_image_size_h", "load_start_pos_w", "load_start_pos_h",
              "crop_size_w", "crop_size_h", "left_padding_size",
              "right_padding_size", "top_padding_size",
              "bottom_padding_size", "resize_output_w", "resize_output_h",
              "rotation_angle", "input_edge_idx"] +
             ["matrix_r%dc%d" % (r, c) for r in range(3) for c in range(3)] +
             ["input_bias_%d" % i for i in range(3)] +
             ["output_bias_%d" % i for i in range(3)] +
             ["mean_chn_%d" % i for i in range(4)])
_FLOAT_KEYS = (["padding_value"] + ["min_chn_%d" % i for i in range(4)] +
               ["var_reci_chn_%d" % i for i in range(4)])
_BOOL_KEYS = ["csc_switch", "rbuv_swap_switch", "ax_swap_switch", "crop",
              "padding", "resize", "single_line_mode", "support_rotation"]
_ENUM_KEYS = {"aipp_mode": ("static", "dynamic"),
              "input_format": ("YUV420SP_U8", "XRGB8888_U8", "RGB888_U8",
                               "YUV400_U8", "ARGB8888_U8", "YUYV_U8",
                               "YUV422SP_U8", "AYUV444_U8", "RAW10",
                               "RAW12", "RAW16", "RAW24")}
_STR_KEYS = ["related_input_name"]
KEYS = frozenset(_INT_KEYS + _FLOAT_KEYS + _BOOL_KEYS + list(_ENUM_KEYS) +
                 _STR_KEYS)

_TOKEN = re.compile(r'\s*(?:(#[^\n]*)|([{}:])|"([^"\n]*)"|([^\s{}:#"]+))')


@dataclass
class AippOp:
    """One aipp_op block: its mode, the input it pre-processes, the values
    it gave (key -> value) and the line each was on."""
    path: str
    line: int
    mode: str = "static"
    rank: int = 0
    name: str | None = None
    values: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)

    def where(self, key: str | None = None) -> str:
        return "%s:%d" % (self.path, self.lines.get(key, self.line))

    def fail(self, key: str | None, msg: str) -> None:
        raise ConversionError("--insert_op_conf %s: %s" % (self.where(key),
                                                           msg))

    @property
    def max_src_size(self) -> int:
        return int(self.values.get("max_src_image_size", 0))

    def config(self, height: int, width: int) -> AippConfig:
        """The static config for a model input of ``height`` x ``width``
        (src_image_size_w/h default to them), checked as the device
        checks it."""
        v = self.values
        fmt = v.get("input_format")
        if fmt is None:
            self.fail(None, "a static aipp_op needs its input_format (%s)"
                      % ", ".join(FORMATS))
        cfg = AippConfig(input_format=fmt,
                         src_w=v.get("src_image_size_w") or width,
                         src_h=v.get("src_image_size_h") or height)
        cfg.csc = bool(v.get("csc_switch", False))
        cfg.rbuv_swap = bool(v.get("rbuv_swap_switch", False))
        cfg.ax_swap = bool(v.get("ax_swap_switch", False))
        if cfg.csc:
            cfg.matrix = [v.get("matrix_r%dc%d" % (i // 3, i % 3),
                                DEFAULT_MATRIX[i]) for i in range(9)]
            cfg.input_bias = [v.get("input_bias_%d" % i,
                                    DEFAULT_INPUT_BIAS[i]) for i in range(3)]
            cfg.output_bias = [v.get("output_bias_%d" % i, 0)
                               for i in range(3)]
        cfg.crop = bool(v.get("crop", False))
        if cfg.crop:
            cfg.crop_x = v.get("load_start_pos_w", 0)
            cfg.crop_y = v.get("load_start_pos_h", 0)
            cfg.crop_w = v.get("crop_size_w") or width
            cfg.crop_h = v.get("crop_size_h") or height
        cfg.padding = bool(v.get("padding", False))
        if cfg.padding:
            cfg.pad_left = v.get("left_padding_size", 0)
            cfg.pad_right = v.get("right_padding_size", 0)
            cfg.pad_top = v.get("top_padding_size", 0)
            cfg.pad_bottom = v.get("bottom_padding_size", 0)
            cfg.padding_value = v.get("padding_value", 0.0)
        cfg.mean = [v.get("mean_chn_%d" % i, 0) for i in range(4)]
        cfg.min = [v.get("min_chn_%d" % i, 0.0) for i in range(4)]
        cfg.var_reci = [v.get("var_reci_chn_%d" % i, 1.0) for i in range(4)]
        try:
            cfg.check(height, width)
        except Exception as exc:   # noqa: BLE001 - InvalidArgumentError
            self.fail(None, "%s (for the model's input of %d x %d)"
                      % (exc, height, width))
        return cfg


def _tokens(text: str, path: str):
    """(line, kind, text): kind one of '{', '}', ':', 'word', 'str'."""
    line, pos = 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            rest = text[pos:].lstrip()
            if not rest:
                return
            line += text[pos:len(text) - len(rest)].count("\n")
            raise ConversionError("--insert_op_conf %s:%d: cannot read %r"
                                  % (path, line, rest.split("\n")[0][:40]))
        line += text[pos:m.start(m.lastindex)].count("\n")
        pos = m.end()
        if m.group(1) is not None:
            continue
        if m.group(2) is not None:
            yield line, m.group(2), m.group(2)
        elif m.group(3) is not None:
            yield line, "str", m.group(3)
        else:
            yield line, "word", m.group(4)


def _value(op: AippOp, key: str, raw: str, line: int):
    def bad(what: str):
        raise ConversionError("--insert_op_conf %s:%d: %s : %s is not %s"
                              % (op.path, line, key, raw, what))
    if key in _BOOL_KEYS:
        if raw.lower() in ("true", "1"):
            return True
        if raw.lower() in ("false", "0"):
            return False
        bad("a bool (true or false)")
    if key in _INT_KEYS:
        try:
            return int(raw, 0)
        except ValueError:
            bad("an integer")
    if key in _FLOAT_KEYS:
        try:
            return float(raw)
        except ValueError:
            bad("a number")
    if key in _ENUM_KEYS:
        if raw not in _ENUM_KEYS[key]:
            bad("one of %s" % ", ".join(_ENUM_KEYS[key]))
        return raw
    return raw


def _refuse_unsupported(op: AippOp) -> None:
    v = op.values
    if v.get("resize"):
        op.fail("resize", "resize : true: davinci's AIPP does not resize; "
                "resize the picture first (acl.media's VPC) or set the "
                "model's input size to the picture's")
    if v.get("rotation_angle", 0) or v.get("support_rotation"):
        op.fail("rotation_angle" if "rotation_angle" in v
                else "support_rotation",
                "davinci's AIPP does not rotate: remove rotation_angle and "
                "support_rotation")
    if v.get("single_line_mode"):
        op.fail("single_line_mode", "single_line_mode is not supported: "
                "remove it")
    if v.get("input_edge_idx", 0):
        op.fail("input_edge_idx", "input_edge_idx other than 0 is not "
                "supported")
    fmt = v.get("input_format")
    if fmt is not None and fmt not in FORMATS:
        op.fail("input_format", "input_format : %s: davinci's AIPP takes "
                "%s" % (fmt, ", ".join(FORMATS)))
    if op.mode == "dynamic":
        if op.max_src_size <= 0:
            op.fail(None, "a dynamic aipp_op needs max_src_image_size (the "
                    "largest picture's bytes)")
        extra = sorted(set(v) - {"aipp_mode", "related_input_rank",
                                 "related_input_name",
                                 "max_src_image_size", "input_edge_idx"})
        if extra:
            op.fail(extra[0], "a dynamic aipp_op sets its parameters at run "
                    "time (acl.mdl.set_aipp_*): remove %s" % ", ".join(extra))
    elif "max_src_image_size" in v:
        op.fail("max_src_image_size", "max_src_image_size is for aipp_mode "
                ": dynamic")


def parse_aipp_conf(text: str, path: str = "aipp.cfg") -> list[AippOp]:
    """The aipp_op blocks of an AIPP config's ``text``."""
    toks = list(_tokens(text, path))
    ops: list[AippOp] = []
    i = 0

    def expect(kind: str, what: str):
        nonlocal i
        if i >= len(toks):
            last = toks[-1][0] if toks else 1
            raise ConversionError("--insert_op_conf %s:%d: the file ends "
                                  "where %s was expected" % (path, last,
                                                             what))
        tok = toks[i]
        if tok[1] != kind:
            raise ConversionError("--insert_op_conf %s:%d: %r where %s was "
                                  "expected" % (path, tok[0], tok[2], what))
        i += 1
        return tok
    while i < len(toks):
        line, _, word = expect("word", "aipp_op {")
        if word != "aipp_op":
            raise ConversionError("--insert_op_conf %s:%d: %r: the file "
                                  "holds aipp_op { ... } blocks" % (
                                      path, line, word))
        if i < len(toks) and toks[i][1] == ":":
            i += 1
        expect("{", "{ after aipp_op")
        op = AippOp(path, line)
        while i < len(toks) and toks[i][1] != "}":
            kline, _, key = expect("word", "a key or }")
            if key not in KEYS:
                raise ConversionError(
                    "--insert_op_conf %s:%d: unknown key %r (davinci-atc "
                    "reads CANN's aipp_op keys: %s)" % (
                        path, kline, key, ", ".join(sorted(KEYS))))
            if key in op.values:
                raise ConversionError("--insert_op_conf %s:%d: %s is given "
                                      "twice (first on line %d)" % (
                                          path, kline, key, op.lines[key]))
            expect(":", "':' after %s" % key)
            if i >= len(toks) or toks[i][1] not in ("word", "str"):
                expect("word", "a value for %s" % key)
            vline, _, raw = toks[i]
            i += 1
            op.values[key] = _value(op, key, raw, vline)
            op.lines[key] = kline
        expect("}", "} closing the aipp_op of line %d" % line)
        op.mode = op.values.get("aipp_mode", "static")
        if "aipp_mode" not in op.values:
            op.fail(None, "aipp_op without aipp_mode: give aipp_mode : "
                    "static or aipp_mode : dynamic")
        op.rank = op.values.get("related_input_rank", 0)
        op.name = op.values.get("related_input_name")
        _refuse_unsupported(op)
        ops.append(op)
    if not ops:
        raise ConversionError("--insert_op_conf %s: no aipp_op block" % path)
    return ops


def read_aipp_conf(path: str) -> list[AippOp]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConversionError("--insert_op_conf %s: cannot read it (%s)"
                              % (path, exc)) from None
    return parse_aipp_conf(text, path)
