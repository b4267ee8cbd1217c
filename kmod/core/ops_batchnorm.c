// SPDX-License-Identifier: GPL-2.0
/*
 * ops_batchnorm.c - batch norm over x[N, C, HW] (task m = N, n = C,
 * k = HW): BN_TRAINING_REDUCE (the statistics), BN_TRAINING_UPDATE (the
 * output), BN_TRAINING_UPDATE_GRAD (the parameters' gradients) and
 * BN_TRAINING_REDUCE_GRAD (the input's). A unit is a channel: each reads
 * the channel's N runs of HW elements and writes its own elements and
 * per-channel values, so any chunking gives the same bytes.
 *
 * Float code: the kernel builds this file with the FPU enabled.
 *
 * Sums over a channel's M = N * HW elements use one fixed order
 * (NUMERICS.md): eight float32 lanes, element p of the channel (image
 * p / HW, position p % HW) added to lane p % 8 in increasing p from +0,
 * the lanes then combined as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) +
 * (l6 + l7)), as REDUCE_SUM's rows. float16 and bfloat16 elements are
 * widened exactly and summed in float32; results are rounded once into
 * the dtype. The variance is two-pass (the centred squares' sum), as
 * CPU torch's.
 */
#include "ops_kernels.h"
#include "numerics.h"

#define BN_BLK 64	/* widened elements per stack block */

struct bn_lanes {
	float t[8];
	u64 p;		/* elements added so far: the next one's lane is p % 8 */
};

