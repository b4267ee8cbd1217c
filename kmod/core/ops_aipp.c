// SPDX-License-Identifier: GPL-2.0
/*
 * ops_aipp.c - DAVINCI_OP_AIPP's kernel (DOC: AIPP in davinci.h; the
 * formulas in NUMERICS.md, AIPP). A unit is one row of one image of dst:
 * its three channels' rows. Each chunk copies the config at src1 and
 * checks it again (aipp.c), so a host rewriting it while the task runs
 * cannot make the kernel read outside the picture; a chunk that finds it
 * no longer valid writes zeros.
 */
#include "dv_internal.h"
#include "numerics.h"
#include "ops_kernels.h"
#include "aipp.h"

/* Floor division by 256 of a signed sum (an arithmetic shift). */
static s32 dv_aipp_shr8(s32 v)
{
	return v >= 0 ? v / 256 : -((-v + 255) / 256);
}

static s32 dv_aipp_clamp_u8(s32 v)
{
	return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* The float32 value of IEEE bits @b. */
static float dv_aipp_f32(u32 b)
{
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

/* Store @v as element @i of @dst in @dtype. */
static void dv_aipp_store(void *dst, u8 dtype, u64 i, float v)
{
	if (dtype == DAVINCI_DTYPE_FLOAT16)
		((u16 *)dst)[i] = dv_f32_to_f16(v);
	else if (dtype == DAVINCI_DTYPE_BFLOAT16)
		((u16 *)dst)[i] = dv_f32_to_bf16(v);
	else
		((float *)dst)[i] = v;
}

/* The raw channels of pixel (@x, @y) of the picture at @pic. */
static void dv_aipp_fetch(const struct davinci_aipp_config *c,
			  const u8 *pic, u32 x, u32 y, s32 px[3])
{
	u64 w = c->src_w;
	const u8 *q;
	s32 t;

	if (c->input_format == DAVINCI_AIPP_YUV420SP_U8) {
		q = pic + w * c->src_h + (u64)(y / 2) * w + (x & ~1U);
		px[0] = pic[(u64)y * w + x];
		px[1] = q[0];
		px[2] = q[1];
		if (c->switches & DAVINCI_AIPP_RBUV_SWAP) {
			t = px[1];
			px[1] = px[2];
			px[2] = t;
		}
		return;
	}
	if (c->input_format == DAVINCI_AIPP_RGB888_U8)
		q = pic + ((u64)y * w + x) * 3;
	else
		q = pic + ((u64)y * w + x) * 4 +
		    ((c->switches & DAVINCI_AIPP_AX_SWAP) ? 0 : 1);
	px[0] = q[0];
	px[1] = q[1];
	px[2] = q[2];
	if (c->switches & DAVINCI_AIPP_RBUV_SWAP) {
		t = px[0];
		px[0] = px[2];
		px[2] = t;
	}
}

/* CSC: out_i = clamp(((M[i] . (px - input_bias)) >> 8) + output_bias_i). */
static void dv_aipp_csc(const struct davinci_aipp_config *c, s32 px[3])
{
	s32 in[3], i;

	for (i = 0; i < 3; i++)
		in[i] = px[i] - (s32)c->input_bias[i];
	for (i = 0; i < 3; i++)
		px[i] = dv_aipp_clamp_u8(dv_aipp_shr8(c->matrix[3 * i] * in[0] +
						      c->matrix[3 * i + 1] * in[1] +
						      c->matrix[3 * i + 2] * in[2]) +
					 (s32)c->output_bias[i]);
}

DV_OP_KERNEL(aipp)
{
	const struct davinci_params_aipp *p = params;
	struct davinci_aipp_config c;
	struct dv_aipp_geom g;
	u64 plane = (u64)p->height * p->width, r, es = dv_dtype_size(t->dtype);
	float pad, mn[3], var[3], v;
	u32 x, ch;
	s32 px[3];

	(void)src2;
	memcpy(&c, src1, sizeof(c));
	if (dv_aipp_check_config(p, &c, &g)) {
		for (r = begin; r < end; r++)
			for (ch = 0; ch < 3; ch++)
				memset((u8 *)dst + (((r / p->height) * 3 + ch) *
						    plane + (r % p->height) *
						    p->width) * es, 0,
				       (size_t)(p->width * es));
		return;
	}
	pad = dv_aipp_f32(c.padding_value);
	for (ch = 0; ch < 3; ch++) {
		mn[ch] = dv_aipp_f32(c.min[ch]);
		var[ch] = dv_aipp_f32(c.var_reci[ch]);
	}
	for (r = begin; r < end; r++) {
		u64 b = r / p->height;
		u32 y = (u32)(r % p->height);
		const u8 *pic = (const u8 *)src0 + b * p->src_size;
		u64 row = b * 3 * plane + (u64)y * p->width;
		bool in_y = y >= g.pad_top && y - g.pad_top < g.crop_h;

		for (x = 0; x < p->width; x++) {
			if (!in_y || x < g.pad_left ||
			    x - g.pad_left >= g.crop_w) {
				for (ch = 0; ch < 3; ch++)
					dv_aipp_store(dst, t->dtype,
						      row + ch * plane + x, pad);
				continue;
			}
			dv_aipp_fetch(&c, pic, g.crop_x + x - g.pad_left,
				      g.crop_y + y - g.pad_top, px);
			if (c.switches & DAVINCI_AIPP_CSC)
				dv_aipp_csc(&c, px);
			for (ch = 0; ch < 3; ch++) {
				v = ((float)(px[ch] - c.mean[ch]) - mn[ch]) *
				    var[ch];
				dv_aipp_store(dst, t->dtype,
					      row + ch * plane + x, v);
			}
		}
	}
}
