// SPDX-License-Identifier: GPL-2.0
/*
 * ops_index.c - the indexed ops (DOC: indexed ops in davinci.h), over @m
 * batches of @count indices (src1, int64 or int32 by @imm) into a table
 * of @n rows of @k elements per batch:
 *
 * INDEX_SELECT: dst[b][i][:] = src0[b][idx[b][i]][:]. A copy of bits, so
 * every dtype is exact. Its units are the rows of dst.
 *
 * INDEX_ADD: dst[b][idx[b][i]][:] += src0[b][i][:], for i = 0, 1, ...
 * in order: duplicate indices add in index order, so the bytes do not
 * depend on how the task is chunked or shared out. Its units are the
 * columns of the table (b, j): one unit adds every index's element of
 * its column, and no two units write one element. Floats add in float32
 * (float16 and bfloat16 widened exactly), each sum rounded once to the
 * dtype and a NaN sum made the canonical NaN; integers wrap.
 *
 * The indices were checked as the task started (dv_op_check_data()); an
 * index that changed since and is out of range (another writer racing
 * the task) never reaches memory: its row of dst is zero (INDEX_SELECT)
 * or it adds nothing (INDEX_ADD).
 *
 * Float code: the kernel builds this file with the FPU enabled.
 */
#include "dv_internal.h"
#include "ops_kernels.h"
#include "numerics.h"

#define IX_BLK 64	/* widened elements per stack block */

/* Index @i of src1, -1 for one out of [0, @n). */
static inline s64 ix_at(const void *idx, bool i32, u64 i, u64 n)
{
	s64 r = i32 ? ((const s32 *)idx)[i] : ((const s64 *)idx)[i];

	return r >= 0 && (u64)r < n ? r : -1;
}

static void ix_select(const struct davinci_task *t, u8 *dst, const u8 *src,
		      const void *idx, u64 begin, u64 end)
{
	bool i32 = dv_op_src1_dtype(t) == DAVINCI_DTYPE_INT32;
	u64 row = (u64)t->k * dv_dtype_size(t->dtype);
	u64 u;

	for (u = begin; u < end; u++) {
		s64 r = ix_at(idx, i32, u, t->n);
		u8 *d = dst + u * row;

		if (r < 0)
			memset(d, 0, row);
		else
			memcpy(d, src + ((u / t->count) * t->n + (u64)r) * row,
			       row);
	}
}

/* d[0..n) += s[0..n) in float32 */
static void ix_add_f32(float *d, const float *s, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		d[j] = dv_canon_nan(d[j] + s[j]);
}

/* d[0..n) += s[0..n) of float16 or bfloat16, through float32 */
static void ix_add_half(u8 dtype, u16 *d, const u16 *s, size_t n)
{
	float a[IX_BLK], b[IX_BLK];
	size_t j, len;

	for (j = 0; j < n; j += len) {
		len = n - j < IX_BLK ? n - j : IX_BLK;
		dv_widen(dtype, d, j, a, len);
		dv_widen(dtype, s, j, b, len);
		ix_add_f32(a, b, len);
		dv_narrow(dtype, d, j, a, len);
	}
}

/* d[0..n) += s[0..n) of an integer type T, wrapping (unsigned U) */
#define IX_ADD_INT(T, U, d, s, n)					\
	do {								\
		T *d_ = (T *)(d);					\
		const T *s_ = (const T *)(s);				\
		size_t j_;						\
									\
		for (j_ = 0; j_ < (n); j_++)				\
			d_[j_] = (T)((U)d_[j_] + (U)s_[j_]);		\
	} while (0)

/* @n elements of a row of src into the table row at @d */
static void ix_add_run(u8 dtype, u8 *d, const u8 *s, size_t n)
{
	switch (dtype) {
	case DAVINCI_DTYPE_FLOAT32:
		ix_add_f32((float *)d, (const float *)s, n);
		break;
	case DAVINCI_DTYPE_FLOAT16:
	case DAVINCI_DTYPE_BFLOAT16:
		ix_add_half(dtype, (u16 *)d, (const u16 *)s, n);
		break;
	case DAVINCI_DTYPE_INT32:
		IX_ADD_INT(s32, u32, d, s, n);
		break;
	case DAVINCI_DTYPE_INT64:
		IX_ADD_INT(s64, u64, d, s, n);
		break;
	case DAVINCI_DTYPE_INT8:
		IX_ADD_INT(s8, u8, d, s, n);
		break;
	case DAVINCI_DTYPE_UINT8:
		IX_ADD_INT(u8, u8, d, s, n);
		break;
	}
}

/*
 * Columns [@begin, @end) of the tables, a stretch of one batch's columns
 * at a time: for each index in order, its row's elements of the stretch.
 */
static void ix_add(const struct davinci_task *t, u8 *dst, const u8 *src,
		   const void *idx, u64 begin, u64 end)
{
	bool i32 = dv_op_src1_dtype(t) == DAVINCI_DTYPE_INT32;
	u64 es = dv_dtype_size(t->dtype), k = t->k;
	u64 u = begin, i;

	while (u < end) {
		u64 b = u / k, j0 = u % k;
		u64 len = k - j0 < end - u ? k - j0 : end - u;

		for (i = 0; i < t->count; i++) {
			u64 at = b * t->count + i;
			s64 r = ix_at(idx, i32, at, t->n);

			if (r < 0)
				continue;
			ix_add_run(t->dtype,
				   dst + ((b * t->n + (u64)r) * k + j0) * es,
				   src + (at * k + j0) * es, (size_t)len);
		}
		u += len;
	}
}

DV_OP_KERNEL(index)
{
	(void)src2;
	(void)params;
	if (t->opcode == DAVINCI_OP_INDEX_ADD)
		ix_add(t, dst, src0, src1, begin, end);
	else
		ix_select(t, dst, src0, src1, begin, end);
}
