// SPDX-License-Identifier: GPL-2.0
/*
 * test_matmul.c - the MATMUL kernel at every SIMD level this CPU has
 * (stepped through with DAVINCI_SIMD, the userspace override): each level
 * must give exactly the bits of the summation order NUMERICS.md fixes,
 * for every dtype, both transposes, ragged shapes, k past the packed
 * panels, special values, and any split of the rows into ranges.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "ops_kernels.h"
#include "numerics.h"

static const char *const mm_level_names[] = OS_SIMD_NAMES;

static u32 mm_rand(u64 *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (u32)(*s >> 32);
}

/* mostly small values, some NaN, inf, subnormal and signed zeros */
static float mm_value(u64 *s)
{
	u32 r = mm_rand(s);

	switch (r % 64) {
	case 0:
		return dv_u2f(0x7f800001u | (mm_rand(s) & 0x3fffff));
	case 1:
		return dv_u2f(0xff800000u);
	case 2:
		return dv_u2f(0x00000001u + (mm_rand(s) & 0x7fffff));
	case 3:
		return -0.0f;
	default:
		return ((float)(int)(mm_rand(s) % 2001) - 1000.0f) / 97.0f;
	}
}

static void mm_put(u8 dtype, void *p, size_t i, float v)
{
	if (dtype == DAVINCI_DTYPE_FLOAT16)
		((u16 *)p)[i] = dv_f32_to_f16(v);
	else if (dtype == DAVINCI_DTYPE_BFLOAT16)
		((u16 *)p)[i] = dv_f32_to_bf16(v);
	else
		((float *)p)[i] = v;
}

static float mm_get(u8 dtype, const void *p, size_t i)
{
	if (dtype == DAVINCI_DTYPE_FLOAT16)
		return dv_f16_to_f32(((const u16 *)p)[i]);
	if (dtype == DAVINCI_DTYPE_BFLOAT16)
		return dv_bf16_to_f32(((const u16 *)p)[i]);
	return ((const float *)p)[i];
}

/* The contract, as a scalar loop (this file has -ffp-contract=off too). */
static void mm_reference(const struct davinci_task *t, const void *a,
			 const void *b, void *c)
{
	bool ta = t->flags & DAVINCI_TASK_F_TRANS_A;
	bool tb = t->flags & DAVINCI_TASK_F_TRANS_B;
	size_t i, j, p;

	for (i = 0; i < t->m; i++)
		for (j = 0; j < t->n; j++) {
			float acc = 0.0f;

			for (p = 0; p < t->k; p++)
				acc = acc +
				      mm_get(t->dtype, a, ta ? p * t->m + i :
							  i * t->k + p) *
				      mm_get(t->dtype, b, tb ? j * t->k + p :
							  p * t->n + j);
			mm_put(t->dtype, c, i * t->n + j, dv_canon_nan(acc));
		}
}

static int mm_case(u32 m, u32 n, u32 k, u8 dtype, u16 flags, u64 seed,
		   enum os_simd_level top)
{
	struct davinci_task t = { .opcode = DAVINCI_OP_MATMUL, .dtype = dtype,
				  .flags = flags, .m = m, .n = n, .k = k };
	size_t es = dtype == DAVINCI_DTYPE_FLOAT32 ? 4 : 2;
	u8 *a = malloc((size_t)m * k * es + 1), *b = malloc((size_t)k * n * es + 1);
	u8 *want = malloc((size_t)m * n * es), *got = malloc((size_t)m * n * es);
	int bad = 0, l;
	size_t i;

	for (i = 0; i < (size_t)m * k; i++)
		mm_put(dtype, a, i, mm_value(&seed));
	for (i = 0; i < (size_t)k * n; i++)
		mm_put(dtype, b, i, mm_value(&seed));
	mm_reference(&t, a, b, want);
	for (l = OS_SIMD_BASE; l <= (int)top; l++) {
		u64 r0, r1;

		setenv("DAVINCI_SIMD", mm_level_names[l], 1);
		CHECK_EQ(os_simd_level(), l);
		memset(got, 0xa5, (size_t)m * n * es);
		/* rows in ranges of random length, as chunks and AI cores do */
		for (r0 = 0; r0 < m; r0 = r1) {
			r1 = r0 + 1 + mm_rand(&seed) % (m < 40 ? m : 40);
			os_fpu_begin();
			dv_opk_matmul(&t, NULL, got, a, b, NULL, r0,
				      r1 < m ? r1 : m);
			os_fpu_end();
		}
		if (memcmp(got, want, (size_t)m * n * es)) {
			printf("  %ux%ux%u dtype %u flags %u: %s differs\n",
			       m, n, k, dtype, flags, mm_level_names[l]);
			bad = 1;
		}
	}
	unsetenv("DAVINCI_SIMD");
	free(a);
	free(b);
	free(want);
	free(got);
	return bad;
}

void test_matmul_simd_levels(void)
{
	static const u32 shapes[][3] = {
		{ 1, 1, 1 }, { 3, 5, 7 }, { 9, 33, 17 }, { 13, 70, 64 },
		{ 64, 64, 96 }, { 37, 100, 300 }, { 5, 37, 7000 },
	};
	static const u8 dtypes[] = { DAVINCI_DTYPE_FLOAT32,
				     DAVINCI_DTYPE_FLOAT16,
				     DAVINCI_DTYPE_BFLOAT16 };
	enum os_simd_level top;
	size_t s, d;
	u16 f;

	unsetenv("DAVINCI_SIMD");
	top = os_simd_level();
	printf("  levels up to %s\n", mm_level_names[top]);
	setenv("DAVINCI_SIMD", "no-such-level", 1);
	CHECK_EQ(os_simd_level(), top);
	for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (d = 0; d < sizeof(dtypes); d++)
			for (f = 0; f < 4; f++)
				CHECK_EQ(mm_case(shapes[s][0], shapes[s][1],
						 shapes[s][2], dtypes[d], f,
						 s * 16 + d * 4 + f + 1, top), 0);
}
