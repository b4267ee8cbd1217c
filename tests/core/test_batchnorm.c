// SPDX-License-Identifier: GPL-2.0
/*
 * test_batchnorm.c - the BN_TRAINING_* ops (the "channels" kind): their
 * extents (x [m, n, k], per-channel float32 rows), zero dimensions,
 * BN_TRAINING_REDUCE's optional weight and bias and its block's checks,
 * BN_TRAINING_UPDATE in place and without src2, misaligned rows; and
 * every op computing the same bytes in any chunking of its channels, with
 * the exact values of constant channels.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"

static struct davinci_task bn_task(uint16_t op, uint32_t n, uint32_t c,
				   uint32_t hw)
{
	struct davinci_task t;

	memset(&t, 0, sizeof(t));
	t.opcode = op;
	t.dtype = DAVINCI_DTYPE_FLOAT32;
	t.m = n;
	t.n = c;
	t.k = hw;
	t.dst = 1 << 20;
	t.src0 = 2 << 20;
	t.src1 = 3 << 20;
	t.src2 = 4 << 20;
	if (op == DAVINCI_OP_BN_TRAINING_REDUCE) {
		t.params = 5 << 20;
		t.params_size = sizeof(struct davinci_params_bn_training_reduce);
		t.params_version = DAVINCI_PARAMS_BN_TRAINING_REDUCE_VERSION;
	}
	if (op == DAVINCI_OP_BN_TRAINING_UPDATE)
		t.src2 = 0;
	return t;
}

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

void test_batch_norm_extents(void)
{
	struct davinci_params_bn_training_reduce p = {
		.eps = f32_bits(1e-5f), .momentum = f32_bits(0.1f),
	};
	struct davinci_task t;
	struct dv_op_extent e;

	/* x [2, 3, 5] float16: 60 bytes; six rows of 3 float32 */
	t = bn_task(DAVINCI_OP_BN_TRAINING_REDUCE, 2, 3, 5);
	t.dtype = DAVINCI_DTYPE_FLOAT16;
	CHECK_EQ(dvc_op_validate(&t), 0);
	CHECK_EQ(dvc_op_check_params(&t, &p), 0);
	CHECK_EQ(dvc_op_extent(&t, &p, &e), 0);
	CHECK(e.dst == 72 && e.src0 == 60 && e.src1 == 12 && e.src2 == 12);
	CHECK_EQ(dvc_op_units_of(&t, &p), 3);
	t.src1 = 0;	/* no weight, no bias: nothing read there */
	t.src2 = 0;
	CHECK_EQ(dvc_op_extent(&t, &p, &e), 0);
	CHECK(e.src1 == 0 && e.src2 == 0);
	t.k = 0;	/* every dimension at least 1 */
	CHECK_EQ(dvc_op_extent(&t, &p, &e), -EINVAL);
	/* eps: finite and not negative; momentum finite */
	t = bn_task(DAVINCI_OP_BN_TRAINING_REDUCE, 2, 3, 5);
	p.eps = f32_bits(-0.0f);
	CHECK_EQ(dvc_op_check_params(&t, &p), 0);
	p.eps = f32_bits(-1e-5f);
	CHECK_EQ(dvc_op_check_params(&t, &p), -EINVAL);
	p.eps = 0x7fc00000u;
	CHECK_EQ(dvc_op_check_params(&t, &p), -EINVAL);
	p.eps = 0x7f800000u;
	CHECK_EQ(dvc_op_check_params(&t, &p), -EINVAL);
	p.eps = f32_bits(1e-5f);
	p.momentum = 0xff800000u;
	CHECK_EQ(dvc_op_check_params(&t, &p), -EINVAL);
	/* the output: in place allowed, no src2 */
	t = bn_task(DAVINCI_OP_BN_TRAINING_UPDATE, 2, 3, 5);
	CHECK_EQ(dvc_op_extent(&t, NULL, &e), 0);
	CHECK(e.dst == 120 && e.src0 == 120 && e.src1 == 24 && e.src2 == 0);
	t.dst = t.src0;
	CHECK_EQ(dvc_op_extent(&t, NULL, &e), 0);
	t.dst = t.src0 + 4;	/* a partial overlap */
	CHECK_EQ(dvc_op_extent(&t, NULL, &e), -EINVAL);
	t = bn_task(DAVINCI_OP_BN_TRAINING_UPDATE, 2, 3, 5);
	t.src2 = 4 << 20;
	CHECK_EQ(dvc_op_extent(&t, NULL, &e), -EINVAL);
	/* the gradients */
	t = bn_task(DAVINCI_OP_BN_TRAINING_UPDATE_GRAD, 2, 3, 5);
	CHECK_EQ(dvc_op_validate(&t), 0);
	CHECK_EQ(dvc_op_extent(&t, NULL, &e), 0);
	CHECK(e.dst == 48 && e.src0 == 120 && e.src1 == 120 && e.src2 == 24);
	t = bn_task(DAVINCI_OP_BN_TRAINING_REDUCE_GRAD, 2, 3, 5);
	CHECK_EQ(dvc_op_extent(&t, NULL, &e), 0);
	CHECK(e.dst == 120 && e.src0 == 120 && e.src1 == 120 && e.src2 == 60);
	t.dst = t.src0;		/* dx over dy: refused */
	CHECK_EQ(dvc_op_extent(&t, NULL, &e), -EINVAL);
	/* x's bytes past 2^64 */
	t = bn_task(DAVINCI_OP_BN_TRAINING_REDUCE_GRAD, 1U << 31, 1U << 31,
		    1U << 31);
	CHECK_EQ(dvc_op_extent(&t, NULL, &e), -EINVAL);
	/* another kind's op takes no src2 */
	t = bn_task(DAVINCI_OP_BN_TRAINING_UPDATE_GRAD, 2, 3, 5);
	t.opcode = DAVINCI_OP_REDUCE_SUM;
	CHECK_EQ(dvc_op_validate(&t), -EINVAL);
}

