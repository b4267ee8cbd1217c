// SPDX-License-Identifier: GPL-2.0
/*
 * ops_elementwise.c - ADD SUB MUL DIV MAX MIN RELU EXP AXPY SQRT ABS
 * LEAKY_RELU, the activations and transcendentals TANH SIGMOID ERF LOG
 * GELU SILU RECIPROCAL POW NEG and the gradients TANH_GRAD SIGMOID_GRAD
 * GELU_GRAD SILU_GRAD; the integer types for ADD .. RELU, ABS and NEG.
 *
 * Float code: the kernel builds this file with the FPU enabled. Every op
 * is computed in float32 (or wrapping int32) and rounded once to the
 * storage type. The float32 loops are simple restrict-qualified loops
 * that gcc -O2 vectorises. In-place operation (dst equal to a source) and
 * the float16/bfloat16 types go through small float32 blocks on the stack
 * so that the restrict promise always holds.
 */
#include "ops_kernels.h"
#include "numerics.h"

#define EW_BLK 64	/* elements per stack block (3 blocks: 768 bytes) */

typedef void (*ew_f32_fn)(float *restrict d, const float *restrict a,
			  const float *restrict b, size_t n, float alpha);
typedef void (*ew_s32_fn)(s32 *restrict d, const s32 *restrict a,
			  const s32 *restrict b, size_t n);

/*
 * The main loop runs a multiple of 8 iterations, which the very-cheap
 * vectoriser cost model of gcc -O2 accepts; the scalar tail computes the
 * same expression. @T is the element type, @res the stored value (of x
 * and y, the elements of a and b).
 */
#define EW_STEP(T, res)							\
	{								\
		T x = a[i], y = b[i];					\
									\
		(void)x;						\
		(void)y;						\
		d[i] = (res);						\
	}

#define EW_LOOPS(T, res)						\
	do {								\
		size_t i = 0, nb = n & ~(size_t)7;			\
									\
		for (; i < nb; i++)					\
			EW_STEP(T, res)					\
		for (; i < n; i++)					\
			EW_STEP(T, res)					\
	} while (0)

#define DEF_F32(name, expr)						\
static void name(float *restrict d, const float *restrict a,		\
		 const float *restrict b, size_t n, float alpha)	\
{									\
	(void)alpha;							\
	EW_LOOPS(float, dv_canon_nan(expr));				\
}

#define DEF_S32(name, expr)						\
static void name(s32 *restrict d, const s32 *restrict a,		\
		 const s32 *restrict b, size_t n)			\
{									\
	EW_LOOPS(s32, expr);						\
}

DEF_F32(f32_add, x + y)
DEF_F32(f32_sub, x - y)
DEF_F32(f32_mul, x * y)
DEF_F32(f32_div, x / y)
/* np.maximum / np.minimum: a NaN in either input gives NaN; ties give x */
DEF_F32(f32_max, (x >= y || x != x) ? x : y)
DEF_F32(f32_min, (x <= y || x != x) ? x : y)
/* np.maximum(x, 0): NaN stays NaN, -0 stays -0 (unary: b == a) */
DEF_F32(f32_relu, (x >= 0.0f || x != x) ? x : 0.0f)
DEF_F32(f32_exp, dv_expf_inline(x))
/* correctly rounded (the hardware instruction); canonical NaN for x < 0 */
DEF_F32(f32_sqrt, dv_sqrtf(x))
/* two roundings: the file is built with -ffp-contract=off */
DEF_F32(f32_axpy, alpha * x + y)
/* np.abs: -0 gives +0 (x == 0 takes both zeros), a NaN the canonical NaN */
DEF_F32(f32_abs, x < 0.0f ? -x : (x == 0.0f ? 0.0f : x))
/* torch's leaky_relu: x where x >= 0 (-0 and NaN kept), else alpha * x */
DEF_F32(f32_leaky_relu, (x >= 0.0f || x != x) ? x : alpha * x)

