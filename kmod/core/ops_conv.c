// SPDX-License-Identifier: GPL-2.0
/*
 * ops_conv.c - CONV2D, CONV2D_BACKWARD_INPUT and CONV2D_BACKWARD_WEIGHT:
 * each is a GEMM per group whose operand that is an image is gathered
 * on the fly (img2col, as the Cube unit reads it), so no column matrix
 * is ever stored.
 *
 * Float code: the kernel builds this file with the FPU enabled.
 *
 * The GEMMs run on MATMUL's row kernels (ops_matmul_kernel.h) at every
 * SIMD level, through struct dv_mm's pack_a/pack_b hooks: the kernels
 * ask for packed rows of A and k x NR panels of B, and the hooks below
 * gather them from the tensors with zeros for padding. Each output
 * element is then one float32 accumulator running over the GEMM's inner
 * index in order (NUMERICS.md, "Convolutions"), whatever the level or the
 * chunking.
 *
 *	op			rows (units)	columns		inner p
 *	CONV2D			y[n][k]		(oh, ow)	(c, r, s)
 *	CONV2D_BACKWARD_INPUT	x[n][c]		(h, w)		(k, r, s)
 *	CONV2D_BACKWARD_WEIGHT	w[k]		(c, r, s)	(n, oh, ow)
 *
 * with c and k within the row's group.
 */
#include "ops_kernels.h"
#include "ops_matmul.h"
#include "ops_conv.h"
#include "numerics.h"

/* One GEMM of a convolution: a group (and an image, but for dw). */
struct conv_gemm {
	const struct dv_conv *g;
	const void *x;		/* the image the GEMM gathers from */
	const void *a;		/* A's tensor, for a gathered A */
	u64 xoff;		/* element of x[n][group's first c][0][0] */
	u64 aoff;		/* A's tensor's element of the group's row 0 */
};

/* Element @i of @base, widened to float32. */
static inline float conv_ld(u8 dtype, const void *base, u64 i)
{
	if (dtype == DAVINCI_DTYPE_FLOAT16)
		return dv_f16_to_f32(((const u16 *)base)[i]);
	if (dtype == DAVINCI_DTYPE_BFLOAT16)
		return dv_bf16_to_f32(((const u16 *)base)[i]);
	return ((const float *)base)[i];
}

static void conv_zero_tail(float *out, size_t kc, size_t cols, size_t nr)
{
	size_t p;

	for (p = 0; cols < nr && p < kc; p++)
		memset(out + p * nr + cols, 0, (nr - cols) * sizeof(float));
}

/*
 * CONV2D's B: out[p * nr + j] = x[c][oh*sh - ph + r*dh][ow*sw - pw + s*dw]
 * (0 outside the image) for p = k0 + .. = (c, r, s), j0 + j = (oh, ow).
 * A stride-1 run of columns in one output row is a run of one input row.
 */
static void conv_pack_b_fwd(const struct dv_mm *mm, size_t k0, size_t kc,
			    size_t j0, size_t cols, size_t nr, float *out)
{
	const struct conv_gemm *cg = mm->ctx;
	const struct davinci_params_conv2d *p = cg->g->p;
	s64 ih0[DV_MM_MAX_NR], iw0[DV_MM_MAX_NR];
	u64 hw = (u64)p->h * p->w, rs = (u64)p->r * p->s;
	size_t j, q;
	bool one_row;

	for (j = 0; j < cols; j++) {
		u64 o = j0 + j;

		ih0[j] = (s64)(o / cg->g->ow) * p->stride_h - p->pad_h;
		iw0[j] = (s64)(o % cg->g->ow) * p->stride_w - p->pad_w;
	}
	one_row = p->stride_w == 1 && ih0[0] == ih0[cols - 1];
	for (q = 0; q < kc; q++) {
		u64 pi = k0 + q, c = pi / rs, r = pi % rs / p->s, s = pi % p->s;
		s64 dh = (s64)r * p->dilation_h, dw = (s64)s * p->dilation_w;
		u64 base = cg->xoff + c * hw;
		float *o = out + q * nr;

		if (one_row) {
			s64 ih = ih0[0] + dh, iw = iw0[0] + dw;

			if ((u64)ih >= p->h) {
				memset(o, 0, cols * sizeof(float));
				continue;
			}
			if (iw >= 0 && iw + (s64)cols <= (s64)p->w) {
				dv_widen(mm->dtype, cg->x,
					 base + (u64)ih * p->w + (u64)iw, o,
					 cols);
				continue;
			}
		}
		for (j = 0; j < cols; j++) {
			s64 ih = ih0[j] + dh, iw = iw0[j] + dw;

			o[j] = (u64)ih < p->h && (u64)iw < p->w ?
			       conv_ld(mm->dtype, cg->x,
				       base + (u64)ih * p->w + (u64)iw) : 0.0f;
		}
	}
	conv_zero_tail(out, kc, cols, nr);
}

