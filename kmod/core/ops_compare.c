// SPDX-License-Identifier: GPL-2.0
/*
 * ops_compare.c - CMP: dst = src0 <pred> src1 ? 1 : 0, pred in task->imm,
 * in the operands' dtype or (dst_dtype BOOL) as bool bytes.
 *
 * Float code: the kernel builds this file with the FPU enabled. The
 * result is 1 or 0 in the operands' dtype (float32 1.0f, float16 0x3c00,
 * bfloat16 0x3f80, the integers 1) or a bool: a selection of two
 * constants, so every build gives the same bytes. float16 and bfloat16 are widened exactly and
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

/* @r[j] = a[j] <pred> b[j] for @n pairs of T (read @off elements in) */
#define CMP_RUN(T, pred, a, b, off, r, n)				\
	do {								\
		const T *a_ = (const T *)(a) + (off);			\
		const T *b_ = (const T *)(b) + (off);			\
		size_t j_;						\
									\
		for (j_ = 0; j_ < (n); j_++) {				\
			T x_ = a_[j_], y_ = b_[j_];			\
									\
			(r)[j_] = CMP_EVAL(pred, x_, y_);		\
		}							\
	} while (0)

/* The predicate of @n elements at @off into @r, 0 or 1 each. */
static void cmp_eval(u32 pred, u8 dtype, const void *a, const void *b,
		     size_t off, u8 *r, size_t n)
{
	float ta[CMP_BLK], tb[CMP_BLK];

	switch (dtype) {
	case DAVINCI_DTYPE_FLOAT32:
		CMP_RUN(float, pred, a, b, off, r, n);
		break;
	case DAVINCI_DTYPE_FLOAT16:
	case DAVINCI_DTYPE_BFLOAT16:
		dv_widen(dtype, a, off, ta, n);
		dv_widen(dtype, b, off, tb, n);
		CMP_RUN(float, pred, ta, tb, 0, r, n);
		break;
	case DAVINCI_DTYPE_INT32:
		CMP_RUN(s32, pred, a, b, off, r, n);
		break;
	case DAVINCI_DTYPE_INT64:
		CMP_RUN(s64, pred, a, b, off, r, n);
		break;
	case DAVINCI_DTYPE_INT8:
		CMP_RUN(s8, pred, a, b, off, r, n);
		break;
	default:	/* UINT8 */
		CMP_RUN(u8, pred, a, b, off, r, n);
		break;
	}
}

/* @n results @r as @dtype's 1 or 0, @off elements into @d */
static void cmp_store(u8 dtype, void *d, size_t off, const u8 *r, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		switch (dtype) {
		case DAVINCI_DTYPE_FLOAT32:
			((u32 *)d)[off + j] = r[j] ? 0x3f800000u : 0;
			break;
		case DAVINCI_DTYPE_FLOAT16:
			((u16 *)d)[off + j] = r[j] ? 0x3c00u : 0;
			break;
		case DAVINCI_DTYPE_BFLOAT16:
			((u16 *)d)[off + j] = r[j] ? 0x3f80u : 0;
			break;
		case DAVINCI_DTYPE_INT32:
			((s32 *)d)[off + j] = r[j];
			break;
		case DAVINCI_DTYPE_INT64:
			((s64 *)d)[off + j] = r[j];
			break;
		default:	/* BOOL, INT8, UINT8 */
			((u8 *)d)[off + j] = r[j];
			break;
		}
	}
}

DV_OP_KERNEL(compare)
{
	u8 out = t->dst_dtype ? t->dst_dtype : t->dtype;
	u8 r[CMP_BLK];
	size_t i, len;

	(void)src2;
	(void)params;
	/* a block is read whole before it is written: dst may be a source */
	for (i = (size_t)begin; i < end; i += len) {
		len = end - i < CMP_BLK ? (size_t)(end - i) : CMP_BLK;
		cmp_eval(t->imm, t->dtype, src0, src1, i, r, len);
		cmp_store(out, dst, i, r, len);
	}
}
