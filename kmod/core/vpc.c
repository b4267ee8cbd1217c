// SPDX-License-Identifier: GPL-2.0
/*
 * vpc.c - the DVPP VPC engine's tasks: DAVINCI_OP_VPC_RESIZE, _VPC_CROP
 * and _VPC_CONVERT_COLOR (DOC: DVPP VPC in davinci.h; the arithmetic in
 * NUMERICS.md, VPC).
 *
 * A picture is three channels (Y, U, V or R, G, B), each a plane of
 * samples at base + row * stride + column * step, subsampled by hsub x
 * vsub pixels: NV12's U is every other byte of its chroma plane at half
 * width and height, YUYV's every fourth byte at half width. A resize
 * resamples each channel on its own, so one loop serves every format.
 *
 * Integer code only: no FPU section. The resize's coordinate tables are
 * allocated as the task starts, by a worker that holds no lock and may
 * sleep, and freed before it completes.
 */
#include "dv_internal.h"
#include "vpc.h"

/* weights: 1 << DV_VPC_FRAC_BITS is 1.0; table entries: index << 12 | w */
#define DV_VPC_ONE	(1u << DV_VPC_FRAC_BITS)
#define DV_VPC_IDX_SHIFT	12
#define DV_VPC_W_MASK	((1u << DV_VPC_IDX_SHIFT) - 1)

/* a picture, as the parameter block gives it */
struct dv_vpc_pic {
	u32 fmt;
	u32 w;
	u32 h;
	u32 ws;
	u32 hs;
};

/* a rect of a picture, its last column and row included */
struct dv_vpc_rect {
	u32 l;
	u32 t;
	u32 r;
	u32 b;
};

/* one channel: its samples at @base + y * @stride + x * @step */
struct dv_vpc_chan {
	u8 *base;
	u32 stride;
	u32 step;
	u32 hsub;
	u32 vsub;
};

static bool dv_vpc_is_420(u32 fmt)
{
	return fmt == DAVINCI_VPC_FMT_NV12 || fmt == DAVINCI_VPC_FMT_NV21;
}

static bool dv_vpc_is_yuv(u32 fmt)
{
	return dv_vpc_is_420(fmt) || fmt == DAVINCI_VPC_FMT_YUYV;
}

/* bytes of one row of @w pixels in @fmt, 0 for a format VPC does not take */
static u32 dv_vpc_row_bytes(u32 fmt, u32 w)
{
	switch (fmt) {
	case DAVINCI_VPC_FMT_NV12:
	case DAVINCI_VPC_FMT_NV21:
		return w;
	case DAVINCI_VPC_FMT_YUYV:
		return 2 * w;
	case DAVINCI_VPC_FMT_RGB:
	case DAVINCI_VPC_FMT_BGR:
		return 3 * w;
	default:
		return 0;
	}
}

/**
 * dv_vpc_picture_bytes() - bytes of a VPC picture
 * @fmt: its DAVINCI_VPC_FMT_*
 * @ws: its width stride (bytes)
 * @hs: its height stride (rows, even)
 *
 * Return: @ws * @hs * 3 / 2 for YUV420SP, @ws * @hs for the packed
 * formats, 0 for a format VPC does not take.
 */
u64 dv_vpc_picture_bytes(u32 fmt, u32 ws, u32 hs)
{
	if (dv_vpc_is_420(fmt))
		return (u64)ws * hs * 3 / 2;
	return dv_vpc_row_bytes(fmt, 1) ? (u64)ws * hs : 0;
}

static void dv_vpc_unpack(const struct davinci_params_vpc_crop *p,
			  struct dv_vpc_pic *s, struct dv_vpc_pic *d,
			  struct dv_vpc_rect *crop, struct dv_vpc_rect *paste)
{
	s->fmt = p->src_format;
	s->w = p->src_width;
	s->h = p->src_height;
	s->ws = p->src_width_stride;
	s->hs = p->src_height_stride;
	d->fmt = p->dst_format;
	d->w = p->dst_width;
	d->h = p->dst_height;
	d->ws = p->dst_width_stride;
	d->hs = p->dst_height_stride;
	crop->l = p->crop_left;
	crop->t = p->crop_top;
	crop->r = p->crop_right;
	crop->b = p->crop_bottom;
	paste->l = p->paste_left;
	paste->t = p->paste_top;
	paste->r = p->paste_right;
	paste->b = p->paste_bottom;
}

