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
 * gather them from the tensors with zeros for padding, a run of an input
 * row at a time (a 1x1 convolution at stride 1 without padding needs no
 * gathering: its operands are plain matrices). Each output
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
 * A run of a B panel's columns that lie in one row of the column grid
 * (the output positions (oh, ow) for CONV2D, (h, w) for the input
 * gradient): panel columns [j, j + len) are grid row gr, columns gc ...
 */
struct conv_run {
	u32 j, len;
	u64 gr, gc;
};

/* Cut columns [@j0, @j0 + @cols) of a grid @gw wide into runs. */
static size_t conv_runs(u64 j0, size_t cols, u64 gw, struct conv_run *run)
{
	u64 gr = j0 / gw, gc = j0 % gw;
	size_t n = 0, j = 0, len;

	for (; j < cols; j += len, gr++, gc = 0, n++) {
		len = gw - gc < cols - j ? gw - gc : cols - j;
		run[n].j = j;
		run[n].len = len;
		run[n].gr = gr;
		run[n].gc = gc;
	}
	return n;
}

/* a short run of float32: vector moves inline (a multiple of 8 first) */
static inline void conv_copy(float *restrict d, const float *restrict s,
			     size_t n)
{
	size_t i, nb = n & ~(size_t)7;

	for (i = 0; i < nb; i++)
		d[i] = s[i];
	for (; i < n; i++)
		d[i] = s[i];
}

/*
 * o[t * ost] = plane[ih][iw0 + t * sw] for t < @len, the plane @h x @w
 * at element @base of @x, and 0 outside it: one bounds check per run,
 * the in-bounds middle widened as a block when it is contiguous.
 */
static inline void conv_row(u8 dtype, const void *x, u64 base, s64 ih,
			    s64 iw0, u32 sw, u32 h, u32 w, size_t len,
			    float *o, size_t ost)
{
	size_t lo = 0, hi = len, t;

	if ((u64)ih < h) {
		base += (u64)ih * w;
		if (iw0 < 0)
			lo = (size_t)((u64)(-iw0 + sw - 1) / sw);
		if (iw0 + (s64)(len - 1) * sw >= (s64)w)
			hi = iw0 < (s64)w ?
			     (size_t)((u64)((s64)w - iw0 + sw - 1) / sw) : 0;
		if (lo > hi)
			lo = hi;
	} else {
		lo = len;
		hi = len;
	}
	if (ost == 1) {
		if (lo)
			memset(o, 0, lo * sizeof(float));
		if (hi < len)
			memset(o + hi, 0, (len - hi) * sizeof(float));
	} else {
		for (t = 0; t < lo; t++)
			o[t * ost] = 0.0f;
		for (t = hi; t < len; t++)
			o[t * ost] = 0.0f;
	}
	if (lo == hi)
		return;
	base += (u64)(iw0 + (s64)lo * sw);
	o += lo * ost;
	if (sw == 1 && ost == 1 && dtype == DAVINCI_DTYPE_FLOAT32) {
		conv_copy(o, (const float *)x + base, hi - lo);
	} else if (sw == 1 && ost == 1) {
		dv_widen(dtype, x, base, o, hi - lo);
	} else if (dtype == DAVINCI_DTYPE_FLOAT32) {
		const float *f = (const float *)x + base;

		for (t = 0; t < hi - lo; t++)
			o[t * ost] = f[t * sw];
	} else {
		for (t = 0; t < hi - lo; t++)
			o[t * ost] = conv_ld(dtype, x, base + t * sw);
	}
}

/*
 * CONV2D's B: out[p * nr + j] = x[c][oh*sh - ph + r*dh][ow*sw - pw + s*dw]
 * (0 outside the image) for p = k0 + .. = (c, r, s), j0 + j = (oh, ow):
 * per p, each run of the panel's columns in one output row is one
 * (strided) run of one input row.
 */
