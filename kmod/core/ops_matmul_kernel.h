/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops_matmul_kernel.h - the MATMUL row-range kernel, instantiated once per
 * SIMD level by a translation unit that defines, before including it:
 *
 *	MMK_W	float32 lanes of a vector (4: SSE2/NEON, 8: AVX2, 16: AVX-512)
 *	MMK_MR	rows of the register block
 *	MMK_NV	vectors per row of the register block (MMK_NR = W * NV columns)
 *	MMK_FN	the function's name (declared in ops_matmul.h)
 *	MMK_TARGET	optional: the instruction set for these functions
 *			(a string for the target attribute, e.g. "avx2")
 *
 * The vectors are GCC vector extensions, so the unit's target flags pick
 * the instructions; -ffp-contract=off keeps every multiply and add
 * separate (no FMA).
 *
 * Order (NUMERICS.md): each output element is one accumulator, c = +0,
 * then c = c + a[i][p] * b[p][j] for p = 0, 1, ..., k-1, each product and
 * sum rounded to float32. Lanes are output columns, never p, so the vector
 * width, the block shape, and the k blocking (the accumulators go to a
 * float32 array and come back unchanged) leave that sequence as it is.
 *
 * Blocking: B is packed into panels of k x NR floats (contiguous, read
 * once per MR rows), as many panels as fit the scratch memory, and reused
 * by every row block of [begin, end); a last panel of at most W columns
 * (a 14 x 14 convolution's 196 = 6 x 32 + 4) runs a block of one vector
 * per row. float32 A is read in place (either
 * layout); float16/bfloat16 A is widened into MR x k on the scratch.
 * When k exceeds what the scratch holds, the accumulators of a group of
 * row blocks are carried across pieces of k instead (mmk_pieces()), each
 * piece's B panel packed once for the group.
 */
#ifdef MMK_TARGET
#define MMK_PRAGMA_STR(...) _Pragma(#__VA_ARGS__)
#define MMK_PRAGMA(...) MMK_PRAGMA_STR(__VA_ARGS__)
#ifdef __clang__
MMK_PRAGMA(clang attribute push(__attribute__((target(MMK_TARGET))),
			       apply_to = function))
#else
MMK_PRAGMA(GCC push_options)
MMK_PRAGMA(GCC target(MMK_TARGET))
#endif
#endif

#define MMK_NR (MMK_W * MMK_NV)
/* packed rows of A: kc rounded up to 16 floats, plus 16 if 2 KiB aligned */
#define MMK_A_STRIDE(kc) ((((kc) + 15) & ~(size_t)15) + \
			  ((((kc) + 15) & 511) < 16 ? 16 : 0))
#define mmk_v float __attribute__((vector_size(MMK_W * 4)))
#define mmk_vi int __attribute__((vector_size(MMK_W * 4)))

#if MMK_MR > DV_MM_MAX_MR || MMK_NR > DV_MM_MAX_NR
#error "register block larger than DV_MM_MAX_MR x DV_MM_MAX_NR"
#endif

