# SPDX-License-Identifier: GPL-2.0
"""acl.mdl's dynamic AIPP, as pyACL has it:

    index, ret = acl.mdl.get_input_index_by_name(desc,
                                                 "ascend_dynamic_aipp_data")
    aipp = acl.mdl.create_aipp(1)
    ret = acl.mdl.set_aipp_input_format(aipp, ACL_YUV420SP_U8)
    ret = acl.mdl.set_aipp_src_image_size(aipp, 256, 224)
    ret = acl.mdl.set_aipp_csc_params(aipp, 1, 256, 0, 359, ...)
    ret = acl.mdl.set_aipp_crop_params(aipp, 1, 16, 0, 224, 224, 0)
    ret = acl.mdl.set_input_aipp(model_id, dataset, index, aipp)
    ret = acl.mdl.destroy_aipp(aipp)

A model converted with an ``aipp_mode : dynamic`` aipp_op has an extra
input, ``ascend_dynamic_aipp_data``, of ``get_input_size_by_index`` bytes:
``set_input_aipp`` writes the parameters into the dataset's buffer for it
(a struct davinci_aipp_config, DOC: AIPP in davinci.h), which the model's
AIPP op reads as it runs, so the next execute uses them. One set serves
every picture of a batch: per-picture parameters that differ are
refused, as is resizing (``set_aipp_scf_params`` with its switch on).
"""

from __future__ import annotations

import itertools
import math
import struct

from davinci import schema
from davinci import omfile as F
from davinci.aipp import CONFIG_SIZE, FORMATS, AippConfig
from davinci.errors import InvalidArgumentError

from .. import _desc as D
from .. import constants as C
from .._state import AclFail, api
from ..rt.memory import device_range
from ._objects import get_dataset, get_model

__all__ = ["create_aipp", "destroy_aipp", "set_aipp_input_format",
           "set_aipp_src_image_size", "set_aipp_csc_params",
           "set_aipp_rbuv_swap_switch", "set_aipp_ax_swap_switch",
           "set_aipp_scf_params", "set_aipp_crop_params",
           "set_aipp_padding_params", "set_aipp_dtc_pixel_mean",
           "set_aipp_dtc_pixel_min", "set_aipp_pixel_var_reci",
           "set_input_aipp", "get_aipp_type"]

#: aclAippInputFormat -> davinci.aipp's format names
_FORMATS = {C.ACL_YUV420SP_U8: "YUV420SP_U8",
            C.ACL_XRGB8888_U8: "XRGB8888_U8",
            C.ACL_RGB888_U8: "RGB888_U8"}
assert set(_FORMATS.values()) == set(FORMATS)

_AIPP = schema.by_name("AIPP")
_ids = itertools.count(0x41490001)
#: create_aipp's handles -> [AippConfig per batch index]
_sets: dict[int, list[AippConfig]] = {}


def _set(handle) -> list[AippConfig]:
    s = _sets.get(handle) if isinstance(handle, int) else None
    if s is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%r is not a dynamic AIPP parameter set from "
                      "acl.mdl.create_aipp (or it was destroyed)" % (handle,))
    return s


def _batches(handle, batch_index) -> list[AippConfig]:
    """The configs a per-picture setter changes: picture ``batch_index``."""
    s = _set(handle)
    if not isinstance(batch_index, int) or not 0 <= batch_index < len(s):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "batch_index %r outside 0..%d (create_aipp's batch "
                      "size)" % (batch_index, len(s) - 1))
    return [s[batch_index]]


