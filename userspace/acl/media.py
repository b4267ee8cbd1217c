# SPDX-License-Identifier: GPL-2.0
"""acl.media: DVPP. There is no DVPP engine on the simulated device yet:
dvpp_malloc / dvpp_free are plain device memory (HBM) usable by every task,
and every other name pyACL has exists and fails cleanly: calls that create
an object return 0 (pyACL's null handle), every other call returns
ACL_ERROR_FEATURE_UNSUPPORTED (200006); the message in
acl.get_recent_err_msg() names the call."""

from __future__ import annotations

from . import _state as S
from . import constants as C
from . import rt

#: DVPP, JPEG, VDEC and VENC calls of pyACL that the device lacks
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

__all__ = ["dvpp_malloc", "dvpp_free", "UNSUPPORTED"] + UNSUPPORTED


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