#define BN_N 3
#define BN_C 5
#define BN_HW 13
#define BN_X (BN_N * BN_C * BN_HW)

static void bn_run_chunks(const struct davinci_task *t, const void *params,
			  void *dst, const void *s0, const void *s1, void *s2,
			  uint64_t step)
{
	uint64_t u = dvc_op_units_of(t, params), b;

	for (b = 0; b < u; b += step)
		dvc_op_run(t, params, dst, s0, s1, s2, b, b + step);
}

/*
 * Each op run in chunks of 1, 2 and every channel gives the same bytes;
 * channel 0 constant (7) gives mean 7, invstd 1/sqrt(eps) = 2 (eps 0.25),
 * beta = b - 7 alpha, a zero weight gradient and dx = dy - mean(dy).
 */
void test_batch_norm_runs_and_chunks(void)
{
	struct davinci_params_bn_training_reduce p = {
		.eps = f32_bits(0.25f), .momentum = f32_bits(0.5f),
	};
	static float x[BN_X], dy[BN_X], y[3][BN_X];
	static float st[3][6 * BN_C], pk[5 * BN_C], g[3][4 * BN_C];
	float w[BN_C], b[BN_C];
	static const uint64_t steps[3] = { 1, 2, BN_C };
	struct davinci_task t;
	size_t i, s, j;

	for (i = 0; i < BN_X; i++) {
		x[i] = (float)((i * 7) % 11) - 5.0f;
		dy[i] = (float)((i * 5) % 9) * 0.25f - 1.0f;
		if ((i / BN_HW) % BN_C == 0)
			x[i] = 7.0f;
	}
	for (i = 0; i < BN_C; i++) {
		w[i] = 0.5f + (float)i;
		b[i] = (float)i - 2.0f;
	}
	for (s = 0; s < 3; s++) {
		t = bn_task(DAVINCI_OP_BN_TRAINING_REDUCE, BN_N, BN_C, BN_HW);
		bn_run_chunks(&t, &p, st[s], x, w, b, steps[s]);
		t = bn_task(DAVINCI_OP_BN_TRAINING_UPDATE, BN_N, BN_C, BN_HW);
		bn_run_chunks(&t, NULL, y[s], x, st[s] + 2 * BN_C, NULL,
			      steps[s]);
		t = bn_task(DAVINCI_OP_BN_TRAINING_UPDATE_GRAD, BN_N, BN_C,
			    BN_HW);
		bn_run_chunks(&t, NULL, g[s], dy, x, st[s], steps[s]);
	}
	CHECK(!memcmp(st[0], st[1], sizeof(st[0])));
	CHECK(!memcmp(st[0], st[2], sizeof(st[0])));
	CHECK(!memcmp(y[0], y[1], sizeof(y[0])));
	CHECK(!memcmp(y[0], y[2], sizeof(y[0])));
	CHECK(!memcmp(g[0], g[1], sizeof(g[0])));
	CHECK(!memcmp(g[0], g[2], sizeof(g[0])));
	CHECK(st[0][0] == 7.0f && st[0][BN_C] == 2.0f);
	CHECK(st[0][2 * BN_C] == 1.0f && st[0][3 * BN_C] == -9.0f);
	CHECK(st[0][4 * BN_C] == 3.5f && st[0][5 * BN_C] == 0.0f);
	CHECK(g[0][0] == 0.0f);
	for (i = 0; i < BN_N; i++)
		CHECK(y[0][i * BN_C * BN_HW] == -2.0f);	/* b - 0 */
	/* no weight and no bias: alpha = invstd, beta = -(mean * invstd) */
	t = bn_task(DAVINCI_OP_BN_TRAINING_REDUCE, BN_N, BN_C, BN_HW);
	t.src1 = 0;
	t.src2 = 0;
	dvc_op_run(&t, &p, st[1], x, NULL, NULL, 0, BN_C);
	CHECK(st[1][2 * BN_C] == 2.0f && st[1][3 * BN_C] == -14.0f);
	/* dx: gw, gb, mean, invstd (UPDATE_GRAD's four rows), w */
	CHECK(!memcmp(g[0] + 2 * BN_C, st[0], 2 * BN_C * sizeof(float)));
	memcpy(pk, g[0], 4 * BN_C * sizeof(float));
	for (j = 0; j < BN_C; j++)
		pk[4 * BN_C + j] = w[j];
	for (s = 0; s < 3; s++) {
		t = bn_task(DAVINCI_OP_BN_TRAINING_REDUCE_GRAD, BN_N, BN_C,
			    BN_HW);
		bn_run_chunks(&t, NULL, y[s], dy, x, pk, steps[s]);
	}
	CHECK(!memcmp(y[0], y[1], sizeof(y[0])));
	CHECK(!memcmp(y[0], y[2], sizeof(y[0])));
}