/*
 * 0 for a picture DVPP's VPC takes (an output: @out), else -EINVAL: a
 * YUV420SP input up to DVPP's 8K mode's 8192 x 8192 (height stride up
 * to 16384), everything else up to 4096.
 */
static int dv_vpc_check_pic(const struct dv_vpc_pic *p, bool out)
{
	u32 row = dv_vpc_row_bytes(p->fmt, p->w);
	bool big = !out && dv_vpc_is_420(p->fmt);
	u32 dim = big ? DAVINCI_VPC_MAX_DIM_8K : DAVINCI_VPC_MAX_DIM;
	u32 hs = big ? DAVINCI_VPC_MAX_HSTRIDE_8K : DAVINCI_VPC_MAX_DIM;

	if (!row || p->w < DAVINCI_VPC_MIN_WIDTH || p->w > dim ||
	    p->h < DAVINCI_VPC_MIN_HEIGHT || p->h > dim)
		return -EINVAL;
	if (p->ws % 16 || p->ws < DAVINCI_VPC_MIN_WSTRIDE ||
	    p->ws > DAVINCI_VPC_MAX_WSTRIDE || p->ws < row)
		return -EINVAL;
	if (p->hs % 2 || p->hs > hs || p->hs < p->h)
		return -EINVAL;
	if (p->fmt == DAVINCI_VPC_FMT_YUYV && p->w % 2)
		return -EINVAL;
	if (out && dv_vpc_is_420(p->fmt) && (p->w % 2 || p->h % 2))
		return -EINVAL;
	return 0;
}

static bool dv_vpc_rect_in(const struct dv_vpc_rect *r,
			   const struct dv_vpc_pic *p)
{
	return r->l <= r->r && r->t <= r->b && r->r < p->w && r->b < p->h;
}

static bool dv_vpc_rect_whole(const struct dv_vpc_rect *r,
			      const struct dv_vpc_pic *p)
{
	return !r->l && !r->t && r->r == p->w - 1 && r->b == p->h - 1;
}

/* even left and top, odd right and bottom, DVPP's 10 x 6 .. 4096 x 4096 */
static bool dv_vpc_rect_aligned(const struct dv_vpc_rect *r, u32 left_align)
{
	return !(r->l % left_align) && !(r->t % 2) && r->r % 2 && r->b % 2 &&
	       r->r - r->l + 1 >= DAVINCI_VPC_MIN_WIDTH &&
	       r->b - r->t + 1 >= DAVINCI_VPC_MIN_HEIGHT &&
	       r->r - r->l < DAVINCI_VPC_MAX_DIM &&
	       r->b - r->t < DAVINCI_VPC_MAX_DIM;
}

/* VPC's scale range: out / in from 1/32 to 16 */
static bool dv_vpc_scale_ok(u32 in, u32 out)
{
	return (u64)out <= 16ull * in && (u64)out * 32 >= in;
}

/**
 * dv_op_check_vpc_crop() - check a VPC task's parameter block
 * @task: a VPC_RESIZE, VPC_CROP or VPC_CONVERT_COLOR task that passed
 *	dv_task_validate()
 * @params: the copy of its struct davinci_params_vpc_crop
 *
 * The rules of DOC: DVPP VPC: both pictures' formats, sizes and strides,
 * the rects inside them with DVPP's alignment (VPC_CROP) or the whole
 * pictures (VPC_RESIZE, VPC_CONVERT_COLOR), one format family and DVPP's
 * scale range for a resize, the same size for a conversion.
 *
 * Return: 0, or -EINVAL for a block that breaks one.
 */
