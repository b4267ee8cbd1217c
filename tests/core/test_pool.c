// SPDX-License-Identifier: GPL-2.0
/*
 * test_pool.c - the pooling ops' parameter block: what the core's check
 * takes and refuses for each op (sizes, padding, dilation, the average
 * and max options, output extents, element counts), a refused block
 * failing the task with DAVINCI_STATUS_INVALID_TASK before it touches
 * dst, misaligned indices refused, and a good one computing the same
 * bytes in any chunking.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"	/* dv_opcodes[] */

static const uint16_t pool_ops[] = {
	DAVINCI_OP_MAXPOOL2D, DAVINCI_OP_MAXPOOL2D_BACKWARD,
	DAVINCI_OP_AVGPOOL2D, DAVINCI_OP_AVGPOOL2D_BACKWARD,
};

#define POOL_OPS (sizeof(pool_ops) / sizeof(pool_ops[0]))

/* x[2,3,7,6], a 3x3 window, stride 2x1, pad 1, ceil mode: y[2,3,4,6] */
static struct davinci_params_maxpool2d pool_good(void)
{
	struct davinci_params_maxpool2d p = {
		.n = 2, .c = 3, .h = 7, .w = 6, .r = 3, .s = 3,
		.stride_h = 2, .stride_w = 1, .pad_h = 1, .pad_w = 1,
		.dilation_h = 1, .dilation_w = 1, .ceil_mode = 1,
	};

	return p;
}

static struct davinci_task pool_task(uint16_t op, uint64_t dst,
				     uint64_t src0, uint64_t src1,
				     uint64_t params)
{
	struct davinci_task t;

	memset(&t, 0, sizeof(t));
	t.opcode = op;
	t.dtype = DAVINCI_DTYPE_FLOAT32;
	t.dst = dst;
	t.src0 = src0;
	if (op == DAVINCI_OP_MAXPOOL2D_BACKWARD)
		t.src1 = src1;
	t.params = params;
	t.params_size = sizeof(struct davinci_params_maxpool2d);
	t.params_version = DAVINCI_PARAMS_MAXPOOL2D_VERSION;
	return t;
}

#define POOL_BAD(field, value, ops, what) { \
	offsetof(struct davinci_params_maxpool2d, field), value, ops, what }
#define P_MAX	1	/* refused by the max ops */
#define P_AVG	2	/* refused by the average ops */
#define P_ALL	3

static const struct {
	size_t off;
	uint32_t value;
	unsigned int ops;
	const char *what;
} pool_bad[] = {
	POOL_BAD(n, 0, P_ALL, "no image"),
	POOL_BAD(c, 0, P_ALL, "no channel"),
	POOL_BAD(h, 0, P_ALL, "no row"),
	POOL_BAD(w, 0, P_ALL, "no column"),
	POOL_BAD(r, 0, P_ALL, "no window row"),
	POOL_BAD(s, 0, P_ALL, "no window column"),
	POOL_BAD(stride_h, 0, P_ALL, "stride_h 0"),
	POOL_BAD(stride_w, 0, P_ALL, "stride_w 0"),
	POOL_BAD(dilation_h, 0, P_ALL, "dilation_h 0"),
	POOL_BAD(dilation_w, 0, P_ALL, "dilation_w 0"),
	POOL_BAD(pad_h, 2, P_ALL, "padding past half the window"),
	POOL_BAD(pad_w, 2, P_ALL, "padding past half the window's width"),
	POOL_BAD(ceil_mode, 2, P_ALL, "ceil_mode 2"),
	POOL_BAD(count_include_pad, 2, P_ALL, "count_include_pad 2"),
	POOL_BAD(adaptive, 2, P_ALL, "adaptive 2"),
	POOL_BAD(r, 10, P_ALL, "window taller than the padded input"),
	POOL_BAD(dilation_h, 2, P_AVG, "a dilated average"),
	POOL_BAD(dilation_w, 7, P_ALL, "a dilation past the input's width"),
	POOL_BAD(count_include_pad, 1, P_MAX, "count_include_pad for a max"),
	POOL_BAD(divisor, 3, P_MAX, "a divisor for a max"),
	POOL_BAD(adaptive, 1, P_ALL, "adaptive with padding (or a max)"),
};

static void pool_set(struct davinci_params_maxpool2d *p, size_t off,
		     uint32_t v)
{
	memcpy((uint8_t *)p + off, &v, sizeof(v));
}

static unsigned int pool_family(uint16_t op)
{
	return op == DAVINCI_OP_MAXPOOL2D ||
	       op == DAVINCI_OP_MAXPOOL2D_BACKWARD ? P_MAX : P_AVG;
}

