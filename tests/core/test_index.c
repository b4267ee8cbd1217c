// SPDX-License-Identifier: GPL-2.0
/*
 * test_index.c - the indexed ops and FILL's parameter block: FILL's check
 * (bits above the dtype, a bool other than 0 and 1); an index out of
 * range, of either index dtype and either op, failing the task with
 * DAVINCI_STATUS_INVALID_TASK before it touches dst (and in range, the
 * same task computing); INDEX_ADD's duplicates in index order and the
 * same bytes in any chunking, as every generating op's.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"

static struct davinci_task fill_task(uint8_t dtype)
{
	struct davinci_task t;

	memset(&t, 0, sizeof(t));
	t.opcode = DAVINCI_OP_FILL;
	t.dtype = dtype;
	t.count = 8;
	t.params = 4096;
	t.params_size = sizeof(struct davinci_params_fill);
	t.params_version = DAVINCI_PARAMS_FILL_VERSION;
	return t;
}

void test_fill_block_checks(void)
{
	static const struct {
		uint8_t dtype;
		uint64_t value;
		int ret;
	} cases[] = {
		{ DAVINCI_DTYPE_INT8, 0xff, 0 },
		{ DAVINCI_DTYPE_INT8, 0x100, -EINVAL },
		{ DAVINCI_DTYPE_UINT8, 0x80, 0 },
		{ DAVINCI_DTYPE_BOOL, 1, 0 },
		{ DAVINCI_DTYPE_BOOL, 2, -EINVAL },
		{ DAVINCI_DTYPE_FLOAT16, 0xffff, 0 },
		{ DAVINCI_DTYPE_BFLOAT16, 0x10000, -EINVAL },
		{ DAVINCI_DTYPE_FLOAT32, 0xffffffffULL, 0 },
		{ DAVINCI_DTYPE_INT32, 1ULL << 32, -EINVAL },
		{ DAVINCI_DTYPE_INT64, ~0ULL, 0 },
	};
	struct davinci_params_fill p;
	struct davinci_task t;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = fill_task(cases[i].dtype);
		p.value = cases[i].value;
		CHECK_EQ(dvc_op_validate(&t), 0);
		if (dvc_op_check_params(&t, &p) != cases[i].ret)
			printf("  dtype %u value %#llx\n", cases[i].dtype,
			       (unsigned long long)cases[i].value);
		CHECK_EQ(dvc_op_check_params(&t, &p), cases[i].ret);
	}
}

/* 2 batches of 3 int64 or int32 indices into tables of 4 rows of 5 */
#define IX_M 2
#define IX_N 4
#define IX_K 5
#define IX_COUNT 3

static struct davinci_task index_task(uint16_t op, uint32_t index_dtype,
				      uint64_t dst, uint64_t src0,
				      uint64_t src1)
{
	struct davinci_task t;

	memset(&t, 0, sizeof(t));
	t.opcode = op;
	t.dtype = DAVINCI_DTYPE_FLOAT32;
	t.dst = dst;
	t.src0 = src0;
	t.src1 = src1;
	t.count = IX_COUNT;
	t.m = IX_M;
	t.n = IX_N;
	t.k = IX_K;
	t.imm = index_dtype;
	return t;
}

static void put_index(void *p, uint32_t index_dtype, size_t i, int64_t v)
{
	if (index_dtype == DAVINCI_INDEX_SELECT_INT32)
		((int32_t *)p)[i] = (int32_t)v;
	else
		((int64_t *)p)[i] = v;
}

void test_index_out_of_range_touches_nothing(void)
{
	static const uint16_t ops[] = { DAVINCI_OP_INDEX_SELECT,
					DAVINCI_OP_INDEX_ADD };
	static const int64_t bad[] = { IX_N, -1, 1LL << 40, INT64_MIN };
	struct fixture fx;
	struct buf dst, src, idx;
	struct stream s;
	struct davinci_task t;
	uint64_t seq;
	size_t o, d, b, i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &dst) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &src) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &idx) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);
	memset(src.p, 0x7f, 4096);	/* floats near FLT_MAX: any add shows */
	for (o = 0; o < 2; o++) {
		for (d = 0; d < 2; d++) {
			for (b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
				/* an int32 index holds only the first two */
				if (d == DAVINCI_INDEX_SELECT_INT32 && b >= 2)
					continue;
				for (i = 0; i < IX_M * IX_COUNT; i++)
					put_index(idx.p, d, i, (int64_t)i % IX_N);
				/* the last index of the second batch */
				put_index(idx.p, d, IX_M * IX_COUNT - 1, bad[b]);
				memset(dst.p, 0x5a, 4096);
				t = index_task(ops[o], d, dst.a.dev_addr,
					       src.a.dev_addr, idx.a.dev_addr);
				CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
				CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
				CHECK_EQ(tstatus(fx.ctx, &s, seq),
					 DAVINCI_STATUS_INVALID_TASK);
				CHECK(all_set(dst.p, 0x5a, 4096));
				CHECK_EQ(stream_reset(fx.ctx, &s), 0);
				/* in range, the same task runs */
				put_index(idx.p, d, IX_M * IX_COUNT - 1,
					  IX_N - 1);
				CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
				CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
				CHECK_EQ(tstatus(fx.ctx, &s, seq), 0);
				CHECK(!all_set(dst.p, 0x5a, 4 * IX_M * IX_N *
					       IX_K));
			}
		}
	}
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &dst);
	buf_free(fx.ctx, &src);
	buf_free(fx.ctx, &idx);
	fixture_exit(&fx);
}

