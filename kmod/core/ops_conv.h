/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops_conv.h - the geometry of the convolution ops (CONV2D and its two
 * gradients) from their parameter block: integers only, shared by ops.c
 * (checks, extents, units, chunks) and the kernel (ops_conv.c).
 */
#ifndef _DAVINCI_OPS_CONV_H
#define _DAVINCI_OPS_CONV_H

#include "os.h"

/**
 * struct dv_conv - a checked convolution's sizes
 * @p: its parameter block
 * @oh: output height
 * @ow: output width
 * @cg: input channels per group
 * @kg: output channels per group
 * @x: elements of x[n,c,h,w]
 * @w: elements of w[k,cg,r,s]
 * @y: elements of y[n,k,oh,ow]
 *
 * dv_conv_geom() checks that every GEMM dimension the kernel forms fits
 * u32 (its struct dv_mm) and every tensor's elements fit u64 with room
 * for 8-byte elements.
 */
struct dv_conv {
	const struct davinci_params_conv2d *p;
	u32 oh, ow, cg, kg;
	u64 x, w, y;
};

static inline bool dv_conv_mul(u64 a, u64 b, u64 *out)
{
	if (a && b > U64_MAX / a)
		return false;
	*out = a * b;
	return true;
}

/* one output extent: (in + 2 pad - dil (f - 1) - 1) / stride + 1, >= 1 */
static inline u32 dv_conv_out(u32 in, u32 f, u32 stride, u32 pad, u32 dil)
{
	u64 span = (u64)in + 2ULL * pad;
	u64 reach = (u64)dil * (f - 1) + 1;

	return span < reach ? 0 : (u32)((span - reach) / stride + 1);
}

static inline bool dv_conv_fits(u64 a, u64 b, u64 c, u64 limit, u64 *out)
{
	u64 ab;

	return dv_conv_mul(a, b, &ab) && dv_conv_mul(ab, c, out) &&
	       *out <= limit;
}

/* Fill @g from @p; -EINVAL for a block the ops do not take. */
static inline int dv_conv_geom(const struct davinci_params_conv2d *p,
			       struct dv_conv *g)
{
	const u64 u32max = 0xffffffffULL, elems = U64_MAX / 8;
	u64 t, hw, ohw;

	g->p = p;
	if (!p->n || !p->c || !p->h || !p->w || !p->k || !p->r || !p->s ||
	    !p->stride_h || !p->stride_w || !p->dilation_h ||
	    !p->dilation_w || !p->groups ||
	    p->c % p->groups || p->k % p->groups)
		return -EINVAL;
	g->oh = dv_conv_out(p->h, p->r, p->stride_h, p->pad_h, p->dilation_h);
	g->ow = dv_conv_out(p->w, p->s, p->stride_w, p->pad_w, p->dilation_w);
	g->cg = p->c / p->groups;
	g->kg = p->k / p->groups;
	if (!g->oh || !g->ow)
		return -EINVAL;
	/* the GEMMs' m, n and k (struct dv_mm) */
	if (!dv_conv_fits(p->n, p->k, 1, u32max, &t) ||
	    !dv_conv_fits(p->n, p->c, 1, u32max, &t) ||
	    !dv_conv_fits(p->h, p->w, 1, u32max, &hw) ||
	    !dv_conv_fits(g->oh, g->ow, 1, u32max, &ohw) ||
	    !dv_conv_fits(ohw, p->n, 1, u32max, &t) ||
	    !dv_conv_fits(g->cg, p->r, p->s, u32max, &t) ||
	    !dv_conv_fits(g->kg, p->r, p->s, u32max, &t))
		return -EINVAL;
	if (!dv_conv_fits(p->n, p->c, hw, elems, &g->x) ||
	    !dv_conv_fits(p->k, g->cg, (u64)p->r * p->s, elems, &g->w) ||
	    !dv_conv_fits(p->n, p->k, ohw, elems, &g->y))
		return -EINVAL;
	return 0;
}

/*
 * CONV2D's units are tiles of its GEMMs, so that idle AI cores share even
 * one image's convolution without each packing all of its columns: per
 * image and group, column tiles of DV_CONV_TILE_COLS output positions,
 * each cut into row blocks of DV_CONV_TILE_ROWS output channels. A unit
 * is (((image * groups + group) * tiles + tile) * blocks + block).
 */
#define DV_CONV_TILE_ROWS	128
#define DV_CONV_TILE_COLS	512

/*
 * A CONV2D of fewer GEMMs than this has its tiles shared out; one of more
 * runs a whole GEMM per chunk, which gathers each column once.
 */
#define DV_CONV_SHARED_GEMMS	4

/* images times groups of a checked CONV2D block */
static inline u64 dv_conv_gemms(const struct davinci_params_conv2d *p)
{
	return (u64)p->n * p->groups;
}

/* row blocks per column tile (*@blocks) and column tiles per GEMM */
static inline u64 dv_conv_fwd_tiles(const struct dv_conv *g, u64 *blocks)
{
	u64 ohw = (u64)g->oh * g->ow;

	*blocks = (g->kg + DV_CONV_TILE_ROWS - 1) / DV_CONV_TILE_ROWS;
	return (ohw + DV_CONV_TILE_COLS - 1) / DV_CONV_TILE_COLS;
}

#endif /* _DAVINCI_OPS_CONV_H */