DEF_F32(f32_tanh, dv_tanhf(x))
DEF_F32(f32_sigmoid, dv_sigmoidf(x))
DEF_F32(f32_erf, dv_erff(x))
DEF_F32(f32_log, dv_logf_inline(x))
DEF_F32(f32_gelu, dv_gelu_erff(x))
DEF_F32(f32_gelu_tanh, dv_gelu_tanhf(x))
DEF_F32(f32_silu, dv_siluf(x))
/* correctly rounded, as torch's reciprocal */
DEF_F32(f32_reciprocal, 1.0f / x)
DEF_F32(f32_pow, dv_powf(x, y))
DEF_F32(f32_neg, -x)
/*
 * tanh's gradient dy (1 - y^2) with 1 - y^2 rounded once, as torch's
 * tanh_backward computes it with a fused multiply-add (y^2 is exact in
 * float64, and for |y| <= 1 so is 1 - y^2 or its one rounding lands on
 * no float32 tie: tests/ops checks every y); sigmoid's dy (1 - y) y in
 * torch's order of operations.
 */
DEF_F32(f32_tanh_grad, x * (float)(1.0 - (double)y * (double)y))
DEF_F32(f32_sigmoid_grad, x * (1.0f - y) * y)
DEF_F32(f32_gelu_grad, x * dv_gelu_erf_gradf(y))
DEF_F32(f32_gelu_tanh_grad, x * dv_gelu_tanh_gradf(y))
DEF_F32(f32_silu_grad, x * dv_silu_gradf(y))

/* int32: wrapping arithmetic through u32, no signed overflow */
DEF_S32(s32_add, (s32)((u32)x + (u32)y))
DEF_S32(s32_sub, (s32)((u32)x - (u32)y))
DEF_S32(s32_mul, (s32)((u32)x * (u32)y))
/* truncating; x / 0 = 0; INT32_MIN / -1 = INT32_MIN (wraps) */
DEF_S32(s32_div, y == 0 ? 0 : y == -1 ? (s32)(0u - (u32)x) : x / y)
DEF_S32(s32_max, x >= y ? x : y)
DEF_S32(s32_min, x <= y ? x : y)
DEF_S32(s32_relu, x > 0 ? x : 0)
/* INT32_MIN wraps to itself, as numpy's and torch's abs */
DEF_S32(s32_abs, x < 0 ? (s32)(0u - (u32)x) : x)
DEF_S32(s32_neg, (s32)(0u - (u32)x))

/*
 * int64, int8 and uint8: int32's semantics (wrapping through the unsigned
 * type @U, DIV truncating with x / 0 = 0 and MIN / -1 wrapping), one
 * function per type with the loops inside the switch. Each element is
 * read before it is written, so dst may be a source. @NEG1 is y == -1 for
 * a signed type and 0 for uint8; @RELU_EXPR and @ABS_EXPR are the type's
 * expressions (the identity for uint8).
 */
#define EW_INT_LOOP(expr)						\
	do {								\
		for (i = 0; i < n; i++) {				\
			x = a[i];					\
			y = b[i];					\
			d[i] = (expr);					\
		}							\
	} while (0)

