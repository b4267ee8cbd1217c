// SPDX-License-Identifier: GPL-2.0
/*
 * ops_select.c - the ops of a bool src1 (the mask):
 *
 * SELECT: dst = src1 ? src0 : dst. torch's where(cond, x, y) with y in
 * dst (copied there first, or in place: masked_fill_). A selection of
 * bits, so every dtype is exact and NaN payloads are kept.
 *
 * MASK_SCALE: dst = (src0 * src1) * scale, scale = @imm's float32: the
 * product of x and the mask as 1 or 0 (so a masked NaN or infinity is a
 * NaN and a masked negative number -0, as CPU torch's x * mask), then
 * by scale in float32, rounded once (float16 and bfloat16 widened
 * exactly), a NaN result the canonical NaN. Dropout's forward and
 * backward (native_dropout_backward: grad * mask * scale).
 *
 * A bool byte other than 0 is true. dst may be src0 (each element is read
 * before it is written). Float code: built with the FPU enabled.
 */
#include "dv_internal.h"
#include "ops_kernels.h"
#include "numerics.h"

#define MS_BLK 64	/* widened elements per stack block */

/* d[j] = m[j] ? s[j] : d[j] for elements of @es bytes */
#define SEL_RUN(T, d, s, m, n)						\
	do {								\
		T *d_ = (T *)(d);					\
		const T *s_ = (const T *)(s);				\
		size_t j_;						\
									\
		for (j_ = 0; j_ < (n); j_++)				\
			d_[j_] = (m)[j_] ? s_[j_] : d_[j_];		\
	} while (0)

static void sel_run(u64 es, void *d, const void *s, const u8 *m, size_t n)
{
	switch (es) {
	case 8:
		SEL_RUN(u64, d, s, m, n);
		break;
	case 4:
		SEL_RUN(u32, d, s, m, n);
		break;
	case 2:
		SEL_RUN(u16, d, s, m, n);
		break;
	default:
		SEL_RUN(u8, d, s, m, n);
		break;
	}
}

static void ms_f32(float *d, const float *x, const u8 *m, size_t n,
		   float scale)
{
	size_t j;

	for (j = 0; j < n; j++) {
		float t = x[j] * (m[j] ? 1.0f : 0.0f);

		d[j] = dv_canon_nan(t * scale);
	}
}

static void ms_half(u8 dtype, u16 *d, const u16 *x, const u8 *m, size_t n,
		    float scale)
{
	float a[MS_BLK];
	size_t j, len;

	for (j = 0; j < n; j += len) {
		len = n - j < MS_BLK ? n - j : MS_BLK;
		dv_widen(dtype, x, j, a, len);
		ms_f32(a, a, m + j, len, scale);
		dv_narrow(dtype, d, j, a, len);
	}
}

DV_OP_KERNEL(select)
{
	u64 es = dv_dtype_size(t->dtype);
	size_t n = (size_t)(end - begin);
	const u8 *m = (const u8 *)src1 + begin;

	(void)src2;
	(void)params;
	if (t->opcode == DAVINCI_OP_SELECT) {
		sel_run(es, (u8 *)dst + begin * es,
			(const u8 *)src0 + begin * es, m, n);
		return;
	}
	if (t->dtype == DAVINCI_DTYPE_FLOAT32)
		ms_f32((float *)dst + begin, (const float *)src0 + begin, m, n,
		       dv_u2f(t->imm));
	else
		ms_half(t->dtype, (u16 *)dst + begin,
			(const u16 *)src0 + begin, m, n, dv_u2f(t->imm));
}
