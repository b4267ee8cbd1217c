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
 * RANDOM_NORMAL: words 2j and 2j + 1 of the block of counter
 * (offset + i / 4, 0), j = (i % 4) / 2, make u1 = ((w0 >> 8) + 1) 2^-24
 * in (0, 1] and u2 = (w1 >> 8) 2^-24 in [0, 1); element i is
 * mean + std * sqrt(-2 ln u1) times cos(2 pi u2) (i even) or sin (i odd),
 * Box and Muller's pair, in float64 with this file's own log, sqrt and
 * sin/cos (no libm: the same IEEE operations everywhere), rounded once to
 * float32 and then to the dtype.
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
static u32 ph_word(u64 seed, u64 offset, u64 i, u32 c[4], u64 *have)
{
	u64 ctr = offset + i / 4;

	if (*have != i / 4 + 1) {
		c[0] = (u32)ctr;
		c[1] = (u32)(ctr >> 32);
		c[2] = 0;
		c[3] = 0;
		philox(c, (u32)seed, (u32)(seed >> 32));
		*have = i / 4 + 1;
	}
	return c[i % 4];
}

static u32 ph_uniform_word(const struct davinci_params_random_uniform *p,
			   u64 i, u32 c[4], u64 *have)
{
	return ph_word(p->seed, p->offset, i, c, have);
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

static u64 gen_f64_bits(double d)
{
	union { double d; u64 u; } v;

	v.d = d;
	return v.u;
}

#define GEN_LN2		0.69314718055994530942
#define GEN_SQRT2	1.41421356237309504880
#define GEN_PI_2	1.57079632679489661923

/*
 * ln(@u) for @u in (0, 1]: u = m 2^e with m in [sqrt(1/2), sqrt(2)),
 * ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716: twelve terms of
 * the odd series leave less than 2^-60 of m's logarithm.
 */
static double gen_ln(double u)
{
	u64 b = gen_f64_bits(u);
	int e = (int)((b >> 52) & 0x7ff) - 1023, k;
	double m = gen_f64((b & 0xfffffffffffffull) | 0x3ff0000000000000ull);
	double s, s2, sum = 0;

	if (m > GEN_SQRT2) {
		m = m * 0.5;
		e++;
	}
	s = (m - 1) / (m + 1);
	s2 = s * s;
	for (k = 23; k >= 1; k -= 2)
		sum = sum * s2 + 1.0 / k;
	return (double)e * GEN_LN2 + 2 * s * sum;
}

/* sqrt(@x), @x >= 0: Newton's iteration from the halved exponent */
static double gen_sqrt(double x)
{
	double y;
	int k;

	if (x == 0)
		return 0;
	y = gen_f64((gen_f64_bits(x) >> 1) + 0x1ff8000000000000ull);
	for (k = 0; k < 6; k++)
		y = 0.5 * (y + x / y);
	return y;
}

/* sin and cos of @a in [0, pi/4]: Taylor's series to a^17 and a^16 */
static void gen_sincos_small(double a, double *s, double *c)
{
	double a2 = a * a, ps = 0, pc = 0;
	int k;

	for (k = 17; k >= 3; k -= 2)
		ps = (ps + 1) * -a2 / ((double)k * (k - 1));
	for (k = 16; k >= 2; k -= 2)
		pc = (pc + 1) * -a2 / ((double)k * (k - 1));
	*s = a + a * ps;
	*c = 1 + pc;
}

/*
 * sin and cos of 2 pi @u for @u = n 2^-24 in [0, 1): the quadrant and the
 * fraction of it are exact (4u is), so the only reduction error is that
 * of pi/2 times the fraction.
 */
static void gen_sincos_turn(double u, double *s, double *c)
{
	double t = 4 * u, r, sr, cr;
	int q = (int)t;

	r = t - q;			/* in [0, 1): exact */
	if (r <= 0.5)
		gen_sincos_small(r * GEN_PI_2, &sr, &cr);
	else
		gen_sincos_small((1 - r) * GEN_PI_2, &cr, &sr);
	switch (q) {
	case 0:
		*s = sr;
		*c = cr;
		break;
	case 1:
		*s = cr;
		*c = -sr;
		break;
	case 2:
		*s = -sr;
		*c = -cr;
		break;
	default:
		*s = -cr;
		*c = sr;
		break;
	}
}

static u64 gen_normal(u8 dtype, const struct davinci_params_random_normal *p,
		      u64 i, u32 c[4], u64 *have)
{
	u64 pair = i & ~1ull;			/* the pair's cos */
	u32 w0 = ph_word(p->seed, p->offset, pair, c, have);
	u32 w1 = ph_word(p->seed, p->offset, pair + 1, c, have);
	double u1 = (double)((w0 >> 8) + 1) * (1.0 / 16777216.0);
	double u2 = (double)(w1 >> 8) * (1.0 / 16777216.0);
	double r = gen_sqrt(-2 * gen_ln(u1)), s, co;

	gen_sincos_turn(u2, &s, &co);
	return gen_float(dtype, (float)(gen_f64(p->mean) +
					gen_f64(p->std) * r * (i & 1 ? s : co)));
}

DV_OP_KERNEL(generate)
{
	u64 es = dv_dtype_size(t->dtype), one = gen_one(t->dtype), i, v;
	float p = dv_u2f(t->imm);
	u64 have = 0;
	u32 c[4];

	(void)src2;
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
			v = gen_uniform(t->dtype, ph_uniform_word(params, i, c, &have));
			break;
		case DAVINCI_OP_RANDOM_NORMAL:
			v = gen_normal(t->dtype, params, i, c, &have);
			break;
		default:	/* BERNOULLI */
			v = (float)(ph_uniform_word(params, i, c, &have) >> 8) *
			    (1.0f / 16777216.0f) < p ? one : 0;
			break;
		}
		gen_put(dst, es, i, v);
	}
}