#define DEF_INT(name, T, U, NEG1, RELU_EXPR, ABS_EXPR)		\
static void name(u16 opcode, T *d, const T *a, const T *b, size_t n)	\
{									\
	size_t i;							\
	T x, y;								\
									\
	switch (opcode) {						\
	case DAVINCI_OP_ADD:						\
		EW_INT_LOOP((T)((U)x + (U)y));				\
		break;							\
	case DAVINCI_OP_SUB:						\
		EW_INT_LOOP((T)((U)x - (U)y));				\
		break;							\
	case DAVINCI_OP_MUL:						\
		EW_INT_LOOP((T)((U)x * (U)y));				\
		break;							\
	case DAVINCI_OP_DIV:						\
		EW_INT_LOOP(y == 0 ? 0 : (NEG1) ? (T)(0 - (U)x) :	\
			    (T)(x / y));				\
		break;							\
	case DAVINCI_OP_MAX:						\
		EW_INT_LOOP(x >= y ? x : y);				\
		break;							\
	case DAVINCI_OP_MIN:						\
		EW_INT_LOOP(x <= y ? x : y);				\
		break;							\
	case DAVINCI_OP_RELU:						\
		EW_INT_LOOP(RELU_EXPR);					\
		break;							\
	case DAVINCI_OP_ABS:						\
		EW_INT_LOOP(ABS_EXPR);					\
		break;							\
	case DAVINCI_OP_NEG:						\
		EW_INT_LOOP((T)(0 - (U)x));				\
		break;							\
	default:							\
		break;							\
	}								\
}

DEF_INT(ew_s64, s64, u64, y == -1, x > 0 ? x : 0,
	x < 0 ? (s64)(0 - (u64)x) : x)
DEF_INT(ew_s8, s8, u8, y == -1, x > 0 ? x : 0, x < 0 ? (s8)(0 - (u8)x) : x)
DEF_INT(ew_u8, u8, u8, 0, x, x)

/* The kernels of each elementwise opcode; NULL where a type has none. */
static const struct {
	ew_f32_fn f32;	/* float32, and float16/bfloat16 widened */
	ew_s32_fn s32;
} ew_fns[DAVINCI_OP_COUNT] = {
	[DAVINCI_OP_ADD] = { f32_add, s32_add },
	[DAVINCI_OP_SUB] = { f32_sub, s32_sub },
	[DAVINCI_OP_MUL] = { f32_mul, s32_mul },
	[DAVINCI_OP_DIV] = { f32_div, s32_div },
	[DAVINCI_OP_MAX] = { f32_max, s32_max },
	[DAVINCI_OP_MIN] = { f32_min, s32_min },
	[DAVINCI_OP_RELU] = { f32_relu, s32_relu },
	[DAVINCI_OP_EXP] = { f32_exp, NULL },
	[DAVINCI_OP_AXPY] = { f32_axpy, NULL },
	[DAVINCI_OP_SQRT] = { f32_sqrt, NULL },
	[DAVINCI_OP_ABS] = { f32_abs, s32_abs },
	[DAVINCI_OP_LEAKY_RELU] = { f32_leaky_relu, NULL },
	[DAVINCI_OP_TANH] = { f32_tanh, NULL },
	[DAVINCI_OP_SIGMOID] = { f32_sigmoid, NULL },
	[DAVINCI_OP_ERF] = { f32_erf, NULL },
	[DAVINCI_OP_LOG] = { f32_log, NULL },
	[DAVINCI_OP_GELU] = { f32_gelu, NULL },
	[DAVINCI_OP_SILU] = { f32_silu, NULL },
	[DAVINCI_OP_RECIPROCAL] = { f32_reciprocal, NULL },
	[DAVINCI_OP_POW] = { f32_pow, NULL },
	[DAVINCI_OP_NEG] = { f32_neg, s32_neg },
	[DAVINCI_OP_TANH_GRAD] = { f32_tanh_grad, NULL },
	[DAVINCI_OP_SIGMOID_GRAD] = { f32_sigmoid_grad, NULL },
	[DAVINCI_OP_GELU_GRAD] = { f32_gelu_grad, NULL },
	[DAVINCI_OP_SILU_GRAD] = { f32_silu_grad, NULL },
};

/* The float kernel of @t: by opcode, and GELU's form by its imm. */
static ew_f32_fn ew_f32_pick(const struct davinci_task *t)
{
	if (t->opcode == DAVINCI_OP_GELU && t->imm == DAVINCI_GELU_TANH)
		return f32_gelu_tanh;
	if (t->opcode == DAVINCI_OP_GELU_GRAD &&
	    t->imm == DAVINCI_GELU_GRAD_TANH)
		return f32_gelu_tanh_grad;
	return t->opcode < DAVINCI_OP_COUNT ? ew_fns[t->opcode].f32 : NULL;
}