/*
 * CONV2D_BACKWARD_INPUT's A: out[i * kc + q] = w[k][c][r][s] for row
 * c = row[i] and p = k0 + q = (k, r, s), k within the group.
 */
static void conv_pack_a_bwd_in(const struct dv_mm *mm, const size_t *row,
			       size_t mr, size_t k0, size_t kc, float *out)
{
	const struct conv_gemm *cg = mm->ctx;
	const struct davinci_params_conv2d *p = cg->g->p;
	u64 rs = (u64)p->r * p->s, crs = cg->g->cg * rs;
	size_t i, q;

	for (i = 0; i < mr; i++) {
		u64 pi = k0, k = pi / rs, t = pi % rs;
		u64 at = cg->aoff + k * crs + row[i] * rs + t;

		for (q = 0; q < kc; q++) {
			out[i * kc + q] = conv_ld(mm->dtype, cg->a, at);
			if (++t == rs) {
				t = 0;
				at += crs - rs;
			}
			at++;
		}
	}
}

/*
 * CONV2D_BACKWARD_INPUT's B: out[q * nr + j] = dy[k][oh][ow] for
 * p = k0 + q = (k, r, s) and j0 + j = (h, w) where h + ph = oh*sh + r*dh
 * and w + pw = ow*sw + s*dw, 0 where no such (oh, ow) is in dy.
 */
static void conv_pack_b_bwd_in(const struct dv_mm *mm, size_t k0, size_t kc,
			       size_t j0, size_t cols, size_t nr, float *out)
{
	const struct conv_gemm *cg = mm->ctx;
	const struct davinci_params_conv2d *p = cg->g->p;
	s64 th[DV_MM_MAX_NR], tw[DV_MM_MAX_NR];
	u64 ohw = (u64)cg->g->oh * cg->g->ow, rs = (u64)p->r * p->s;
	size_t j, q;

	for (j = 0; j < cols; j++) {
		th[j] = (s64)((j0 + j) / p->w) + p->pad_h;
		tw[j] = (s64)((j0 + j) % p->w) + p->pad_w;
	}
	for (q = 0; q < kc; q++) {
		u64 pi = k0 + q, k = pi / rs, r = pi % rs / p->s, s = pi % p->s;
		s64 dh = (s64)r * p->dilation_h, dw = (s64)s * p->dilation_w;
		u64 base = cg->xoff + k * ohw;
		float *o = out + q * nr;

		for (j = 0; j < cols; j++) {
			s64 a = th[j] - dh, b = tw[j] - dw;
			u64 oh = (u64)a / p->stride_h, ow = (u64)b / p->stride_w;

			o[j] = a >= 0 && b >= 0 &&
			       oh * p->stride_h == (u64)a &&
			       ow * p->stride_w == (u64)b &&
			       oh < cg->g->oh && ow < cg->g->ow ?
			       conv_ld(mm->dtype, cg->x,
				       base + oh * cg->g->ow + ow) : 0.0f;
		}
	}
	conv_zero_tail(out, kc, cols, nr);
}

/*
 * CONV2D_BACKWARD_WEIGHT's A: out[i * kc + q] = dy[n][k][oh][ow] for row
 * k = row[i] of the group and p = k0 + q = (n, oh, ow).
 */
