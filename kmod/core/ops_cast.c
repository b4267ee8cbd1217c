// SPDX-License-Identifier: GPL-2.0
/*
 * ops_cast.c - CAST between any two dtypes.
 *
 * Float code: the kernel builds this file with the FPU enabled.
 * Every conversion rounds once from the exact source value:
 *  - to float16/bfloat16: round to nearest even, overflow to inf, NaN to
 *    a quiet NaN (float16 <-> bfloat16 go through float32, which holds
 *    both exactly; int32 -> float16 through float32, exact for every
 *    int32 that does not overflow float16; int32 -> bfloat16 is rounded
 *    directly from the integer);
 *  - int32 -> float32: round to nearest even;
 *  - float -> int32: truncate toward zero, NaN -> 0, saturate at
 *    INT32_MIN / INT32_MAX (+-inf too);
 *  - same type: copy (bits preserved, NaN payloads too).
 * The pairs with INT64, BOOL, INT8 or UINT8 go through a carrier: a block
 * of float32 (every float type widens to it exactly) or of int64 (every
 * integer and bool does), then:
 *  - float -> int8/int32/int64/uint8: truncate toward zero, NaN -> 0,
 *    saturate at the type's bounds (+-inf too);
 *  - int -> int: two's complement wrap (numpy's astype, torch's to());
 *  - x -> bool: x != 0 (NaN is true, -0 false); bool -> x: 0 or 1, any
 *    non-zero byte read as 1;
 *  - int64 -> float32 and -> bfloat16: one rounding (RNE) of the exact
 *    integer; -> float16 through float32, exact for every int64 below
 *    2^24 and overflowing to inf above 65519 either way.
 */
#include "ops_kernels.h"
#include "numerics.h"
#include "ops.h"

#define CAST_LOOP(dst_t, src_t, expr)				\
	do {								\
		dst_t *restrict d_ = (dst_t *)dst + begin;		\
		const src_t *restrict s_ = (const src_t *)src + begin; \
		size_t i_, nb_ = n & ~(size_t)7;			\
		/* a multiple of 8 first: gcc -O2 vectorises it */	\
		for (i_ = 0; i_ < nb_; i_++) {				\
			src_t v = s_[i_];				\
			d_[i_] = (expr);				\
		}							\
		for (; i_ < n; i_++) {					\
			src_t v = s_[i_];				\
			d_[i_] = (expr);				\
		}							\
	} while (0)

#define CT(a, b) ((a) * DAVINCI_DTYPE_COUNT + (b))

#define CAST_BLK 64	/* carrier elements per stack block (512 bytes) */

static bool cast_is_float(u8 dt)
{
	return dt == DAVINCI_DTYPE_FLOAT32 || dt == DAVINCI_DTYPE_FLOAT16 ||
	       dt == DAVINCI_DTYPE_BFLOAT16;
}

/* @n integers or bools of @dt at @s + @i elements, as int64 */
static void cast_load_int(u8 dt, const void *s, size_t i, s64 *v, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		switch (dt) {
		case DAVINCI_DTYPE_INT32:
			v[j] = ((const s32 *)s)[i + j];
			break;
		case DAVINCI_DTYPE_INT64:
			v[j] = ((const s64 *)s)[i + j];
			break;
		case DAVINCI_DTYPE_INT8:
			v[j] = ((const s8 *)s)[i + j];
			break;
		case DAVINCI_DTYPE_UINT8:
			v[j] = ((const u8 *)s)[i + j];
			break;
		default:	/* BOOL */
			v[j] = ((const u8 *)s)[i + j] != 0;
			break;
		}
	}
}

/* float -> an integer type of bounds [@lo, @hi]: truncate, saturate */
static s64 cast_f32_to_int(float f, float lo, float hi_p1, s64 min, s64 max)
{
	if (f != f)
		return 0;
	if (f >= hi_p1)
		return max;
	if (f < lo)
		return min;
	return (s64)f;
}

/* int64 @v of @n to @dt at @d + @i elements */
static void cast_store_int(u8 dt, void *d, size_t i, const s64 *v, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		switch (dt) {
		case DAVINCI_DTYPE_FLOAT32:
			((float *)d)[i + j] = (float)v[j];
			break;
		case DAVINCI_DTYPE_FLOAT16:
			((u16 *)d)[i + j] = dv_f32_to_f16((float)v[j]);
			break;
		case DAVINCI_DTYPE_BFLOAT16:
			((u16 *)d)[i + j] = dv_s64_to_bf16(v[j]);
			break;
		case DAVINCI_DTYPE_INT32:
			((s32 *)d)[i + j] = (s32)(u32)(u64)v[j];
			break;
		case DAVINCI_DTYPE_INT64:
			((s64 *)d)[i + j] = v[j];
			break;
		case DAVINCI_DTYPE_INT8:
			((s8 *)d)[i + j] = (s8)(u8)(u64)v[j];
			break;
		case DAVINCI_DTYPE_UINT8:
			((u8 *)d)[i + j] = (u8)(u64)v[j];
			break;
		default:	/* BOOL */
			((u8 *)d)[i + j] = v[j] != 0;
			break;
		}
	}
}