int dv_op_check_vpc_crop(const struct davinci_task *task, const void *params)
{
	const struct davinci_params_vpc_crop *p = params;
	struct dv_vpc_rect c, q;
	struct dv_vpc_pic s, d;

	dv_vpc_unpack(p, &s, &d, &c, &q);
	if (p->pad || p->interpolation >= DAVINCI_VPC_INTERP_COUNT)
		return -EINVAL;
	if (dv_vpc_check_pic(&s, false) || dv_vpc_check_pic(&d, true))
		return -EINVAL;
	if (!dv_vpc_rect_in(&c, &s) || !dv_vpc_rect_in(&q, &d))
		return -EINVAL;
	switch (task->opcode) {
	case DAVINCI_OP_VPC_CONVERT_COLOR:
		return s.w == d.w && s.h == d.h && dv_vpc_rect_whole(&c, &s) &&
		       dv_vpc_rect_whole(&q, &d) && !p->interpolation ?
		       0 : -EINVAL;
	case DAVINCI_OP_VPC_RESIZE:
		if (!dv_vpc_rect_whole(&c, &s) || !dv_vpc_rect_whole(&q, &d))
			return -EINVAL;
		break;
	default:
		/* a crop alone pastes into the whole output, of any width */
		if (!dv_vpc_rect_aligned(&c, 2) ||
		    (!dv_vpc_rect_whole(&q, &d) && !dv_vpc_rect_aligned(&q, 16)))
			return -EINVAL;
		break;
	}
	if (dv_vpc_is_yuv(s.fmt) != dv_vpc_is_yuv(d.fmt))
		return -EINVAL;
	if (!dv_vpc_scale_ok(c.r - c.l + 1, q.r - q.l + 1) ||
	    !dv_vpc_scale_ok(c.b - c.t + 1, q.b - q.t + 1))
		return -EINVAL;
	return 0;
}

/**
 * dv_vpc_extent() - bytes a VPC task touches
 * @task: the task, which passed dv_task_validate()
 * @params: its checked parameter block
 * @ext: out: dst the output picture's bytes, src0 the input's
 *
 * Return: 0, or -EINVAL when a range wraps around the address space or
 * the two pictures meet.
 */
int dv_vpc_extent(const struct davinci_task *task, const void *params,
		  struct dv_op_extent *ext)
{
	const struct davinci_params_vpc_crop *p = params;

	if (!p)
		return -EINVAL;
	ext->dst = dv_vpc_picture_bytes(p->dst_format, p->dst_width_stride,
					p->dst_height_stride);
	ext->src0 = dv_vpc_picture_bytes(p->src_format, p->src_width_stride,
					 p->src_height_stride);
	ext->src1 = 0;
	if (!ext->dst || !ext->src0 ||
	    task->dst + ext->dst - 1 < task->dst ||
	    task->src0 + ext->src0 - 1 < task->src0)
		return -EINVAL;
	if (dv_ranges_overlap(task->dst, ext->dst, task->src0, ext->src0))
		return -EINVAL;
	return 0;
}

/* channel k (0: Y or R, 1: U or G, 2: V or B) of picture @p at @base */
static void dv_vpc_channels(const struct dv_vpc_pic *p, u8 *base,
			    struct dv_vpc_chan c[3])
{
	u8 *uv = base + (u64)p->ws * p->hs;
	bool bgr = p->fmt == DAVINCI_VPC_FMT_BGR;
	int i;

