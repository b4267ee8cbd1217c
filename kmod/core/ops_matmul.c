// SPDX-License-Identifier: GPL-2.0
/*
 * ops_matmul.c - MATMUL: dst[m,n] = op(A)[m,k] x op(B)[k,n].
 *
 * Float code: the kernel builds this file with the FPU enabled.
 *
 * The entry point picks the SIMD level (os_simd_level()) and runs that
 * level's row-range kernel (ops_matmul_kernel.h): this file's baseline
 * (SSE2 on x86-64, NEON on arm64) or ops_matmul_avx2.c/_avx512.c. Every
 * level computes each output element in the one order NUMERICS.md fixes,
 * so the level never changes the bits. The packing and storing helpers
 * here are shared by all levels.
 */
#include "ops_kernels.h"
#include "ops_matmul.h"
#include "numerics.h"

/* widen n elements at stride @st (in elements) to float32 at stride @ost */
static void mm_widen_run(u8 dtype, const void *base, size_t idx, size_t st,
			 float *out, size_t ost, size_t n)
{
	size_t i;

	if (st == 1 && ost == 1) {
		dv_widen(dtype, base, idx, out, n);
		return;
	}
	switch (dtype) {
	case DAVINCI_DTYPE_FLOAT16: {
		const u16 *s = (const u16 *)base + idx;

		for (i = 0; i < n; i++)
			out[i * ost] = dv_f16_to_f32(s[i * st]);
		break;
	}
	case DAVINCI_DTYPE_BFLOAT16: {
		const u16 *s = (const u16 *)base + idx;

		for (i = 0; i < n; i++)
			out[i * ost] = dv_bf16_to_f32(s[i * st]);
		break;
	}
	default: {
		const float *s = (const float *)base + idx;

		for (i = 0; i < n; i++)
			out[i * ost] = s[i * st];
		break;
	}
	}
}

void dv_mm_pack_b(const struct dv_mm *mm, size_t k0, size_t kc, size_t j0,
		  size_t cols, size_t nr, float *out)
{
	size_t p, j;

	if (mm->pack_b) {
		mm->pack_b(mm, k0, kc, j0, cols, nr, out);
		return;
	}
	if (mm->tb) {
		/* B stored [n,k]: column j of op(B) is contiguous in p */
		for (j = 0; j < cols; j++)
			mm_widen_run(mm->dtype, mm->b, (j0 + j) * mm->k + k0, 1,
				     out + j, nr, kc);
		for (p = 0; cols < nr && p < kc; p++)
			memset(out + p * nr + cols, 0,
			       (nr - cols) * sizeof(float));
		return;
	}
	for (p = 0; p < kc; p++) {
		mm_widen_run(mm->dtype, mm->b, (k0 + p) * mm->n + j0, 1,
			     out + p * nr, 1, cols);
		if (cols < nr)
			memset(out + p * nr + cols, 0,
			       (nr - cols) * sizeof(float));
	}
}

void dv_mm_pack_a(const struct dv_mm *mm, const size_t *row, size_t mr,
		  size_t k0, size_t kc, float *out)
{
	size_t r;

	if (mm->pack_a) {
		mm->pack_a(mm, row, mr, k0, kc, out);
		return;
	}
	for (r = 0; r < mr; r++) {
		if (mm->ta)
			mm_widen_run(mm->dtype, mm->a, k0 * mm->m + row[r],
				     mm->m, out + r * kc, 1, kc);
		else
			mm_widen_run(mm->dtype, mm->a, row[r] * mm->k + k0, 1,
				     out + r * kc, 1, kc);
	}
}

void dv_mm_store(const struct dv_mm *mm, const size_t *row, size_t rows,
		 size_t j0, size_t cols, size_t nr, const float *acc)
{
	float out[DV_MM_MAX_NR];
	size_t r, j;

	for (r = 0; r < rows; r++) {
		size_t o = row[r] * mm->n + j0;

		for (j = 0; j < cols; j++)
			out[j] = dv_canon_nan(acc[r * nr + j]);
		switch (mm->dtype) {
		case DAVINCI_DTYPE_FLOAT16:
			for (j = 0; j < cols; j++)
				((u16 *)mm->c)[o + j] = dv_f32_to_f16(out[j]);
			break;
		case DAVINCI_DTYPE_BFLOAT16:
			for (j = 0; j < cols; j++)
				((u16 *)mm->c)[o + j] = dv_f32_to_bf16(out[j]);
			break;
		default:
			memcpy((float *)mm->c + o, out, cols * sizeof(float));
			break;
		}
	}
}

/*
 * The baseline level: 16 SSE2 registers hold a 4 x 8 block; NEON's 32
 * hold 8 x 8.
 */
#define MMK_W	4
#ifdef __aarch64__
#define MMK_MR	8
#else
#define MMK_MR	4
#endif
#define MMK_NV	2
#define MMK_FN	dv_mm_rows_base
#include "ops_matmul_kernel.h"

/**
 * dv_opk_matmul() - rows [@begin, @end) of a MATMUL task's dst
 *
 * The unit of work is one row of dst; any split of [0, m) into ranges,
 * run in any order or on several AI cores at once (each between its own
 * os_fpu_begin() and os_fpu_end()), writes the same bytes.
 */
DV_OP_KERNEL(matmul)
{
	struct dv_mm mm = {
		.m = t->m, .n = t->n, .k = t->k, .dtype = t->dtype,
		.ta = !!(t->flags & DAVINCI_TASK_F_TRANS_A),
		.tb = !!(t->flags & DAVINCI_TASK_F_TRANS_B),
		.a = src0, .b = src1, .c = dst,
	};

	(void)src2;
	(void)params;
	if (t->dtype == DAVINCI_DTYPE_INT32 || !mm.n)
		return;
	if (!mm.k) {
		/* empty sums; src0 and src1 have no bytes (may be NULL) */
		size_t es = t->dtype == DAVINCI_DTYPE_FLOAT32 ? 4 : 2;

		memset((u8 *)dst + begin * mm.n * es, 0,
		       (end - begin) * mm.n * es);
		return;
	}
	dv_mm_rows(&mm, begin, end);
}

/* Every level gives the same bits: the fastest the CPU and OS allow. */
void dv_mm_rows(const struct dv_mm *mm, u64 begin, u64 end)
{
	float *scratch = os_fpu_scratch();

	switch (os_simd_level()) {
#if defined(__x86_64__)
	case OS_SIMD_AVX512:
		dv_mm_rows_avx512(mm, begin, end, scratch);
		break;
	case OS_SIMD_AVX2:
		dv_mm_rows_avx2(mm, begin, end, scratch);
		break;
#endif
	default:
		dv_mm_rows_base(mm, begin, end, scratch);
		break;
	}
}
