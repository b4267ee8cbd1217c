# SPDX-License-Identifier: GPL-2.0
"""acl.media: DVPP. JPEG decode works, on the device's DVPP engine (a
DAVINCI_OP_JPEGD_DECODE task on the stream, DOC: DVPP JPEGD): channel
descs and channels, picture descs and their setters and getters,
dvpp_malloc / dvpp_free (device memory any task may use),
dvpp_jpeg_get_image_info (and _v2, with the file's subsampling),
dvpp_jpeg_predict_dec_size and dvpp_jpeg_decode_async, which completes on
acl.rt.synchronize_stream, as Ascend's samples call them. The output is
YUV420SP, NV12 (PIXEL_FORMAT_YUV_SEMIPLANAR_420) or NV21
(PIXEL_FORMAT_YVU_SEMIPLANAR_420), at 128 x 16 alignment; once the stream
is synchronized the output desc's width, height, strides and size are the
decoded picture's and its ret code is 0. A file the decoder refuses fails
the task: synchronize_stream returns ACL_ERROR_RT_AICPU_EXCEPTION (DVPP's
work runs as AICPU tasks in CANN) and the desc's ret code says why:
ACL_ERROR_INVALID_FILE (corrupt or truncated), ACL_ERROR_UNSUPPORTED_JPEG
(arithmetic coding, 12 bits, 4:1:1 ...), ACL_ERROR_INVALID_PARAM (a side
above 8192, an output smaller than the picture: refused before anything is
written). PNG decode works the same way (a DAVINCI_OP_PNGD_DECODE task,
DOC: DVPP PNGD): dvpp_png_get_image_info, dvpp_png_predict_dec_size and
dvpp_png_decode_async into PIXEL_FORMAT_RGB_888, or PIXEL_FORMAT_UNKNOWN
(RGBA8888 for a file with alpha, RGB888 otherwise), rows of ALIGN(width,
128) pixels, ALIGN(height, 16) rows; a file it refuses gives the desc
ACL_ERROR_INVALID_FILE (corrupt, truncated, a bad CRC or Adler-32),
ACL_ERROR_FORMAT_NOT_MATCH (an unknown critical chunk) or
ACL_ERROR_INVALID_PARAM. Every other name pyACL has (JPEG encode, VPC, VDEC, VENC)
exists and fails cleanly: calls that create an object return 0 (pyACL's
null handle), every other call returns ACL_ERROR_FEATURE_UNSUPPORTED
(200006); the message in acl.get_recent_err_msg() names the call."""

import ctypes
import errno as _errno

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
#: the PNG decode calls this module implements
PNGD = """
dvpp_png_decode_async dvpp_png_get_image_info dvpp_png_predict_dec_size
""".split()
UNSUPPORTED = [n for n in UNSUPPORTED if n not in JPEGD and n not in PNGD]

__all__ = ["dvpp_malloc", "dvpp_free", "UNSUPPORTED", "JPEGD", "PNGD"] + \
    JPEGD + PNGD + UNSUPPORTED


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
        # read: nothing new until the next
        _dvpp.mark_pending(self.record, size=_dvpp.PNG_RESULT_SIZE
                           if self.png else _dvpp.RESULT_SIZE)

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


_channels: dict = {}
_pics: dict = {}


def _channel(handle) -> _ChannelDesc:
    ch = _channels.get(handle)
    if ch is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "channel desc %r does not "
                      "exist: make one with dvpp_create_channel_desc()"
                      % (handle,))
    return ch


def _pic(handle) -> _PicDesc:
    p = _pics.get(handle)
    if p is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM, "picture desc %r does not "
                      "exist: make one with dvpp_create_pic_desc()"
                      % (handle,))
    return p


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
    _dvpp.launch_jpeg_decode(s.stream, data, size, p.data, p.size,
                             record.dev_addr, fmt)



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
    _dvpp.launch_png_decode(s.stream, data, size, p.data, p.size,
                            record.dev_addr, fmt)