static void conv_pack_a_bwd_w(const struct dv_mm *mm, const size_t *row,
			      size_t mr, size_t k0, size_t kc, float *out)
{
	const struct conv_gemm *cg = mm->ctx;
	const struct davinci_params_conv2d *p = cg->g->p;
	u64 ohw = (u64)cg->g->oh * cg->g->ow;
	size_t i, q, run;

	for (i = 0; i < mr; i++) {
		for (q = 0; q < kc; q += run) {
			u64 pi = k0 + q, n = pi / ohw, t = pi % ohw;

			run = ohw - t < kc - q ? ohw - t : kc - q;
			dv_widen(mm->dtype, cg->a, (n * p->k + row[i]) * ohw +
				 cg->aoff + t, out + i * kc + q, run);
		}
	}
}

/*
 * CONV2D_BACKWARD_WEIGHT's B: out[q * nr + j] = x[n][c][oh*sh - ph + r*dh]
 * [ow*sw - pw + s*dw] (0 outside) for p = k0 + q = (n, oh, ow) and
 * j0 + j = (c, r, s).
 */
static void conv_pack_b_bwd_w(const struct dv_mm *mm, size_t k0, size_t kc,
			      size_t j0, size_t cols, size_t nr, float *out)
{
	const struct conv_gemm *cg = mm->ctx;
	const struct davinci_params_conv2d *p = cg->g->p;
	s64 dh[DV_MM_MAX_NR], dw[DV_MM_MAX_NR];
	u64 cb[DV_MM_MAX_NR];
	u64 hw = (u64)p->h * p->w, rs = (u64)p->r * p->s;
	u64 ohw = (u64)cg->g->oh * cg->g->ow;
	u64 pi = k0, n = pi / ohw, oh = pi % ohw / cg->g->ow;
	u64 ow = pi % cg->g->ow;
	size_t j, q;

	for (j = 0; j < cols; j++) {
		u64 col = j0 + j;

		cb[j] = col / rs * hw;
		dh[j] = (s64)(col % rs / p->s) * p->dilation_h - p->pad_h;
		dw[j] = (s64)(col % p->s) * p->dilation_w - p->pad_w;
	}
	for (q = 0; q < kc; q++) {
		s64 ih0 = (s64)(oh * p->stride_h), iw0 = (s64)(ow * p->stride_w);
		u64 base = cg->xoff + n * p->c * hw;
		float *o = out + q * nr;

		for (j = 0; j < cols; j++) {
			s64 ih = ih0 + dh[j], iw = iw0 + dw[j];

			o[j] = (u64)ih < p->h && (u64)iw < p->w ?
			       conv_ld(mm->dtype, cg->x, base + cb[j] +
				       (u64)ih * p->w + (u64)iw) : 0.0f;
		}
		if (++ow == cg->g->ow) {
			ow = 0;
			if (++oh == cg->g->oh) {
				oh = 0;
				n++;
			}
		}
	}
	conv_zero_tail(out, kc, cols, nr);
}

/* elements of y the epilogue widens at a time (a float16 tile row) */
#define CONV_EPI_BLK	64

/* RELU's float32 result: NaN and -0 kept (ops_elementwise.c's f32_relu) */
static inline float conv_relu(float x)
{
	return dv_canon_nan((x >= 0.0f || x != x) ? x : 0.0f);
}

/*
 * @n float32 outputs at @d: + @b as ADD's f32_add (when @bias), then
 * RELU's (when @relu). Simple loops of a multiple of 8 first, which the
 * gcc -O2 vectoriser takes, as ops_elementwise.c's; the tail computes the
 * same expression.
 */
