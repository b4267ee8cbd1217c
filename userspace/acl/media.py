# SPDX-License-Identifier: GPL-2.0
"""acl.media: DVPP. JPEG decode and encode and VPC work, on the DVPP engine
(DAVINCI_OP_JPEGD_DECODE and the VPC tasks on the stream, DOC: DVPP JPEGD
and DOC: DVPP VPC), as Ascend's samples call them: channel descs and
channels, picture descs and their setters and getters, batch picture descs,
dvpp_malloc / dvpp_free (device memory any task may use).

JPEG decode: dvpp_jpeg_get_image_info (and _v2, with the file's
subsampling), dvpp_jpeg_predict_dec_size and dvpp_jpeg_decode_async, which
completes on acl.rt.synchronize_stream. The output is YUV420SP, NV12
(PIXEL_FORMAT_YUV_SEMIPLANAR_420) or NV21 (PIXEL_FORMAT_YVU_SEMIPLANAR_420),
at 128 x 16 alignment; once the stream is synchronized the output desc's
width, height, strides and size are the decoded picture's and its ret code
is 0. A file the decoder refuses fails the task: synchronize_stream returns
ACL_ERROR_RT_AICPU_EXCEPTION (DVPP's work runs as AICPU tasks in CANN) and
the desc's ret code says why (and acl.get_recent_err_msg() names the
record's errno and that code): ACL_ERROR_INVALID_FILE (corrupt or truncated),
ACL_ERROR_UNSUPPORTED_JPEG (arithmetic coding, 12 bits, 4:1:1 ...),
ACL_ERROR_INVALID_PARAM (a side above 8192, an output smaller than the
picture: refused before anything is written). PNG decode works the same way
(a DAVINCI_OP_PNGD_DECODE task, DOC: DVPP PNGD): dvpp_png_get_image_info,
dvpp_png_predict_dec_size and dvpp_png_decode_async into
PIXEL_FORMAT_RGB_888, or PIXEL_FORMAT_UNKNOWN (RGBA8888 for a file with
alpha, RGB888 otherwise), rows of ALIGN(width, 128) pixels, ALIGN(height,
16) rows; a file it refuses gives the desc ACL_ERROR_INVALID_FILE (corrupt,
truncated, a bad CRC or Adler-32), ACL_ERROR_FORMAT_NOT_MATCH (an unknown
critical chunk) or ACL_ERROR_INVALID_PARAM.

VPC: dvpp_vpc_resize_async (a resize config: dvpp_create_resize_config,
dvpp_set_resize_config_interpolation 0 or 2 nearest, 1 bilinear),
dvpp_vpc_crop_async, dvpp_vpc_crop_and_paste_async, dvpp_vpc_batch_crop_async
and dvpp_vpc_batch_crop_and_paste_async (ROI configs: dvpp_create_roi_config
(left, right, top, bottom), dvpp_set_roi_config), dvpp_vpc_convert_color_async,
on YUV420SP NV12/NV21, YUYV packed 4:2:2, RGB888 and BGR888 pictures. A
picture, ROI or scale DVPP's rules refuse (width strides a multiple of 16,
height strides even, 10 x 6 .. 4096 x 4096 (an NV12 or NV21 input up to
8192 x 8192, height stride up to 16384: DVPP's 8K mode; crops and outputs
at most 4096 x 4096), crop offsets even and ends odd, paste left a
multiple of 16, scale 1/32 .. 16) returns ACL_ERROR_INVALID_PARAM
before anything is queued, its reason in acl.get_recent_err_msg().

JPEG encode works too, on the DVPP engine's JPEGE (a
DAVINCI_OP_JPEGE_ENCODE task, DOC: DVPP JPEGE): jpege configs and their
level (0 .. 100; 0 encodes as 100, as DVPP's does), dvpp_jpeg_predict_enc_size
(a true worst case: an output of that size never fails) and
dvpp_jpeg_encode_async, from an NV12 or NV21 picture desc as DVPP JPEGE
takes it (32 .. 8192 a side, even width and height, width stride a
multiple of 16, height stride even; ACL_ERROR_INVALID_PARAM at the call
otherwise) into device memory; synchronize_stream writes the file's size
through the size pointer, and fails with ACL_ERROR_RT_AICPU_EXCEPTION for
an output too small (nothing written past it).

Every other name pyACL has (VDEC, VENC, the other VPC calls) exists and
fails cleanly: calls that create an object return 0 (pyACL's null
handle), every other call returns ACL_ERROR_FEATURE_UNSUPPORTED (200006);
the message in acl.get_recent_err_msg() names the call."""

import ctypes
import errno as _errno
import threading

from davinci import dvpp as _dvpp
from davinci.errors import TaskFailedError

from . import _state as S
from . import constants as C
from . import rt
from ._state import AclFail, api

