// SPDX-License-Identifier: GPL-2.0
/*
 * ops_triangle.c - TRIL and TRIU of the matrices src0[m/k][k][n]: row i
 * (of its matrix) keeps the elements of columns j with j - i <= diagonal
 * (TRIL) or j - i >= diagonal (TRIU), @imm's int32, and the others are
 * zero bits (+0, 0, false). A copy of bits: every dtype is exact. The
 * units are rows; dst may be src0 (in place).
 */
#include "dv_internal.h"
#include "ops_kernels.h"

DV_OP_KERNEL(triangle)
{
	u64 es = dv_dtype_size(t->dtype), n = t->n, r;
	s64 diag = (s32)t->imm;

	(void)src2;
	(void)params;
	(void)src1;
	for (r = begin; r < end; r++) {
		s64 i = (s64)(r % t->k), lo = 0, hi = (s64)n;
		u8 *d = (u8 *)dst + r * n * es;
		const u8 *s = (const u8 *)src0 + r * n * es;

		/* the kept columns [lo, hi) */
		if (t->opcode == DAVINCI_OP_TRIL)
			hi = i + diag + 1 < hi ? i + diag + 1 : hi;
		else
			lo = i + diag > 0 ? i + diag : 0;
		if (hi < lo)
			hi = lo;
		if (lo > (s64)n)
			lo = hi = (s64)n;
		if (hi < 0)
			lo = hi = 0;
		memset(d, 0, (size_t)lo * es);
		if (d != s)
			memcpy(d + lo * es, s + lo * es, (size_t)(hi - lo) * es);
		memset(d + hi * es, 0, (size_t)((s64)n - hi) * es);
	}
}