static void conv_epilogue_f32(float *restrict d, size_t n, float b,
			      bool bias, bool relu)
{
	size_t i, nb = n & ~(size_t)7;

	if (bias && relu) {
		for (i = 0; i < nb; i++)
			d[i] = conv_relu(dv_canon_nan(d[i] + b));
		for (; i < n; i++)
			d[i] = conv_relu(dv_canon_nan(d[i] + b));
	} else if (bias) {
		for (i = 0; i < nb; i++)
			d[i] = dv_canon_nan(d[i] + b);
		for (; i < n; i++)
			d[i] = dv_canon_nan(d[i] + b);
	} else {
		for (i = 0; i < nb; i++)
			d[i] = conv_relu(d[i]);
		for (; i < n; i++)
			d[i] = conv_relu(d[i]);
	}
}

/*
 * CONV2D's epilogue on a finished tile of one GEMM: rows [@r0, @r1) of
 * output channels from @ch (the GEMM's first) over columns [@j0, @j1) of
 * the GEMM's y (@y, @ohw columns a row), right after the GEMM stored
 * them: one tile, in cache, or the whole tiles a chunk ran as one GEMM. Each
 * element is what ADD of the broadcast @bias (NULL: none) gives from the
 * stored sum, rounded once to the dtype, then RELU's of that (@relu):
 * the bytes of CONV2D, ADD and RELU as three tasks (NUMERICS.md).
 */
static void conv_epilogue(u8 dtype, void *y, const void *bias, u64 ch,
			  u64 r0, u64 r1, u64 ohw, u64 j0, u64 j1, bool relu)
{
	float tmp[CONV_EPI_BLK];
	u64 r, j, i, len;

	for (r = r0; r < r1; r++) {
		float b = bias ? conv_ld(dtype, bias, ch + r) : 0.0f;
		u64 row = r * ohw;

		if (dtype == DAVINCI_DTYPE_FLOAT32) {
			conv_epilogue_f32((float *)y + row + j0,
					  (size_t)(j1 - j0), b, bias, relu);
			continue;
		}
		for (j = j0; j < j1; j += len) {
			len = j1 - j < CONV_EPI_BLK ? j1 - j : CONV_EPI_BLK;
			dv_widen(dtype, y, row + j, tmp, len);
			if (bias) {
				for (i = 0; i < len; i++)
					tmp[i] = dv_canon_nan(tmp[i] + b);
				/* ADD's result is stored, rounded, first */
				dv_narrow(dtype, y, row + j, tmp, len);
				if (relu)
					dv_widen(dtype, y, row + j, tmp, len);
			}
			if (!relu)
				continue;
			for (i = 0; i < len; i++)
				tmp[i] = conv_relu(tmp[i]);
			dv_narrow(dtype, y, row + j, tmp, len);
		}
	}
}

/*
 * CONV2D's units [@begin, @end): tiles of y[n][g*kg .. +kg] = w[group] x
 * col(x[n], group) (ops_conv.h); a range is cut where the column tile
 * changes and each piece runs as its rows over the tile's columns, or
 * whole tiles of one GEMM as one over all their columns.
 */
static void conv_fwd_tiles(const struct davinci_task *t, void *dst,
			   const void *src0, const void *src1,
			   const void *bias, const struct dv_conv *g,
			   u64 begin, u64 end)
{
	bool relu = t->imm == DAVINCI_CONV2D_RELU;
	const struct davinci_params_conv2d *p = g->p;
	u64 es = t->dtype == DAVINCI_DTYPE_FLOAT32 ? 4 : 2;
	u64 ohw = (u64)g->oh * g->ow, blocks, tiles, u, last;
	struct conv_gemm cg = { .g = g, .x = src0 };
	struct dv_mm mm;

	tiles = dv_conv_fwd_tiles(g, &blocks);
	memset(&mm, 0, sizeof(mm));
	mm.dtype = t->dtype;
	mm.ctx = &cg;
	mm.m = g->kg;
	mm.n = ohw;
	mm.k = g->cg * p->r * p->s;
	mm.pack_b = conv_pack_b_fwd;
	for (u = begin; u < end; u = last) {
		u64 block = u % blocks, tile = u / blocks % tiles;
		u64 gemm = u / blocks / tiles;	/* image * groups + group */
		u64 img = gemm / p->groups, grp = gemm % p->groups;
		u64 row_end, span;

		last = u - block + blocks < end ? u - block + blocks : end;
		span = 1;
		if (!block && last - u == blocks) {
			/* whole tiles: one GEMM over all their columns */
			span = (end - u) / blocks;
			if (span > tiles - tile)
				span = tiles - tile;
			last = u + span * blocks;
		}
		row_end = span > 1 ? g->kg :
			  (block + last - u) * DV_CONV_TILE_ROWS;
		mm.a = (const u8 *)src1 + grp * g->kg * mm.k * es;
		mm.c = (u8 *)dst + gemm * g->kg * ohw * es;
		mm.j_begin = tile * DV_CONV_TILE_COLS;
		mm.j_end = mm.j_begin + span * DV_CONV_TILE_COLS < ohw ?
			   mm.j_begin + span * DV_CONV_TILE_COLS : ohw;
		cg.xoff = (img * p->c + grp * g->cg) * p->h * p->w;
		if (row_end > g->kg)
			row_end = g->kg;
		dv_mm_rows(&mm, block * DV_CONV_TILE_ROWS, row_end);
		if (bias || relu)
			conv_epilogue(t->dtype, mm.c, bias, grp * g->kg,
				      block * DV_CONV_TILE_ROWS, row_end, ohw,
				      mm.j_begin, mm.j_end, relu);
	}
}