static inline dv_v4sf bn_ld(const float *p)
{
	dv_v4sf v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Add x[0..n) as the channel's next elements. */
static void bn_add(struct bn_lanes *l, const float *x, size_t n)
{
	size_t j = 0;

	for (; j < n && (l->p & 7); j++, l->p++)
		l->t[l->p & 7] += x[j];
	if (n - j >= 8) {
		dv_v4sf lo, hi;

		memcpy(&lo, l->t, sizeof(lo));
		memcpy(&hi, l->t + 4, sizeof(hi));
		for (; j + 8 <= n; j += 8) {
			lo += bn_ld(x + j);
			hi += bn_ld(x + j + 4);
			l->p += 8;
		}
		memcpy(l->t, &lo, sizeof(lo));
		memcpy(l->t + 4, &hi, sizeof(hi));
	}
	for (; j < n; j++, l->p++)
		l->t[l->p & 7] += x[j];
}

static float bn_total(const struct bn_lanes *l)
{
	const float *t = l->t;

	return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
}

struct bn_geom {
	size_t n, c, hw;
	float m;	/* N * HW as a float32 */
};

static void bn_geom_of(const struct davinci_task *t, struct bn_geom *g)
{
	g->n = t->m;
	g->c = t->n;
	g->hw = t->k;
	g->m = (float)(s64)((u64)t->m * t->k);
}

/* Offset (in elements) of image @i's run of channel @ch. */
static inline size_t bn_run(const struct bn_geom *g, size_t i, size_t ch)
{
	return (i * g->c + ch) * g->hw;
}

static float bn_f32(u32 bits)
{
	return dv_u2f(bits);
}

/* The statistics of channel @ch (BN_TRAINING_REDUCE). */
static void bn_reduce(const struct davinci_task *t, const struct bn_geom *g,
		      const struct davinci_params_bn_training_reduce *prm,
		      float *dst, const void *x, const float *w,
		      const float *b, size_t ch)
{
	struct bn_lanes l = { { 0 }, 0 };
	float buf[BN_BLK];
	float mean, var_sum, invstd, alpha, beta, uvar, mom;
	size_t i, j, len, r;

	for (i = 0; i < g->n; i++) {
		if (t->dtype == DAVINCI_DTYPE_FLOAT32) {
			bn_add(&l, (const float *)x + bn_run(g, i, ch), g->hw);
			continue;
		}
		for (j = 0; j < g->hw; j += len) {
			len = g->hw - j < BN_BLK ? g->hw - j : BN_BLK;
			dv_widen(t->dtype, x, bn_run(g, i, ch) + j, buf, len);
			bn_add(&l, buf, len);
		}
	}
	mean = bn_total(&l) / g->m;
	memset(&l, 0, sizeof(l));
	for (i = 0; i < g->n; i++) {
		for (j = 0; j < g->hw; j += len) {
			len = g->hw - j < BN_BLK ? g->hw - j : BN_BLK;
			dv_widen(t->dtype, x, bn_run(g, i, ch) + j, buf, len);
			for (r = 0; r < len; r++) {
				float d = buf[r] - mean;

				buf[r] = d * d;
			}
			bn_add(&l, buf, len);
		}
	}
	var_sum = bn_total(&l);
	invstd = 1.0f / dv_sqrtf(var_sum / g->m + bn_f32(prm->eps));
	alpha = w ? invstd * w[ch] : invstd;
	beta = (b ? b[ch] : 0.0f) - mean * alpha;
	/* M = 1 gives 0 / 0, NaN, as CPU torch's unbiased variance */
	uvar = var_sum / (g->m - 1.0f);
	mom = bn_f32(prm->momentum);
	dst[ch] = dv_canon_nan(mean);
	dst[g->c + ch] = dv_canon_nan(invstd);
	dst[2 * g->c + ch] = dv_canon_nan(alpha);
	dst[3 * g->c + ch] = dv_canon_nan(beta);
	dst[4 * g->c + ch] = dv_canon_nan(mom * mean);
	dst[5 * g->c + ch] = dv_canon_nan(mom * uvar);
}

/* y = x * alpha + beta over channel @ch (BN_TRAINING_UPDATE). */
static void bn_update(const struct davinci_task *t, const struct bn_geom *g,
		      void *dst, const void *x, const float *coef, size_t ch)
{
	float alpha = coef[ch], beta = coef[g->c + ch];
	float buf[BN_BLK];
	size_t i, j, len, r;

	for (i = 0; i < g->n; i++) {
		for (j = 0; j < g->hw; j += len) {
			size_t off = bn_run(g, i, ch) + j;

			len = g->hw - j < BN_BLK ? g->hw - j : BN_BLK;
			dv_widen(t->dtype, x, off, buf, len);
			for (r = 0; r < len; r++)
				buf[r] = dv_canon_nan(buf[r] * alpha + beta);
			dv_narrow(t->dtype, dst, off, buf, len);
		}
	}
}

/*
 * sum((x - mean) * dy) * invstd and sum(dy) of channel @ch, and a copy of
 * its mean and invstd: BN_TRAINING_REDUCE_GRAD's first four rows.
 */
static void bn_update_grad(const struct davinci_task *t,
			   const struct bn_geom *g, float *dst,
			   const void *dy, const void *x, const float *stats,
			   size_t ch)
{
	struct bn_lanes ls = { { 0 }, 0 }, ld = { { 0 }, 0 };
	float mean = stats[ch], invstd = stats[g->c + ch];
	float bx[BN_BLK], bd[BN_BLK];
	size_t i, j, len, r;

	for (i = 0; i < g->n; i++) {
		for (j = 0; j < g->hw; j += len) {
			size_t off = bn_run(g, i, ch) + j;

			len = g->hw - j < BN_BLK ? g->hw - j : BN_BLK;
			dv_widen(t->dtype, dy, off, bd, len);
			dv_widen(t->dtype, x, off, bx, len);
			bn_add(&ls, bd, len);
			for (r = 0; r < len; r++)
				bx[r] = (bx[r] - mean) * bd[r];
			bn_add(&ld, bx, len);
		}
	}
	dst[ch] = dv_canon_nan(bn_total(&ld) * invstd);
	dst[g->c + ch] = dv_canon_nan(bn_total(&ls));
	dst[2 * g->c + ch] = mean;
	dst[3 * g->c + ch] = invstd;
}

/* dx of channel @ch (BN_TRAINING_REDUCE_GRAD), as CPU torch's formula. */
static void bn_reduce_grad(const struct davinci_task *t,
			   const struct bn_geom *g, void *dst,
			   const void *dy, const void *x, const float *pk,
			   size_t ch)
{
	float gw = pk[ch], gb = pk[g->c + ch];
	float mean = pk[2 * g->c + ch], invstd = pk[3 * g->c + ch];
	float w = pk[4 * g->c + ch];
	float k = gw * invstd / g->m, gmean = gb / g->m;
	float bx[BN_BLK], bd[BN_BLK];
	size_t i, j, len, r;

	for (i = 0; i < g->n; i++) {
		for (j = 0; j < g->hw; j += len) {
			size_t off = bn_run(g, i, ch) + j;

			len = g->hw - j < BN_BLK ? g->hw - j : BN_BLK;
			dv_widen(t->dtype, dy, off, bd, len);
			dv_widen(t->dtype, x, off, bx, len);
			for (r = 0; r < len; r++) {
				float u = (bd[r] - gmean) - (bx[r] - mean) * k;

				bd[r] = dv_canon_nan(u * invstd * w);
			}
			dv_narrow(t->dtype, dst, off, bd, len);
		}
	}
}

DV_OP_KERNEL(batch_norm)
{
	struct bn_geom g;
	u64 ch;

	bn_geom_of(t, &g);
	for (ch = begin; ch < end; ch++) {
		switch (t->opcode) {
		case DAVINCI_OP_BN_TRAINING_REDUCE:
			bn_reduce(t, &g, params, dst, src0, src1, src2, ch);
			break;
		case DAVINCI_OP_BN_TRAINING_UPDATE:
			bn_update(t, &g, dst, src0, src1, ch);
			break;
		case DAVINCI_OP_BN_TRAINING_UPDATE_GRAD:
			bn_update_grad(t, &g, dst, src0, src1, src2, ch);
			break;
		default:	/* DAVINCI_OP_BN_TRAINING_REDUCE_GRAD */
			bn_reduce_grad(t, &g, dst, src0, src1, src2, ch);
			break;
		}
	}
}
