// SPDX-License-Identifier: GPL-2.0
/*
 * ops_matmul.c - MATMUL: dst[m,n] = op(A)[m,k] x op(B)[k,n].
 *
 * Float code: the kernel builds this file with the FPU enabled.
 *
 * Order of accumulation (fixed, documented in NUMERICS.md): every output
 * element is
 *	c = 0; for (p = 0; p < k; p++) c = c + a[i][p] * b[p][j];
 * in float32, each product and each sum rounded (no fused multiply-add,
 * no reassociation). Blocking, transposes, chunking and the vector width
 * do not change that sequence, so results are bit-identical whatever the
 * path and whatever the compiler does with the loops, and equal to a
 * numpy float32 loop over p. float16 and bfloat16 inputs are widened
 * exactly; the float32 result is rounded once to the storage type.
 *
 * The work is a 4x8 register block (4 rows of dst, 8 columns: eight
 * 4-lane vectors of accumulators) over p, written with GCC vector
 * extensions. float32 A is read in place (either layout, by stride);
 * float32 B in [k,n] layout is read in place; other cases pack a 16x8
 * panel of B (and 4x16 of A) into float32 on the stack.
 */
#include "ops_kernels.h"
#include "numerics.h"

#define MM_R	4	/* rows of the register block */
#define MM_C	8	/* columns of the register block */
#define MM_KB	16	/* p per packed panel */

struct mm {
	u32 m, n, k;
	u8 dtype;
	bool ta, tb;
	const void *a, *b;
	void *c;
};

