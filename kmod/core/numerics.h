/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numerics.h - software numerics of the AI-core op kernels: exp, float16
 * and bfloat16 conversions with round-to-nearest-even, float to int32.
 *
 * Everything here uses floating point: include this header only from the
 * float translation units (ops_*.c, numerics.c), which the kernel builds
 * with the FPU enabled and runs between os_fpu_begin()/os_fpu_end().
 * No libm; rounding relies on the default MXCSR mode (round to nearest
 * even, no flush-to-zero), which kernel_fpu_begin() loads.
 * See NUMERICS.md for the accuracy of each function.
 */
#ifndef _DAVINCI_NUMERICS_H
#define _DAVINCI_NUMERICS_H

#include "os.h"

#define DV_S32_MIN	(-2147483647 - 1)
#define DV_S32_MAX	2147483647

/* Bits of a float32 and back (no aliasing rules broken). */
static inline u32 dv_f2u(float f)
{
	union { float f; u32 u; } v;

	v.f = f;
	return v.u;
}

static inline float dv_u2f(u32 u)
{
	union { float f; u32 u; } v;

	v.u = u;
	return v.f;
}

/* Branch-free select: @c ? @a : @b for c in {0, 1} (vectorises). */
static inline u32 dv_sel(u32 c, u32 a, u32 b)
{
	u32 m = 0u - c;

	return (a & m) | (b & ~m);
}

#define DV_F32_CANON_NAN 0x7fc00000u
#define DV_F32_INF	__builtin_inff()

/*
 * Arithmetic results that are NaN become the canonical quiet NaN
 * 0x7fc00000: which input NaN's payload (and sign) an SSE operation
 * propagates depends on its operand order, which the compiler may commute
 * differently in two builds. Canonical NaNs keep results bit-identical.
 */
static inline float dv_canon_nan(float r)
{
	u32 b = dv_f2u(r);

	return dv_u2f(dv_sel((b & 0x7fffffffu) > 0x7f800000u,
			     DV_F32_CANON_NAN, b));
}

/*
 * float16 -> float32: exact (NaN payload kept). Branch free: the subnormal
 * case renormalises through an exact float32 subtraction that is computed
 * for every input and selected on the exponent.
 */
static inline float dv_f16_to_f32(u16 h)
{
	u32 sign = ((u32)h & 0x8000u) << 16;
	u32 o = ((u32)h & 0x7fffu) << 13;
	u32 e = o & 0x0f800000u;
	u32 sub;

	o += (127u - 15u) << 23;
	o += dv_sel(e == 0x0f800000u, (128u - 16u) << 23, 0);	/* inf, NaN */
	sub = dv_f2u(dv_u2f(o + (1u << 23)) - dv_u2f(113u << 23));
	o = dv_sel(e == 0, sub, o);	/* zero, subnormal */
	return dv_u2f(o | sign);
}

/*
 * float32 -> float16, round to nearest even; overflow -> inf; NaN -> quiet
 * NaN with the top payload bits kept. Branch free: all three cases are
 * computed and one is selected.
 */
static inline u16 dv_f32_to_f16(float f)
{
	u32 x = dv_f2u(f);
	u32 sign = x & 0x80000000u;
	u32 big, small, o;

	x ^= sign;
	/* >= 65536: inf, or NaN */
	big = dv_sel(x > 0x7f800000u, 0x7e00u | ((x >> 13) & 0x3ffu), 0x7c00u);
	/*
	 * Below 2^-14: float16 subnormal or zero. Adding 0.5 makes the FPU
	 * round at the float16 subnormal's last bit (RNE).
	 */
	small = dv_f2u(dv_u2f(x) + dv_u2f(126u << 23)) - (126u << 23);
	/* normal: rebias, round to nearest even; a carry makes inf */
	o = (x + ((u32)(15 - 127) << 23) + 0xfffu + ((x >> 13) & 1u)) >> 13;
	o = dv_sel(x < 0x38800000u, small, o);
	o = dv_sel(x >= 0x47800000u, big, o);
	return (u16)(o | (sign >> 16));
}

/* bfloat16 -> float32: exact. */
static inline float dv_bf16_to_f32(u16 h)
{
	return dv_u2f((u32)h << 16);
}

