/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops_matmul.h - the MATMUL kernels' shared parts: the problem, the
 * packing and storing helpers (ops_matmul.c) and one row-range kernel per
 * SIMD level (ops_matmul_kernel.h instantiated in ops_matmul*.c). Float
 * code: include only from the op kernels' translation units.
 */
#ifndef _DAVINCI_OPS_MATMUL_H
#define _DAVINCI_OPS_MATMUL_H

#include "os.h"

/*
 * dst[m,n] = op(A)[m,k] x op(B)[k,n]; see NUMERICS.md. @pack_a and
 * @pack_b, when set, produce the packed A rows and B panels instead of
 * reading @a and @b (dv_mm_pack_a() and dv_mm_pack_b() say what), from
 * operands the caller describes by @ctx: the convolutions' img2col reads
 * its image on the fly, with no matrix in memory.
 */
struct dv_mm {
	u32 m, n, k;
	u32 j_begin, j_end;	/* columns of dst computed; j_end 0: all n */
	u8 dtype;
	bool ta, tb;
	const void *a, *b;
	void *c;
	void (*pack_a)(const struct dv_mm *mm, const size_t *row, size_t mr,
		       size_t k0, size_t kc, float *out);
	void (*pack_b)(const struct dv_mm *mm, size_t k0, size_t kc,
		       size_t j0, size_t cols, size_t nr, float *out);
	const void *ctx;
};

/* Largest register block of any level (rows, columns). */
#define DV_MM_MAX_MR	8
#define DV_MM_MAX_NR	32

/*
 * @out[p * nr + j] = op(B)[k0 + p][j0 + j] for p < kc, j < cols, widened
 * to float32; columns cols..nr-1 are zero.
 */
void dv_mm_pack_b(const struct dv_mm *mm, size_t k0, size_t kc, size_t j0,
		  size_t cols, size_t nr, float *out);
/* @out[r * kc + p] = op(A)[row[r]][k0 + p] for r < mr, p < kc */
void dv_mm_pack_a(const struct dv_mm *mm, const size_t *row, size_t mr,
		  size_t k0, size_t kc, float *out);
/*
 * dst[row[r]][j0 + j] = @acc[r * nr + j] for r < rows, j < cols: NaNs made
 * canonical, rounded once to the storage type.
 */
void dv_mm_store(const struct dv_mm *mm, const size_t *row, size_t rows,
		 size_t j0, size_t cols, size_t nr, const float *acc);

/*
 * Rows [@begin, @end) of dst at one SIMD level, k >= 1; @scratch is
 * OS_FPU_SCRATCH_SIZE bytes. Every level gives the same bits.
 */
void dv_mm_rows_base(const struct dv_mm *mm, u64 begin, u64 end,
		     float *scratch);
void dv_mm_rows_avx2(const struct dv_mm *mm, u64 begin, u64 end,
		     float *scratch);
void dv_mm_rows_avx512(const struct dv_mm *mm, u64 begin, u64 end,
		       float *scratch);
/* Rows [@begin, @end) of dst, k >= 1, at os_simd_level()'s level. */
void dv_mm_rows(const struct dv_mm *mm, u64 begin, u64 end);

#endif /* _DAVINCI_OPS_MATMUL_H */
