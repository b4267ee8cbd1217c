/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aipp.h - DAVINCI_OP_AIPP (DOC: AIPP in davinci.h): the checks of its
 * parameter block and of the config it reads (aipp.c, integer code) and
 * the geometry they derive, which its kernel (ops_aipp.c) walks.
 */
#ifndef _DAVINCI_AIPP_H
#define _DAVINCI_AIPP_H

#include "os.h"

#define DV_AIPP_MAX_DIM		8192
#define DV_AIPP_MAX_BATCH	1024
#define DV_AIPP_MAX_SRC		(1ULL << 28)

/**
 * struct dv_aipp_geom - a checked config's crop and padding
 * @bpp: bytes a pixel (1 for YUV420SP's Y plane)
 * @crop_x: first column of the picture read (the whole picture's 0
 *	without DAVINCI_AIPP_CROP)
 * @crop_y: first row read
 * @crop_w: columns read
 * @crop_h: rows read
 * @pad_left: padded columns left of the crop (0 without PADDING)
 * @pad_top: padded rows above it
 */
struct dv_aipp_geom {
	u32 bpp;
	u32 crop_x;
	u32 crop_y;
	u32 crop_w;
	u32 crop_h;
	u32 pad_left;
	u32 pad_top;
};

/*
 * 0 when @cfg (a copy of the struct davinci_aipp_config, which may change
 * under the task: copy it first) is one the op takes for the checked
 * parameter block @p, its geometry in *@g; else -EINVAL. Integer code.
 */
int dv_aipp_check_config(const struct davinci_params_aipp *p,
			 const struct davinci_aipp_config *cfg,
			 struct dv_aipp_geom *g);

/* The extents of an AIPP task with the checked block @params (ops.h). */
int dv_aipp_extent(const struct davinci_task *task, const void *params,
		   u64 *dst, u64 *src0, u64 *src1);

#endif /* _DAVINCI_AIPP_H */
