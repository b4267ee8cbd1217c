// SPDX-License-Identifier: GPL-2.0
/*
 * ops_argsort.c - ARGSORT: dst[i][0..k) (int64) = the indices of the
 * first k elements of row i of src0[m,n] in stable sorted order, as
 * torch.sort(stable=True) orders them: -0 equals +0, NaNs are equal to
 * each other and larger than everything, and equal elements keep their
 * order (ascending and descending alike).
 *
 * Each element becomes an unsigned key that orders as its value does,
 * and ties are broken by the index, so the order is a strict total one
 * and any algorithm gives the stable result. A heap of the best k so far
 * lives in the row of dst itself (no scratch): O(n log k) to select, then
 * O(k log k) to sort them. Integer code only: every build gives the same
 * indices.
 */
#include "dv_internal.h"
#include "ops_kernels.h"

/* An IEEE half or single @bits of @width bits as an ordered key. */
static u64 as_key_float(u64 bits, unsigned int width, u64 inf)
{
	u64 sign = 1ULL << (width - 1);

	if ((bits & (sign - 1)) > inf)
		return ~0ULL;		/* any NaN: the largest */
	if (bits == sign)
		bits = 0;		/* -0 equals +0 */
	return bits & sign ? ~bits & (sign | (sign - 1)) : bits | sign;
}

/* Element @j of @row, of @dtype, as a key that orders as its value. */
static u64 as_key(u8 dtype, const void *row, u64 j)
{
	switch (dtype) {
	case DAVINCI_DTYPE_FLOAT32:
		return as_key_float(((const u32 *)row)[j], 32, 0x7f800000);
	case DAVINCI_DTYPE_FLOAT16:
		return as_key_float(((const u16 *)row)[j], 16, 0x7c00);
	case DAVINCI_DTYPE_BFLOAT16:
		return as_key_float(((const u16 *)row)[j], 16, 0x7f80);
	case DAVINCI_DTYPE_INT32:
		return ((const u32 *)row)[j] ^ 0x80000000U;
	case DAVINCI_DTYPE_INT64:
		return ((const u64 *)row)[j] ^ (1ULL << 63);
	case DAVINCI_DTYPE_INT8:
		return ((const u8 *)row)[j] ^ 0x80U;
	default:		/* UINT8, BOOL */
		return ((const u8 *)row)[j];
	}
}

/* One row's sort: its values, their dtype and the order asked for. */
struct sort_row {
	const void *x;
	u8 dtype;
	bool descending;
};

/* Index @a comes before index @b in the output. */
static bool sort_before(const struct sort_row *r, s64 a, s64 b)
{
	u64 ka = as_key(r->dtype, r->x, a), kb = as_key(r->dtype, r->x, b);

	if (ka != kb)
		return r->descending ? ka > kb : ka < kb;
	return a < b;
}

/*
 * Restore the heap @h[0..len) below @at: each parent comes after its
 * children, so the root is the last of the kept indices in the output.
 */
static void sort_sift_down(const struct sort_row *r, s64 *h, u64 len, u64 at)
{
	s64 v = h[at];

	for (;;) {
		u64 c = 2 * at + 1;

		if (c >= len)
			break;
		if (c + 1 < len && sort_before(r, h[c], h[c + 1]))
			c++;
		if (!sort_before(r, v, h[c]))
			break;
		h[at] = h[c];
		at = c;
	}
	h[at] = v;
}

static void sort_one_row(const struct sort_row *r, s64 *out, u64 n, u64 k)
{
	u64 i;

	for (i = 0; i < k; i++)
		out[i] = (s64)i;
	for (i = k / 2; i-- > 0;)
		sort_sift_down(r, out, k, i);
	for (i = k; i < n; i++) {
		if (!sort_before(r, (s64)i, out[0]))
			continue;
		out[0] = (s64)i;
		sort_sift_down(r, out, k, 0);
	}
	/* heapsort: the last kept goes to the end, and so on */
	for (i = k; i-- > 1;) {
		s64 last = out[0];

		out[0] = out[i];
		out[i] = last;
		sort_sift_down(r, out, i, 0);
	}
}

/* Units are rows; dv_op_extent() checked 1 <= k <= n. */
DV_OP_KERNEL(argsort)
{
	u64 es = dv_dtype_size(t->dtype), i;
	struct sort_row r = {
		.dtype = t->dtype,
		.descending = t->imm == DAVINCI_ARGSORT_DESCENDING,
	};

	(void)params;
	(void)src1;
	(void)src2;
	for (i = begin; i < end; i++) {
		r.x = (const u8 *)src0 + i * t->n * es;
		sort_one_row(&r, (s64 *)dst + i * t->k, t->n, t->k);
	}
}