#: DVPP, JPEG, VDEC and VENC calls of pyACL (those of JPEGD and PNGD work)
UNSUPPORTED = """
dvpp_create_batch_pic_desc dvpp_create_channel dvpp_create_channel_desc
dvpp_create_jpege_config dvpp_create_pic_desc dvpp_create_resize_config
dvpp_create_roi_config dvpp_create_stream_desc dvpp_destroy_batch_pic_desc
dvpp_destroy_channel dvpp_destroy_channel_desc dvpp_destroy_jpege_config
dvpp_destroy_pic_desc dvpp_destroy_resize_config dvpp_destroy_roi_config
dvpp_destroy_stream_desc dvpp_get_pic_desc dvpp_get_pic_desc_data
dvpp_get_pic_desc_format dvpp_get_pic_desc_height dvpp_get_pic_desc_ret_code
dvpp_get_pic_desc_size dvpp_get_pic_desc_width dvpp_get_pic_desc_width_stride
dvpp_get_pic_desc_height_stride dvpp_get_stream_desc_data
dvpp_get_stream_desc_ret_code dvpp_get_stream_desc_size
dvpp_jpeg_decode_async dvpp_jpeg_encode_async dvpp_jpeg_get_image_info
dvpp_jpeg_predict_dec_size dvpp_jpeg_predict_enc_size
dvpp_set_jpege_config_level dvpp_set_pic_desc_data dvpp_set_pic_desc_format
dvpp_set_pic_desc_height dvpp_set_pic_desc_height_stride
dvpp_set_pic_desc_size dvpp_set_pic_desc_width dvpp_set_pic_desc_width_stride
dvpp_set_stream_desc_data dvpp_set_stream_desc_eos dvpp_set_stream_desc_format
dvpp_set_stream_desc_ret_code dvpp_set_stream_desc_size
dvpp_set_stream_desc_timestamp dvpp_set_channel_desc_mode
dvpp_vpc_batch_crop_and_paste_async dvpp_vpc_batch_crop_async
dvpp_vpc_crop_and_paste_async dvpp_vpc_crop_async dvpp_vpc_resize_async
dvpp_vpc_convert_color_async dvpp_vpc_pyr_down_async
dvpp_png_decode_async dvpp_png_get_image_info dvpp_png_predict_dec_size
vdec_create_channel vdec_create_channel_desc vdec_create_frame_config
vdec_destroy_channel vdec_destroy_channel_desc vdec_destroy_frame_config
vdec_get_channel_desc_out_mode vdec_send_frame vdec_send_skipped_frame
vdec_set_channel_desc_callback vdec_set_channel_desc_channel_id
vdec_set_channel_desc_entype vdec_set_channel_desc_out_mode
vdec_set_channel_desc_out_pic_format vdec_set_channel_desc_thread_id
vdec_set_channel_desc_out_pic_width vdec_set_channel_desc_out_pic_height
vdec_set_channel_desc_ref_frame_num
venc_create_channel venc_create_channel_desc venc_create_frame_config
venc_destroy_channel venc_destroy_channel_desc venc_destroy_frame_config
venc_get_frame_config_eos venc_get_frame_config_force_i_frame venc_send_frame
venc_set_channel_desc_callback venc_set_channel_desc_entype
venc_set_channel_desc_key_frame_interval venc_set_channel_desc_pic_format
venc_set_channel_desc_pic_height venc_set_channel_desc_pic_width
venc_set_channel_desc_thread_id venc_set_channel_desc_buf_addr
venc_set_channel_desc_buf_size venc_set_frame_config_eos
venc_set_frame_config_force_i_frame
dvpp_vpc_crop_resize_async dvpp_vpc_batch_crop_resize_async
dvpp_vpc_crop_resize_paste_async dvpp_vpc_batch_crop_resize_paste_async
dvpp_vpc_batch_crop_resize_make_border_async dvpp_vpc_make_border_async
dvpp_vpc_equalize_hist_async dvpp_vpc_calc_hist_async
dvpp_create_border_config dvpp_destroy_border_config
dvpp_set_border_config_value dvpp_set_border_config_border_type
dvpp_set_border_config_top dvpp_set_border_config_bottom
dvpp_set_border_config_left dvpp_set_border_config_right
""".split()
# The last block: CANN's VPC function list (acldvppVpcCropResizeAsync ...
# acldvppVpcCalcHistAsync) and acldvppBorderConfig calls, in pyACL's
# spelling as its Python reference gives it (dvpp_vpc_crop_resize_paste_async,
# dvpp_vpc_batch_crop_resize_make_border_async, dvpp_create_border_config).

#: the JPEG decode calls this module implements
JPEGD = """
dvpp_create_channel dvpp_create_channel_desc dvpp_create_pic_desc
dvpp_destroy_channel dvpp_destroy_channel_desc dvpp_destroy_pic_desc
dvpp_get_pic_desc_data dvpp_get_pic_desc_format dvpp_get_pic_desc_height
dvpp_get_pic_desc_ret_code dvpp_get_pic_desc_size dvpp_get_pic_desc_width
dvpp_get_pic_desc_width_stride dvpp_get_pic_desc_height_stride
dvpp_jpeg_decode_async dvpp_jpeg_get_image_info dvpp_jpeg_predict_dec_size
dvpp_set_pic_desc_data dvpp_set_pic_desc_format dvpp_set_pic_desc_height
dvpp_set_pic_desc_height_stride dvpp_set_pic_desc_size
dvpp_set_pic_desc_width dvpp_set_pic_desc_width_stride dvpp_jpeg_get_image_info_v2
""".split()
#: the VPC calls this module implements
VPC = """
dvpp_create_resize_config dvpp_destroy_resize_config
dvpp_set_resize_config_interpolation dvpp_get_resize_config_interpolation
dvpp_create_roi_config dvpp_destroy_roi_config dvpp_set_roi_config
dvpp_set_roi_config_left dvpp_set_roi_config_right dvpp_set_roi_config_top
dvpp_set_roi_config_bottom dvpp_create_batch_pic_desc dvpp_get_pic_desc
dvpp_destroy_batch_pic_desc dvpp_vpc_resize_async dvpp_vpc_crop_async
dvpp_vpc_crop_and_paste_async dvpp_vpc_batch_crop_async
dvpp_vpc_batch_crop_and_paste_async dvpp_vpc_convert_color_async
""".split()
#: the JPEG encode calls this module implements
JPEGE = """
dvpp_create_jpege_config dvpp_destroy_jpege_config
dvpp_set_jpege_config_level dvpp_get_jpege_config_level
dvpp_jpeg_predict_enc_size dvpp_jpeg_encode_async
""".split()
#: the PNG decode calls this module implements
PNGD = """
dvpp_png_decode_async dvpp_png_get_image_info dvpp_png_predict_dec_size
""".split()
UNSUPPORTED = [n for n in UNSUPPORTED if n not in JPEGD and n not in VPC
               and n not in JPEGE and n not in PNGD]

__all__ = ["dvpp_malloc", "dvpp_free", "UNSUPPORTED", "JPEGD", "VPC",
           "JPEGE", "PNGD"] + JPEGD + VPC + JPEGE + PNGD + UNSUPPORTED


def dvpp_malloc(size):
    """(dev_ptr, ret): device memory for media data."""
    return rt.malloc(size, C.ACL_MEM_MALLOC_HUGE_FIRST)


def dvpp_free(dev_ptr):
    """ret: free memory from dvpp_malloc."""
    return rt.free(dev_ptr)


