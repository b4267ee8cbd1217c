// SPDX-License-Identifier: GPL-2.0
/*
 * ops_cast.c - CAST between FLOAT32, FLOAT16, BFLOAT16 and INT32.
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
 */
#include "ops_kernels.h"
#include "numerics.h"

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

DV_OP_KERNEL(cast)
{
	size_t n = (size_t)(end - begin);
	const void *src = src0;

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
		break;
	}
}
