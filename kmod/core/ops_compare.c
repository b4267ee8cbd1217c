// SPDX-License-Identifier: GPL-2.0
/*
 * ops_compare.c - CMP: dst = src0 <pred> src1 ? 1 : 0, pred in task->imm.
 *
 * Float code: the kernel builds this file with the FPU enabled. The
 * result is 1 or 0 in the operands' dtype (float32 1.0f, float16 0x3c00,
 * bfloat16 0x3f80, int32 1): a selection of two constants, so every build
 * gives the same bytes. float16 and bfloat16 are widened exactly and
 * compared in float32, which orders them as their own values. IEEE
 * comparisons: -0 == +0, a NaN compares false (NE: true). dst may be src0
 * or src1 (each element is read before it is written).
 */
#include "ops_kernels.h"
#include "numerics.h"

#define CMP_BLK 64	/* widened elements per stack block */

/* src0 <pred> src1 for one pair of values of type T; 0 or 1 */
#define CMP_EVAL(pred, x, y)						\
	((pred) == DAVINCI_CMP_EQ ? (x) == (y) :			\
	 (pred) == DAVINCI_CMP_NE ? (x) != (y) :			\
	 (pred) == DAVINCI_CMP_LT ? (x) < (y) :				\
	 (pred) == DAVINCI_CMP_LE ? (x) <= (y) :			\
	 (pred) == DAVINCI_CMP_GT ? (x) > (y) : (x) >= (y))

static void cmp_f32(u32 pred, u32 *d, const float *a, const float *b,
		    size_t n, u32 one)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float x = a[i], y = b[i];

		d[i] = CMP_EVAL(pred, x, y) ? one : 0;
	}
}

static void cmp_s32(u32 pred, s32 *d, const s32 *a, const s32 *b,
		    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		s32 x = a[i], y = b[i];

		d[i] = CMP_EVAL(pred, x, y) ? 1 : 0;
	}
}

static void cmp_half(u32 pred, u8 dtype, u16 *d, const u16 *a,
		     const u16 *b, size_t n)
{
	u16 one = dtype == DAVINCI_DTYPE_FLOAT16 ? 0x3c00u : 0x3f80u;
	float ta[CMP_BLK], tb[CMP_BLK];
	size_t i, j, len;

	for (i = 0; i < n; i += len) {
		len = n - i < CMP_BLK ? n - i : CMP_BLK;
		dv_widen(dtype, a, i, ta, len);
		dv_widen(dtype, b, i, tb, len);
		for (j = 0; j < len; j++)
			d[i + j] = CMP_EVAL(pred, ta[j], tb[j]) ? one : 0;
	}
}

DV_OP_KERNEL(compare)
{
	size_t n = (size_t)(end - begin);
	u32 pred = t->imm;

	(void)params;

	switch (t->dtype) {
	case DAVINCI_DTYPE_FLOAT32:
		cmp_f32(pred, (u32 *)dst + begin, (const float *)src0 + begin,
			(const float *)src1 + begin, n, 0x3f800000u);
		break;
	case DAVINCI_DTYPE_INT32:
		cmp_s32(pred, (s32 *)dst + begin, (const s32 *)src0 + begin,
			(const s32 *)src1 + begin, n);
		break;
	case DAVINCI_DTYPE_FLOAT16:
	case DAVINCI_DTYPE_BFLOAT16:
		cmp_half(pred, t->dtype, (u16 *)dst + begin,
			 (const u16 *)src0 + begin, (const u16 *)src1 + begin,
			 n);
		break;
	default:
		break;
	}
}