def _unsupported(name: str):
    creates = "_create_" in name

    def call(*args, **kwargs):
        S.record_error(C.ACL_ERROR_FEATURE_UNSUPPORTED,
                       "the davinci device has no DVPP (image and video "
                       "processing) engine yet", "acl.media." + name)
        return 0 if creates else C.ACL_ERROR_FEATURE_UNSUPPORTED
    call.__name__ = name
    call.__doc__ = ("Not implemented: returns %s." % (
        "0 (a null handle)" if creates else "ACL_ERROR_FEATURE_UNSUPPORTED"))
    return call


globals().update({n: _unsupported(n) for n in UNSUPPORTED})


# ---------------------------------------------------------------------------
# JPEG decode (JPEGD)
# ---------------------------------------------------------------------------

#: output pixel format -> the engine's format name
_FORMATS = {C.PIXEL_FORMAT_YUV_SEMIPLANAR_420: "nv12",
            C.PIXEL_FORMAT_YVU_SEMIPLANAR_420: "nv21"}
#: DAVINCI_JPEGD_* -> acldvppJpegFormat
_CSS = {0: C.ACL_JPEG_CSS_GRAY, 1: C.ACL_JPEG_CSS_444,
        2: C.ACL_JPEG_CSS_422, 3: C.ACL_JPEG_CSS_420, 4: C.ACL_JPEG_CSS_440}
#: the decoder's errno -> the output desc's ret code
_RET_CODES = {-_errno.EINVAL: C.ACL_ERROR_INVALID_FILE,
              -_errno.EOPNOTSUPP: C.ACL_ERROR_UNSUPPORTED_JPEG,
              -_errno.E2BIG: C.ACL_ERROR_INVALID_PARAM,
              -_errno.ENOSPC: C.ACL_ERROR_INVALID_PARAM,
              -_errno.ENOMEM: C.ACL_ERROR_BAD_ALLOC}


class _Handles(dict):
    """The live objects of one kind by their handles; a handle that names
    none gets ACL_ERROR_INVALID_PARAM saying how to make one."""

    def __init__(self, kind: str, maker: str):
        super().__init__()
        self.kind, self.maker = kind, maker

    def find(self, handle):
        obj = self.get(handle)
        if obj is None:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%s %r does not exist: "
                          "make one with %s()" % (self.kind, handle,
                                                  self.maker))
        return obj


class _ChannelDesc:
    def __init__(self):
        self.handle = S.new_handle()
        self.created = False


class _PicDesc:
    """A picture desc; ``record`` is its device-side result record (the
    decoder writes it), held from a decode until the desc is destroyed;
    ``png``: the record is a PNG decode's."""

    FIELDS = ("data", "size", "format", "width", "height", "width_stride",
              "height_stride")

    def __init__(self):
        self.handle = S.new_handle()
        for f in self.FIELDS:
            setattr(self, f, 0)
        self.ret_code = 0
        self.record = None          # davinci.Buffer
        self.png = False

    def settle(self) -> None:
        """Take in what a completed decode wrote (its record), once."""
        if self.record is None or self.record.freed:
            return
        r = (_dvpp.read_png_result if self.png else _dvpp.read_result)(
            self.record)
        if not r.done:
            return
        if r.ok:
            self.width, self.height = r.width, r.height
            self.width_stride = r.width_stride
            self.height_stride = r.height_stride
            self.size = r.out_size
            self.ret_code = 0
        else:
            self.ret_code = (_PNG_RET_CODES if self.png else _RET_CODES).get(
                r.error, C.ACL_ERROR_FAILURE)
            _refusals.note = "the %s's result record: -%s, the desc's ret " \
                "code %d (%s)" % ("PNG decode" if self.png else
                                  "JPEG decode", r.error_name, self.ret_code,
                                  C.ERROR_NAMES.get(self.ret_code, "?"))
        # read: nothing new until the next
        _dvpp.mark_pending(self.record, size=_dvpp.PNG_RESULT_SIZE
                           if self.png else _dvpp.RESULT_SIZE)

    def task_done(self, ok: bool) -> None:
        """Its decode task completed: a task the stream aborted (an
        earlier task failed) wrote nothing, and its desc says so."""
        if self.record is None or self.record.freed:
            return
        wrote = (_dvpp.read_png_result if self.png
                 else _dvpp.read_result)(self.record).done
        self.settle()
        if not ok and not wrote:
            self.ret_code = C.ACL_ERROR_RT_AICPU_EXCEPTION

    def take_record(self, dev, png: bool):
        """The desc's result record on ``dev``, for a JPEG (or ``png``)
        decode, marked pending."""
        size = _dvpp.PNG_RESULT_SIZE if png else _dvpp.RESULT_SIZE
        if self.record is not None and not self.record.freed and (
                self.record.device is not dev or self.png != png):
            self.record.free()
        if self.record is None or self.record.freed:
            self.record = dev.malloc(size, "normal_only")
        self.png = png
        _dvpp.mark_pending(self.record, size=size)
        return self.record


#: this thread's last refused decode, as its record says it (settle()
#: notes it as the failed task completes; synchronize_stream adds it to
#: the failure's message: take_refusal())
_refusals = threading.local()


def take_refusal() -> str:
    """The last decode refusal this thread took in, once ("" if none)."""
    note = getattr(_refusals, "note", "")
    _refusals.note = ""
    return note


_channels = _Handles("channel desc", "dvpp_create_channel_desc")
_channel = _channels.find
_pics = _Handles("picture desc", "dvpp_create_pic_desc")
_pic = _pics.find


def dvpp_create_channel_desc():
    """A channel desc (its handle; 0 would be a failure)."""
    ch = _ChannelDesc()
    _channels[ch.handle] = ch
    return ch.handle


@api()
def dvpp_destroy_channel_desc(channel_desc):
    """Destroy a channel desc; ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED
    while its channel exists (dvpp_destroy_channel first)."""
    if _channel(channel_desc).created:
        raise AclFail(C.ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED,
                      "channel desc %r still has its channel: call "
                      "dvpp_destroy_channel first" % (channel_desc,))
    del _channels[channel_desc]


@api()
def dvpp_create_channel(channel_desc):
    """Open the DVPP channel of a desc, on the current device."""
    S.require_context()
    _channel(channel_desc).created = True