static void conv_pack_b_fwd(const struct dv_mm *mm, size_t k0, size_t kc,
			    size_t j0, size_t cols, size_t nr, float *out)
{
	const struct conv_gemm *cg = mm->ctx;
	const struct davinci_params_conv2d *p = cg->g->p;
	struct conv_run run[DV_MM_MAX_NR];
	u64 hw = (u64)p->h * p->w, rs = (u64)p->r * p->s;
	u64 c = k0 / rs, r = k0 % rs / p->s, s = k0 % p->s;
	size_t q, i, runs = conv_runs(j0, cols, cg->g->ow, run);

	for (i = 0; i < runs; i++) {
		run[i].gr *= p->stride_h;
		run[i].gc *= p->stride_w;
	}
	for (q = 0; q < kc; q++) {
		s64 dh = (s64)r * p->dilation_h - p->pad_h;
		s64 dw = (s64)s * p->dilation_w - p->pad_w;
		u64 base = cg->xoff + c * hw;
		float *o = out + q * nr;

		for (i = 0; i < runs; i++)
			conv_row(mm->dtype, cg->x, base, (s64)run[i].gr + dh,
				 (s64)run[i].gc + dw, p->stride_w, p->h, p->w,
				 run[i].len, o + run[i].j, 1);
		if (++s == p->s) {
			s = 0;
			if (++r == p->r) {
				r = 0;
				c++;
			}
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
	size_t i, q, len;

	for (i = 0; i < mr; i++) {
		u64 k = k0 / rs, t = k0 % rs;

		/* w[k][c] is a run of rs elements: one copy per k */
		for (q = 0; q < kc; q += len, k++, t = 0) {
			u64 at = cg->aoff + k * crs + row[i] * rs + t;

			len = rs - t < kc - q ? rs - t : kc - q;
			if (mm->dtype == DAVINCI_DTYPE_FLOAT32)
				conv_copy(out + i * kc + q,
					  (const float *)cg->a + at, len);
			else
				dv_widen(mm->dtype, cg->a, at, out + i * kc + q,
					 len);
		}
	}
}

/*
 * CONV2D_BACKWARD_INPUT's B at stride 1: out[q * nr + j] =
 * dy[k][h + ph - r*dh][w + pw - s*dw] (0 outside dy) for p = k0 + q =
 * (k, r, s) and j0 + j = (h, w), a run of one row of dy per run of the
 * panel's columns in one row of x.
 */
static void conv_pack_b_bwd_in1(const struct dv_mm *mm, size_t k0,
				size_t kc, size_t j0, size_t cols, size_t nr,
				float *out)
{
	const struct conv_gemm *cg = mm->ctx;
	const struct davinci_params_conv2d *p = cg->g->p;
	struct conv_run run[DV_MM_MAX_NR];
	u64 ohw = (u64)cg->g->oh * cg->g->ow, rs = (u64)p->r * p->s;
	u64 k = k0 / rs, r = k0 % rs / p->s, s = k0 % p->s;
	size_t q, i, runs = conv_runs(j0, cols, p->w, run);

	for (q = 0; q < kc; q++) {
		s64 dh = (s64)p->pad_h - (s64)r * p->dilation_h;
		s64 dw = (s64)p->pad_w - (s64)s * p->dilation_w;
		u64 base = cg->xoff + k * ohw;
		float *o = out + q * nr;

		for (i = 0; i < runs; i++)
			conv_row(mm->dtype, cg->x, base, (s64)run[i].gr + dh,
				 (s64)run[i].gc + dw, 1, cg->g->oh, cg->g->ow,
				 run[i].len, o + run[i].j, 1);
		if (++s == p->s) {
			s = 0;
			if (++r == p->r) {
				r = 0;
				k++;
			}
		}
	}
	conv_zero_tail(out, kc, cols, nr);
}

/*
 * CONV2D_BACKWARD_INPUT's B: out[q * nr + j] = dy[k][oh][ow] for
 * p = k0 + q = (k, r, s) and j0 + j = (h, w) where h + ph = oh*sh + r*dh
 * and w + pw = ow*sw + s*dw, 0 where no such (oh, ow) is in dy: per run
 * of the panel's columns in one row of x, one row of dy or none, and
 * every sw-th column from the first that has an ow.
 */
static void conv_pack_b_bwd_in(const struct dv_mm *mm, size_t k0, size_t kc,
			       size_t j0, size_t cols, size_t nr, float *out)
{
	const struct conv_gemm *cg = mm->ctx;
	const struct davinci_params_conv2d *p = cg->g->p;
	struct conv_run run[DV_MM_MAX_NR];
	u64 ohw = (u64)cg->g->oh * cg->g->ow, rs = (u64)p->r * p->s;
	u64 k = k0 / rs, r = k0 % rs / p->s, s = k0 % p->s;
	u32 sh = p->stride_h, sw = p->stride_w;
	size_t q, i, t, runs;

	if (sh == 1 && sw == 1) {
		conv_pack_b_bwd_in1(mm, k0, kc, j0, cols, nr, out);
		return;
	}
	runs = conv_runs(j0, cols, p->w, run);
	for (q = 0; q < kc; q++) {
		u64 base = cg->xoff + k * ohw;
		float *o = out + q * nr;

		memset(o, 0, cols * sizeof(float));
		for (i = 0; i < runs; i++) {
			/* dy's row oh = a / sh and columns ow = b / sw */
			s64 a = (s64)run[i].gr + p->pad_h -
				(s64)r * p->dilation_h;
			s64 b = (s64)run[i].gc + p->pad_w -
				(s64)s * p->dilation_w;
			u64 oh, ow;

			if (a < 0 || (u64)a % sh || (u64)a / sh >= cg->g->oh)
				continue;
			oh = (u64)a / sh;
			t = b >= 0 ? (sw - (u64)b % sw) % sw : (size_t)-b;
			for (ow = (u64)(b + (s64)t) / sw;
			     t < run[i].len && ow < cg->g->ow; t += sw, ow++)
				o[run[i].j + t] = conv_ld(mm->dtype, cg->x, base +
							  oh * cg->g->ow + ow);
		}
		if (++s == p->s) {
			s = 0;
			if (++r == p->r) {
				r = 0;
				k++;
			}
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
 * j0 + j = (c, r, s): per run of p in one output row (at most ow of the
 * panel's lines, a few KiB), each column is one (strided) run of one
 * input row.
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
	u64 n = k0 / ohw, oh = k0 % ohw / cg->g->ow, ow = k0 % cg->g->ow;
	size_t j, q, len;

	for (j = 0; j < cols; j++) {
		u64 col = j0 + j;

		cb[j] = col / rs * hw;
		dh[j] = (s64)(col % rs / p->s) * p->dilation_h - p->pad_h;
		dw[j] = (s64)(col % p->s) * p->dilation_w - p->pad_w;
	}
	for (q = 0; q < kc; q += len) {
		s64 ih0 = (s64)(oh * p->stride_h), iw0 = (s64)(ow * p->stride_w);
		u64 base = cg->xoff + n * p->c * hw;

		len = cg->g->ow - ow < kc - q ? cg->g->ow - ow : kc - q;
		for (j = 0; j < cols; j++)
			conv_row(mm->dtype, cg->x, base + cb[j], ih0 + dh[j],
				 iw0 + dw[j], p->stride_w, p->h, p->w, len,
				 out + q * nr + j, nr);
		ow += len;
		if (ow == cg->g->ow) {
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
 * A 1 x 1 convolution at stride 1 without padding: its img2col is the
 * image itself, x[n][c] a [c, h*w] matrix (and dy[n][k] one [k, h*w]).
 */
static bool conv_pointwise(const struct davinci_params_conv2d *p)
{
	return p->r == 1 && p->s == 1 && p->stride_h == 1 &&
	       p->stride_w == 1 && !p->pad_h && !p->pad_w;
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
	bool plain;

	tiles = dv_conv_fwd_tiles(g, &blocks);
	memset(&mm, 0, sizeof(mm));
	mm.dtype = t->dtype;
	mm.ctx = &cg;
	mm.m = g->kg;
	mm.n = ohw;
	mm.k = g->cg * p->r * p->s;
	/* a pointwise convolution's B is x[n][group] itself: no gathering */
	plain = conv_pointwise(p);
	mm.pack_b = plain ? NULL : conv_pack_b_fwd;
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
		mm.b = (const u8 *)src0 + cg.xoff * es;
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
			if (conv_pointwise(p)) {
				/* A is w[group]^T as stored, B dy[n][group] */
				mm.pack_a = NULL;
				mm.pack_b = NULL;
				mm.ta = true;
				mm.a = (const u8 *)src1 + cg.aoff * es;
				mm.b = (const u8 *)src0 + cg.xoff * es;
			}
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