	for (i = 0; i < 3; i++) {
		c[i].stride = p->ws;
		c[i].step = 1;
		c[i].hsub = 1;
		c[i].vsub = 1;
	}
	switch (p->fmt) {
	case DAVINCI_VPC_FMT_NV12:
	case DAVINCI_VPC_FMT_NV21:
		c[0].base = base;
		c[1].base = uv + (p->fmt == DAVINCI_VPC_FMT_NV21);
		c[2].base = uv + (p->fmt == DAVINCI_VPC_FMT_NV12);
		for (i = 1; i < 3; i++) {
			c[i].step = 2;
			c[i].hsub = 2;
			c[i].vsub = 2;
		}
		break;
	case DAVINCI_VPC_FMT_YUYV:
		c[0].base = base;
		c[0].step = 2;
		c[1].base = base + 1;
		c[2].base = base + 3;
		for (i = 1; i < 3; i++) {
			c[i].step = 4;
			c[i].hsub = 2;
		}
		break;
	default:
		c[0].base = base + (bgr ? 2 : 0);
		c[1].base = base + 1;
		c[2].base = base + (bgr ? 0 : 2);
		for (i = 0; i < 3; i++)
			c[i].step = 3;
		break;
	}
}

/*
 * The source sample each of @out output samples reads along one axis of
 * @in samples, and its weight: nearest, i = floor(d * in / out); bilinear,
 * the position (d + 0.5) * in / out - 0.5 = num / den with den = 2 * out,
 * clamped to [0, in - 1], its fraction rounded to DV_VPC_FRAC_BITS bits.
 * Every product fits 32 bits: in <= 8192, out <= 4096 (num below 2^26,
 * (num % den) * DV_VPC_ONE below 2^24, an index below 2^13 << 12).
 */
static void dv_vpc_axis(u32 *tab, u32 in, u32 out, bool nearest)
{
	u32 den = 2 * out;
	u32 d, i, w, num;

	for (d = 0; d < out; d++) {
		w = 0;
		num = (2 * d + 1) * in;
		if (nearest) {
			i = d * in / out;
		} else if (num <= out) {
			i = 0;
		} else {
			num -= out;
			i = num / den;
			if (i >= in - 1)
				i = in - 1;
			else
				w = ((num % den) * DV_VPC_ONE + out) / den;
		}
		tab[d] = i << DV_VPC_IDX_SHIFT | w;
	}
}

/* the samples of channel @c at its (x, y), @x0 .. and @y0 .. of a rect */
static u8 *dv_vpc_at(const struct dv_vpc_chan *c, u32 x, u32 y)
{
	return c->base + (u64)y * c->stride + (u64)x * c->step;
}

/*
 * Resample @sw x @sh samples of @s from (@sx, @sy) into @dw x @dh of @d
 * at (@dx, @dy) with the tables @xt and @yt: two taps each way, weights
 * 1 - w and w (nearest: w = 0), the sum of 22 fraction bits rounded half
 * up.
 */
static void dv_vpc_resample(const struct dv_vpc_chan *s, u32 sx, u32 sy,
			    u32 sw, u32 sh, const struct dv_vpc_chan *d,
			    u32 dx, u32 dy, u32 dw, u32 dh, const u32 *xt,
			    const u32 *yt)
{
	u32 x, y, ix, ix1, iy, wx, wy, top, bot;
	const u8 *r0, *r1;
	u8 *o;

	for (y = 0; y < dh; y++) {
		iy = yt[y] >> DV_VPC_IDX_SHIFT;
		wy = yt[y] & DV_VPC_W_MASK;
		r0 = dv_vpc_at(s, sx, sy + iy);
		r1 = dv_vpc_at(s, sx, sy + (iy + 1 < sh ? iy + 1 : iy));
		o = dv_vpc_at(d, dx, dy + y);
		for (x = 0; x < dw; x++) {
			ix = xt[x] >> DV_VPC_IDX_SHIFT;
			wx = xt[x] & DV_VPC_W_MASK;
			ix1 = (ix + 1 < sw ? ix + 1 : ix) * s->step;
			ix *= s->step;
			top = r0[ix] * (DV_VPC_ONE - wx) + r0[ix1] * wx;
			bot = r1[ix] * (DV_VPC_ONE - wx) + r1[ix1] * wx;
			o[x * d->step] = (top * (DV_VPC_ONE - wy) + bot * wy +
					  (1u << (2 * DV_VPC_FRAC_BITS - 1))) >>
					 (2 * DV_VPC_FRAC_BITS);
		}
	}
}