@api()
def dvpp_destroy_channel(channel_desc):
    ch = _channel(channel_desc)
    if not ch.created:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "channel desc %r has no "
                      "channel: dvpp_create_channel it first"
                      % (channel_desc,))
    ch.created = False


def dvpp_create_pic_desc():
    """A picture desc (its handle), every field 0."""
    p = _PicDesc()
    _pics[p.handle] = p
    return p.handle


@api()
def dvpp_destroy_pic_desc(pic_desc):
    p = _pic(pic_desc)
    del _pics[pic_desc]
    if p.record is not None and not p.record.freed:
        p.record.free()


def _setter(field: str):
    def set_field(pic_desc, value):
        p = _pic(pic_desc)
        if not isinstance(value, int) or isinstance(value, bool) or \
                value < 0:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%s must be an int >= 0,"
                          " not %r" % (field, value))
        p.settle()
        setattr(p, field, value)
    set_field.__name__ = "dvpp_set_pic_desc_" + field
    set_field.__doc__ = "Set a picture desc's %s." % field
    return api()(set_field)


def _getter(field: str):
    def get_field(pic_desc):
        """The field's value (0 for an unknown desc, as pyACL's)."""
        p = _pics.get(pic_desc)
        if p is None:
            return 0
        p.settle()
        return getattr(p, field)
    get_field.__name__ = "dvpp_get_pic_desc_" + field
    return get_field


for _f in _PicDesc.FIELDS:
    globals()["dvpp_set_pic_desc_" + _f] = _setter(_f)
    globals()["dvpp_get_pic_desc_" + _f] = _getter(_f)
globals()["dvpp_get_pic_desc_ret_code"] = _getter("ret_code")
del _f


def _read(data, size) -> bytes:
    """``size`` bytes at ``data``: device memory (dvpp_malloc) or host
    memory of this process."""
    if not isinstance(data, int) or not data or not isinstance(size, int) \
            or size <= 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "data must be a pointer and "
                      "size > 0, not %r, %r" % (data, size))
    for d in list(S.devices.values()):
        hit = d.find_device_ptr(data)
        if hit is not None:
            buf, off = hit
            if off + size > buf.size:
                raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%d bytes at %#x "
                              "run past its allocation" % (size, data))
            return buf.read(size, off)
    from .util import _check_host
    _check_host(data, size, "acl.media")
    return ctypes.string_at(data, size)


def _header(data, size) -> _dvpp.JpegHeader:
    try:
        h = _dvpp.read_header(_read(data, size))
    except ValueError as exc:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "not a JPEG the header of "
                      "which can be read: %s" % exc) from None
    if not h.supported:
        raise AclFail(C.ACL_ERROR_UNSUPPORTED_JPEG, "a %dx%d JPEG of %d "
                      "components (SOF%d, %d bits) the DVPP JPEGD does not "
                      "decode" % (h.width, h.height, h.components, h.sof,
                                  h.precision))
    return h


@api(3, (0, 0, 0))
def dvpp_jpeg_get_image_info(data, size):
    """(width, height, components, ret) of the JPEG at ``data`` (host or
    device memory); ACL_ERROR_UNSUPPORTED_JPEG for one the engine does not
    decode."""
    h = _header(data, size)
    return h.width, h.height, h.components


@api(4, (0, 0, 0, C.ACL_JPEG_CSS_UNKNOWN))
def dvpp_jpeg_get_image_info_v2(data, size):
    """(width, height, components, format, ret): format an
    acldvppJpegFormat (ACL_JPEG_CSS_420 ...)."""
    h = _header(data, size)
    return h.width, h.height, h.components, _CSS[h.subsampling]


@api(1, (0,))
def dvpp_jpeg_predict_dec_size(data, size, output_pixel_format):
    """(size, ret): the bytes the decode writes for that output format."""
    if output_pixel_format not in _FORMATS:
        raise AclFail(C.ACL_ERROR_FEATURE_UNSUPPORTED, "the JPEG decode "
                      "writes PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1) or "
                      "PIXEL_FORMAT_YVU_SEMIPLANAR_420 (2), not %r"
                      % (output_pixel_format,))
    return _header(data, size).out_size


@api()
def dvpp_jpeg_decode_async(channel_desc, data, size, out_pic_desc, stream):
    """Queue the decode of the ``size``-byte JPEG at ``data`` (device
    memory) on ``stream`` into the output desc's data (its size the
    capacity, its format NV12 or NV21); it completes on
    acl.rt.synchronize_stream, which then also fills the desc."""
    ch = _channel(channel_desc)
    if not ch.created:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "channel desc %r has no "
                      "channel: call dvpp_create_channel" % (channel_desc,))
    p = _pic(out_pic_desc)
    s = S.get_stream(stream)
    p.settle()
    fmt = _FORMATS.get(p.format)
    if fmt is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "the output desc's format "
                      "%r: the JPEG decode writes PIXEL_FORMAT_YUV_SEMIPLANAR"
                      "_420 (1) or PIXEL_FORMAT_YVU_SEMIPLANAR_420 (2)"
                      % (p.format,))
    if not p.data or not p.size:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "the output desc needs its "
                      "data and size (dvpp_set_pic_desc_data/_size)")
    record = p.take_record(s.ctx.device.dev, False)
    seq = _dvpp.launch_jpeg_decode(s.stream, data, size, p.data, p.size,
                                   record.dev_addr, fmt)
    s.stream.after_task(seq, p.task_done)


# ---------------------------------------------------------------------------
# VPC: resize, crop, crop and paste, batch crop, colour conversion
# ---------------------------------------------------------------------------

#: acldvppPixelFormat -> the engine's VPC format name
_VPC_FORMATS = {C.PIXEL_FORMAT_YUV_SEMIPLANAR_420: "nv12",
                C.PIXEL_FORMAT_YVU_SEMIPLANAR_420: "nv21",
                C.PIXEL_FORMAT_YUYV_PACKED_422: "yuyv",
                C.PIXEL_FORMAT_RGB_888: "rgb",
                C.PIXEL_FORMAT_BGR_888: "bgr"}