void test_pool_block_checks(void)
{
	struct davinci_params_maxpool2d p = pool_good(), q;
	struct dv_op_extent ext;
	struct davinci_task t;
	size_t i, o;

	for (o = 0; o < POOL_OPS; o++) {
		t = pool_task(pool_ops[o], 1 << 20, 2 << 20, 3 << 20, 4096);
		CHECK_EQ(dvc_op_validate(&t), 0);
		CHECK_EQ(dvc_op_check_params(&t, &p), 0);
		for (i = 0; i < sizeof(pool_bad) / sizeof(pool_bad[0]); i++) {
			int want = pool_bad[i].ops & pool_family(pool_ops[o]) ?
				   -EINVAL : 0;

			q = p;
			pool_set(&q, pool_bad[i].off, pool_bad[i].value);
			if (dvc_op_check_params(&t, &q) != want)
				printf("  %u: %s %s\n", pool_ops[o],
				       pool_bad[i].what,
				       want ? "taken" : "refused");
			CHECK_EQ(dvc_op_check_params(&t, &q), want);
		}
		/* torch's ceil rule: the last window starts inside h + pad */
		q = p;
		q.h = 5;
		q.r = 2;
		q.pad_h = 1;
		q.stride_h = 3;	/* (5 + 2 - 2 + 2) / 3 + 1 = 3, 6 >= 6: 2 */
		CHECK_EQ(dvc_op_check_params(&t, &q), 0);
		memset(&ext, 0, sizeof(ext));
		CHECK_EQ(dvc_op_extent(&t, &q, &ext), 0);
		/* y[2,3,2,6] of float32, dst or src0 */
		CHECK_EQ(pool_ops[o] == DAVINCI_OP_MAXPOOL2D ||
			 pool_ops[o] == DAVINCI_OP_AVGPOOL2D ? ext.dst : ext.src0,
			 2 * 3 * 2 * 6 * 4);
		if (pool_ops[o] == DAVINCI_OP_MAXPOOL2D_BACKWARD)
			CHECK_EQ(ext.src1, 2 * 3 * 2 * 6 * 8);
		/* an adaptive average: no padding */
		q = p;
		q.pad_h = 0;
		q.pad_w = 0;
		q.adaptive = 1;
		CHECK_EQ(dvc_op_check_params(&t, &q),
			 pool_family(pool_ops[o]) == P_AVG ? 0 : -EINVAL);
		/* x's elements past U64_MAX / 8 */
		q = p;
		q.n = 1U << 31;
		q.c = 1U << 31;
		CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
		q.c = 1U << 20;		/* 2^51 x 42 elements: taken */
		CHECK_EQ(dvc_op_check_params(&t, &q), 0);
	}
	/* MAXPOOL2D's int64 indices: dst_dtype INT64, no other */
	t = pool_task(DAVINCI_OP_MAXPOOL2D, 0, 0, 0, 4096);
	t.dst_dtype = DAVINCI_DTYPE_INT64;
	CHECK_EQ(dvc_op_validate(&t), 0);
	t.dst_dtype = DAVINCI_DTYPE_INT32;
	CHECK_EQ(dvc_op_validate(&t), -EINVAL);
	t = pool_task(DAVINCI_OP_AVGPOOL2D, 0, 0, 0, 4096);
	t.dst_dtype = DAVINCI_DTYPE_INT64;
	CHECK_EQ(dvc_op_validate(&t), -EINVAL);
}

/* x and y of pool_good() */
#define POOL_X (2 * 3 * 7 * 6)
#define POOL_Y (2 * 3 * 4 * 6)

