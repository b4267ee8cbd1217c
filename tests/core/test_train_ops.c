// SPDX-License-Identifier: GPL-2.0
/*
 * test_train_ops.c - the training ops of DAVINCI_FEAT_TRAIN_OPS through
 * the doorbell: CMP (every predicate, dtype, NaN and signed zeros, in
 * place), SQRT (correctly rounded, canonical NaN, -0) and LOG_SOFTMAX
 * (each row's exp sums to 1, the order of a row kept, NaN rows), and the
 * doorbell's rules for them.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "numerics.h"

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static int tr_run(struct fixture *fx, struct stream *s, struct davinci_task t)
{
	uint64_t seq;

	if (submit(fx->ctx, s, &t, 1, &seq))
		return -1;
	CHECK_EQ(swait(fx->ctx, s, seq, 5000, NULL), 0);
	return (int)tstatus(fx->ctx, s, seq);
}

/* C's own comparison, the reference of DAVINCI_CMP_* */
static int cmp_ref(uint32_t pred, double x, double y)
{
	switch (pred) {
	case DAVINCI_CMP_EQ: return x == y;
	case DAVINCI_CMP_NE: return x != y;
	case DAVINCI_CMP_LT: return x < y;
	case DAVINCI_CMP_LE: return x <= y;
	case DAVINCI_CMP_GT: return x > y;
	default: return x >= y;
	}
}

static const uint32_t tr_f32[] = {
	0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x00000001,
	0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00001, 0x40490fdb,
};

#define TR_N (sizeof(tr_f32) / sizeof(tr_f32[0]))

static void test_cmp(struct fixture *fx, struct stream *s, struct buf *a,
		     struct buf *b, struct buf *d)
{
	uint32_t *a32 = (uint32_t *)a->p, *b32 = (uint32_t *)b->p;
	uint32_t *d32 = (uint32_t *)d->p;
	uint16_t *d16 = (uint16_t *)d->p;
	int32_t *ai = (int32_t *)a->p, *bi = (int32_t *)b->p;
	static const int32_t ints[] = { 0, 1, -1, INT32_MIN, INT32_MAX, 7 };
	uint32_t pred, i, j, n = TR_N * TR_N;
	struct davinci_task t = { .opcode = DAVINCI_OP_CMP,
				  .dst = d->a.dev_addr, .src0 = a->a.dev_addr,
				  .src1 = b->a.dev_addr };

	for (i = 0; i < TR_N; i++)
		for (j = 0; j < TR_N; j++) {
			a32[i * TR_N + j] = tr_f32[i];
			b32[i * TR_N + j] = tr_f32[j];
		}
	for (pred = 0; pred < DAVINCI_CMP_COUNT; pred++) {
		t.dtype = DAVINCI_DTYPE_FLOAT32;
		t.count = n;
		t.imm = pred;
		CHECK_EQ(tr_run(fx, s, t), 0);
		for (i = 0; i < n; i++)
			CHECK_EQ(d32[i], cmp_ref(pred, u2f(a32[i]),
						 u2f(b32[i])) ?
				 f2u(1.0f) : 0u);
		/* bfloat16: the top halves of the same floats */
		t.dtype = DAVINCI_DTYPE_BFLOAT16;
		t.count = 2 * n;
		CHECK_EQ(tr_run(fx, s, t), 0);
		for (i = 0; i < 2 * n; i++) {
			uint16_t x = ((uint16_t *)a->p)[i];
			uint16_t y = ((uint16_t *)b->p)[i];

			CHECK_EQ(d16[i], cmp_ref(pred, u2f((uint32_t)x << 16),
						 u2f((uint32_t)y << 16)) ?
				 0x3f80 : 0);
		}
		/* float16: the same bits read as float16 */
		t.dtype = DAVINCI_DTYPE_FLOAT16;
		CHECK_EQ(tr_run(fx, s, t), 0);
		for (i = 0; i < 2 * n; i++) {
			uint16_t x = ((uint16_t *)a->p)[i];
			uint16_t y = ((uint16_t *)b->p)[i];

			CHECK_EQ(d16[i], cmp_ref(pred, dv_num_f16_to_f32(x),
						 dv_num_f16_to_f32(y)) ?
				 0x3c00 : 0);
		}
	}
	/* int32, in place over src0 */
	for (pred = 0; pred < DAVINCI_CMP_COUNT; pred++) {
		for (i = 0; i < 6; i++)
			for (j = 0; j < 6; j++) {
				ai[i * 6 + j] = ints[i];
				bi[i * 6 + j] = ints[j];
			}
		t.dtype = DAVINCI_DTYPE_INT32;
		t.count = 36;
		t.imm = pred;
		t.dst = a->a.dev_addr;
		CHECK_EQ(tr_run(fx, s, t), 0);
		for (i = 0; i < 36; i++)
			CHECK_EQ(ai[i], cmp_ref(pred, ints[i / 6], bi[i]));
	}
	/* a predicate past DAVINCI_CMP_GE is refused */
	t.imm = DAVINCI_CMP_COUNT;
	t.dst = d->a.dev_addr;
	{
		uint64_t seq;

		if (!submit(fx->ctx, s, &t, 1, &seq)) {
			CHECK_EQ(swait(fx->ctx, s, seq, 5000, NULL), 0);
			CHECK_EQ(tstatus(fx->ctx, s, seq),
				 DAVINCI_STATUS_INVALID_TASK);
			CHECK_EQ(stream_reset(fx->ctx, s), 0);
		}
	}
}

