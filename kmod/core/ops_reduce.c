// SPDX-License-Identifier: GPL-2.0
/*
 * ops_reduce.c - row-wise SOFTMAX, LOG_SOFTMAX and REDUCE_SUM over
 * src0[m,n].
 *
 * Float code: the kernel builds this file with the FPU enabled.
 *
 * Sums use a fixed order (NUMERICS.md): eight float32 lanes, lane l adds
 * the elements j = l, l+8, l+16, ... of the row in increasing j, starting
 * from +0; the lanes are then combined as
 *	((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
 * SOFTMAX of a row: mx = max (NaN propagates), e_j = exp(x_j - mx) with
 * dv_expf_inline(), s = lane sum of e, dst_j = e_j / s. LOG_SOFTMAX: the
 * same mx and s, ls = dv_logf_inline(s), dst_j = (x_j - mx) - ls. float16
 * and bfloat16 rows are widened exactly and the result rounded once.
 */
#include "ops_kernels.h"
#include "numerics.h"

#define RD_BLK 64	/* widened elements per stack block; multiple of 8 */

struct lanes {
	dv_v4sf lo, hi;
};

static inline dv_v4sf rd_ld(const float *p)
{
	dv_v4sf v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Add x[0..n) to the lanes; x[0] belongs to lane 0. */
static void lanes_add(struct lanes *l, const float *x, size_t n)
{
	dv_v4sf lo = l->lo, hi = l->hi;
	float t[8];
	size_t j;

	for (j = 0; j + 8 <= n; j += 8) {
		lo += rd_ld(x + j);
		hi += rd_ld(x + j + 4);
	}
	if (j < n) {
		memcpy(t, &lo, sizeof(lo));
		memcpy(t + 4, &hi, sizeof(hi));
		for (; j < n; j++)
			t[j & 7] += x[j];
		memcpy(&lo, t, sizeof(lo));
		memcpy(&hi, t + 4, sizeof(hi));
	}
	l->lo = lo;
	l->hi = hi;
}

static float lanes_total(const struct lanes *l)
{
	float t[8];

	memcpy(t, &l->lo, sizeof(l->lo));
	memcpy(t + 4, &l->hi, sizeof(l->hi));
	return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
}

/* np.maximum semantics */
static inline float np_max(float x, float y)
{
	return (x >= y || x != x) ? x : y;
}

static void sm_exp(float *restrict d, const float *restrict x, size_t n,
		   float mx)
{
	size_t i, nb = n & ~(size_t)7;

	for (i = 0; i < nb; i++)
		d[i] = dv_expf_inline(x[i] - mx);
	for (; i < n; i++)
		d[i] = dv_expf_inline(x[i] - mx);
}

static void sm_div(float *restrict d, const float *restrict x, size_t n,
		   float s)
{
	size_t i, nb = n & ~(size_t)7;

	for (i = 0; i < nb; i++)
		d[i] = dv_canon_nan(x[i] / s);
	for (; i < n; i++)
		d[i] = dv_canon_nan(x[i] / s);
}

static void sm_scale(float *restrict d, size_t n, float s)
{
	size_t i, nb = n & ~(size_t)7;

	for (i = 0; i < nb; i++)
		d[i] = dv_canon_nan(d[i] / s);
	for (; i < n; i++)
		d[i] = dv_canon_nan(d[i] / s);
}

/* LOG_SOFTMAX's result: d_j = (x_j - mx) - ls */
static void sm_logsub(float *restrict d, const float *restrict x, size_t n,
		      float mx, float ls)
{
	size_t i, nb = n & ~(size_t)7;

	for (i = 0; i < nb; i++)
		d[i] = dv_canon_nan((x[i] - mx) - ls);
	for (; i < n; i++)
		d[i] = dv_canon_nan((x[i] - mx) - ls);
}

static void softmax_f32(float *restrict d, const float *restrict x, size_t n,
			bool log)
{
	struct lanes l = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
	float mx = x[0], s;
	size_t j;

	for (j = 1; j < n; j++)
		mx = np_max(mx, x[j]);
	sm_exp(d, x, n, mx);
	lanes_add(&l, d, n);
	s = lanes_total(&l);
	if (log)
		sm_logsub(d, x, n, mx, dv_logf_inline(s));
	else
		sm_scale(d, n, s);
}

static void softmax_half(u8 dtype, void *dst, const void *src, size_t off,
			 size_t n, bool log)
{
	struct lanes l = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
	float buf[RD_BLK], e[RD_BLK];
	float mx = 0.0f, s, ls;
	size_t j, len, i;

	for (j = 0; j < n; j += len) {
		len = n - j < RD_BLK ? n - j : RD_BLK;
		dv_widen(dtype, src, off + j, buf, len);
		for (i = 0; i < len; i++)
			mx = (j + i == 0) ? buf[0] : np_max(mx, buf[i]);
	}
	for (j = 0; j < n; j += len) {
		len = n - j < RD_BLK ? n - j : RD_BLK;
		dv_widen(dtype, src, off + j, buf, len);
		sm_exp(e, buf, len, mx);
		lanes_add(&l, e, len);
	}
	s = lanes_total(&l);
	ls = log ? dv_logf_inline(s) : 0.0f;
	for (j = 0; j < n; j += len) {
		len = n - j < RD_BLK ? n - j : RD_BLK;
		dv_widen(dtype, src, off + j, buf, len);
		if (log) {
			sm_logsub(e, buf, len, mx, ls);
			dv_narrow(dtype, dst, off + j, e, len);
		} else {
			sm_exp(e, buf, len, mx);
			sm_div(buf, e, len, s);
			dv_narrow(dtype, dst, off + j, buf, len);
		}
	}
}

DV_OP_KERNEL(softmax)
{
	size_t n = t->n, i;
	bool log = t->opcode == DAVINCI_OP_LOG_SOFTMAX;

	(void)src2;
	(void)params;
	(void)src1;
	if (!n)
		return;
	for (i = begin; i < end; i++) {
		if (t->dtype == DAVINCI_DTYPE_FLOAT32)
			softmax_f32((float *)dst + i * n,
				    (const float *)src0 + i * n, n, log);
		else
			softmax_half(t->dtype, dst, src0, i * n, n, log);
	}
}

DV_OP_KERNEL(reduce_sum)
{
	size_t n = t->n, i, j, len;
	float buf[RD_BLK];

	(void)src2;
	(void)params;
	(void)src1;
	for (i = begin; i < end; i++) {
		struct lanes l = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
		float s;

		if (!n) {
			/* empty row; src0 has no bytes (may be NULL) */
		} else if (t->dtype == DAVINCI_DTYPE_FLOAT32) {
			lanes_add(&l, (const float *)src0 + i * n, n);
		} else {
			for (j = 0; j < n; j += len) {
				len = n - j < RD_BLK ? n - j : RD_BLK;
				dv_widen(t->dtype, src0, i * n + j, buf, len);
				lanes_add(&l, buf, len);
			}
		}
		s = dv_canon_nan(lanes_total(&l));
		dv_narrow(t->dtype, dst, i, &s, 1);
	}
}
