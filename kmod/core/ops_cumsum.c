// SPDX-License-Identifier: GPL-2.0
/*
 * ops_cumsum.c - CUMSUM: dst[i][j] = src0[i][0] + ... + src0[i][j], each
 * row of src0[m,n] summed in order from j = 0, starting from +0, in CPU
 * torch's accumulator types (its cumsum kernel's acc_type): a float32 row
 * in float64, each prefix rounded once to float32; float16 and bfloat16
 * rows widened exactly and summed in float32, each prefix rounded once
 * to the dtype; the integers wrap in their own width. A NaN result is the
 * canonical NaN. The units are rows, so chunking never splits a sum.
 *
 * Float code: the kernel builds this file with the FPU enabled.
 */
#include "dv_internal.h"
#include "ops_kernels.h"
#include "numerics.h"

#define CS_BLK 64	/* widened elements per stack block */

static void cs_f32(float *d, const float *x, u64 n)
{
	double acc = 0.0;
	u64 j;

	for (j = 0; j < n; j++) {
		acc += (double)x[j];
		d[j] = dv_canon_nan((float)acc);
	}
}

static void cs_half(u8 dtype, u16 *d, const u16 *x, u64 n)
{
	float blk[CS_BLK], acc = 0.0f;
	u64 j, len, l;

	for (j = 0; j < n; j += len) {
		len = n - j < CS_BLK ? n - j : CS_BLK;
		dv_widen(dtype, x, (size_t)j, blk, (size_t)len);
		for (l = 0; l < len; l++) {
			acc += blk[l];
			blk[l] = dv_canon_nan(acc);
		}
		dv_narrow(dtype, d, (size_t)j, blk, (size_t)len);
	}
}

/* a row of integer type T, wrapping through unsigned U */
#define CS_INT(T, U, d, x, n)						\
	do {								\
		T *d_ = (T *)(d);					\
		const T *x_ = (const T *)(x);				\
		U acc_ = 0;						\
		u64 j_;							\
									\
		for (j_ = 0; j_ < (n); j_++) {				\
			acc_ = (U)(acc_ + (U)x_[j_]);			\
			d_[j_] = (T)acc_;				\
		}							\
	} while (0)

DV_OP_KERNEL(cumsum)
{
	u64 es = dv_dtype_size(t->dtype), n = t->n, i;

	(void)src2;
	(void)params;
	(void)src1;
	for (i = begin; i < end; i++) {
		u8 *d = (u8 *)dst + i * n * es;
		const u8 *x = (const u8 *)src0 + i * n * es;

		switch (t->dtype) {
		case DAVINCI_DTYPE_FLOAT32:
			cs_f32((float *)d, (const float *)x, n);
			break;
		case DAVINCI_DTYPE_FLOAT16:
		case DAVINCI_DTYPE_BFLOAT16:
			cs_half(t->dtype, (u16 *)d, (const u16 *)x, n);
			break;
		case DAVINCI_DTYPE_INT32:
			CS_INT(s32, u32, d, x, n);
			break;
		case DAVINCI_DTYPE_INT64:
			CS_INT(s64, u64, d, x, n);
			break;
		case DAVINCI_DTYPE_INT8:
			CS_INT(s8, u8, d, x, n);
			break;
		case DAVINCI_DTYPE_UINT8:
			CS_INT(u8, u8, d, x, n);
			break;
		}
	}
}