#: acldvppSetResizeConfigInterpolation's values -> the engine's
_INTERPOLATIONS = {C.DVPP_INTERPOLATION_DEFAULT: "nearest",
                   C.DVPP_INTERPOLATION_BILINEAR: "bilinear",
                   C.DVPP_INTERPOLATION_NEAREST: "nearest"}
#: DVPP's limit on the crops of one batch call
_MAX_BATCH_ROIS = 256


class _ResizeConfig:
    def __init__(self):
        self.handle = S.new_handle()
        self.interpolation = C.DVPP_INTERPOLATION_DEFAULT


class _RoiConfig:
    def __init__(self, left, right, top, bottom):
        self.handle = S.new_handle()
        self.left, self.right, self.top, self.bottom = left, right, top, \
            bottom

    def rect(self) -> _dvpp.Rect:
        return _dvpp.Rect(self.left, self.top, self.right, self.bottom)


class _BatchPicDesc:
    def __init__(self, size: int):
        self.handle = S.new_handle()
        self.pics = [_PicDesc() for _ in range(size)]


_resize_configs = _Handles("resize config", "dvpp_create_resize_config")
_resize_config = _resize_configs.find
_rois = _Handles("ROI config", "dvpp_create_roi_config")
_roi = _rois.find
_batches = _Handles("batch picture desc", "dvpp_create_batch_pic_desc")
_batch = _batches.find


def _is_uint(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def dvpp_create_resize_config():
    """A resize config (its handle), interpolation 0: DVPP's default."""
    cfg = _ResizeConfig()
    _resize_configs[cfg.handle] = cfg
    return cfg.handle


@api()
def dvpp_destroy_resize_config(resize_config):
    _resize_config(resize_config)
    del _resize_configs[resize_config]


@api()
def dvpp_set_resize_config_interpolation(resize_config, interpolation):
    """Set the resize's algorithm: 0 (the default, DVPP's own nearest
    neighbour: here OpenCV's INTER_NEAREST), 1 (OpenCV's INTER_LINEAR) or 2
    (OpenCV's INTER_NEAREST)."""
    cfg = _resize_config(resize_config)
    if interpolation not in _INTERPOLATIONS:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "interpolation %r: 0 "
                      "(default), 1 (bilinear) or 2 (nearest)"
                      % (interpolation,))
    cfg.interpolation = interpolation


def dvpp_get_resize_config_interpolation(resize_config):
    """The config's interpolation (0 for an unknown config)."""
    cfg = _resize_configs.get(resize_config)
    return cfg.interpolation if cfg is not None else 0


def dvpp_create_roi_config(left, right, top, bottom):
    """A ROI config (its handle; 0 for a negative offset or a right or
    bottom before its left or top): the first and last column and row, as
    pyACL orders them (left, right, top, bottom)."""
    if not all(_is_uint(v) for v in (left, right, top, bottom)) or \
            right < left or bottom < top:
        S.record_error(C.ACL_ERROR_INVALID_PARAM, "ROI (%r, %r, %r, %r): "
                       "offsets >= 0, left <= right, top <= bottom" % (
                           left, right, top, bottom),
                       "acl.media.dvpp_create_roi_config")
        return 0
    roi = _RoiConfig(left, right, top, bottom)
    _rois[roi.handle] = roi
    return roi.handle


@api()
def dvpp_destroy_roi_config(roi_config):
    _roi(roi_config)
    del _rois[roi_config]


@api()
def dvpp_set_roi_config(roi_config, left, right, top, bottom):
    roi = _roi(roi_config)
    if not all(_is_uint(v) for v in (left, right, top, bottom)) or \
            right < left or bottom < top:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "ROI (%r, %r, %r, %r): "
                      "offsets >= 0, left <= right, top <= bottom"
                      % (left, right, top, bottom))
    roi.left, roi.right, roi.top, roi.bottom = left, right, top, bottom


def _roi_setter(field: str):
    def set_field(roi_config, value):
        roi = _roi(roi_config)
        if not _is_uint(value):
            raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%s must be an int >= "
                          "0, not %r" % (field, value))
        setattr(roi, field, value)
    set_field.__name__ = "dvpp_set_roi_config_" + field
    set_field.__doc__ = "Set a ROI config's %s offset." % field
    return api()(set_field)


for _f in ("left", "right", "top", "bottom"):
    globals()["dvpp_set_roi_config_" + _f] = _roi_setter(_f)
del _f


def dvpp_create_batch_pic_desc(batch_size):
    """A batch of ``batch_size`` picture descs (its handle; 0 for a size
    outside 1 .. 256)."""
    if not _is_uint(batch_size) or not 1 <= batch_size <= _MAX_BATCH_ROIS:
        S.record_error(C.ACL_ERROR_INVALID_PARAM, "batch size %r: 1 .. %d"
                       % (batch_size, _MAX_BATCH_ROIS),
                       "acl.media.dvpp_create_batch_pic_desc")
        return 0
    b = _BatchPicDesc(batch_size)
    _batches[b.handle] = b
    for p in b.pics:
        _pics[p.handle] = p
    return b.handle


def dvpp_get_pic_desc(batch_pic_desc, index):
    """The picture desc at ``index`` of a batch (0 for an unknown batch or
    an index outside it)."""
    b = _batches.get(batch_pic_desc)
    if b is None or not _is_uint(index) or index >= len(b.pics):
        S.record_error(C.ACL_ERROR_INVALID_PARAM, "no picture %r in batch "
                       "desc %r" % (index, batch_pic_desc),
                       "acl.media.dvpp_get_pic_desc")
        return 0
    return b.pics[index].handle


@api()
def dvpp_destroy_batch_pic_desc(batch_pic_desc):
    b = _batch(batch_pic_desc)
    del _batches[batch_pic_desc]
    for p in b.pics:
        _pics.pop(p.handle, None)
        if p.record is not None and not p.record.freed:
            p.record.free()


def _picture(p: _PicDesc, what: str) -> _dvpp.Picture:
    """The engine's layout of a picture desc, its data and size checked."""
    p.settle()
    fmt = _VPC_FORMATS.get(p.format)
    if fmt is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%s's format %r: VPC takes "
                      "PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1), "
                      "_YVU_SEMIPLANAR_420 (2), _YUYV_PACKED_422 (7), "
                      "_RGB_888 (12) or _BGR_888 (13)" % (what, p.format))
    pic = _dvpp.Picture(fmt, p.width, p.height, p.width_stride,
                        p.height_stride)
    if not p.data:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%s has no data: "
                      "dvpp_set_pic_desc_data it" % what)
    return pic