static inline dv_v4sf mm_ld(const float *p)
{
	dv_v4sf v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * acc[2r + h] += a_r[p * as] * b[p * ldb + 4h .. 4h + 3], p = 0 .. kb-1
 */
static void mm_block(const float *a0, const float *a1, const float *a2,
		     const float *a3, size_t as, const float *b, size_t ldb,
		     size_t kb, dv_v4sf *acc)
{
	dv_v4sf c00 = acc[0], c01 = acc[1], c10 = acc[2], c11 = acc[3];
	dv_v4sf c20 = acc[4], c21 = acc[5], c30 = acc[6], c31 = acc[7];
	size_t p;

	for (p = 0; p < kb; p++) {
		dv_v4sf b0 = mm_ld(b);
		dv_v4sf b1 = mm_ld(b + 4);
		float x;

		x = a0[p * as];
		c00 += b0 * x;
		c01 += b1 * x;
		x = a1[p * as];
		c10 += b0 * x;
		c11 += b1 * x;
		x = a2[p * as];
		c20 += b0 * x;
		c21 += b1 * x;
		x = a3[p * as];
		c30 += b0 * x;
		c31 += b1 * x;
		b += ldb;
	}
	acc[0] = c00;
	acc[1] = c01;
	acc[2] = c10;
	acc[3] = c11;
	acc[4] = c20;
	acc[5] = c21;
	acc[6] = c30;
	acc[7] = c31;
}

/* op(A)[i][p] */
static inline size_t mm_aidx(const struct mm *mm, size_t i, size_t p)
{
	return mm->ta ? p * mm->m + i : i * mm->k + p;
}

/* widen n elements at stride @st (in elements) to float32 */
static inline void mm_widen_run(u8 dtype, const void *base, size_t idx,
				size_t st, float *out, size_t ost, size_t n)
{
	size_t i;

	if (dtype != DAVINCI_DTYPE_FLOAT32 && st == 1 && ost == 1) {
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

/* panel bp[p][0..7] = op(B)[k0 + p][j0 .. j0 + cols - 1], zero padded */
static void mm_pack_b(const struct mm *mm, size_t k0, size_t kb, size_t j0,
		      size_t cols, float *bp)
{
	size_t p, j;

	if (cols < MM_C)
		memset(bp, 0, sizeof(float) * MM_KB * MM_C);
	if (mm->tb) {
		/* B stored [n,k]: column j of op(B) is contiguous in p */
		for (j = 0; j < cols; j++)
			mm_widen_run(mm->dtype, mm->b, (j0 + j) * mm->k + k0, 1,
				     bp + j, MM_C, kb);
	} else {
		for (p = 0; p < kb; p++)
			mm_widen_run(mm->dtype, mm->b, (k0 + p) * mm->n + j0, 1,
				     bp + p * MM_C, 1, cols);
	}
}

/* ap[r][p] = op(A)[row[r]][k0 + p] */
static void mm_pack_a(const struct mm *mm, const size_t *row, size_t k0,
		      size_t kb, float *ap)
{
	size_t r;

	for (r = 0; r < MM_R; r++) {
		if (mm->ta)
			mm_widen_run(mm->dtype, mm->a, k0 * mm->m + row[r],
				     mm->m, ap + r * MM_KB, 1, kb);
		else
			mm_widen_run(mm->dtype, mm->a, row[r] * mm->k + k0, 1,
				     ap + r * MM_KB, 1, kb);
	}
}

static void mm_store(const struct mm *mm, const size_t *row, size_t rows,
		     size_t j0, size_t cols, const dv_v4sf *acc)
{
	float out[MM_R * MM_C];
	size_t r, j;

	memcpy(out, acc, sizeof(out));
	for (j = 0; j < MM_R * MM_C; j++)
		out[j] = dv_canon_nan(out[j]);
	for (r = 0; r < rows; r++) {
		size_t o = row[r] * mm->n + j0;

		switch (mm->dtype) {
		case DAVINCI_DTYPE_FLOAT16:
			for (j = 0; j < cols; j++)
				((u16 *)mm->c)[o + j] =
					dv_f32_to_f16(out[r * MM_C + j]);
			break;
		case DAVINCI_DTYPE_BFLOAT16:
			for (j = 0; j < cols; j++)
				((u16 *)mm->c)[o + j] =
					dv_f32_to_bf16(out[r * MM_C + j]);
			break;
		default:
			memcpy((float *)mm->c + o, out + r * MM_C,
			       cols * sizeof(float));
			break;
		}
	}
}

/* One 4x8 block of dst: rows row[0..3] (duplicates beyond @rows). */
static void mm_tile(const struct mm *mm, const size_t *row, size_t rows,
		    size_t j0)
{
	dv_v4sf acc[2 * MM_R];
	float bp[MM_KB * MM_C];
	float ap[MM_R * MM_KB];
	size_t cols = mm->n - j0 < MM_C ? mm->n - j0 : MM_C;
	bool f32 = mm->dtype == DAVINCI_DTYPE_FLOAT32;
	bool direct_b = f32 && !mm->tb && cols == MM_C;
	size_t k0, kb;

	memset(acc, 0, sizeof(acc));
	if (direct_b) {
		const float *a = mm->a;
		size_t as = mm->ta ? mm->m : 1;

		mm_block(a + mm_aidx(mm, row[0], 0), a + mm_aidx(mm, row[1], 0),
			 a + mm_aidx(mm, row[2], 0), a + mm_aidx(mm, row[3], 0),
			 as, (const float *)mm->b + j0, mm->n, mm->k, acc);
		mm_store(mm, row, rows, j0, cols, acc);
		return;
	}
	for (k0 = 0; k0 < mm->k; k0 += kb) {
		const float *a0, *a1, *a2, *a3, *b;
		size_t as, ldb;

		kb = mm->k - k0 < MM_KB ? mm->k - k0 : MM_KB;
		mm_pack_b(mm, k0, kb, j0, cols, bp);
		b = bp;
		ldb = MM_C;
		if (f32) {
			const float *a = mm->a;

			as = mm->ta ? mm->m : 1;
			a0 = a + mm_aidx(mm, row[0], k0);
			a1 = a + mm_aidx(mm, row[1], k0);
			a2 = a + mm_aidx(mm, row[2], k0);
			a3 = a + mm_aidx(mm, row[3], k0);
		} else {
			mm_pack_a(mm, row, k0, kb, ap);
			as = 1;
			a0 = ap;
			a1 = ap + MM_KB;
			a2 = ap + 2 * MM_KB;
			a3 = ap + 3 * MM_KB;
		}
		mm_block(a0, a1, a2, a3, as, b, ldb, kb, acc);
	}
	mm_store(mm, row, rows, j0, cols, acc);
}

void dv_opk_matmul(const struct davinci_task *t, void *dst,
		   const void *src0, const void *src1, u64 begin, u64 end)
{
	struct mm mm = {
		.m = t->m, .n = t->n, .k = t->k, .dtype = t->dtype,
		.ta = !!(t->flags & DAVINCI_TASK_F_TRANS_A),
		.tb = !!(t->flags & DAVINCI_TASK_F_TRANS_B),
		.a = src0, .b = src1, .c = dst,
	};
	size_t i0, j0, r, rows;
	size_t row[MM_R];

	if (t->dtype == DAVINCI_DTYPE_INT32 || !mm.n)
		return;
	if (!mm.k) {
		/* empty sums; src0 and src1 have no bytes (may be NULL) */
		size_t es = t->dtype == DAVINCI_DTYPE_FLOAT32 ? 4 : 2;

		memset((u8 *)dst + begin * mm.n * es, 0,
		       (end - begin) * mm.n * es);
		return;
	}
	for (i0 = begin; i0 < end; i0 += MM_R) {
		rows = end - i0 < MM_R ? end - i0 : MM_R;
		/* short blocks repeat their first row; its result is dropped */
		for (r = 0; r < MM_R; r++)
			row[r] = i0 + (r < rows ? r : 0);
		for (j0 = 0; j0 < mm.n; j0 += MM_C)
			mm_tile(&mm, row, rows, j0);
	}
}
