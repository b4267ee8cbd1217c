// SPDX-License-Identifier: GPL-2.0
/*
 * ops_argreduce.c - ARGMAX and ARGMIN: dst[i] (int64) = the index of the
 * first largest (smallest) element of row i of src0[m,n], torch's rules:
 * the first of equal values (-0 equals +0), and the first NaN, which is
 * both the largest and the smallest. float16 and bfloat16 are widened
 * exactly and compared in float32, which orders them as their own
 * values. Rows have n >= 1 elements (dv_op_extent() refuses n = 0).
 *
 * Float code: the kernel builds this file with the FPU enabled; each
 * comparison is exact, so every build gives the same index.
 */
#include "dv_internal.h"
#include "ops_kernels.h"
#include "numerics.h"

#define AR_BLK 64	/* widened elements per stack block */

/*
 * The index in @x[0..n) of the first element better than @*best (if
 * any), @*best updated; @at is x[0]'s index in the row. A NaN best ends
 * the search (*@done).
 */
static s64 ar_f32(const float *x, size_t n, bool max, float *best,
		  s64 found, u64 at, bool *done)
{
	size_t j;

	for (j = 0; j < n; j++) {
		float v = x[j];

		if (v != v) {
			*best = v;
			*done = true;
			return (s64)(at + j);
		}
		if (max ? v > *best : v < *best) {
			*best = v;
			found = (s64)(at + j);
		}
	}
	return found;
}

static s64 ar_row_float(u8 dtype, const void *row, u64 n, bool max)
{
	float blk[AR_BLK], best;
	bool done = false;
	s64 found = 0;
	u64 j, len;

	dv_widen(dtype, row, 0, &best, 1);
	for (j = 0; j < n && !done; j += len) {
		len = n - j < AR_BLK ? n - j : AR_BLK;
		dv_widen(dtype, row, (size_t)j, blk, (size_t)len);
		found = ar_f32(blk, (size_t)len, max, &best, found, j, &done);
	}
	return found;
}

/* the first best element of @n values of integer type T at @row */
#define AR_INT(T, row, n, max, out)					\
	do {								\
		const T *x_ = (const T *)(row);				\
		T best_ = x_[0];					\
		u64 j_;							\
									\
		(out) = 0;						\
		for (j_ = 1; j_ < (n); j_++)				\
			if ((max) ? x_[j_] > best_ : x_[j_] < best_) {	\
				best_ = x_[j_];				\
				(out) = (s64)j_;			\
			}						\
	} while (0)

static s64 ar_row(u8 dtype, const void *row, u64 n, bool max)
{
	s64 out = 0;

	switch (dtype) {
	case DAVINCI_DTYPE_INT32:
		AR_INT(s32, row, n, max, out);
		break;
	case DAVINCI_DTYPE_INT64:
		AR_INT(s64, row, n, max, out);
		break;
	case DAVINCI_DTYPE_INT8:
		AR_INT(s8, row, n, max, out);
		break;
	case DAVINCI_DTYPE_UINT8:
		AR_INT(u8, row, n, max, out);
		break;
	default:
		out = ar_row_float(dtype, row, n, max);
		break;
	}
	return out;
}

DV_OP_KERNEL(argreduce)
{
	u64 es = dv_dtype_size(t->dtype), i;
	bool max = t->opcode == DAVINCI_OP_ARGMAX;
	s64 *d = dst;

	(void)src2;
	(void)params;
	(void)src1;
	for (i = begin; i < end; i++)
		d[i] = ar_row(t->dtype, (const u8 *)src0 + i * t->n * es, t->n,
			      max);
}