/* r is sqrt(x) correctly rounded: x lies between the squares of the
 * midpoints to r's neighbours (exact in double for normal r). */
static int sqrt_ok(float x, float r)
{
	double lo, hi, up, dn;

	if (x == 0)
		return f2u(r) == f2u(x);
	if (x < 0 || x != x)
		return f2u(r) == DV_F32_CANON_NAN;
	if (x == u2f(0x7f800000))
		return r == x;
	up = u2f(f2u(r) + 1);
	dn = u2f(f2u(r) - 1);
	lo = ((double)r + dn) / 2;
	hi = ((double)r + up) / 2;
	return lo * lo <= x && x <= hi * hi;
}

static void test_sqrt(struct fixture *fx, struct stream *s, struct buf *a,
		      struct buf *d)
{
	uint32_t *a32 = (uint32_t *)a->p, *d32 = (uint32_t *)d->p;
	uint32_t i, n = 1000, x = 0x12345678;
	struct davinci_task t = { .opcode = DAVINCI_OP_SQRT,
				  .dtype = DAVINCI_DTYPE_FLOAT32,
				  .dst = d->a.dev_addr, .src0 = a->a.dev_addr,
				  .count = n };

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		a32[i] = i < TR_N ? tr_f32[i] : (x & 0x7fffffffu) | (i & 1) << 31;
	}
	CHECK_EQ(tr_run(fx, s, t), 0);
	for (i = 0; i < n; i++)
		CHECK(sqrt_ok(u2f(a32[i]), u2f(d32[i])));
	/* int32 is refused at the doorbell */
	t.dtype = DAVINCI_DTYPE_INT32;
	CHECK(tr_run(fx, s, t) != 0);
	CHECK_EQ(stream_reset(fx->ctx, s), 0);
}

static void test_log_softmax(struct fixture *fx, struct stream *s,
			     struct buf *a, struct buf *d)
{
	float *x = (float *)a->p, *y = (float *)d->p;
	uint32_t i, j, m = 9, n = 37, r = 7;
	struct davinci_task t = { .opcode = DAVINCI_OP_LOG_SOFTMAX,
				  .dtype = DAVINCI_DTYPE_FLOAT32,
				  .dst = d->a.dev_addr, .src0 = a->a.dev_addr,
				  .m = m, .n = n };

	for (i = 0; i < m * n; i++) {
		r = r * 1103515245u + 12345u;
		x[i] = (float)((int)(r >> 16 & 0xff) - 128) / 16.0f;
	}
	x[0 * n + 3] = u2f(0x7fa00001);		/* row 0 has a NaN */
	CHECK_EQ(tr_run(fx, s, t), 0);
	for (j = 0; j < n; j++)
		CHECK_EQ(f2u(y[j]), DV_F32_CANON_NAN);
	for (i = 1; i < m; i++) {
		double sum = 0;
		float mx = x[i * n];

		for (j = 0; j < n; j++) {
			sum += dv_expf(y[i * n + j]);
			mx = x[i * n + j] > mx ? x[i * n + j] : mx;
			CHECK(y[i * n + j] <= 0);
		}
		CHECK(sum > 1 - 1e-5 && sum < 1 + 1e-5);
		/* the order of the inputs is kept */
		for (j = 1; j < n; j++)
			if (x[i * n + j] < x[i * n])
				CHECK(y[i * n + j] <= y[i * n]);
	}
	/* a row of all -inf is NaN, +inf too */
	for (j = 0; j < n; j++)
		x[j] = u2f(0xff800000);
	x[n] = u2f(0x7f800000);
	t.m = 2;
	CHECK_EQ(tr_run(fx, s, t), 0);
	for (j = 0; j < 2 * n; j++)
		CHECK_EQ(f2u(y[j]), DV_F32_CANON_NAN);
	/* dst over src0 is refused */
	t.dst = t.src0;
	CHECK(tr_run(fx, s, t) != 0);
	CHECK_EQ(stream_reset(fx->ctx, s), 0);
}

void test_train_ops(void)
{
	struct fixture fx;
	struct stream s;
	struct buf a, b, d;

	REQUIRE(fixture_init(&fx, 0) == 0);
	CHECK(fx_has_feature(&fx, DAVINCI_FEAT_TRAIN_OPS));
	REQUIRE(fx_bufs(&fx, 8192, 0, &a, &b, &d, NULL) == 0);
	REQUIRE(fx_stream(&fx, 0, 16, 16, &s) == 0);
	test_cmp(&fx, &s, &a, &b, &d);
	test_sqrt(&fx, &s, &a, &d);
	test_log_softmax(&fx, &s, &a, &d);
	fixture_exit(&fx);
}