void test_pool_refused_block_touches_nothing(void)
{
	struct davinci_params_maxpool2d p = pool_good();
	struct fixture fx;
	struct buf x, y, idx, blk;
	struct stream s;
	struct davinci_task t;
	uint64_t seq;
	size_t i, o;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &x) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &y) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &idx) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &blk) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);
	memset(x.p, 0, 4096);
	memset(idx.p, 0, 4096);
	for (o = 0; o < POOL_OPS; o++) {
		for (i = 0; i < sizeof(pool_bad) / sizeof(pool_bad[0]); i++) {
			struct davinci_params_maxpool2d q = p;

			if (!(pool_bad[i].ops & pool_family(pool_ops[o])))
				continue;
			pool_set(&q, pool_bad[i].off, pool_bad[i].value);
			memcpy(blk.p, &q, sizeof(q));
			memset(y.p, 0x5a, 4096);
			t = pool_task(pool_ops[o], y.a.dev_addr, x.a.dev_addr,
				      idx.a.dev_addr, blk.a.dev_addr);
			CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
			CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
			if (tstatus(fx.ctx, &s, seq) !=
			    DAVINCI_STATUS_INVALID_TASK)
				printf("  %u: %s\n", pool_ops[o],
				       pool_bad[i].what);
			CHECK_EQ(tstatus(fx.ctx, &s, seq),
				 DAVINCI_STATUS_INVALID_TASK);
			CHECK(all_set(y.p, 0x5a, 4096));
			CHECK_EQ(stream_reset(fx.ctx, &s), 0);
		}
	}
	/* the max gradient's int64 indices on 4 bytes: misaligned */
	memcpy(blk.p, &p, sizeof(p));
	t = pool_task(DAVINCI_OP_MAXPOOL2D_BACKWARD, y.a.dev_addr,
		      x.a.dev_addr, idx.a.dev_addr + 4, blk.a.dev_addr);
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, seq), DAVINCI_STATUS_MISALIGNED);
	CHECK(all_set(y.p, 0x5a, 4096));
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &x);
	buf_free(fx.ctx, &y);
	buf_free(fx.ctx, &idx);
	buf_free(fx.ctx, &blk);
	fixture_exit(&fx);
}

/*
 * Each op's planes run in chunks of 1, 5 and all give the same bytes
 * (the average ops with count_include_pad and with a divisor too); and
 * on the device a MAXPOOL2D of a 1x1 window gives x back, its indices
 * 0 .. h w - 1 in each plane.
 */
void test_pool_runs_and_chunks(void)
{
	struct davinci_params_maxpool2d p = pool_good();
	static float x[POOL_X], y[POOL_Y], a[POOL_X], b[POOL_X];
	static int64_t ix[POOL_Y];
	struct fixture fx;
	struct buf xb, yb, blk;
	struct stream s;
	struct davinci_task t;
	uint64_t seq, u, step;
	size_t i, o, v;

	for (i = 0; i < POOL_X; i++)
		x[i] = (float)((i * 7) % 13) - 6.0f;
	for (i = 0; i < POOL_Y; i++)
		y[i] = (float)((i * 3) % 7) - 3.0f;
	t = pool_task(DAVINCI_OP_MAXPOOL2D, 1, 1, 0, 1);
	t.dst_dtype = DAVINCI_DTYPE_INT64;
	dvc_op_run(&t, &p, ix, x, NULL, NULL, 0, 6);
	for (v = 0; v < 3; v++) {
		p.count_include_pad = v == 1;
		p.divisor = v == 2 ? 5 : 0;
		for (o = 0; o < POOL_OPS; o++) {
			bool fwd = pool_ops[o] == DAVINCI_OP_MAXPOOL2D ||
				   pool_ops[o] == DAVINCI_OP_AVGPOOL2D;
			size_t n = fwd ? POOL_Y : POOL_X;
			const void *src = fwd ? (const void *)x : y;

			if (v && pool_family(pool_ops[o]) == P_MAX)
				continue;
			t = pool_task(pool_ops[o], 1, 1, 8, 1);
			memset(a, 0, sizeof(a));
			dvc_op_run(&t, &p, a, src, ix, NULL, 0, 6);
			for (step = 1; step <= 5; step += 4) {
				memset(b, 0xff, sizeof(b));
				for (u = 0; u < 6; u += step)
					dvc_op_run(&t, &p, b, src, ix, NULL, u,
						   u + step);
				if (memcmp(a, b, n * sizeof(float)))
					printf("  op %u in chunks of %llu\n",
					       pool_ops[o],
					       (unsigned long long)step);
				CHECK(!memcmp(a, b, n * sizeof(float)));
			}
		}
	}

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &xb) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &yb) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &blk) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);
	p = pool_good();
	p.r = 1;
	p.s = 1;
	p.stride_h = 1;
	p.pad_h = 0;
	p.pad_w = 0;
	memcpy(xb.p, x, sizeof(x));
	memcpy(blk.p, &p, sizeof(p));
	t = pool_task(DAVINCI_OP_MAXPOOL2D, yb.a.dev_addr, xb.a.dev_addr, 0,
		      blk.a.dev_addr);
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, seq), DAVINCI_STATUS_OK);
	CHECK(!memcmp(yb.p, x, sizeof(x)));
	t.dst_dtype = DAVINCI_DTYPE_INT64;
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, seq), DAVINCI_STATUS_OK);
	for (i = 0; i < 42; i++)
		CHECK_EQ(((int64_t *)yb.p)[42 + i], (int64_t)i);
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &xb);
	buf_free(fx.ctx, &yb);
	buf_free(fx.ctx, &blk);
	fixture_exit(&fx);
}