/* float32 @v of @n to a non-float @dt at @d + @i elements */
static void cast_store_from_f32(u8 dt, void *d, size_t i, const float *v,
				size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		float f = v[j];

		switch (dt) {
		case DAVINCI_DTYPE_INT32:
			((s32 *)d)[i + j] = dv_f32_to_s32(f);
			break;
		case DAVINCI_DTYPE_INT64:
			((s64 *)d)[i + j] = cast_f32_to_int(f,
				-9223372036854775808.0f, 9223372036854775808.0f,
				(s64)(-9223372036854775807LL - 1),
				9223372036854775807LL);
			break;
		case DAVINCI_DTYPE_INT8:
			((s8 *)d)[i + j] = (s8)cast_f32_to_int(f, -128.0f, 128.0f,
							       -128, 127);
			break;
		case DAVINCI_DTYPE_UINT8:
			((u8 *)d)[i + j] = (u8)cast_f32_to_int(f, 0.0f, 256.0f,
							       0, 255);
			break;
		default:	/* BOOL: NaN != 0 */
			((u8 *)d)[i + j] = f != 0.0f;
			break;
		}
	}
}

/* the pairs with an INT64, BOOL, INT8 or UINT8 side, a block at a time */
static void cast_carried(u8 from, u8 to, void *dst, const void *src,
			 size_t begin, size_t n)
{
	union {
		float f[CAST_BLK];
		s64 i[CAST_BLK];
	} c;
	size_t at, len;

	for (at = begin; at < begin + n; at += len) {
		len = begin + n - at < CAST_BLK ? begin + n - at : CAST_BLK;
		if (cast_is_float(from)) {
			dv_widen(from, src, at, c.f, len);
			cast_store_from_f32(to, dst, at, c.f, len);
		} else {
			cast_load_int(from, src, at, c.i, len);
			cast_store_int(to, dst, at, c.i, len);
		}
	}
}

DV_OP_KERNEL(cast)
{
	size_t n = (size_t)(end - begin);
	const void *src = src0;

	(void)src2;
	(void)params;
	(void)src1;
	switch (CT(t->dtype, t->dst_dtype)) {
	case CT(DAVINCI_DTYPE_FLOAT32, DAVINCI_DTYPE_FLOAT32):
	case CT(DAVINCI_DTYPE_INT32, DAVINCI_DTYPE_INT32):
		memcpy((u32 *)dst + begin, (const u32 *)src + begin, n * 4);
		break;
	case CT(DAVINCI_DTYPE_FLOAT16, DAVINCI_DTYPE_FLOAT16):
	case CT(DAVINCI_DTYPE_BFLOAT16, DAVINCI_DTYPE_BFLOAT16):
		memcpy((u16 *)dst + begin, (const u16 *)src + begin, n * 2);
		break;
	case CT(DAVINCI_DTYPE_FLOAT32, DAVINCI_DTYPE_FLOAT16):
		CAST_LOOP(u16, float, dv_f32_to_f16(v));
		break;
	case CT(DAVINCI_DTYPE_FLOAT32, DAVINCI_DTYPE_BFLOAT16):
		CAST_LOOP(u16, float, dv_f32_to_bf16(v));
		break;
	case CT(DAVINCI_DTYPE_FLOAT32, DAVINCI_DTYPE_INT32):
		CAST_LOOP(s32, float, dv_f32_to_s32(v));
		break;
	case CT(DAVINCI_DTYPE_FLOAT16, DAVINCI_DTYPE_FLOAT32):
		CAST_LOOP(float, u16, dv_f16_to_f32(v));
		break;
	case CT(DAVINCI_DTYPE_FLOAT16, DAVINCI_DTYPE_BFLOAT16):
		CAST_LOOP(u16, u16, dv_f32_to_bf16(dv_f16_to_f32(v)));
		break;
	case CT(DAVINCI_DTYPE_FLOAT16, DAVINCI_DTYPE_INT32):
		CAST_LOOP(s32, u16, dv_f32_to_s32(dv_f16_to_f32(v)));
		break;
	case CT(DAVINCI_DTYPE_BFLOAT16, DAVINCI_DTYPE_FLOAT32):
		CAST_LOOP(float, u16, dv_bf16_to_f32(v));
		break;
	case CT(DAVINCI_DTYPE_BFLOAT16, DAVINCI_DTYPE_FLOAT16):
		CAST_LOOP(u16, u16, dv_f32_to_f16(dv_bf16_to_f32(v)));
		break;
	case CT(DAVINCI_DTYPE_BFLOAT16, DAVINCI_DTYPE_INT32):
		CAST_LOOP(s32, u16, dv_f32_to_s32(dv_bf16_to_f32(v)));
		break;
	case CT(DAVINCI_DTYPE_INT32, DAVINCI_DTYPE_FLOAT32):
		CAST_LOOP(float, s32, (float)v);
		break;
	case CT(DAVINCI_DTYPE_INT32, DAVINCI_DTYPE_FLOAT16):
		CAST_LOOP(u16, s32, dv_f32_to_f16((float)v));
		break;
	case CT(DAVINCI_DTYPE_INT32, DAVINCI_DTYPE_BFLOAT16):
		CAST_LOOP(u16, s32, dv_s32_to_bf16(v));
		break;
	default:
		if (t->dtype == t->dst_dtype && t->dtype != DAVINCI_DTYPE_BOOL)
			memcpy((u8 *)dst + begin * dv_dtype_size(t->dtype),
			       (const u8 *)src + begin * dv_dtype_size(t->dtype),
			       n * dv_dtype_size(t->dtype));
		else
			cast_carried(t->dtype, t->dst_dtype, dst, src, begin, n);
		break;
	}
}
