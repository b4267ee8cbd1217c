/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops_pool.h - the geometry of the pooling ops (MAXPOOL2D, AVGPOOL2D and
 * their gradients) from their parameter block: integers only, shared by
 * ops.c (checks, extents, units, chunks) and the kernel (ops_pool.c).
 */
#ifndef _DAVINCI_OPS_POOL_H
#define _DAVINCI_OPS_POOL_H

#include "os.h"

/**
 * struct dv_pooling - a checked pooling's sizes
 * @p: its parameter block
 * @oh: output height
 * @ow: output width
 * @planes: n c, the planes (the ops' work units)
 * @x: elements of x[n,c,h,w]
 * @y: elements of y[n,c,oh,ow]
 */
struct dv_pooling {
	const struct davinci_params_maxpool2d *p;
	u32 oh, ow;
	u64 planes, x, y;
};

/*
 * One output extent as torch's pooling_output_shape computes it: 0 when
 * the dilated window does not fit the padded input.
 */
static inline u32 dv_pooling_out(u32 in, u32 f, u32 stride, u32 pad, u32 dil,
			      bool ceil)
{
	u64 span = (u64)in + 2ULL * pad;
	u64 reach = (u64)dil * (f - 1) + 1;
	u64 out;

	if (span < reach)
		return 0;
	out = (span - reach + (ceil ? stride - 1 : 0)) / stride + 1;
	/* the last window starts inside the input or its left padding */
	if (ceil && (out - 1) * stride >= (u64)in + pad)
		out--;
	return out > 0xffffffffULL ? 0 : (u32)out;
}

static inline bool dv_pooling_mul(u64 a, u64 b, u64 *out)
{
	if (a && b > U64_MAX / a)
		return false;
	*out = a * b;
	return true;
}

static inline bool dv_pooling_is_max(u16 opcode)
{
	return opcode == DAVINCI_OP_MAXPOOL2D ||
	       opcode == DAVINCI_OP_MAXPOOL2D_BACKWARD;
}

/*
 * Fill @g from @p for op @opcode; -EINVAL for a block the op does not
 * take. Padding of at most half a window and, for a dilated max window,
 * a dilation of at most the input's extent keep every window meeting the
 * input: no window is empty.
 */
static inline int dv_pooling_geom(u16 opcode,
			       const struct davinci_params_maxpool2d *p,
			       struct dv_pooling *g)
{
	const u64 elems = U64_MAX / 8;
	u64 hw, ohw;

	g->p = p;
	if (!p->n || !p->c || !p->h || !p->w || !p->r || !p->s ||
	    !p->stride_h || !p->stride_w || !p->dilation_h ||
	    !p->dilation_w || p->pad_h > p->r / 2 || p->pad_w > p->s / 2 ||
	    p->ceil_mode > 1 || p->count_include_pad > 1 || p->adaptive > 1)
		return -EINVAL;
	if (dv_pooling_is_max(opcode)) {
		if (p->count_include_pad || p->divisor || p->adaptive ||
		    (p->r > 1 && p->dilation_h > p->h) ||
		    (p->s > 1 && p->dilation_w > p->w))
			return -EINVAL;
	} else if (p->dilation_h != 1 || p->dilation_w != 1 ||
		   (p->adaptive && (p->pad_h || p->pad_w ||
				    p->count_include_pad || p->divisor))) {
		return -EINVAL;
	}
	g->oh = dv_pooling_out(p->h, p->r, p->stride_h, p->pad_h, p->dilation_h,
			    p->ceil_mode);
	g->ow = dv_pooling_out(p->w, p->s, p->stride_w, p->pad_w, p->dilation_w,
			    p->ceil_mode);
	if (!g->oh || !g->ow)
		return -EINVAL;
	g->planes = (u64)p->n * p->c;
	hw = (u64)p->h * p->w;
	ohw = (u64)g->oh * g->ow;
	if (!dv_pooling_mul(g->planes, hw, &g->x) || g->x > elems ||
	    !dv_pooling_mul(g->planes, ohw, &g->y) || g->y > elems)
		return -EINVAL;
	return 0;
}

#endif /* _DAVINCI_OPS_POOL_H */