/* float32 -> bfloat16, round to nearest even; NaN -> quiet NaN. */
static inline u16 dv_f32_to_bf16(float f)
{
	u32 x = dv_f2u(f);

	return (u16)dv_sel((x & 0x7fffffffu) > 0x7f800000u,
			   (x >> 16) | 0x40u,
			   (x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/*
 * float32 -> int32: truncate toward zero; NaN -> 0; saturate to
 * [INT32_MIN, INT32_MAX] (so +-inf saturate too).
 */
static inline s32 dv_f32_to_s32(float f)
{
	if (f != f)
		return 0;
	if (f >= 2147483648.0f)
		return DV_S32_MAX;
	if (f <= -2147483648.0f)
		return DV_S32_MIN;
	return (s32)f;
}

/* int64 -> bfloat16 with one rounding (RNE) of the exact integer. */
static inline u16 dv_s64_to_bf16(s64 v)
{
	u32 sign = v < 0 ? 0x8000u : 0;
	u64 a = v < 0 ? 0 - (u64)v : (u64)v;
	u64 mant, rest, half;
	u32 p = 63, e;

	if (a == 0)
		return 0;
	while (!(a & (1ULL << p)))
		p--;
	/* value = a, leading bit p; keep 8 significant bits */
	if (p <= 7) {
		mant = a << (7 - p);
		rest = 0;
		half = 1;
	} else {
		mant = a >> (p - 7);
		rest = a & ((1ULL << (p - 7)) - 1);
		half = 1ULL << (p - 8);
	}
	if (rest > half || (rest == half && (mant & 1)))
		mant++;
	if (mant == 0x100) {
		mant = 0x80;
		p++;
	}
	e = p + 127;
	return (u16)(sign | (e << 7) | (u32)(mant & 0x7f));
}

/* int32 -> bfloat16 with one rounding (RNE) of the exact integer. */
static inline u16 dv_s32_to_bf16(s32 v)
{
	return dv_s64_to_bf16(v);
}

/*
 * Widen @n elements of @dtype (DAVINCI_DTYPE_FLOAT16, _BFLOAT16, else
 * float32), starting @off elements into @src, to float32 at @d: exact.
 * The one copy of the widening loops the op kernels share (a whole
 * multiple of 8 first, so that gcc vectorises it, then the rest).
 */
static inline void dv_widen(u8 dtype, const void *src, size_t off,
			    float *restrict d, size_t n)
{
	size_t i, nb = n & ~(size_t)7;

	if (dtype == DAVINCI_DTYPE_BFLOAT16) {
		const u16 *restrict s = (const u16 *)src + off;

		for (i = 0; i < nb; i++)
			d[i] = dv_bf16_to_f32(s[i]);
		for (; i < n; i++)
			d[i] = dv_bf16_to_f32(s[i]);
	} else if (dtype == DAVINCI_DTYPE_FLOAT16) {
		const u16 *restrict s = (const u16 *)src + off;

		for (i = 0; i < nb; i++)
			d[i] = dv_f16_to_f32(s[i]);
		for (; i < n; i++)
			d[i] = dv_f16_to_f32(s[i]);
	} else {
		memcpy(d, (const float *)src + off, n * sizeof(float));
	}
}

/*
 * Round @n float32 values at @s once to @dtype (as dv_widen()), storing
 * them @off elements into @dst.
 */
static inline void dv_narrow(u8 dtype, void *dst, size_t off,
			     const float *restrict s, size_t n)
{
	size_t i, nb = n & ~(size_t)7;

	if (dtype == DAVINCI_DTYPE_BFLOAT16) {
		u16 *restrict d = (u16 *)dst + off;

		for (i = 0; i < nb; i++)
			d[i] = dv_f32_to_bf16(s[i]);
		for (; i < n; i++)
			d[i] = dv_f32_to_bf16(s[i]);
	} else if (dtype == DAVINCI_DTYPE_FLOAT16) {
		u16 *restrict d = (u16 *)dst + off;

		for (i = 0; i < nb; i++)
			d[i] = dv_f32_to_f16(s[i]);
		for (; i < n; i++)
			d[i] = dv_f32_to_f16(s[i]);
	} else {
		memcpy((float *)dst + off, s, n * sizeof(float));
	}
}

/*
 * exp(r) for |r| <= ln2/2 (a little beyond is fine): the degree-7 Cephes
 * expf polynomial in Horner form.
 */
static inline float dv_exp_poly(float r)
{
	float r2 = r * r, p;

	p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * r2 + r;
	return p + 1.0f;
}

/*
 * p * 2^k (k two's complement, in [-252, 254]) as two exact power-of-two
 * factors 2^(k>>1) 2^(k - (k>>1)), each a normal float, so that a result
 * in the subnormal range is rounded once.
 */
static inline float dv_scale2k(float p, u32 k)
{
	u32 k1 = (u32)((s32)k >> 1), k2 = k - k1;

	p = p * dv_u2f(((k1 + 127u) & 0xffu) << 23);
	return p * dv_u2f(((k2 + 127u) & 0xffu) << 23);
}

#define DV_LOG2E	1.44269504088896341f
#define DV_LN2_HI	0.693359375f		/* 9 bits: k * DV_LN2_HI is exact */
#define DV_LN2_LO	-2.12194440e-4f
#define DV_EXP_MAGIC	12582912.0f		/* 1.5 * 2^23 */

/*
 * exp(x) in float32, no libm. x = k*ln2 + r, |r| <= ln2/2, with ln2 split
 * in a short high part (exact k*ln2_hi) and a low part; exp(r) by
 * dv_exp_poly(); the result scaled by 2^k with dv_scale2k(). Overflow
 * gives +inf, underflow 0 or subnormals, exp(NaN) = NaN, exp(+inf) = +inf,
 * exp(-inf) = 0. Branch free (integer clamp and selects) so that gcc -O2
 * vectorises loops over it even with -ftrapping-math.
 */
static inline float dv_expf_inline(float x)
{
	u32 xb = dv_f2u(x), ax = xb & 0x7fffffffu;
	/* |x| limit: 89.0f for x >= 0, 104.0f for x < 0 */
	u32 lim = 0x42b20000u + (xb >> 31) * (0x42d00000u - 0x42b20000u);
	u32 k, nan_mask;
	float t, kf, r, p;

	/* clamp on the bits; NaN is clamped too and restored at the end */
	x = dv_u2f((ax < lim ? ax : lim) | (xb & 0x80000000u));
	t = x * DV_LOG2E + DV_EXP_MAGIC;	/* round(x * log2e) in the low bits */
	kf = t - DV_EXP_MAGIC;
	k = dv_f2u(t) - dv_f2u(DV_EXP_MAGIC);	/* two's complement int */
	r = x - kf * DV_LN2_HI;
	r = r - kf * DV_LN2_LO;
	p = dv_scale2k(dv_exp_poly(r), k);
	/* NaN in, quiet NaN out (payload kept) */
	nan_mask = 0u - (u32)(ax > 0x7f800000u);
	return dv_u2f(((xb | 0x400000u) & nan_mask) |
		      (dv_f2u(p) & ~nan_mask));
}

/*
 * exp(hi + lo) = p * 2^*k, returning p (in [0.7, 1.42]) and k for
 * -120 <= hi + lo <= 88, finite (the callers clamp): an argument carried
 * in two floats, lo a correction below hi's last bits or a small term
 * (|lo| < 2). hi - k * ln2_hi is exact for |hi| >= 1 (both are multiples
 * of hi's ulp and their difference is below 1), so lo is not lost in
 * hi's rounding; dv_scale2k(p, *k) is the result.
 */
static inline float dv_exp_hl(float hi, float lo, u32 *k)
{
	float t = (hi + lo) * DV_LOG2E + DV_EXP_MAGIC;
	float kf = t - DV_EXP_MAGIC, r;

	*k = dv_f2u(t) - dv_f2u(DV_EXP_MAGIC);
	r = hi - kf * DV_LN2_HI;
	r = r + lo;
	r = r - kf * DV_LN2_LO;
	return dv_exp_poly(r);
}

/*
 * log(x) in float32, no libm (Cephes logf). x = 2^e * m with m in
 * [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23 first), f = m - 1;
 * log(1 + f) = f - f^2/2 + f^3 P(f), P of degree 8 in Horner form, and
 * e * ln2 added as e * ln2_hi (exact: ln2_hi has 9 bits) and e * ln2_lo.
 * log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, log(NaN) = NaN
 * (canonical). NUMERICS.md gives the measured accuracy.
 */
static inline float dv_logf_inline(float x)
{
	const float sqrthf = 0.707106781186547524f;
	u32 xb = dv_f2u(x);
	float m, z, y, fe;
	s32 e;

	if ((xb & 0x7fffffffu) == 0)
		return dv_u2f(0xff800000u);		/* -inf */
	if (xb > 0x7f800000u)			/* NaN, or negative */
		return dv_u2f(DV_F32_CANON_NAN);
	if (xb == 0x7f800000u)
		return x;			/* +inf */
	e = 0;
	if (xb < 0x00800000u) {			/* subnormal: exact scaling */
		xb = dv_f2u(x * 8388608.0f);
		e = -23;
	}
	/* frexp: m in [0.5, 1), x = m * 2^e */
	e += (s32)(xb >> 23) - 126;
	m = dv_u2f((xb & 0x007fffffu) | 0x3f000000u);
	if (m < sqrthf) {
		e -= 1;
		m = m + m - 1.0f;
	} else {
		m = m - 1.0f;
	}
	fe = (float)e;
	z = m * m;
	y = 7.0376836292e-2f;
	y = y * m - 1.1514610310e-1f;
	y = y * m + 1.1676998740e-1f;
	y = y * m - 1.2420140846e-1f;
	y = y * m + 1.4249322787e-1f;
	y = y * m - 1.6668057665e-1f;
	y = y * m + 2.0000714765e-1f;
	y = y * m - 2.4999993993e-1f;
	y = y * m + 3.3333331174e-1f;
	y = y * m * z;
	y = y + -2.12194440e-4f * fe;
	y = y + -0.5f * z;
	z = m + y;
	return z + 0.693359375f * fe;
}

/*
 * The activations and their pieces. Each is computed in float32 on the
 * magnitude of its argument with its sign applied last (the odd functions
 * are exactly odd, -0 stays -0); results that would underflow go through
 * dv_scale2k() so that they are rounded once. The polynomials were fitted
 * for this file (weighted least squares on Chebyshev nodes against
 * mpmath, coefficients rounded to float32). NUMERICS.md gives each
 * function's measured accuracy.
 */

/* @v with the sign bit @sign (0 or 0x80000000) set. */
static inline float dv_with_sign(float v, u32 sign)
{
	return dv_u2f(dv_f2u(v) | sign);
}

/*
 * tanh(x): for |x| < 0.625, x + x z P(z), z = x^2, P of degree 5; else
 * (e - 1) / (e + 1), e = exp(2|x|) (e - 1 is exact), |x| clamped to 9.5,
 * where tanh is 1.0f already. tanh(+-inf) = +-1, NaN stays NaN.
 */
static inline float dv_tanhf(float x)
{
	u32 sign = dv_f2u(x) & 0x80000000u;
	float a = dv_u2f(dv_f2u(x) ^ sign), z, p, e;

	if (!(a >= 0.625f)) {		/* NaN too */
		z = a * a;
		p = 2.142958809e-03f;
		p = p * z - 8.177394979e-03f;
		p = p * z + 2.170070074e-02f;
		p = p * z - 5.394676328e-02f;
		p = p * z + 1.333320588e-01f;
		p = p * z - 3.333333135e-01f;
		return dv_with_sign(a + a * (z * p), sign);
	}
	a = a < 9.5f ? a : 9.5f;
	e = dv_expf_inline(a + a);
	return dv_with_sign((e - 1.0f) / (e + 1.0f), sign);
}

/*
 * sigmoid(x) = 1 / (1 + exp(-x)) as n / (1 + e), e = exp(-|x|) <= 1 and
 * n = 1 for x >= 0, e for x < 0: exp never overflows and a result that
 * underflows is exp's. Branch free.
 */
static inline float dv_sigmoidf(float x)
{
	u32 xb = dv_f2u(x);
	float e = dv_expf_inline(dv_u2f(xb | 0x80000000u));

	return dv_u2f(dv_sel(xb >> 31, dv_f2u(e), 0x3f800000u)) / (1.0f + e);
}

/*
 * exp(-a) = *p 2^*k, a = min(|x|, 120) (NaN too): the parts of sigmoid's
 * e for the products with x, which use *a (x e^x is 0 from -120 on, and
 * a clamped x keeps the products finite).
 */
static inline float dv_exp_neg_abs(float x, float *a, u32 *k)
{
	u32 ax = dv_f2u(x) & 0x7fffffffu;

	ax = ax < 0x42f00000u ? ax : 0x42f00000u;	/* 120.0f */
	*a = dv_u2f(ax);
	return dv_exp_hl(-*a, 0.0f, k);
}

/*
 * silu(x) = x sigmoid(x): x / (1 + e) for x >= 0, (x p) 2^k / (1 + e) for
 * x < 0 (e = p 2^k = exp(x)), so that a subnormal result is rounded once.
 * silu(+inf) = +inf; silu(-inf) is NaN, the -inf * 0 of the formula (as
 * torch's and ONNX's references).
 */
static inline float dv_siluf(float x)
{
	u32 k;
	float a, p = dv_exp_neg_abs(x, &a, &k), e = dv_scale2k(p, k);

	if (x != x || x == -DV_F32_INF)
		return dv_u2f(DV_F32_CANON_NAN);
	if (x >= 0.0f)
		return x / (1.0f + e);
	return dv_scale2k((-a * p) / (1.0f + e), k);
}

/*
 * exp(-y^2 / 2) = *p 2^*k for 0 <= y <= 15 with y^2 / 2 carried
 * exactly: y = yh + yl with yh the top 12 bits of y, so yh^2 / 2 is exact
 * and the rest, yl (yh + y) / 2, is below 2^-11 y^2.
 */
static inline float dv_exp_half_square(float y, u32 *k)
{
	float yh = dv_u2f(dv_f2u(y) & 0xfffff000u), yl = y - yh;

	return dv_exp_hl(-(yh * yh) * 0.5f, -(yl * (yh + y)) * 0.5f, k);
}

/*
 * The normal distribution's upper tail Q(y) = erfc(y / sqrt(2)) / 2 for
 * y >= 1: y Q(y) = exp(-y^2 / 2) S(1/y), S smooth (1/sqrt(2 pi) times
 * the Mills ratio times y), a polynomial of degree 8 in w = 1/y on each of
 * [1, 2.5) and [2.5, 14.5], for 1 <= y <= 15 (the callers clamp y to
 * 15, where every product with exp(-y^2 / 2) rounds to 0). Returns S;
 * exp(-y^2 / 2) = *p 2^*k (dv_exp_half_square).
 */
static inline float dv_normal_tail(float y, float *p, u32 *k)
{
	float w, t, s;

	*p = dv_exp_half_square(y, k);
	w = 1.0f / y;
	if (y < 2.5f) {
		t = w * 3.333333254e+00f - 2.333333254e+00f;
		s = -2.805406893e-07f;
		s = s * t + 7.879179975e-06f;
		s = s * t - 4.365169661e-05f;
		s = s * t + 1.606209698e-04f;
		s = s * t - 4.391839320e-04f;
		s = s * t + 4.814336426e-04f;
		s = s * t + 4.489562009e-03f;
		s = s * t - 4.652494937e-02f;
		s = s * t + 3.034468591e-01f;
	} else {
		t = w * 6.041666508e+00f - 1.416666627e+00f;
		s = -7.801818356e-07f;
		s = s * t - 5.882420282e-06f;
		s = s * t + 3.328424282e-05f;
		s = s * t - 5.090689592e-05f;
		s = s * t - 2.163562312e-04f;
		s = s * t + 1.781426603e-03f;
		s = s * t - 4.509229213e-03f;
		s = s * t - 2.359610982e-02f;
		s = s * t + 3.798928857e-01f;
	}
	return s;
}

/*
 * erf(x): for |x| < 0.75, x + x g(x^2), g of degree 6; else
 * 1 - erfc(|x|), erfc(a) = 2 Q(a sqrt(2)) from dv_normal_tail() (a
 * rounded a sqrt(2) moves erfc by less than half an ulp of erf there).
 * erf(+-inf) = +-1, NaN stays NaN.
 */
static inline float dv_erff(float x)
{
	u32 sign = dv_f2u(x) & 0x80000000u, k;
	float a = dv_u2f(dv_f2u(x) ^ sign), z, g, y, p, s;

	if (!(a >= 0.75f)) {		/* NaN too */
		z = a * a;
		g = 9.461260925e-05f;
		g = g * z - 8.355366299e-04f;
		g = g * z + 5.216689780e-03f;
		g = g * z - 2.686474286e-02f;
		g = g * z + 1.128377840e-01f;
		g = g * z - 3.761263788e-01f;
		g = g * z + 1.283791661e-01f;
		return dv_with_sign(a + a * g, sign);
	}
	y = a * 1.41421354f;
	y = y < 15.0f ? y : 15.0f;
	s = dv_normal_tail(y, &p, &k);
	return dv_with_sign(1.0f - dv_scale2k(p * s, k) / y * 2.0f, sign);
}

/*
 * GELU, erf form: x Phi(x). For |x| < 1, h + h erf(x / sqrt(2)), h = x/2
 * (a zero h is the result: gelu(-0) = -0);
 * else, with T = |x| Q(|x|) from dv_normal_tail() (no cancellation, and a
 * subnormal T rounded once): x - T for x >= 1, -T for x <= -1.
 * gelu(+inf) = +inf; gelu(-inf) is NaN, the -inf * 0 of the formula (as
 * torch's and ONNX's references).
 */
static inline float dv_gelu_erff(float x)
{
	float a = dv_u2f(dv_f2u(x) & 0x7fffffffu), h, p, s, t;
	u32 k;

	if (!(a >= 1.0f)) {		/* NaN too */
		h = 0.5f * x;
		if (h == 0.0f)
			return h;	/* h + h erf: +0 for -0 */
		return h + h * dv_erff(x * 0.707106769f);
	}
	if (x == -DV_F32_INF)
		return dv_u2f(DV_F32_CANON_NAN);
	a = a < 15.0f ? a : 15.0f;
	s = dv_normal_tail(a, &p, &k);
	t = dv_scale2k(p * s, k);
	return x > 0.0f ? x - t : -t;
}

/*
 * GELU's gradient, erf form: Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) /
 * sqrt(2 pi). For |x| < 1 as written (Phi from dv_erff(), phi from
 * dv_exp_half_square()); else from dv_normal_tail()'s S and
 * exp(-x^2 / 2) = p 2^k: 1 + (p (x / sqrt(2 pi) - S / x)) 2^k for x >= 1,
 * (p (S / y - y / sqrt(2 pi))) 2^k for x = -y <= -1. +-inf give NaN (the
 * formula's inf * 0, as torch's).
 */
static inline float dv_gelu_erf_gradf(float x)
{
	const float rsqrt_2pi = 0.398942292f;
	float a = dv_u2f(dv_f2u(x) & 0x7fffffffu), p, s, phi;
	u32 k;

	if (a == DV_F32_INF)
		return dv_u2f(DV_F32_CANON_NAN);
	if (!(a >= 1.0f)) {		/* NaN too */
		p = dv_exp_half_square(a, &k);
		phi = dv_scale2k(p, k) * rsqrt_2pi;
		return (0.5f + 0.5f * dv_erff(x * 0.707106769f)) + x * phi;
	}
	a = a < 15.0f ? a : 15.0f;
	s = dv_normal_tail(a, &p, &k);
	if (x > 0.0f)
		return 1.0f + dv_scale2k(p * (a * rsqrt_2pi - s / a), k);
	return dv_scale2k(p * (s / a - a * rsqrt_2pi), k);
}

/*
 * GELU's tanh form: x (1 + tanh(u)) / 2 = x sigmoid(v), v = 2u =
 * 2 sqrt(2/pi) (x + 0.044715 x^3). v is computed in float64 (v's float32
 * rounding would cost |v| 2^-24 of relative error, hundreds of ulps in
 * the left tail) and carried into exp(-|v|) = *p 2^*k as two floats;
 * *dv is dv/dx. x is clamped to [-20, 20] (*xc), where exp(-|v|) is far
 * below float32's, and |v| to 120, where it is 0 already.
 */
static inline void dv_gelu_tanh_arg(float x, float *xc, float *p, u32 *k,
				    float *dv)
{
	const double c1 = 1.5957691216057308;		/* 2 sqrt(2/pi) */
	const double c3 = 1.5957691216057308 * 0.044715;
	double xd, x2, v;

	*xc = x > -20.0f ? (x < 20.0f ? x : 20.0f) : -20.0f;
	xd = *xc;
	x2 = xd * xd;
	v = xd * (c1 + c3 * x2);
	float hi, lo;

	v = v < 0.0 ? v : -v;			/* -|v|; NaN stays */
	v = v > -120.0 ? v : -120.0;
	hi = (float)v;
	lo = (float)(v - (double)hi);
	*p = dv_exp_hl(hi, lo, k);
	*dv = (float)(c1 + 3.0 * c3 * x2);
}

/* gelu, tanh form: x / (1 + e) for x >= 0, (x p) 2^k / (1 + e) below. */
static inline float dv_gelu_tanhf(float x)
{
	float xc, p, dv, e;
	u32 k;

	if (x != x || x == -DV_F32_INF)
		return dv_u2f(DV_F32_CANON_NAN);
	dv_gelu_tanh_arg(x, &xc, &p, &k, &dv);
	e = dv_scale2k(p, k);
	if (x >= 0.0f)
		return x / (1.0f + e);
	return dv_scale2k((xc * p) / (1.0f + e), k);
}

/*
 * Its gradient: s (1 + x (1 - s) dv/dx), s = sigmoid(v); s and 1 - s are
 * each n / (1 + e) without a subtraction, the tiny s of the left tail
 * kept as p 2^k to the end. +-inf give NaN (as torch's formula).
 */
static inline float dv_gelu_tanh_gradf(float x)
{
	float xc, p, dv, e, d;
	u32 k;

	if (x != x || x == DV_F32_INF || x == -DV_F32_INF)
		return dv_u2f(DV_F32_CANON_NAN);
	dv_gelu_tanh_arg(x, &xc, &p, &k, &dv);
	e = dv_scale2k(p, k);
	d = 1.0f + e;
	if (x >= 0.0f)
		return (1.0f / d) * (1.0f + xc * (e / d) * dv);
	return dv_scale2k((p / d) * (1.0f + xc * (1.0f / d) * dv), k);
}

/* SiLU's gradient: s (1 + x (1 - s)), s = sigmoid(x), as GELU's. */
static inline float dv_silu_gradf(float x)
{
	u32 k;
	float a, p = dv_exp_neg_abs(x, &a, &k), e = dv_scale2k(p, k);
	float d = 1.0f + e;

	if (x != x || x == DV_F32_INF || x == -DV_F32_INF)
		return dv_u2f(DV_F32_CANON_NAN);
	if (x >= 0.0f)
		return (1.0f / d) * (1.0f + a * (e / d));
	return dv_scale2k((p / d) * (1.0f - a * (1.0f / d)), k);
}

/*
 * log(a) in float64 for a positive finite float32 a (subnormals scaled
 * by 2^23 first): a = 2^e m, m in [sqrt(1/2), sqrt(2)], s = (m-1)/(m+1),
 * log(m) = 2 atanh(s) = 2s (1 + s^2/3 + ... + s^16/17) (|s| <= 0.1716:
 * the next term is below 2^-52 of the sum), e ln2 added. Relative error
 * about 2^-50: what pow needs for y log(a) to stay within 2^-24 / 4 of
 * its exact value up to |y log(a)| = 104.
 */
static inline double dv_log_f64(float a)
{
	u32 b = dv_f2u(a);
	s32 e = 0;
	double m, s, s2, q;

	if (b < 0x00800000u) {
		b = dv_f2u(a * 8388608.0f);
		e = -23;
	}
	e += (s32)(b >> 23) - 127;
	m = dv_u2f((b & 0x007fffffu) | 0x3f800000u);
	if (m > 1.4142135623730951) {
		m = m * 0.5;
		e += 1;
	}
	s = (m - 1.0) / (m + 1.0);
	s2 = s * s;
	q = 1.0 / 17.0;
	q = q * s2 + 1.0 / 15.0;
	q = q * s2 + 1.0 / 13.0;
	q = q * s2 + 1.0 / 11.0;
	q = q * s2 + 1.0 / 9.0;
	q = q * s2 + 1.0 / 7.0;
	q = q * s2 + 1.0 / 5.0;
	q = q * s2 + 1.0 / 3.0;
	q = q * s2 * s + s;
	return (double)e * 0.69314718055994531 + (q + q);
}

/* 0: @y is not an integer; 1: an odd integer; 2: an even one (or inf). */
static inline int dv_int_kind(float y)
{
	float a = dv_u2f(dv_f2u(y) & 0x7fffffffu);
	s32 i;

	if (!(a < 16777216.0f))		/* >= 2^24 (inf too): even */
		return a == a ? 2 : 0;
	i = (s32)a;
	if ((float)i != a)
		return 0;
	return (i & 1) ? 1 : 2;
}

/*
 * pow(x, y) with C99's (and torch's) special cases: pow(x, +-0) = 1 and
 * pow(1, y) = 1 even for NaN; pow(-1, +-inf) = 1; a negative finite x
 * with a finite non-integer y is NaN; otherwise the sign is x's for an
 * odd integer y (so pow(-0, -1) = -inf); y = 1, 2 and -1 give x, x * x
 * and 1 / x (correctly rounded, as torch's pow for those exponents);
 * else the magnitude exp(y log|x|), with log|x| from dv_log_f64() and
 * y log|x| rounded to float64, carried into dv_exp_hl() as two floats:
 * about as accurate as exp alone. 0, inf and the under- and overflows follow from
 * y log|x| = -+inf or beyond [-104, 89].
 */
static inline float dv_powf(float x, float y)
{
	u32 sign = dv_f2u(x) & 0x80000000u, k;
	float a = dv_u2f(dv_f2u(x) ^ sign), hi, lo, r;
	int kind;
	double t;

	if (y == 0.0f || x == 1.0f)
		return 1.0f;
	if (x != x || y != y)
		return dv_u2f(DV_F32_CANON_NAN);
	/* exact where one IEEE operation is the correctly rounded power */
	if (y == 1.0f)
		return x;
	if (y == 2.0f)
		return x * x;
	if (y == -1.0f)
		return 1.0f / x;
	kind = dv_int_kind(y);
	if (a == 1.0f)				/* -1 ** y: y is +-inf or an integer */
		return kind == 1 ? -1.0f : (kind == 2 ? 1.0f :
					   dv_u2f(DV_F32_CANON_NAN));
	if (sign && kind == 0 && a != 0.0f && a != DV_F32_INF)
		return dv_u2f(DV_F32_CANON_NAN);
	if (a == 0.0f)
		r = y < 0.0f ? DV_F32_INF : 0.0f;
	else if (a == DV_F32_INF)
		r = y < 0.0f ? 0.0f : DV_F32_INF;
	else {
		t = (double)y * dv_log_f64(a);
		if (t > 89.0)
			r = DV_F32_INF;
		else if (t < -110.0)
			r = 0.0f;
		else {
			hi = (float)t;
			lo = (float)(t - (double)hi);
			r = dv_exp_hl(hi, lo, &k);
			r = dv_scale2k(r, k);
		}
	}
	return kind == 1 ? dv_with_sign(r, sign) : r;
}

/*
 * sqrt(x) in float32: the correctly rounded hardware instruction (sqrtss,
 * fsqrt), written as asm because __builtin_sqrtf keeps a call to libm's
 * sqrtf for negative inputs (errno) unless -fno-math-errno. NaN results
 * (x < 0, NaN) are canonical; sqrt(-0) = -0.
 */
static inline float dv_sqrtf(float x)
{
#if defined(__x86_64__) || defined(__i386__)
	asm("sqrtss %0, %0" : "+x" (x));
#elif defined(__aarch64__)
	asm("fsqrt %s0, %s0" : "+w" (x));
#else
#error "dv_sqrtf: no square root instruction known for this architecture"
#endif
	return dv_canon_nan(x);
}

/* Out-of-line versions, for the tests and the library's test hooks. */
float dv_expf(float x);
float dv_logf(float x);
float dv_num_f16_to_f32(u16 h);

#endif /* _DAVINCI_NUMERICS_H */
