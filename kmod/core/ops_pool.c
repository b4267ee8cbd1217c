// SPDX-License-Identifier: GPL-2.0
/*
 * ops_pool.c - MAXPOOL2D, MAXPOOL2D_BACKWARD, AVGPOOL2D and
 * AVGPOOL2D_BACKWARD: one plane x[n][c] (or dx[n][c]) per work unit.
 *
 * Float code: the kernel builds this file with the FPU enabled.
 *
 * The forward ops follow torch's CPU kernels window by window: the max
 * scans its window's taps in row-major order and keeps the first
 * largest, or the last NaN; the mean sums the taps inside the input in
 * row-major order into one float32. The gradients gather: each dx
 * element runs over the windows that hold it, in the outputs' row-major
 * order, which is the order torch's scatter adds their terms to it, into
 * one float32 rounded once (NUMERICS.md, "Pooling").
 */
#include "ops_kernels.h"
#include "ops_pool.h"
#include "numerics.h"

/* Element @i of @base, widened to float32. */
static inline float pool_ld(u8 dtype, const void *base, u64 i)
{
	if (dtype == DAVINCI_DTYPE_FLOAT16)
		return dv_f16_to_f32(((const u16 *)base)[i]);
	if (dtype == DAVINCI_DTYPE_BFLOAT16)
		return dv_bf16_to_f32(((const u16 *)base)[i]);
	return ((const float *)base)[i];
}

/* Store @v at element @i of @base, rounded once to @dtype. */
static inline void pool_st(u8 dtype, void *base, u64 i, float v)
{
	v = dv_canon_nan(v);
	if (dtype == DAVINCI_DTYPE_FLOAT16)
		((u16 *)base)[i] = dv_f32_to_f16(v);
	else if (dtype == DAVINCI_DTYPE_BFLOAT16)
		((u16 *)base)[i] = dv_f32_to_bf16(v);
	else
		((float *)base)[i] = v;
}

static inline bool pool_isnan(float v)
{
	return (dv_f2u(v) & 0x7fffffffu) > 0x7f800000u;
}

/*
 * One extent of a max window: the first tap inside the input (*@lo, a
 * multiple of @dil from the window's start) and the end of its taps
 * within it (*@hi), as torch's max_pool2d loop bounds.
 */
static void pool_max_span(s64 start, u32 f, u32 dil, u32 in, s64 *lo,
			  s64 *hi)
{
	s64 end = start + (s64)dil * (f - 1) + 1;

	*hi = end < (s64)in ? end : (s64)in;
	while (start < 0)
		start += dil;
	*lo = start;
}

/* The flat index of the largest element of window (oh, ow) of @x. */
static s64 pool_argmax(const struct dv_pooling *g, u8 dtype, const void *x,
		       u32 oh, u32 ow)
{
	const struct davinci_params_maxpool2d *p = g->p;
	s64 h0, h1, w0, w1, ih, iw, best;
	float top = dv_u2f(0xff800000u);	/* -inf */

	pool_max_span((s64)oh * p->stride_h - p->pad_h, p->r, p->dilation_h,
		      p->h, &h0, &h1);
	pool_max_span((s64)ow * p->stride_w - p->pad_w, p->s, p->dilation_w,
		      p->w, &w0, &w1);
	best = h0 * p->w + w0;
	for (ih = h0; ih < h1; ih += p->dilation_h) {
		for (iw = w0; iw < w1; iw += p->dilation_w) {
			s64 at = ih * p->w + iw;
			float v = pool_ld(dtype, x, at);

			if (v > top || pool_isnan(v)) {
				top = v;
				best = at;
			}
		}
	}
	return best;
}

static void pool_max_plane(const struct dv_pooling *g, const struct davinci_task *t,
			   void *dst, const void *x, u64 yoff)
{
	bool index = t->dst_dtype == DAVINCI_DTYPE_INT64;
	u32 oh, ow;

	for (oh = 0; oh < g->oh; oh++) {
		for (ow = 0; ow < g->ow; ow++, yoff++) {
			s64 at = pool_argmax(g, t->dtype, x, oh, ow);

			/* the element's own bits: no arithmetic */
			if (index)
				((s64 *)dst)[yoff] = at;
			else if (t->dtype == DAVINCI_DTYPE_FLOAT32)
				((u32 *)dst)[yoff] = ((const u32 *)x)[at];
			else
				((u16 *)dst)[yoff] = ((const u16 *)x)[at];
		}
	}
}

/*
 * An average window's extent along one dimension as torch's avg_pool2d
 * takes it: [*@lo, *@hi) inside the input, and its length clipped to the
 * padded input only (the count count_include_pad divides by).
 */
static u64 pool_avg_span(s64 start, u32 f, u32 pad, u32 in, s64 *lo,
			 s64 *hi)
{
	s64 end = start + f, padded = (s64)in + pad;
	u64 len;

	if (end > padded)
		end = padded;
	len = (u64)(end - start);
	*lo = start > 0 ? start : 0;
	*hi = end < (s64)in ? end : (s64)in;
	return len;
}

/* Window (oh, ow)'s extents inside the input and its divisor's terms. */
struct pool_win {
	s64 h0, h1, w0, w1;
	float div;
};

static void pool_avg_win(const struct davinci_params_maxpool2d *p, u32 oh,
			 u32 ow, struct pool_win *win)
{
	u64 ph = pool_avg_span((s64)oh * p->stride_h - p->pad_h, p->r,
			       p->pad_h, p->h, &win->h0, &win->h1);
	u64 pw = pool_avg_span((s64)ow * p->stride_w - p->pad_w, p->s,
			       p->pad_w, p->w, &win->w0, &win->w1);
	s64 d;

	if (p->divisor)
		d = p->divisor;
	else if (p->count_include_pad)
		d = (s64)(ph * pw);
	else
		d = (win->h1 - win->h0) * (win->w1 - win->w0);
	win->div = (float)d;
}