def _checked(op: str, src: _dvpp.Picture, dst: _dvpp.Picture,
             crop: _dvpp.Rect, paste: _dvpp.Rect, interpolation: str,
             sp: _PicDesc, dp: _PicDesc) -> None:
    try:
        _dvpp.check_vpc(op, src, dst, crop, paste, interpolation)
    except _dvpp.VpcError as exc:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, str(exc)) from None
    for what, p, pic in (("the input desc", sp, src),
                         ("the output desc", dp, dst)):
        if p.size < pic.size:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%s's size %d is below "
                          "its picture's %d bytes (width stride x height "
                          "stride%s)" % (what, p.size, pic.size,
                                         " x 3 / 2" if pic.format in (
                                             "nv12", "nv21") else ""))


def _vpc_channel(channel_desc) -> None:
    if not _channel(channel_desc).created:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "channel desc %r has no "
                      "channel: call dvpp_create_channel" % (channel_desc,))


def _launch(op, stream, jobs) -> None:
    """Check every (src desc, dst desc, crop, paste, interpolation) of
    ``jobs``, then queue one VPC task each on ``stream``."""
    s = S.get_stream(stream)
    checked = []
    for i, (sp, dp, crop, paste, interp) in enumerate(jobs):
        tag = " %d" % i if len(jobs) > 1 else ""
        src = _picture(sp, "the input desc" + tag)
        dst = _picture(dp, "the output desc" + tag)
        crop = crop or src.whole()
        paste = paste or dst.whole()
        _checked(op, src, dst, crop, paste, interp, sp, dp)
        checked.append((sp, src, dp, dst, crop, paste, interp))
    for sp, src, dp, dst, crop, paste, interp in checked:
        _dvpp.launch_vpc(s.stream, op, sp.data, src, dp.data, dst, crop,
                         paste, interp)
        dp.ret_code = 0


@api()
def dvpp_vpc_resize_async(channel_desc, in_pic_desc, out_pic_desc,
                          resize_config, stream):
    """Queue the resize of the input picture to the output desc's size
    (DOC: DVPP VPC): the config's interpolation, formats of one family
    (YUV420SP and YUYV, or RGB and BGR), DVPP's strides; completes on
    acl.rt.synchronize_stream."""
    _vpc_channel(channel_desc)
    cfg = _resize_config(resize_config)
    _launch("VPC_RESIZE", stream, [(_pic(in_pic_desc), _pic(out_pic_desc),
                                    None, None,
                                    _INTERPOLATIONS[cfg.interpolation])])


@api()
def dvpp_vpc_crop_async(channel_desc, in_pic_desc, out_pic_desc, crop_area,
                        stream):
    """Queue the crop of ``crop_area`` (even left and top, odd right and
    bottom) resized to the whole output picture."""
    _vpc_channel(channel_desc)
    _launch("VPC_CROP", stream, [(_pic(in_pic_desc), _pic(out_pic_desc),
                                  _roi(crop_area).rect(), None, "bilinear")])


@api()
def dvpp_vpc_crop_and_paste_async(channel_desc, in_pic_desc, out_pic_desc,
                                  crop_area, paste_area, stream):
    """Queue the crop of ``crop_area`` resized into ``paste_area`` of the
    output (its left a multiple of 16), the rest of the output untouched."""
    _vpc_channel(channel_desc)
    _launch("VPC_CROP", stream, [(_pic(in_pic_desc), _pic(out_pic_desc),
                                  _roi(crop_area).rect(),
                                  _roi(paste_area).rect(), "bilinear")])


def _batch_jobs(src_batch, roi_nums, dst_batch, crops, pastes):
    sb, db = _batch(src_batch), _batch(dst_batch)
    if not isinstance(roi_nums, (list, tuple)) or \
            len(roi_nums) != len(sb.pics) or \
            not all(_is_uint(n) and n > 0 for n in roi_nums):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "roi_nums must list, for "
                      "each of the %d input pictures, its crops (> 0), not %r"
                      % (len(sb.pics), roi_nums))
    total = sum(roi_nums)
    if total > min(_MAX_BATCH_ROIS, len(db.pics)) or len(crops) != total or \
            (pastes is not None and len(pastes) != total):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "%d crops (roi_nums %r) for "
                      "%d crop areas%s and %d output pictures (at most %d)"
                      % (total, roi_nums, len(crops), "" if pastes is None
                         else ", %d paste areas" % len(pastes),
                         len(db.pics), _MAX_BATCH_ROIS))
    jobs, k = [], 0
    for i, n in enumerate(roi_nums):
        for _ in range(n):
            jobs.append((sb.pics[i], db.pics[k], _roi(crops[k]).rect(),
                         None if pastes is None else _roi(pastes[k]).rect(),
                         "bilinear"))
            k += 1
    return jobs


@api(1)
def dvpp_vpc_batch_crop_async(channel_desc, src_batch_pic_descs, roi_nums,
                              dst_batch_pic_descs, crop_areas, stream):
    """(dst_batch_pic_descs, ret): queue roi_nums[i] crops of input i, the
    crop areas in order, each resized into the next output picture; one
    VPC_CROP task each, all checked before any is queued."""
    _vpc_channel(channel_desc)
    _launch("VPC_CROP", stream, _batch_jobs(
        src_batch_pic_descs, roi_nums, dst_batch_pic_descs, crop_areas,
        None))
    return dst_batch_pic_descs


@api(1)
def dvpp_vpc_batch_crop_and_paste_async(channel_desc, src_batch_pic_descs,
                                        roi_nums, dst_batch_pic_descs,
                                        crop_areas, paste_areas, stream):
    """(dst_batch_pic_descs, ret): the batch crop, each crop resized into
    its paste area of its output picture."""
    _vpc_channel(channel_desc)
    _launch("VPC_CROP", stream, _batch_jobs(
        src_batch_pic_descs, roi_nums, dst_batch_pic_descs, crop_areas,
        paste_areas))
    return dst_batch_pic_descs


