// SPDX-License-Identifier: GPL-2.0
/*
 * aipp.c - DAVINCI_OP_AIPP's checks (DOC: AIPP in davinci.h): its
 * parameter block at take-in, its operands' extents, and the struct
 * davinci_aipp_config it reads at src1 as the task starts (and again in
 * each chunk, on its own copy: the host may rewrite it meanwhile).
 *
 * Integer code only: no FPU section.
 */
#include "dv_internal.h"
#include "aipp.h"

/**
 * dv_op_check_aipp() - check AIPP's parameter block
 * @task: an AIPP task that passed dv_task_validate()
 * @params: the copy of its struct davinci_params_aipp
 *
 * Return: 0 for 1 .. DV_AIPP_MAX_BATCH pictures of 1 .. DV_AIPP_MAX_SRC
 * bytes into 3 channels of 1 .. DV_AIPP_MAX_DIM rows and columns, or
 * -EINVAL.
 */
int dv_op_check_aipp(const struct davinci_task *task, const void *params)
{
	const struct davinci_params_aipp *p = params;

	(void)task;
	if (!p->batch || p->batch > DV_AIPP_MAX_BATCH || p->channels != 3)
		return -EINVAL;
	if (!p->height || p->height > DV_AIPP_MAX_DIM ||
	    !p->width || p->width > DV_AIPP_MAX_DIM)
		return -EINVAL;
	if (!p->src_size || p->src_size > DV_AIPP_MAX_SRC)
		return -EINVAL;
	return 0;
}

/**
 * dv_aipp_extent() - bytes an AIPP task touches
 * @task: the task
 * @params: its checked struct davinci_params_aipp (NULL: refused)
 * @dst: out: @batch images of 3 x @height x @width elements of @dtype
 * @src0: out: @batch pictures of @src_size bytes
 * @src1: out: the config
 *
 * Return: 0, or -EINVAL without a block or for an unknown dtype.
 */
int dv_aipp_extent(const struct davinci_task *task, const void *params,
		   u64 *dst, u64 *src0, u64 *src1)
{
	const struct davinci_params_aipp *p = params;
	u64 es = dv_dtype_size(task->dtype);

	if (!p || !es)
		return -EINVAL;
	/* the checked bounds keep these far below 2^64 */
	*dst = (u64)p->batch * p->channels * p->height * p->width * es;
	*src0 = (u64)p->batch * p->src_size;
	*src1 = sizeof(struct davinci_aipp_config);
	return 0;
}

/* A float32's bits are a finite value. */
static bool dv_aipp_finite(u32 bits)
{
	return ((bits >> 23) & 0xff) != 0xff;
}

/* The bytes of a @w x @h picture of @fmt, 0 for an unknown format. */
static u64 dv_aipp_picture_bytes(u32 fmt, u32 w, u32 h, u32 *bpp)
{
	switch (fmt) {
	case DAVINCI_AIPP_YUV420SP_U8:
		*bpp = 1;
		return (u64)w * h * 3 / 2;
	case DAVINCI_AIPP_XRGB8888_U8:
		*bpp = 4;
		return (u64)w * h * 4;
	case DAVINCI_AIPP_RGB888_U8:
		*bpp = 3;
		return (u64)w * h * 3;
	default:
		*bpp = 0;
		return 0;
	}
}

/**
 * dv_aipp_check_config() - check a config against the parameter block
 * @p: the task's checked struct davinci_params_aipp
 * @cfg: a private copy of the struct davinci_aipp_config at src1
 * @g: out: the crop and padding it gives
 *
 * Return: 0 when the picture fits @src_size, its crop lies inside it
 * (even offsets for YUV420SP), the crop plus padding is @height x @width,
 * the matrix and biases are in range and the floats finite; else -EINVAL.
 */
int dv_aipp_check_config(const struct davinci_params_aipp *p,
			 const struct davinci_aipp_config *cfg,
			 struct dv_aipp_geom *g)
{
	const u32 known = DAVINCI_AIPP_CSC | DAVINCI_AIPP_RBUV_SWAP |
			  DAVINCI_AIPP_AX_SWAP | DAVINCI_AIPP_CROP |
			  DAVINCI_AIPP_PADDING;
	u32 sw = cfg->switches, i;
	u64 bytes, w, h;
	bool yuv = cfg->input_format == DAVINCI_AIPP_YUV420SP_U8;

	memset(g, 0, sizeof(*g));
	if (cfg->version != DAVINCI_AIPP_CONFIG_VERSION || (sw & ~known) ||
	    cfg->reserved[0] || cfg->reserved[1] || cfg->reserved[2])
		return -EINVAL;
	if ((sw & DAVINCI_AIPP_AX_SWAP) &&
	    cfg->input_format != DAVINCI_AIPP_XRGB8888_U8)
		return -EINVAL;
	if (!cfg->src_w || cfg->src_w > DV_AIPP_MAX_DIM ||
	    !cfg->src_h || cfg->src_h > DV_AIPP_MAX_DIM)
		return -EINVAL;
	if (yuv && ((cfg->src_w | cfg->src_h) & 1))
		return -EINVAL;
	bytes = dv_aipp_picture_bytes(cfg->input_format, cfg->src_w,
				      cfg->src_h, &g->bpp);
	if (!bytes || bytes > p->src_size)
		return -EINVAL;
	if (sw & DAVINCI_AIPP_CROP) {
		if (!cfg->crop_w || !cfg->crop_h ||
		    (u64)cfg->crop_x + cfg->crop_w > cfg->src_w ||
		    (u64)cfg->crop_y + cfg->crop_h > cfg->src_h)
			return -EINVAL;
		if (yuv && ((cfg->crop_x | cfg->crop_y) & 1))
			return -EINVAL;
		g->crop_x = cfg->crop_x;
		g->crop_y = cfg->crop_y;
		g->crop_w = cfg->crop_w;
		g->crop_h = cfg->crop_h;
	} else {
		g->crop_w = cfg->src_w;
		g->crop_h = cfg->src_h;
	}
	w = g->crop_w;
	h = g->crop_h;
	if (sw & DAVINCI_AIPP_PADDING) {
		if (!dv_aipp_finite(cfg->padding_value))
			return -EINVAL;
		w += (u64)cfg->pad_left + cfg->pad_right;
		h += (u64)cfg->pad_top + cfg->pad_bottom;
		g->pad_left = cfg->pad_left;
		g->pad_top = cfg->pad_top;
	}
	if (w != p->width || h != p->height)
		return -EINVAL;
	for (i = 0; i < 9; i++)
		if (cfg->matrix[i] < -32768 || cfg->matrix[i] > 32767)
			return -EINVAL;
	for (i = 0; i < 3; i++)
		if (cfg->input_bias[i] > 255 || cfg->output_bias[i] > 255)
			return -EINVAL;
	for (i = 0; i < 4; i++)
		if (cfg->mean[i] < -32768 || cfg->mean[i] > 32767 ||
		    !dv_aipp_finite(cfg->min[i]) ||
		    !dv_aipp_finite(cfg->var_reci[i]))
			return -EINVAL;
	return 0;
}
