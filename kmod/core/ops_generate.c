// SPDX-License-Identifier: GPL-2.0
/*
 * ops_generate.c - the ops that write dst[@count] from their parameter
 * block alone (NUMERICS.md has their arithmetic):
 *
 * FILL: every element is the block's value (its low bytes, as bits).
 *
 * ARANGE: dst[i] = start + i * step. The integers in int64, wrapping,
 * truncated to the dtype; float32 in float64 (start + step * i, as
 * float64 products and sums of the exact i), rounded once; float16 and
 * bfloat16 in float32 (start and step rounded to float32 first, then
 * start + step * float32(i)), rounded once to the dtype: CPU torch's
 * arange arithmetic element by element (its serial loop).
 *
 * RANDOM_UNIFORM: dst[i] from word i % 4 of the Philox4x32-10 block of
 * counter (offset + i / 4, 0) and key seed: x >> 8 times 2^-24 for
 * float32, x >> 21 times 2^-11 for float16 and x >> 24 times 2^-8 for
 * bfloat16: uniform on [0, 1), every value exact in its dtype.
 *
 * BERNOULLI: 1 where float32's uniform value of element i is below p
 * (@imm's float32), else 0, in the dtype (1.0 for the float types).
 *
 * Element i's value depends on i alone, so chunks give the same bytes.
 * Float code: the kernel builds this file with the FPU enabled.
 */
#include "dv_internal.h"
#include "ops_kernels.h"
#include "numerics.h"

#define PH_M0	0xD2511F53u
#define PH_M1	0xCD9E8D57u
#define PH_W0	0x9E3779B9u	/* the golden ratio */
#define PH_W1	0xBB67AE85u	/* sqrt(3) - 1 */

/* Philox4x32-10 (Salmon et al., SC'11) of counter @c and key @k into @c */
static void philox(u32 c[4], u32 k0, u32 k1)
{
	int r;

	for (r = 0; r < 10; r++) {
		u64 p0 = (u64)PH_M0 * c[0], p1 = (u64)PH_M1 * c[2];
		u32 n0 = (u32)(p1 >> 32) ^ c[1] ^ k0;
		u32 n2 = (u32)(p0 >> 32) ^ c[3] ^ k1;

		c[1] = (u32)p1;
		c[3] = (u32)p0;
		c[0] = n0;
		c[2] = n2;
		k0 += PH_W0;
		k1 += PH_W1;
	}
}

/*
 * Word @i % 4 of the block of counter offset + @i / 4; @c caches the
 * block numbered *@have - 1 (0: none yet).
 */
static u32 ph_word(const struct davinci_params_random_uniform *p, u64 i,
		   u32 c[4], u64 *have)
{
	u64 ctr = p->offset + i / 4;

	if (*have != i / 4 + 1) {
		c[0] = (u32)ctr;
		c[1] = (u32)(ctr >> 32);
		c[2] = 0;
		c[3] = 0;
		philox(c, (u32)p->seed, (u32)(p->seed >> 32));
		*have = i / 4 + 1;
	}
	return c[i % 4];
}

/* The dtype's 1: bits of 1.0 for the floats, 1 for the others. */
static u64 gen_one(u8 dtype)
{
	switch (dtype) {
	case DAVINCI_DTYPE_FLOAT32:
		return 0x3f800000u;
	case DAVINCI_DTYPE_FLOAT16:
		return 0x3c00u;
	case DAVINCI_DTYPE_BFLOAT16:
		return 0x3f80u;
	default:
		return 1;
	}
}

/* Element @i of dst := the low bytes of @v. */
static void gen_put(void *dst, u64 es, u64 i, u64 v)
{
	switch (es) {
	case 8:
		((u64 *)dst)[i] = v;
		break;
	case 4:
		((u32 *)dst)[i] = (u32)v;
		break;
	case 2:
		((u16 *)dst)[i] = (u16)v;
		break;
	default:
		((u8 *)dst)[i] = (u8)v;
		break;
	}
}

/* float32 @f as the bits of @dtype, rounded once */
static u64 gen_float(u8 dtype, float f)
{
	f = dv_canon_nan(f);
	if (dtype == DAVINCI_DTYPE_FLOAT16)
		return dv_f32_to_f16(f);
	if (dtype == DAVINCI_DTYPE_BFLOAT16)
		return dv_f32_to_bf16(f);
	return dv_f2u(f);
}

static double gen_f64(u64 bits)
{
	union { double d; u64 u; } v;

	v.u = bits;
	return v.d;
}

static u64 gen_arange(u8 dtype, const struct davinci_params_arange *p,
		      u64 i)
{
	double start = gen_f64(p->start), step = gen_f64(p->step);

	switch (dtype) {
	case DAVINCI_DTYPE_FLOAT32:
		return gen_float(dtype, (float)(start + step * (double)(s64)i));
	case DAVINCI_DTYPE_FLOAT16:
	case DAVINCI_DTYPE_BFLOAT16:
		return gen_float(dtype, (float)start +
				 (float)step * (float)(s64)i);
	default:
		return p->start + i * p->step;	/* wraps, as int64 */
	}
}

static u64 gen_uniform(u8 dtype, u32 x)
{
	if (dtype == DAVINCI_DTYPE_FLOAT16)
		return dv_f32_to_f16((float)(x >> 21) * (1.0f / 2048.0f));
	if (dtype == DAVINCI_DTYPE_BFLOAT16)
		return dv_f32_to_bf16((float)(x >> 24) * (1.0f / 256.0f));
	return dv_f2u((float)(x >> 8) * (1.0f / 16777216.0f));
}

DV_OP_KERNEL(generate)
{
	u64 es = dv_dtype_size(t->dtype), one = gen_one(t->dtype), i, v;
	float p = dv_u2f(t->imm);
	u64 have = 0;
	u32 c[4];

	(void)src0;
	(void)src1;
	for (i = begin; i < end; i++) {
		switch (t->opcode) {
		case DAVINCI_OP_FILL:
			v = ((const struct davinci_params_fill *)params)->value;
			break;
		case DAVINCI_OP_ARANGE:
			v = gen_arange(t->dtype, params, i);
			break;
		case DAVINCI_OP_RANDOM_UNIFORM:
			v = gen_uniform(t->dtype, ph_word(params, i, c, &have));
			break;
		default:	/* BERNOULLI */
			v = (float)(ph_word(params, i, c, &have) >> 8) *
			    (1.0f / 16777216.0f) < p ? one : 0;
			break;
		}
		gen_put(dst, es, i, v);
	}
}