/* One term of a window's mean: torch divides by the count, or by r, s. */
static inline float pool_avg_div(const struct davinci_params_maxpool2d *p,
				 const struct pool_win *win, float sum)
{
	if (p->adaptive)
		return sum / (float)p->r / (float)p->s;
	return sum / win->div;
}

static void pool_avg_plane(const struct dv_pooling *g, u8 dtype, void *dst,
			   const void *x, u64 yoff)
{
	const struct davinci_params_maxpool2d *p = g->p;
	struct pool_win win;
	u32 oh, ow;
	s64 ih, iw;

	for (oh = 0; oh < g->oh; oh++) {
		for (ow = 0; ow < g->ow; ow++, yoff++) {
			float sum = 0.0f;

			pool_avg_win(p, oh, ow, &win);
			for (ih = win.h0; ih < win.h1; ih++)
				for (iw = win.w0; iw < win.w1; iw++)
					sum += pool_ld(dtype, x,
						       ih * p->w + iw);
			pool_st(dtype, dst, yoff, pool_avg_div(p, &win, sum));
		}
	}
}

/*
 * The outputs [*@lo, *@hi] along one dimension whose windows start at
 * or before @i (padded coordinates: @i + pad) and reach past it.
 */
static void pool_holders(s64 i, u32 f, u32 stride, u32 dil, u32 out,
			 s64 *lo, s64 *hi)
{
	s64 reach = (s64)dil * (f - 1), first = i - reach;

	*lo = first <= 0 ? 0 : (first + stride - 1) / stride;
	*hi = i / stride;
	if (*hi > (s64)out - 1)
		*hi = (s64)out - 1;
}

/* dx of one plane of a max pooling from dy and the indices: a gather. */
static void pool_max_bwd_plane(const struct dv_pooling *g, u8 dtype, void *dx,
			       const void *dy, const s64 *idx, u64 xoff,
			       u64 yoff)
{
	const struct davinci_params_maxpool2d *p = g->p;
	s64 ih, iw, oh, ow, oh0, oh1, ow0, ow1;

	for (ih = 0; ih < p->h; ih++) {
		pool_holders(ih + p->pad_h, p->r, p->stride_h, p->dilation_h,
			     g->oh, &oh0, &oh1);
		for (iw = 0; iw < p->w; iw++) {
			s64 at = ih * p->w + iw;
			float acc = 0.0f;

			pool_holders(iw + p->pad_w, p->s, p->stride_w,
				     p->dilation_w, g->ow, &ow0, &ow1);
			for (oh = oh0; oh <= oh1; oh++) {
				for (ow = ow0; ow <= ow1; ow++) {
					u64 o = yoff + oh * g->ow + ow;

					/* an index names one element */
					if (idx[o] == at)
						acc += pool_ld(dtype, dy, o);
				}
			}
			pool_st(dtype, dx, xoff + at, acc);
		}
	}
}

/* dx of one plane of an average pooling from dy: a gather. */
static void pool_avg_bwd_plane(const struct dv_pooling *g, u8 dtype, void *dx,
			       const void *dy, u64 xoff, u64 yoff)
{
	const struct davinci_params_maxpool2d *p = g->p;
	s64 ih, iw, oh, ow, oh0, oh1, ow0, ow1;
	struct pool_win win;

	for (ih = 0; ih < p->h; ih++) {
		pool_holders(ih + p->pad_h, p->r, p->stride_h, 1, g->oh,
			     &oh0, &oh1);
		for (iw = 0; iw < p->w; iw++) {
			float acc = 0.0f;

			pool_holders(iw + p->pad_w, p->s, p->stride_w, 1, g->ow,
				     &ow0, &ow1);
			for (oh = oh0; oh <= oh1; oh++) {
				for (ow = ow0; ow <= ow1; ow++) {
					u64 o = yoff + oh * g->ow + ow;

					pool_avg_win(p, oh, ow, &win);
					acc += pool_avg_div(p, &win,
							    pool_ld(dtype, dy,
								    o));
				}
			}
			pool_st(dtype, dx, xoff + ih * p->w + iw, acc);
		}
	}
}

/**
 * dv_opk_pool() - planes [@begin, @end) of a pooling op
 *
 * Each plane is computed whole and alone, so any chunking writes the
 * same bytes.
 */
DV_OP_KERNEL(pool)
{
	struct dv_pooling g;
	u64 u, hw, ohw;

	(void)src2;
	if (dv_pooling_geom(t->opcode, params, &g))
		return;
	hw = (u64)g.p->h * g.p->w;
	ohw = (u64)g.oh * g.ow;
	for (u = begin; u < end; u++) {
		switch (t->opcode) {
		case DAVINCI_OP_MAXPOOL2D:
			pool_max_plane(&g, t, dst,
				       (const u8 *)src0 + u * hw *
				       (t->dtype == DAVINCI_DTYPE_FLOAT32 ?
					4 : 2), u * ohw);
			break;
		case DAVINCI_OP_MAXPOOL2D_BACKWARD:
			pool_max_bwd_plane(&g, t->dtype, dst, src0, src1,
					   u * hw, u * ohw);
			break;
		case DAVINCI_OP_AVGPOOL2D:
			pool_avg_plane(&g, t->dtype, dst,
				       (const u8 *)src0 + u * hw *
				       (t->dtype == DAVINCI_DTYPE_FLOAT32 ?
					4 : 2), u * ohw);
			break;
		default:
			pool_avg_bwd_plane(&g, t->dtype, dst, src0, u * hw,
					   u * ohw);
			break;
		}
	}
}