@api()
def dvpp_vpc_convert_color_async(channel_desc, in_pic_desc, out_pic_desc,
                                 stream):
    """Queue the conversion of the input picture to the output desc's
    format (YUV420SP NV12/NV21, YUYV, RGB888, BGR888; JFIF full-range
    BT.601), the same size: an output width, height or stride of 0 is
    taken from the input (the strides at DVPP's alignment) and set in the
    desc."""
    _vpc_channel(channel_desc)
    sp, dp = _pic(in_pic_desc), _pic(out_pic_desc)
    sp.settle()
    dp.settle()
    if not dp.width and not dp.height:
        dp.width, dp.height = sp.width, sp.height
    if not dp.width_stride or not dp.height_stride:
        fmt = _VPC_FORMATS.get(dp.format)
        if fmt is not None and dp.width and dp.height:
            a = _dvpp.Picture.aligned(fmt, dp.width, dp.height)
            dp.width_stride = dp.width_stride or a.width_stride
            dp.height_stride = dp.height_stride or a.height_stride
    _launch("VPC_CONVERT_COLOR", stream, [(sp, dp, None, None, "bilinear")])
# ---------------------------------------------------------------------------
# JPEG encode (JPEGE)
# ---------------------------------------------------------------------------

from davinci import jpege as _jpege  # noqa: E402
from davinci.errors import InvalidArgumentError  # noqa: E402

#: DVPP JPEGE's smallest side (CANN's JPEGE restrictions: 32 x 32 ..
#: 8192 x 8192)
JPEGE_MIN_DIM = 32
#: acldvppPixelFormat's YUV422 packed formats, which DVPP JPEGE takes and
#: this engine does not encode (yet)
_PACKED_422 = {7: "YUYV", 8: "UYVY", 9: "YVYU", 10: "VYUY"}


class _JpegeConfig:
    def __init__(self):
        self.handle = S.new_handle()
        self.level = 100


_jpege_configs = _Handles("jpege config", "dvpp_create_jpege_config")
_jpege_config = _jpege_configs.find


def dvpp_create_jpege_config():
    """A JPEG encode config (its handle), level 100."""
    c = _JpegeConfig()
    _jpege_configs[c.handle] = c
    return c.handle


@api()
def dvpp_destroy_jpege_config(jpege_config):
    _jpege_config(jpege_config)
    del _jpege_configs[jpege_config]


@api()
def dvpp_set_jpege_config_level(jpege_config, level):
    """The encode's quality: 0 .. 100, a higher level a better picture
    (libjpeg's quality scaling); 0 encodes as 100, as DVPP's does."""
    c = _jpege_config(jpege_config)
    if isinstance(level, bool) or not isinstance(level, int) or \
            not 0 <= level <= 100:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "jpege level %r: an int of "
                      "0 .. 100" % (level,))
    c.level = level


def dvpp_get_jpege_config_level(jpege_config):
    """The config's level (0 for an unknown config, as pyACL's)."""
    c = _jpege_configs.get(jpege_config)
    return 0 if c is None else c.level


def _jpege_input(pic_desc) -> _PicDesc:
    """The input desc, checked as DVPP JPEGE checks it."""
    p = _pic(pic_desc)
    p.settle()
    if p.format in _PACKED_422:
        raise AclFail(C.ACL_ERROR_FEATURE_UNSUPPORTED, "JPEG encode of YUV422 "
                      "packed %s: this engine encodes YUV420SP only "
                      "(PIXEL_FORMAT_YUV_SEMIPLANAR_420 or _YVU_)"
                      % _PACKED_422[p.format])
    if p.format not in _FORMATS:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "the input desc's format %r: "
                      "the JPEG encode reads PIXEL_FORMAT_YUV_SEMIPLANAR_420 "
                      "(1) or PIXEL_FORMAT_YVU_SEMIPLANAR_420 (2)"
                      % (p.format,))
    w, h, ws, hs = p.width, p.height, p.width_stride, p.height_stride
    if not (JPEGE_MIN_DIM <= w <= _jpege.MAX_DIM and
            JPEGE_MIN_DIM <= h <= _jpege.MAX_DIM) or w % 2 or h % 2:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "JPEG encode of %d x %d: "
                      "DVPP JPEGE takes even sides of %d .. %d"
                      % (w, h, JPEGE_MIN_DIM, _jpege.MAX_DIM))
    try:
        _jpege.check_picture(w, h, ws, hs)
    except InvalidArgumentError as exc:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, str(exc)) from None
    return p


@api(1, (0,))
def dvpp_jpeg_predict_enc_size(pic_desc, jpege_config):
    """(size, ret): the largest file the input desc's picture encodes to
    at any level and content; an output of that size never fails."""
    _jpege_config(jpege_config)
    p = _jpege_input(pic_desc)
    return _jpege.predict_size(p.width, p.height)


def _encode_done(record, size_ptr: int):
    """What the stream runs once the encode task completed (or was
    aborted): the file's size into the caller's int32 at ``size_ptr``
    when it succeeded, and the record freed either way."""
    def done(ok: bool) -> None:
        if record.freed:
            return
        r = _jpege.read_result(record)
        if ok and r.done and r.ok:
            ctypes.c_int32.from_address(size_ptr).value = r.size
        record.free()
    return done


@api()
def dvpp_jpeg_encode_async(channel_desc, in_pic_desc, data, size,
                           jpege_config, stream):
    """Queue the encode of the input desc's picture (device memory) on
    ``stream`` into ``data`` (device memory); ``size`` points to an int32
    (numpy_to_ptr or bytes_to_ptr of np.array([n], np.int32)): the
    output's capacity, and once acl.rt.synchronize_stream returned, the
    file's size."""
    ch = _channel(channel_desc)
    if not ch.created:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "channel desc %r has no "
                      "channel: call dvpp_create_channel" % (channel_desc,))
    level = _jpege_config(jpege_config).level
    p = _jpege_input(in_pic_desc)
    s = S.get_stream(stream)
    from .util import _check_host
    try:
        _check_host(size, 4, "acl.media.dvpp_jpeg_encode_async size")
    except (TypeError, ValueError) as exc:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "size must point to an "
                      "int32 in host memory: %s" % exc) from None
    cap = ctypes.c_int32.from_address(size).value
    if cap <= 0 or not data:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "the output needs its data "
                      "and a size > 0 (dvpp_jpeg_predict_enc_size), not %r, "
                      "%d" % (data, cap))
    if not p.data or not p.size:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "the input desc needs its "
                      "data and size (dvpp_set_pic_desc_data/_size)")
    dev = s.ctx.device.dev
    record = dev.malloc(_jpege.RESULT_SIZE, "normal_only")
    try:
        _jpege.mark_pending(record)
        seq = _jpege.launch_jpeg_encode(
            s.stream, p.data, p.size, data, cap, record.dev_addr, p.width,
            p.height, p.width_stride, p.height_stride, level or 100,
            _FORMATS[p.format])
    except InvalidArgumentError as exc:
        record.free()
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, str(exc)) from None
    except BaseException:
        record.free()
        raise
    s.stream.after_task(seq, _encode_done(record, size))