def _int(v, lo: int, hi: int, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%s %r: give an int in %d..%d" % (what, v, lo, hi))
    return v


def _float(v, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or \
            not math.isfinite(v):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%s %r: give a finite number" % (what, v))
    return float(v)


@api(1, (0,))
def create_aipp(batch_size):
    """(aipp_parms_set, ret): a parameter set for ``batch_size`` pictures,
    each with no CSC, crop or padding, mean 0, min 0 and var_reci 1."""
    n = _int(batch_size, 1, 1024, "batch_size")
    h = next(_ids)
    _sets[h] = [AippConfig() for _ in range(n)]
    return h


@api()
def destroy_aipp(aipp_parms_set):
    """ret: free the parameter set (a model input it was set on keeps its
    values)."""
    _set(aipp_parms_set)
    del _sets[aipp_parms_set]


@api()
def set_aipp_input_format(aipp_parms_set, input_format):
    """ret: the pictures' format, ACL_YUV420SP_U8, ACL_XRGB8888_U8 or
    ACL_RGB888_U8."""
    s = _set(aipp_parms_set)
    fmt = _FORMATS.get(input_format)
    if fmt is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "input_format %r: davinci's AIPP takes ACL_YUV420SP_U8 "
                      "(1), ACL_XRGB8888_U8 (2) and ACL_RGB888_U8 (3)"
                      % (input_format,))
    for c in s:
        c.input_format = fmt


@api()
def set_aipp_src_image_size(aipp_parms_set, src_image_size_w,
                            src_image_size_h):
    """ret: the pictures' width and height."""
    s = _set(aipp_parms_set)
    w = _int(src_image_size_w, 1, 8192, "src_image_size_w")
    h = _int(src_image_size_h, 1, 8192, "src_image_size_h")
    for c in s:
        c.src_w, c.src_h = w, h


@api()
def set_aipp_csc_params(aipp_parms_set, csc_switch, csc_matrix_r0c0,
                        csc_matrix_r0c1, csc_matrix_r0c2, csc_matrix_r1c0,
                        csc_matrix_r1c1, csc_matrix_r1c2, csc_matrix_r2c0,
                        csc_matrix_r2c1, csc_matrix_r2c2,
                        csc_output_bias_r0, csc_output_bias_r1,
                        csc_output_bias_r2, csc_input_bias_r0,
                        csc_input_bias_r1, csc_input_bias_r2):
    """ret: the colour matrix (int16s), then the output and the input
    biases (0..255), as pyACL orders them."""
    s = _set(aipp_parms_set)
    sw = _int(csc_switch, 0, 1, "csc_switch")
    m = [_int(v, -32768, 32767, "csc_matrix") for v in (
        csc_matrix_r0c0, csc_matrix_r0c1, csc_matrix_r0c2, csc_matrix_r1c0,
        csc_matrix_r1c1, csc_matrix_r1c2, csc_matrix_r2c0, csc_matrix_r2c1,
        csc_matrix_r2c2)]
    ob = [_int(v, 0, 255, "csc_output_bias") for v in (
        csc_output_bias_r0, csc_output_bias_r1, csc_output_bias_r2)]
    ib = [_int(v, 0, 255, "csc_input_bias") for v in (
        csc_input_bias_r0, csc_input_bias_r1, csc_input_bias_r2)]
    for c in s:
        c.csc, c.matrix, c.output_bias, c.input_bias = bool(sw), m, ob, ib


@api()
def set_aipp_rbuv_swap_switch(aipp_parms_set, rbuv_swap_switch):
    """ret: swap R with B (U with V: NV21 pictures)."""
    s = _set(aipp_parms_set)
    sw = _int(rbuv_swap_switch, 0, 1, "rbuv_swap_switch")
    for c in s:
        c.rbuv_swap = bool(sw)


@api()
def set_aipp_ax_swap_switch(aipp_parms_set, ax_swap_switch):
    """ret: XRGB8888 pictures are RGBX (the X last)."""
    s = _set(aipp_parms_set)
    sw = _int(ax_swap_switch, 0, 1, "ax_swap_switch")
    for c in s:
        c.ax_swap = bool(sw)


@api()
def set_aipp_scf_params(aipp_parms_set, scf_switch, scf_input_size_w,
                        scf_input_size_h, scf_output_size_w,
                        scf_output_size_h, batch_index):
    """ret: davinci's AIPP does not resize: a switch of 1 is refused."""
    _batches(aipp_parms_set, batch_index)
    if _int(scf_switch, 0, 1, "scf_switch"):
        raise AclFail(C.ACL_ERROR_FEATURE_UNSUPPORTED,
                      "davinci's AIPP does not resize (scf_switch 1): resize "
                      "the picture first (acl.media's VPC), or crop and pad "
                      "it to the model's input size")


@api()
def set_aipp_crop_params(aipp_parms_set, crop_switch, crop_start_pos_w,
                         crop_start_pos_h, crop_size_w, crop_size_h,
                         batch_index):
    """ret: the crop of picture ``batch_index``."""
    sw = _int(crop_switch, 0, 1, "crop_switch")
    vals = [_int(v, 0, 8192, n) for v, n in (
        (crop_start_pos_w, "crop_start_pos_w"),
        (crop_start_pos_h, "crop_start_pos_h"),
        (crop_size_w, "crop_size_w"), (crop_size_h, "crop_size_h"))]
    for c in _batches(aipp_parms_set, batch_index):
        c.crop = bool(sw)
        c.crop_x, c.crop_y, c.crop_w, c.crop_h = vals


@api()
def set_aipp_padding_params(aipp_parms_set, padding_switch,
                            padding_size_top, padding_size_bottom,
                            padding_size_left, padding_size_right,
                            batch_index):
    """ret: the padding of picture ``batch_index`` (its value 0)."""
    sw = _int(padding_switch, 0, 1, "padding_switch")
    t, b, left, r = [_int(v, 0, 8192, n) for v, n in (
        (padding_size_top, "padding_size_top"),
        (padding_size_bottom, "padding_size_bottom"),
        (padding_size_left, "padding_size_left"),
        (padding_size_right, "padding_size_right"))]
    for c in _batches(aipp_parms_set, batch_index):
        c.padding = bool(sw)
        c.pad_top, c.pad_bottom, c.pad_left, c.pad_right = t, b, left, r


@api()
def set_aipp_dtc_pixel_mean(aipp_parms_set, dtc_pixel_mean_chn0,
                            dtc_pixel_mean_chn1, dtc_pixel_mean_chn2,
                            dtc_pixel_mean_chn3, batch_index):
    """ret: mean_chn_0..3 (int16) of picture ``batch_index``."""
    m = [_int(v, -32768, 32767, "dtc_pixel_mean") for v in (
        dtc_pixel_mean_chn0, dtc_pixel_mean_chn1, dtc_pixel_mean_chn2,
        dtc_pixel_mean_chn3)]
    for c in _batches(aipp_parms_set, batch_index):
        c.mean = list(m)


@api()
def set_aipp_dtc_pixel_min(aipp_parms_set, dtc_pixel_min_chn0,
                           dtc_pixel_min_chn1, dtc_pixel_min_chn2,
                           dtc_pixel_min_chn3, batch_index):
    """ret: min_chn_0..3 (floats) of picture ``batch_index``."""
    m = [_float(v, "dtc_pixel_min") for v in (
        dtc_pixel_min_chn0, dtc_pixel_min_chn1, dtc_pixel_min_chn2,
        dtc_pixel_min_chn3)]
    for c in _batches(aipp_parms_set, batch_index):
        c.min = list(m)


@api()
def set_aipp_pixel_var_reci(aipp_parms_set, dtc_pixel_var_reci_chn0,
                            dtc_pixel_var_reci_chn1, dtc_pixel_var_reci_chn2,
                            dtc_pixel_var_reci_chn3, batch_index):
    """ret: var_reci_chn_0..3 (floats) of picture ``batch_index``."""
    m = [_float(v, "dtc_pixel_var_reci") for v in (
        dtc_pixel_var_reci_chn0, dtc_pixel_var_reci_chn1,
        dtc_pixel_var_reci_chn2, dtc_pixel_var_reci_chn3)]
    for c in _batches(aipp_parms_set, batch_index):
        c.var_reci = list(m)


def _stages(om) -> list[dict]:
    """The model's AIPP stages, read from its first gear's AIPP ops: the
    picture input each reads, its config's input (-1: a weight, static
    AIPP) and the image it makes."""
    out = []
    for o in om.ops:
        if o.gear or o.opcode != _AIPP.opcode:
            continue
        pic, cfg = om.tensors[o.src0], om.tensors[o.src1]
        if pic.kind != F.KIND_INPUT:
            continue
        p = dict(zip((f.name for f in _AIPP.params.fields),
                     struct.unpack(_AIPP.params.format, om.block(o))))
        out.append({"input": pic.index,
                    "config": cfg.index if cfg.kind == F.KIND_INPUT else -1,
                    "height": p["height"], "width": p["width"],
                    "src_size": p["src_size"]})
    return out


@api()
def set_input_aipp(model_id, dataset, index, aipp_parms_set):
    """ret: write the parameter set into ``dataset``'s buffer for input
    ``index`` (an ascend_dynamic_aipp_data input), for the next execute;
    refused (nothing written) when the model's AIPP would not take it."""
    m = get_model(model_id)
    ds = get_dataset(dataset)
    om = m.model.om
    dyn = [st["config"] for st in _stages(om) if st["config"] >= 0]
    if index not in dyn:
        raise AclFail(C.ACL_ERROR_GE_PARAM_INVALID,
                      "input %r is not a dynamic AIPP input (%s) of the model"
                      "%s" % (index, C.ACL_DYNAMIC_AIPP_NAME,
                              ": they are %s" % dyn if dyn else
                              ", which has none: convert it with an "
                              "aipp_mode : dynamic aipp_op"))
    s = _set(aipp_parms_set)
    cfg = s[0]
    if any(c.pack() != cfg.pack() for c in s[1:]):
        raise AclFail(C.ACL_ERROR_FEATURE_UNSUPPORTED,
                      "davinci's AIPP applies one set of parameters to every "
                      "picture of a batch: give each batch_index the same")
    st = next(st for st in _stages(om) if st["config"] == index)
    try:
        cfg.check(st["height"], st["width"], st["src_size"])
    except InvalidArgumentError as exc:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, str(exc)) from None
    if not isinstance(index, int) or index >= len(ds.buffers):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "the dataset has %d buffers: add the buffer of input "
                      "%d first" % (len(ds.buffers), index))
    b = D.buffers.get(ds.buffers[index])
    if b is None or b.size < CONFIG_SIZE:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "the dataset's buffer %d holds %s bytes, the "
                      "parameters %d" % (index, b and b.size, CONFIG_SIZE))
    hit = device_range(b.ptr, CONFIG_SIZE, "dynamic AIPP input")
    if hit is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "the dataset's buffer %d is not device memory (from "
                      "acl.rt.malloc)" % index)
    _, buf, off = hit
    buf.write(cfg.pack(), offset=off)


@api(2, (C.ACL_DATA_WITHOUT_AIPP, 0))
def get_aipp_type(model_id, index):
    """(type, dynamic_attached_index, ret): ACL_DATA_WITH_STATIC_AIPP,
    ACL_DATA_WITH_DYNAMIC_AIPP (and the index of its parameters' input),
    ACL_DYNAMIC_AIPP_NODE for that input, else ACL_DATA_WITHOUT_AIPP."""
    om = get_model(model_id).model.om
    if not isinstance(index, int) or not 0 <= index < len(om.inputs):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "input index %r outside 0..%d" % (index,
                                                        len(om.inputs) - 1))
    for st in _stages(om):
        if st["config"] == index:
            return C.ACL_DYNAMIC_AIPP_NODE, 0
        if st["input"] == index:
            if st["config"] < 0:
                return C.ACL_DATA_WITH_STATIC_AIPP, 0
            return C.ACL_DATA_WITH_DYNAMIC_AIPP, st["config"]
    return C.ACL_DATA_WITHOUT_AIPP, 0
