/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jpege.h - the JPEG encoder of the DVPP JPEGE engine: YUV420SP (NV12 or
 * NV21) at DVPP's alignment (width stride a multiple of 16, height
 * stride a multiple of 2) to a baseline JFIF 4:2:0 file.
 *
 * Quality 1..100 scales the Annex K tables as libjpeg's
 * jpeg_quality_scaling(); the Huffman tables are Annex K's; the forward
 * DCT is libjpeg's jfdctint (islow), integers only, so the bytes are
 * exactly reproducible. No allocation, no FPU.
 *
 * Its state (Huffman and quantization tables, the block being coded)
 * lives in the caller's scratch of dv_jpege_scratch_size() bytes, 8-byte
 * aligned, not on the stack: a kernel worker's stack is small.
 *
 * Errors: -EINVAL for bad sizes, strides, quality or scratch; -ENOSPC
 * when the output buffer is too small (nothing is written past @cap).
 */
#ifndef _DAVINCI_JPEGE_H
#define _DAVINCI_JPEGE_H

#include "os.h"

#define DV_JPEGE_MAX_DIM 8192
#define DV_JPEGE_WIDTH_ALIGN 16
#define DV_JPEGE_HEIGHT_ALIGN 2

struct dv_jpege_params {
	u32 width, height;
	u32 width_stride, height_stride;
	bool nv21;
	u32 quality;
};

/* The largest file any picture of @p's size encodes to (jpege.c). */
u64 dv_jpege_predict_size(const struct dv_jpege_params *p);

/* Bytes of scratch dv_jpege_encode() takes. */
size_t dv_jpege_scratch_size(void);

/*
 * Encode @pic (width_stride * height_stride * 3 / 2 bytes) into @out of
 * @cap bytes, with @scratch of @scratch_size >= dv_jpege_scratch_size();
 * *@written is the file's size on success.
 */
int dv_jpege_encode(const struct dv_jpege_params *p, const u8 *pic,
		    u64 pic_size, u8 *out, u64 cap, void *scratch,
		    size_t scratch_size, u64 *written);

#endif