# ---------------------------------------------------------------------------
# PNG decode (PNGD)
# ---------------------------------------------------------------------------

#: the output desc's format -> the engine's (acldvppPngDecodeAsync takes
#: these two; dvpp_png_predict_dec_size RGBA_8888 too)
_PNG_FORMATS = {C.PIXEL_FORMAT_RGB_888: "rgb888",
                C.PIXEL_FORMAT_UNKNOWN: "auto"}
_PNG_PREDICT = (C.PIXEL_FORMAT_RGB_888, C.PIXEL_FORMAT_RGBA_8888,
                C.PIXEL_FORMAT_UNKNOWN)
#: DVPP PNGD's smallest and largest sides (acldvppPngPredictDecSize's)
PNG_MIN_DIM, PNG_MAX_DIM = 32, _dvpp.PNG_MAX_DIM
#: the decoder's errno -> the output desc's ret code
_PNG_RET_CODES = {-_errno.EINVAL: C.ACL_ERROR_INVALID_FILE,
                  -_errno.EOPNOTSUPP: C.ACL_ERROR_FORMAT_NOT_MATCH,
                  -_errno.E2BIG: C.ACL_ERROR_INVALID_PARAM,
                  -_errno.ENOSPC: C.ACL_ERROR_INVALID_PARAM,
                  -_errno.ENOMEM: C.ACL_ERROR_BAD_ALLOC}


def _png_header(data, size) -> _dvpp.PngHeader:
    if isinstance(size, int) and 0 < size <= 29:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "a PNG of %d bytes: it must "
                      "be larger than 29 (signature and IHDR)" % size)
    try:
        return _dvpp.read_png_header(_read(data, size))
    except ValueError as exc:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "not a PNG the header of "
                      "which can be read: %s" % exc) from None


@api(3, (0, 0, 0))
def dvpp_png_get_image_info(data, size):
    """(width, height, components, ret) of the PNG at ``data`` (host or
    device memory): components 1 grey, 2 grey + alpha, 3 RGB or palette, 4
    RGBA (IHDR's colour type, as acldvppPngGetImageInfo; its V100 refuses
    palette files, which this engine decodes)."""
    h = _png_header(data, size)
    return h.width, h.height, h.components


@api(1, (0,))
def dvpp_png_predict_dec_size(data, size, output_pixel_format):
    """(size, ret): the output buffer the decode needs, as
    acldvppPngPredictDecSize computes it: ALIGN(height, 16) rows of
    ALIGN(width, 128) pixels of 3 (RGB_888) or 4 (RGBA_8888, UNKNOWN)
    samples of the file's bit depth, 8 at least (so a 16-bit file's is
    twice what the engine writes); sides 32 .. 4096."""
    if output_pixel_format not in _PNG_PREDICT:
        raise AclFail(C.ACL_ERROR_FORMAT_NOT_MATCH, "the PNG decode writes "
                      "PIXEL_FORMAT_RGB_888 (12), PIXEL_FORMAT_RGBA_8888 (16)"
                      " or PIXEL_FORMAT_UNKNOWN (10000), not %r"
                      % (output_pixel_format,))
    h = _png_header(data, size)
    for side, v in (("width", h.width), ("height", h.height)):
        if not PNG_MIN_DIM <= v <= PNG_MAX_DIM:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM, "PNG %s %d: DVPP PNGD "
                          "takes %d .. %d" % (side, v, PNG_MIN_DIM,
                                              PNG_MAX_DIM))
    ch = 3 if output_pixel_format == C.PIXEL_FORMAT_RGB_888 else 4
    ws = _dvpp._align(h.width, _dvpp.WIDTH_ALIGN)
    row = (ws * max(8, h.bit_depth) * ch + 7) >> 3
    return row * _dvpp._align(h.height, _dvpp.HEIGHT_ALIGN)


@api()
def dvpp_png_decode_async(channel_desc, data, size, out_pic_desc, stream):
    """Queue the decode of the ``size``-byte PNG at ``data`` (device
    memory) on ``stream`` into the output desc's data (its size the
    capacity, its format PIXEL_FORMAT_RGB_888 or PIXEL_FORMAT_UNKNOWN:
    RGBA8888 for a file with alpha); it completes on
    acl.rt.synchronize_stream, which then also fills the desc's width,
    height, strides (width_stride in bytes) and size."""
    ch = _channel(channel_desc)
    if not ch.created:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "channel desc %r has no "
                      "channel: call dvpp_create_channel" % (channel_desc,))
    p = _pic(out_pic_desc)
    s = S.get_stream(stream)
    p.settle()
    fmt = _PNG_FORMATS.get(p.format)
    if fmt is None:
        raise AclFail(C.ACL_ERROR_FORMAT_NOT_MATCH, "the output desc's "
                      "format %r: the PNG decode writes PIXEL_FORMAT_RGB_888 "
                      "(12) or PIXEL_FORMAT_UNKNOWN (10000)" % (p.format,))
    if not p.data or not p.size:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "the output desc needs its "
                      "data and size (dvpp_set_pic_desc_data/_size)")
    record = p.take_record(s.ctx.device.dev, True)
    seq = _dvpp.launch_png_decode(s.stream, data, size, p.data, p.size,
                                  record.dev_addr, fmt)
    s.stream.after_task(seq, p.task_done)