/* a rect in the samples of a channel subsampled by @hsub x @vsub */
static void dv_vpc_sub_rect(const struct dv_vpc_rect *r,
			    const struct dv_vpc_chan *c, u32 *x, u32 *y,
			    u32 *w, u32 *h)
{
	*x = r->l / c->hsub;
	*y = r->t / c->vsub;
	*w = r->r / c->hsub - *x + 1;
	*h = r->b / c->vsub - *y + 1;
}

static int dv_vpc_resize(const struct davinci_params_vpc_crop *p,
			 const struct dv_vpc_rect *crop,
			 const struct dv_vpc_rect *paste,
			 const struct dv_vpc_chan *sc,
			 const struct dv_vpc_chan *dc)
{
	bool nearest = p->interpolation == DAVINCI_VPC_NEAREST;
	u32 sx[2], sy[2], sw[2], sh[2], dx[2], dy[2], dw[2], dh[2];
	u32 *tab, *xt[2], *yt[2];
	u64 n = 0;
	int g, k;

	/* two geometries: channel 0's, and the chroma's (or G's and B's) */
	for (g = 0; g < 2; g++) {
		dv_vpc_sub_rect(crop, &sc[g], &sx[g], &sy[g], &sw[g], &sh[g]);
		dv_vpc_sub_rect(paste, &dc[g], &dx[g], &dy[g], &dw[g], &dh[g]);
		n += dw[g] + dh[g];
	}
	tab = dv_zalloc(n * sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	xt[0] = tab;
	yt[0] = xt[0] + dw[0];
	xt[1] = yt[0] + dh[0];
	yt[1] = xt[1] + dw[1];
	for (g = 0; g < 2; g++) {
		dv_vpc_axis(xt[g], sw[g], dw[g], nearest);
		dv_vpc_axis(yt[g], sh[g], dh[g], nearest);
	}
	for (k = 0; k < 3; k++) {
		g = k ? 1 : 0;
		dv_vpc_resample(&sc[k], sx[g], sy[g], sw[g], sh[g], &dc[k],
				dx[g], dy[g], dw[g], dh[g], xt[g], yt[g]);
	}
	dv_free(tab);
	return 0;
}

/* saturate to a byte */
static u8 dv_vpc_u8(s32 v)
{
	return v < 0 ? 0 : v > 255 ? 255 : (u8)v;
}

/* (x + 0.5) >> 16 of a signed 16-bit fixed-point value, in -256 .. 255 */
static s32 dv_vpc_descale(s32 v)
{
	return (s32)(((u32)(v + (256 << 16) + (1 << 15))) >> 16) - 256;
}

/* JFIF RGB -> YCbCr, libjpeg's jccolor.c (16-bit FIX(x), rounded) */
static void dv_vpc_rgb_to_ycc(u32 r, u32 g, u32 b, u32 *y, u32 *cb, u32 *cr)
{
	*y = (19595 * r + 38470 * g + 7471 * b + 32768) >> 16;
	*cb = (32768 * b + (128u << 16) + 32767 - 11059 * r - 21709 * g) >> 16;
	*cr = (32768 * r + (128u << 16) + 32767 - 27439 * g - 5329 * b) >> 16;
}

/* JFIF YCbCr -> RGB, libjpeg's jdcolor.c */
static void dv_vpc_ycc_to_rgb(u32 y, u32 cb, u32 cr, u32 *r, u32 *g, u32 *b)
{
	s32 u = (s32)cb - 128, v = (s32)cr - 128;

	*r = dv_vpc_u8((s32)y + dv_vpc_descale(91881 * v));
	*g = dv_vpc_u8((s32)y + dv_vpc_descale(-22554 * u - 46802 * v));
	*b = dv_vpc_u8((s32)y + dv_vpc_descale(116130 * u));
}

/* pixel (@x, @y) of a picture as Y, Cb, Cr or R, G, B (chroma repeated) */
static void dv_vpc_pixel(const struct dv_vpc_chan *c, u32 x, u32 y, u32 v[3])
{
	int k;

	for (k = 0; k < 3; k++)
		v[k] = *dv_vpc_at(&c[k], x / c[k].hsub, y / c[k].vsub);
}

/* pixel (@x, @y) of the input as YCbCr (@ycc) or RGB */
static void dv_vpc_pixel_as(const struct dv_vpc_chan *c, bool yuv, bool ycc,
			    u32 x, u32 y, u32 v[3])
{
	dv_vpc_pixel(c, x, y, v);
	if (yuv && !ycc)
		dv_vpc_ycc_to_rgb(v[0], v[1], v[2], &v[0], &v[1], &v[2]);
	else if (!yuv && ycc)
		dv_vpc_rgb_to_ycc(v[0], v[1], v[2], &v[0], &v[1], &v[2]);
}

static void dv_vpc_convert(const struct dv_vpc_pic *s,
			   const struct dv_vpc_chan *sc,
			   const struct dv_vpc_pic *d,
			   const struct dv_vpc_chan *dc)
{
	bool syuv = dv_vpc_is_yuv(s->fmt), dyuv = dv_vpc_is_yuv(d->fmt);
	u32 x, y, i, j, n, cw, ch, v[3], sum[2];
	int k;

	/* channel 0 (and all of RGB) a pixel at a time */
	for (y = 0; y < d->h; y++) {
		for (x = 0; x < d->w; x++) {
			dv_vpc_pixel_as(sc, syuv, dyuv, x, y, v);
			for (k = 0; k < (dyuv ? 1 : 3); k++)
				*dv_vpc_at(&dc[k], x, y) = (u8)v[k];
		}
	}
	if (!dyuv)
		return;
	/* each chroma sample: the rounded mean of the pixels it covers */
	cw = (d->w + dc[1].hsub - 1) / dc[1].hsub;
	ch = (d->h + dc[1].vsub - 1) / dc[1].vsub;
	for (y = 0; y < ch; y++) {
		for (x = 0; x < cw; x++) {
			sum[0] = 0;
			sum[1] = 0;
			n = 0;
			for (j = y * dc[1].vsub; j < (y + 1) * dc[1].vsub &&
			     j < d->h; j++) {
				for (i = x * dc[1].hsub;
				     i < (x + 1) * dc[1].hsub && i < d->w; i++) {
					dv_vpc_pixel_as(sc, syuv, true, i, j, v);
					sum[0] += v[1];
					sum[1] += v[2];
					n++;
				}
			}
			for (k = 1; k < 3; k++)
				*dv_vpc_at(&dc[k], x, y) =
					(u8)((sum[k - 1] + n / 2) / n);
		}
	}
}

/**
 * dv_vpc_run() - run a VPC task
 * @task: the task, resolved (dv_vpc_extent() passed)
 * @params: its checked struct davinci_params_vpc_crop
 * @dst: host address of the output picture
 * @src: host address of the input picture
 *
 * Writes the output's paste rect (the whole picture for a resize and a
 * conversion) and nothing else. Call without dev->lock and outside an
 * FPU section: a resize allocates its coordinate tables.
 *
 * Return: 0, or -ENOMEM (the tables), with nothing written.
 */
int dv_vpc_run(const struct davinci_task *task, const void *params,
	       void *dst, const void *src)
{
	const struct davinci_params_vpc_crop *p = params;
	struct dv_vpc_chan sc[3], dc[3];
	struct dv_vpc_rect crop, paste;
	struct dv_vpc_pic s, d;

	dv_vpc_unpack(p, &s, &d, &crop, &paste);
	dv_vpc_channels(&s, (u8 *)src, sc);
	dv_vpc_channels(&d, dst, dc);
	if (task->opcode == DAVINCI_OP_VPC_CONVERT_COLOR) {
		dv_vpc_convert(&s, sc, &d, dc);
		return 0;
	}
	return dv_vpc_resize(p, &crop, &paste, sc, dc);
}