static inline mmk_v mmk_ld(const float *p)
{
	mmk_v v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void mmk_st(float *p, mmk_v v)
{
	memcpy(p, &v, sizeof(v));
}

/*
 * Panels of B from column @j0 into @out, each kc x NR at kc * NR floats
 * apart, the last @cols wide. A float32 [k,n] B is read line by line
 * across all its panels: sequential reads, and vector copies rather than a
 * library call per panel line.
 */
static void mmk_pack_b(const struct dv_mm *mm, size_t k0, size_t kc,
		       size_t j0, size_t cols, float *out)
{
	const float *b = (const float *)mm->b + k0 * mm->n + j0;
	size_t p, jr, full = cols / MMK_NR * MMK_NR;
	int v;

	if (mm->dtype != DAVINCI_DTYPE_FLOAT32 || mm->tb || mm->pack_b)
		full = 0;
	for (p = 0; full && p < kc; p++, b += mm->n)
		for (jr = 0; jr < full; jr += MMK_NR)
#pragma GCC unroll 16
			for (v = 0; v < MMK_NV; v++)
				mmk_st(out + jr * kc + p * MMK_NR + v * MMK_W,
				       mmk_ld(b + jr + v * MMK_W));
	for (jr = full; jr < cols; jr += MMK_NR)
		dv_mm_pack_b(mm, k0, kc, j0 + jr,
			     cols - jr < MMK_NR ? cols - jr : MMK_NR, MMK_NR,
			     out + jr * kc);
}

/*
 * dv_mm_store() for float32 dst and a whole block, in vectors: NaN made
 * canonical on the bits as dv_canon_nan() does.
 */
static void mmk_store(const struct dv_mm *mm, const size_t *row, size_t rows,
		      size_t j0, size_t cols, const float *acc)
{
	const mmk_vi mag = (mmk_vi){} + 0x7fffffff;
	const mmk_vi inf = (mmk_vi){} + 0x7f800000;
	const mmk_vi nan = (mmk_vi){} + 0x7fc00000;
	size_t r;
	int v;

	if (mm->dtype != DAVINCI_DTYPE_FLOAT32 || cols != MMK_NR) {
		dv_mm_store(mm, row, rows, j0, cols, MMK_NR, acc);
		return;
	}
	for (r = 0; r < rows; r++) {
		float *c = (float *)mm->c + row[r] * mm->n + j0;

#pragma GCC unroll 16
		for (v = 0; v < MMK_NV; v++) {
			mmk_vi x, nanm;

			memcpy(&x, acc + r * MMK_NR + v * MMK_W, sizeof(x));
			nanm = (x & mag) > inf;
			x = (x & ~nanm) | (nan & nanm);
			memcpy(c + v * MMK_W, &x, sizeof(x));
		}
	}
}

/*
 * acc[r * NR + j] = acc[r * NR + j] + a[r][p * as] * b[p * ldb + j], in
 * order p = 0 .. kc-1, for every r < MR and j < NR.
 */
static void mmk_block(const float *const *a, size_t as, const float *b,
		      size_t ldb, size_t kc, float *acc)
{
	const float *ar[MMK_MR];
	mmk_v c[MMK_MR][MMK_NV];
	size_t p, off;
	int r, v;

#pragma GCC unroll 16
	for (r = 0; r < MMK_MR; r++) {
		ar[r] = a[r];
#pragma GCC unroll 16
		for (v = 0; v < MMK_NV; v++)
			c[r][v] = mmk_ld(acc + r * MMK_NR + v * MMK_W);
	}
	for (p = 0, off = 0; p < kc; p++, off += as, b += ldb) {
		mmk_v bv[MMK_NV];

#pragma GCC unroll 16
		for (v = 0; v < MMK_NV; v++)
			bv[v] = mmk_ld(b + v * MMK_W);
#pragma GCC unroll 16
		for (r = 0; r < MMK_MR; r++) {
			float x = ar[r][off];

#pragma GCC unroll 16
			for (v = 0; v < MMK_NV; v++)
				c[r][v] = c[r][v] + bv[v] * x;
		}
	}
#pragma GCC unroll 16
	for (r = 0; r < MMK_MR; r++)
#pragma GCC unroll 16
		for (v = 0; v < MMK_NV; v++)
			mmk_st(acc + r * MMK_NR + v * MMK_W, c[r][v]);
}

/*
 * mmk_block() for a last panel of at most W columns: one vector per row,
 * the panel's first W lanes (same order; the other lanes stay unwritten).
 */
static void mmk_block_narrow(const float *const *a, size_t as,
			     const float *b, size_t ldb, size_t kc, float *acc)
{
	const float *ar[MMK_MR];
	mmk_v c[MMK_MR];
	size_t p, off;
	int r;

#pragma GCC unroll 16
	for (r = 0; r < MMK_MR; r++) {
		ar[r] = a[r];
		c[r] = mmk_ld(acc + r * MMK_NR);
	}
	for (p = 0, off = 0; p < kc; p++, off += as, b += ldb) {
		mmk_v bv = mmk_ld(b);

#pragma GCC unroll 16
		for (r = 0; r < MMK_MR; r++)
			c[r] = c[r] + bv * ar[r][off];
	}
#pragma GCC unroll 16
	for (r = 0; r < MMK_MR; r++)
		mmk_st(acc + r * MMK_NR, c[r]);
}

/*
 * Row pointers of op(A) from column k0, returning their stride in p.
 * float32 A is read in place: transposed, one line serves MR rows; as
 * [m,k], the MR row streams (on Zen 5, 1.1x to 1.2x faster than copying
 * them even at k = 1024, 2048 or 4096, whose rows share L1 sets). Other
 * rows are widened to @ap at a stride that is not a multiple of 2 KiB,
 * so that the MR streams do not fall into the same L1 sets.
 */
static size_t mmk_rows_a(const struct dv_mm *mm, const size_t *row,
			 size_t k0, size_t kc, float *ap, const float **a)
{
	size_t st = MMK_A_STRIDE(kc);
	int r;

	if (mm->dtype == DAVINCI_DTYPE_FLOAT32 && mm->ta && !mm->pack_a) {
		for (r = 0; r < MMK_MR; r++)
			a[r] = (const float *)mm->a + k0 * mm->m + row[r];
		return mm->m;
	}
	if (mm->dtype == DAVINCI_DTYPE_FLOAT32 && !mm->pack_a) {
		for (r = 0; r < MMK_MR; r++)
			a[r] = (const float *)mm->a + row[r] * mm->k + k0;
		return 1;
	}
	for (r = 0; r < MMK_MR; r++) {
		dv_mm_pack_a(mm, row + r, 1, k0, kc, ap + r * st);
		a[r] = ap + r * st;
	}
	return 1;
}

/*
 * The rows of the block at @i0 (a short one, before @end, repeats its
 * first row, whose results are not stored); returns how many are real.
 */
static size_t mmk_block_rows(size_t *row, size_t i0, size_t end)
{
	size_t rows = end - i0 < MMK_MR ? end - i0 : MMK_MR;
	size_t r;

	for (r = 0; r < MMK_MR; r++)
		row[r] = i0 + (r < rows ? r : 0);
	return rows;
}

/* row blocks whose accumulators a piece of k carries (see MMK_FN) */
#define MMK_GROUP 16

/*
 * k larger than the scratch holds: for each panel of NR columns and each
 * group of MMK_GROUP row blocks, every piece of k packs its B panel once
 * and runs every block of the group, whose accumulators wait on the
 * scratch for the next piece. Each accumulator still sees p in order.
 */
static void mmk_pieces(const struct dv_mm *mm, u64 begin, u64 end,
		       float *scratch, size_t total)
{
	size_t kc = (total - 32 * MMK_MR - MMK_GROUP * MMK_MR * MMK_NR) /
		    (MMK_MR + MMK_NR);
	float *ap = scratch, *bp = scratch + MMK_MR * MMK_A_STRIDE(kc);
	float *acc = bp + kc * MMK_NR;
	const float *a[MMK_MR];
	size_t row[MMK_MR];
	size_t je = mm->j_end ? mm->j_end : mm->n;
	size_t jc, g0, g1, i0, k0, as;

	for (jc = mm->j_begin; jc < je; jc += MMK_NR) {
		size_t cols = je - jc < MMK_NR ? je - jc : MMK_NR;

		for (g0 = begin; g0 < end; g0 = g1) {
			g1 = end - g0 < MMK_GROUP * MMK_MR ?
			     end : g0 + MMK_GROUP * MMK_MR;
			memset(acc, 0, MMK_GROUP * MMK_MR * MMK_NR *
			       sizeof(float));
			for (k0 = 0; k0 < mm->k; k0 += kc) {
				size_t kp = mm->k - k0 < kc ? mm->k - k0 : kc;

				mmk_pack_b(mm, k0, kp, jc, cols, bp);
				for (i0 = g0; i0 < g1; i0 += MMK_MR) {
					mmk_block_rows(row, i0, g1);
					as = mmk_rows_a(mm, row, k0, kp, ap, a);
					mmk_block(a, as, bp, MMK_NR, kp, acc +
						  (i0 - g0) * MMK_NR);
				}
			}
			for (i0 = g0; i0 < g1; i0 += MMK_MR)
				mmk_store(mm, row, mmk_block_rows(row, i0, g1),
					  jc, cols, acc + (i0 - g0) * MMK_NR);
		}
	}
}

void MMK_FN(const struct dv_mm *mm, u64 begin, u64 end, float *scratch)
{
	size_t total = OS_FPU_SCRATCH_SIZE / sizeof(float);
	size_t kc = (total - 32 * MMK_MR) / (MMK_MR + MMK_NR);
	float *ap = scratch, *bp;
	size_t nc;
	float acc[MMK_MR * MMK_NR];
	const float *a[MMK_MR];
	size_t row[MMK_MR];
	size_t je = mm->j_end ? mm->j_end : mm->n;
	size_t jc, jr, i0, as = 1;

	if (mm->k > kc) {	/* panels of all of k do not fit */
		mmk_pieces(mm, begin, end, scratch, total);
		return;
	}
	kc = mm->k;
	bp = scratch + MMK_MR * MMK_A_STRIDE(kc);
	nc = (size_t)(scratch + total - bp) / (kc * MMK_NR) * MMK_NR;
	for (jc = mm->j_begin; jc < je; jc += nc) {
		size_t ncur = je - jc < nc ? je - jc : nc;

		mmk_pack_b(mm, 0, kc, jc, ncur, bp);
		for (i0 = begin; i0 < end; i0 += MMK_MR) {
			size_t rows = mmk_block_rows(row, i0, end);

			as = mmk_rows_a(mm, row, 0, kc, ap, a);
			for (jr = 0; jr < ncur; jr += MMK_NR) {
				size_t cols = ncur - jr < MMK_NR ?
					      ncur - jr : MMK_NR;

				memset(acc, 0, sizeof(acc));
				if (cols <= MMK_W)	/* e.g. 196 = 6 * 32 + 4 */
					mmk_block_narrow(a, as, bp + jr * kc,
							 MMK_NR, kc, acc);
				else
					mmk_block(a, as, bp + jr * kc, MMK_NR,
						  kc, acc);
				mmk_store(mm, row, rows, jc + jr, cols, acc);
			}
		}
	}
}

#undef mmk_v
#undef mmk_vi
#undef MMK_NR
#undef MMK_GROUP

#ifdef MMK_TARGET
#ifdef __clang__
MMK_PRAGMA(clang attribute pop)
#else
MMK_PRAGMA(GCC pop_options)
#endif
#endif