static ew_s32_fn ew_s32_pick(u16 opcode)
{
	return opcode < DAVINCI_OP_COUNT ? ew_fns[opcode].s32 : NULL;
}

static void ew_f32(ew_f32_fn fn, float *d, const float *a, const float *b,
		   size_t n, float alpha)
{
	float tmp[EW_BLK];
	size_t i, len;

	if (d != a && d != b) {
		fn(d, a, b, n, alpha);
		return;
	}
	for (i = 0; i < n; i += len) {
		len = n - i < EW_BLK ? n - i : EW_BLK;
		fn(tmp, a + i, b + i, len, alpha);
		memcpy(d + i, tmp, len * sizeof(float));
	}
}

static void ew_s32(ew_s32_fn fn, s32 *d, const s32 *a, const s32 *b,
		   size_t n)
{
	s32 tmp[EW_BLK];
	size_t i, len;

	if (d != a && d != b) {
		fn(d, a, b, n);
		return;
	}
	for (i = 0; i < n; i += len) {
		len = n - i < EW_BLK ? n - i : EW_BLK;
		fn(tmp, a + i, b + i, len);
		memcpy(d + i, tmp, len * sizeof(s32));
	}
}

/* float16 / bfloat16 storage: widen a block, compute, round once. */
static void ew_half(ew_f32_fn fn, u8 dtype, u16 *d, const u16 *a,
		    const u16 *b, size_t n, float alpha)
{
	float ta[EW_BLK], tb[EW_BLK], tc[EW_BLK];
	size_t i, len;

	for (i = 0; i < n; i += len) {
		len = n - i < EW_BLK ? n - i : EW_BLK;
		dv_widen(dtype, a, i, ta, len);
		dv_widen(dtype, b, i, tb, len);
		fn(tc, ta, tb, len, alpha);
		dv_narrow(dtype, d, i, tc, len);
	}
}

DV_OP_KERNEL(elementwise)
{
	size_t n = (size_t)(end - begin);
	float alpha = dv_u2f(t->imm);

	(void)src2;
	(void)params;

	switch (t->dtype) {
	case DAVINCI_DTYPE_FLOAT32: {
		ew_f32_fn fn = ew_f32_pick(t);

		if (fn)
			ew_f32(fn, (float *)dst + begin,
			       (const float *)src0 + begin,
			       (const float *)src1 + begin, n, alpha);
		break;
	}
	case DAVINCI_DTYPE_FLOAT16:
	case DAVINCI_DTYPE_BFLOAT16: {
		ew_f32_fn fn = ew_f32_pick(t);

		if (fn)
			ew_half(fn, t->dtype, (u16 *)dst + begin, (const u16 *)src0 + begin,
				(const u16 *)src1 + begin, n, alpha);
		break;
	}
	case DAVINCI_DTYPE_INT32: {
		ew_s32_fn fn = ew_s32_pick(t->opcode);

		if (fn)
			ew_s32(fn, (s32 *)dst + begin,
			       (const s32 *)src0 + begin,
			       (const s32 *)src1 + begin, n);
		break;
	}
	case DAVINCI_DTYPE_INT64:
		ew_s64(t->opcode, (s64 *)dst + begin, (const s64 *)src0 + begin,
		       (const s64 *)src1 + begin, n);
		break;
	case DAVINCI_DTYPE_INT8:
		ew_s8(t->opcode, (s8 *)dst + begin, (const s8 *)src0 + begin,
		      (const s8 *)src1 + begin, n);
		break;
	case DAVINCI_DTYPE_UINT8:
		ew_u8(t->opcode, (u8 *)dst + begin, (const u8 *)src0 + begin,
		      (const u8 *)src1 + begin, n);
		break;
	default:
		break;
	}
}
