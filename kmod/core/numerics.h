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
 * exp(x) in float32, no libm. x = k*ln2 + r, |r| <= ln2/2, with ln2 split
 * in a short high part (exact k*ln2_hi) and a low part; exp(r) by a
 * degree-7 polynomial (Cephes expf coefficients) in Horner form; the
 * result scaled by 2^k as two exact power-of-two factors so that results
 * in the subnormal range are rounded once. Overflow gives +inf, underflow
 * 0 or subnormals, exp(NaN) = NaN, exp(+inf) = +inf, exp(-inf) = 0.
 * Branch free (integer clamp and selects) so that gcc -O2 vectorises loops
 * over it even with -ftrapping-math.
 */
static inline float dv_expf_inline(float x)
{
	const float log2e = 1.44269504088896341f;
	const float ln2_hi = 0.693359375f;
	const float ln2_lo = -2.12194440e-4f;
	const float magic = 12582912.0f;	/* 1.5 * 2^23 */
	u32 xb = dv_f2u(x), ax = xb & 0x7fffffffu;
	/* |x| limit: 89.0f for x >= 0, 104.0f for x < 0 */
	u32 lim = 0x42b20000u + (xb >> 31) * (0x42d00000u - 0x42b20000u);
	u32 k, k1, k2, nan_mask;
	float t, kf, r, r2, p;

	/* clamp on the bits; NaN is clamped too and restored at the end */
	x = dv_u2f((ax < lim ? ax : lim) | (xb & 0x80000000u));
	t = x * log2e + magic;	/* round(x * log2e) in the low bits */
	kf = t - magic;
	k = dv_f2u(t) - dv_f2u(magic);	/* two's complement int */
	r = x - kf * ln2_hi;
	r = r - kf * ln2_lo;
	r2 = r * r;
	p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * r2 + r;
	p = p + 1.0f;
	/* 2^k = 2^k1 * 2^k2, each a normal float for k in [-150, 128] */
	k1 = (u32)((s32)k >> 1);
	k2 = k - k1;
	p = p * dv_u2f(((k1 + 127u) & 0xffu) << 23);
	p = p * dv_u2f(((k2 + 127u) & 0xffu) << 23);
	/* NaN in, quiet NaN out (payload kept) */
	nan_mask = 0u - (u32)(ax > 0x7f800000u);
	return dv_u2f(((xb | 0x400000u) & nan_mask) |
		      (dv_f2u(p) & ~nan_mask));
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