/* @units of @t in chunks of 1, 2 and 7 give the bytes of one run */
static void same_in_chunks(const struct davinci_task *t, const void *p,
			   const void *init, size_t bytes, const void *src0,
			   const void *src1, uint64_t units)
{
	static uint8_t a[4096], b[4096];
	uint64_t step, u;

	memcpy(a, init, bytes);
	dvc_op_run(t, p, a, src0, src1, NULL, 0, units);
	for (step = 1; step <= 7; step = step * 2 + 3 * (step == 2)) {
		memcpy(b, init, bytes);
		for (u = 0; u < units; u += step)
			dvc_op_run(t, p, b, src0, src1, NULL, u, u + step);
		if (memcmp(a, b, bytes))
			printf("  op %u in chunks of %llu\n", t->opcode,
			       (unsigned long long)step);
		CHECK(!memcmp(a, b, bytes));
	}
}

void test_index_add_order_and_chunks(void)
{
	/* rows of 5 added at indices 1, 1, 3 and 0, 0, 0 (the batches) */
	static const int64_t idx[IX_M * IX_COUNT] = { 1, 1, 3, 0, 0, 0 };
	static float table[IX_M * IX_N * IX_K], src[IX_M * IX_COUNT * IX_K];
	static float sel[1024];	/* any op's dst here */
	struct davinci_params_random_uniform rp = { 99, 7 };
	struct davinci_params_arange ap = { (uint64_t)-5, 3 };
	struct davinci_task t;
	float want;
	size_t i;

	for (i = 0; i < IX_M * IX_N * IX_K; i++)
		table[i] = 1.0f;
	/* 2^24 + 1 + 1 rounds to 2^24 twice, in this order */
	for (i = 0; i < IX_M * IX_COUNT * IX_K; i++)
		src[i] = i % (IX_COUNT * IX_K) < IX_K ? 16777216.0f : 1.0f;
	t = index_task(DAVINCI_OP_INDEX_ADD, DAVINCI_INDEX_ADD_INT64, 1, 1, 1);
	same_in_chunks(&t, NULL, table, sizeof(table), src, idx,
		       (uint64_t)IX_M * IX_K);
	memcpy(sel, table, sizeof(table));
	dvc_op_run(&t, NULL, sel, src, idx, NULL, 0, IX_M * IX_K);
	/*
	 * batch 0, row 1: (1 + 2^24) + 1, each sum rounded back to 2^24;
	 * the ones first would make 2^24 + 2
	 */
	want = 16777216.0f;
	CHECK(sel[1 * IX_K] == want);
	CHECK(sel[3 * IX_K] == 2.0f);
	/* batch 1, row 0: ((1 + 2^24) + 1) + 1 */
	CHECK(sel[IX_N * IX_K] == want);
	CHECK(sel[(IX_N + 1) * IX_K] == 1.0f);
	t = index_task(DAVINCI_OP_INDEX_SELECT, DAVINCI_INDEX_SELECT_INT64, 1,
		       1, 1);
	same_in_chunks(&t, NULL, sel, sizeof(sel), table, idx,
		       (uint64_t)IX_M * IX_COUNT);
	memset(&t, 0, sizeof(t));
	t.opcode = DAVINCI_OP_RANDOM_UNIFORM;
	t.count = 1000;
	same_in_chunks(&t, &rp, sel, 4000, NULL, NULL, 1000);
	t.opcode = DAVINCI_OP_ARANGE;
	t.dtype = DAVINCI_DTYPE_INT64;
	t.count = 300;
	same_in_chunks(&t, &ap, sel, 2400, NULL, NULL, 300);
}
