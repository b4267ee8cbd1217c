// SPDX-License-Identifier: GPL-2.0
/*
 * ops_relu_grad.c - RELU_GRAD: dst = src1 <= 0 ? 0 : src0.
 *
 * The gradient of RELU (PyTorch's threshold_backward at 0): src0 is the
 * incoming gradient, src1 RELU's input or output. A selection with no
 * arithmetic: each result is src0's bits or +0, so every dtype is exact
 * and src0's NaN payloads are kept. A NaN in src1 is not <= 0 and lets
 * src0 through, as PyTorch does. The compare reads the float's bits
 * (integer code only), so every build gives the same bytes. dst may be
 * src0 or src1 (each element is read before it is written).
 */
#include "ops_kernels.h"

/*
 * The float whose bits are @u is <= 0: +-0, or the sign set and not NaN
 * (-inf included). @sign is the sign bit, @inf the bits of +inf.
 */
static inline bool rg_le0(u32 u, u32 sign, u32 inf)
{
	u32 mag = u & (sign - 1);

	return mag == 0 || ((u & sign) && mag <= inf);
}

static void rg_u32(u32 *d, const u32 *g, const u32 *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = rg_le0(x[i], 0x80000000u, 0x7f800000u) ? 0 : g[i];
}

static void rg_s32(s32 *d, const s32 *g, const s32 *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = x[i] <= 0 ? 0 : g[i];
}

/* the integer types: dy where x > 0 (x != 0 for uint8) */
#define RG_INT(T, d, g, x, n)						\
	do {								\
		T *d_ = (T *)(d);					\
		const T *g_ = (const T *)(g), *x_ = (const T *)(x);	\
		size_t i_;						\
									\
		for (i_ = 0; i_ < (n); i_++)				\
			d_[i_] = x_[i_] > 0 ? g_[i_] : 0;		\
	} while (0)

static void rg_u16(u16 *d, const u16 *g, const u16 *x, size_t n, u32 inf)
{
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = rg_le0(x[i], 0x8000u, inf) ? 0 : g[i];
}

DV_OP_KERNEL(relu_grad)
{
	size_t n = (size_t)(end - begin);

	(void)src2;
	(void)params;

	switch (t->dtype) {
	case DAVINCI_DTYPE_FLOAT32:
		rg_u32((u32 *)dst + begin, (const u32 *)src0 + begin,
		       (const u32 *)src1 + begin, n);
		break;
	case DAVINCI_DTYPE_INT32:
		rg_s32((s32 *)dst + begin, (const s32 *)src0 + begin,
		       (const s32 *)src1 + begin, n);
		break;
	case DAVINCI_DTYPE_INT64:
		RG_INT(s64, (s64 *)dst + begin, (const s64 *)src0 + begin,
		       (const s64 *)src1 + begin, n);
		break;
	case DAVINCI_DTYPE_INT8:
		RG_INT(s8, (s8 *)dst + begin, (const s8 *)src0 + begin,
		       (const s8 *)src1 + begin, n);
		break;
	case DAVINCI_DTYPE_UINT8:
		RG_INT(u8, (u8 *)dst + begin, (const u8 *)src0 + begin,
		       (const u8 *)src1 + begin, n);
		break;
	case DAVINCI_DTYPE_FLOAT16:
		rg_u16((u16 *)dst + begin, (const u16 *)src0 + begin,
		       (const u16 *)src1 + begin, n, 0x7c00u);
		break;
	case DAVINCI_DTYPE_BFLOAT16:
		rg_u16((u16 *)dst + begin, (const u16 *)src0 + begin,
		       (const u16 *)src1 + begin, n, 0x7f80u);
		break;
	default:
		break;
	}
}