/**
 * dv_opk_conv() - units [@begin, @end) of a convolution op
 *
 * CONV2D's units are tiles of its GEMMs (conv_fwd_tiles()), the
 * gradients' the GEMM rows of the table above; a range is cut where the
 * group (or image) changes and each piece runs as its GEMM's rows, so
 * any chunking writes the same bytes.
 */
DV_OP_KERNEL(conv)
{
	const struct davinci_params_conv2d *p = params;
	u64 es = t->dtype == DAVINCI_DTYPE_FLOAT32 ? 4 : 2;
	struct conv_gemm cg;
	struct dv_conv g;
	struct dv_mm mm;
	u64 rs, u, seg, first, last, img, grp;

	if (dv_conv_geom(p, &g))
		return;
	if (t->opcode == DAVINCI_OP_CONV2D) {
		/* src2: the bias, or NULL (the gradients take none) */
		conv_fwd_tiles(t, dst, src0, src1, src2, &g, begin, end);
		return;
	}
	rs = (u64)p->r * p->s;
	memset(&mm, 0, sizeof(mm));
	mm.dtype = t->dtype;
	mm.ctx = &cg;
	cg.g = &g;
	for (u = begin; u < end; u = last) {
		switch (t->opcode) {
		case DAVINCI_OP_CONV2D_BACKWARD_INPUT:
			/* dx[n][g*cg .. +cg] = w[group]^T x col^T(dy[n]) */
			seg = g.cg;
			img = u / p->c;
			grp = u % p->c / g.cg;
			mm.m = g.cg;
			mm.n = p->h * p->w;
			mm.k = g.kg * rs;
			mm.pack_a = conv_pack_a_bwd_in;
			mm.pack_b = conv_pack_b_bwd_in;
			cg.a = src1;
			cg.aoff = grp * g.kg * g.cg * rs;
			cg.x = src0;
			cg.xoff = (img * p->k + grp * g.kg) * g.oh * g.ow;
			break;
		default:
			/* dw[group] = dy[., group] x col(x[., group])^T */
			seg = g.kg;
			img = 0;
			grp = u / g.kg;
			mm.m = g.kg;
			mm.n = g.cg * rs;
			mm.k = p->n * g.oh * g.ow;
			mm.pack_a = conv_pack_a_bwd_w;
			mm.pack_b = conv_pack_b_bwd_w;
			cg.a = src1;
			cg.aoff = grp * g.kg * g.oh * g.ow;
			cg.x = src0;
			cg.xoff = grp * g.cg * p->h * p->w;
			break;
		}
		/* the GEMM of unit u: rows [first, first + seg) */
		first = u - u % seg;
		last = first + seg < end ? first + seg : end;
		mm.c = (u8 *)dst + first * mm.n * es;
		dv_mm_rows(&mm, u - first, last - first);
	}
}
