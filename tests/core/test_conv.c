// SPDX-License-Identifier: GPL-2.0
/*
 * test_conv.c - the convolution ops' parameter block: what the core's
 * check takes and refuses (sizes, groups, output extents, every product
 * the kernel forms within u32 or u64), a refused block failing the task
 * with DAVINCI_STATUS_INVALID_TASK before it touches dst, and a good one
 * computing, the same bytes in any chunking; CONV2D's bias (src2) and
 * RELU epilogue giving the bytes of CONV2D, ADD and RELU as three tasks.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"	/* dv_opcodes[] */
#include "numerics.h"
#include "ops_conv.h"	/* dv_conv_geom() */

static const uint16_t conv_ops[] = {
	DAVINCI_OP_CONV2D, DAVINCI_OP_CONV2D_BACKWARD_INPUT,
	DAVINCI_OP_CONV2D_BACKWARD_WEIGHT,
};

/* x[2,4,6,5], w[6,2,3,3] in 2 groups, stride 1x2, pad 1, y[2,6,6,3] */
static struct davinci_params_conv2d conv_good(void)
{
	struct davinci_params_conv2d p = {
		.n = 2, .c = 4, .h = 6, .w = 5, .k = 6, .r = 3, .s = 3,
		.stride_h = 1, .stride_w = 2, .pad_h = 1, .pad_w = 1,
		.dilation_h = 1, .dilation_w = 1, .groups = 2,
	};

	return p;
}

static struct davinci_task conv_task(uint16_t op, uint64_t dst,
				     uint64_t src0, uint64_t src1,
				     uint64_t params)
{
	struct davinci_task t;

	memset(&t, 0, sizeof(t));
	t.opcode = op;
	t.dtype = DAVINCI_DTYPE_FLOAT32;
	t.dst = dst;
	t.src0 = src0;
	t.src1 = src1;
	t.params = params;
	t.params_size = sizeof(struct davinci_params_conv2d);
	t.params_version = DAVINCI_PARAMS_CONV2D_VERSION;
	return t;
}

#define CONV_BAD(field, value, what) { offsetof(struct davinci_params_conv2d, \
	field), value, what }

static const struct {
	size_t off;
	uint32_t value;
	const char *what;
} conv_bad[] = {
	CONV_BAD(n, 0, "no image"),
	CONV_BAD(c, 0, "no channel"),
	CONV_BAD(h, 0, "no row"),
	CONV_BAD(w, 0, "no column"),
	CONV_BAD(k, 0, "no filter"),
	CONV_BAD(r, 0, "no filter row"),
	CONV_BAD(s, 0, "no filter column"),
	CONV_BAD(stride_h, 0, "stride_h 0"),
	CONV_BAD(stride_w, 0, "stride_w 0"),
	CONV_BAD(dilation_h, 0, "dilation_h 0"),
	CONV_BAD(dilation_w, 0, "dilation_w 0"),
	CONV_BAD(groups, 0, "no group"),
	CONV_BAD(groups, 3, "groups not dividing c"),
	CONV_BAD(k, 5, "k not a multiple of groups"),
	CONV_BAD(r, 9, "filter taller than the padded input"),
	CONV_BAD(dilation_w, 4, "dilated filter wider than the input"),
};

static void conv_set(struct davinci_params_conv2d *p, size_t off, uint32_t v)
{
	memcpy((uint8_t *)p + off, &v, sizeof(v));
}

void test_conv_block_checks(void)
{
	struct davinci_params_conv2d p = conv_good(), q;
	struct davinci_task t;
	size_t i, o;

	for (o = 0; o < sizeof(conv_ops) / sizeof(conv_ops[0]); o++) {
		t = conv_task(conv_ops[o], 0, 0, 0, 4096);
		CHECK_EQ(dvc_op_validate(&t), 0);
		CHECK_EQ(dvc_op_check_params(&t, &p), 0);
		for (i = 0; i < sizeof(conv_bad) / sizeof(conv_bad[0]); i++) {
			q = p;
			conv_set(&q, conv_bad[i].off, conv_bad[i].value);
			if (dvc_op_check_params(&t, &q) != -EINVAL) {
				printf("  %u: %s taken\n", conv_ops[o],
				       conv_bad[i].what);
				CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
			}
		}
		/* the output extents: oh = 1 is the least taken */
		q = p;
		q.r = 8;
		CHECK_EQ(dvc_op_check_params(&t, &q), 0);
		/* n k, then h w, past u32 (the GEMM's m and n) */
		q = p;
		q.n = 1U << 31;
		CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
		q.n = 1U << 27;		/* n oh ow = 9 << 28 fits */
		CHECK_EQ(dvc_op_check_params(&t, &q), 0);
		q = p;
		q.h = 1U << 16;
		q.w = 1U << 16;
		CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
		/* n oh ow, the weight gradient's k, past u32 */
		q = p;
		q.n = 1U << 12;
		q.h = 1U << 11;
		q.w = 1U << 11;
		q.stride_w = 1;
		CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
		/* c/groups r s past u32 */
		q = p;
		q.groups = 1;
		q.c = 1U << 30;
		q.r = 4;
		q.s = 4;
		q.h = 8;
		q.w = 8;
		CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
		/* x's elements past U64_MAX / 8: every GEMM dimension fits */
		q = p;
		q.n = 1;
		q.groups = 1;
		q.c = 1U << 31;
		q.k = 1;
		q.h = 1U << 15;
		q.w = 1U << 15;
		q.r = 1;
		q.s = 1;
		q.stride_w = 1;
		q.pad_h = 0;
		q.pad_w = 0;
		CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
		q.c = 1U << 30;		/* 2^60 elements: taken */
		CHECK_EQ(dvc_op_check_params(&t, &q), 0);
	}
}

/* x, w and y of conv_good() as float32 */
#define CONV_X (2 * 4 * 6 * 5)
#define CONV_W (6 * 2 * 3 * 3)
#define CONV_Y (2 * 6 * 6 * 3)

void test_conv_refused_block_touches_nothing(void)
{
	struct davinci_params_conv2d p = conv_good();
	struct fixture fx;
	struct buf x, w, y, blk;
	struct stream s;
	struct davinci_task t;
	uint64_t seq;
	size_t i, o;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &x) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &w) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &y) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &blk) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);
	for (o = 0; o < sizeof(conv_ops) / sizeof(conv_ops[0]); o++) {
		for (i = 0; i < sizeof(conv_bad) / sizeof(conv_bad[0]); i++) {
			struct davinci_params_conv2d q = p;

			conv_set(&q, conv_bad[i].off, conv_bad[i].value);
			memcpy(blk.p, &q, sizeof(q));
			memset(y.p, 0x5a, 4096);
			t = conv_task(conv_ops[o], y.a.dev_addr, x.a.dev_addr,
				      w.a.dev_addr, blk.a.dev_addr);
			CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
			CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
			if (tstatus(fx.ctx, &s, seq) !=
			    DAVINCI_STATUS_INVALID_TASK)
				printf("  %u: %s\n", conv_ops[o],
				       conv_bad[i].what);
			CHECK_EQ(tstatus(fx.ctx, &s, seq),
				 DAVINCI_STATUS_INVALID_TASK);
			CHECK(all_set(y.p, 0x5a, 4096));
			CHECK_EQ(stream_reset(fx.ctx, &s), 0);
		}
	}
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &x);
	buf_free(fx.ctx, &w);
	buf_free(fx.ctx, &y);
	buf_free(fx.ctx, &blk);
	fixture_exit(&fx);
}

/*
 * One image's 3x3 convolution 64 -> 64 at 56 x 56 (231 MFLOP) is several
 * chunks, so idle AI cores share it; of eight images, each chunk is one
 * image's whole GEMM, which gathers each column once.
 */
void test_conv_batch1_is_shared_out(void)
{
	struct davinci_params_conv2d p = {
		.n = 1, .c = 64, .h = 56, .w = 56, .k = 64, .r = 3, .s = 3,
		.stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1,
		.dilation_h = 1, .dilation_w = 1, .groups = 1,
	};
	struct davinci_task t = conv_task(DAVINCI_OP_CONV2D, 0, 0, 0, 4096);
	uint64_t units = dvc_op_units_of(&t, &p);

	CHECK(units / dvc_op_chunk_units_of(&t, &p) >= 2);
	p.n = 8;
	CHECK(dvc_op_chunk_units_of(&t, &p) * 8 == dvc_op_units_of(&t, &p));
	CHECK(dvc_op_units_of(&t, &p) == 8 * units);
}

/*
 * A 1x1 convolution by the identity in each group gives x back exactly,
 * on the device; and the kernel's units run in chunks of 1, 5 and all
 * give the same bytes for each op.
 */
void test_conv_runs_and_chunks(void)
{
	struct davinci_params_conv2d p = conv_good();
	/* a and b hold any op's dst: x is the largest tensor */
	static float x[CONV_X], w[CONV_W], y[CONV_Y], a[CONV_X], b[CONV_X];
	float id[4 * 2] = { 0 };
	struct fixture fx;
	struct buf xb, wb, yb, blk;
	struct stream s;
	struct davinci_task t;
	uint64_t seq, units[3] = { 2 * 6, 2 * 4, 6 }, u, step;
	const void *srcs[3][2] = { { x, w }, { y, w }, { x, y } };
	size_t i, o;

	for (i = 0; i < CONV_X; i++)
		x[i] = (float)((i * 7) % 13) - 6.0f;
	for (i = 0; i < CONV_W; i++)
		w[i] = (float)((i * 5) % 11) - 5.0f;
	for (i = 0; i < CONV_Y; i++)
		y[i] = (float)((i * 3) % 7) - 3.0f;
	for (o = 0; o < 3; o++) {
		size_t n = o == 0 ? CONV_Y : o == 1 ? CONV_X : CONV_W;

		t = conv_task(conv_ops[o], 1, 1, 1, 1);
		memset(a, 0, sizeof(a));
		dvc_op_run(&t, &p, a, srcs[o][0], srcs[o][1], NULL, 0, units[o]);
		for (step = 1; step <= 5; step += 4) {
			memset(b, 0xff, sizeof(b));
			for (u = 0; u < units[o]; u += step)
				dvc_op_run(&t, &p, b, srcs[o][0], srcs[o][1], NULL, u,
					   u + step);
			if (memcmp(a, b, n * sizeof(float)))
				printf("  op %u in chunks of %llu\n",
				       conv_ops[o], (unsigned long long)step);

			CHECK(!memcmp(a, b, n * sizeof(float)));
		}
	}

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &xb) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &wb) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &yb) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &blk) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);
	p.k = 4;
	p.r = 1;
	p.s = 1;
	p.stride_w = 1;
	p.pad_h = 0;
	p.pad_w = 0;
	id[0] = id[3] = id[4] = id[7] = 1.0f;	/* w[k][c] = k % 2 == c */
	memcpy(xb.p, x, sizeof(x));
	memcpy(wb.p, id, sizeof(id));
	memcpy(blk.p, &p, sizeof(p));
	t = conv_task(DAVINCI_OP_CONV2D, yb.a.dev_addr, xb.a.dev_addr,
		      wb.a.dev_addr, blk.a.dev_addr);
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, seq), DAVINCI_STATUS_OK);
	CHECK(!memcmp(yb.p, x, sizeof(x)));
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &xb);
	buf_free(fx.ctx, &wb);
	buf_free(fx.ctx, &yb);
	buf_free(fx.ctx, &blk);
	fixture_exit(&fx);
}

/*
 * CONV2D with a bias and its epilogue against CONV2D, then ADD of the
 * broadcast bias, then RELU, as separate runs of those ops' kernels: bit
 * for bit, in float32, float16 and bfloat16, for groups, depthwise,
 * stride, padding, dilation, several column tiles and row blocks, run
 * whole and in chunks of 1 and 3 units.
 */
#define CB_MAX_X (2 * 8 * 24 * 24)
#define CB_MAX_W (130 * 8 * 3 * 3)
#define CB_MAX_Y (2 * 130 * 24 * 24)

static const struct davinci_params_conv2d cb_geoms[] = {
	/* groups 2, stride 1x2, pad 1 */
	{ .n = 2, .c = 4, .h = 6, .w = 5, .k = 6, .r = 3, .s = 3,
	  .stride_h = 1, .stride_w = 2, .pad_h = 1, .pad_w = 1,
	  .dilation_h = 1, .dilation_w = 1, .groups = 2 },
	/* depthwise, dilation 2, pad 2 */
	{ .n = 1, .c = 8, .h = 9, .w = 7, .k = 8, .r = 3, .s = 3,
	  .stride_h = 1, .stride_w = 1, .pad_h = 2, .pad_w = 2,
	  .dilation_h = 2, .dilation_w = 2, .groups = 8 },
	/* 576 columns (2 tiles), 130 filters (3 row blocks), stride 1 */
	{ .n = 1, .c = 3, .h = 24, .w = 24, .k = 130, .r = 3, .s = 3,
	  .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1,
	  .dilation_h = 1, .dilation_w = 1, .groups = 1 },
	/* two images of whole GEMMs per chunk, stride 2, 1x1 filters */
	{ .n = 2, .c = 8, .h = 24, .w = 24, .k = 16, .r = 1, .s = 1,
	  .stride_h = 2, .stride_w = 2, .pad_h = 0, .pad_w = 0,
	  .dilation_h = 1, .dilation_w = 1, .groups = 1 },
};

static void cb_put(uint8_t dtype, void *p, size_t i, float v)
{
	if (dtype == DAVINCI_DTYPE_FLOAT16)
		((u16 *)p)[i] = dv_f32_to_f16(v);
	else if (dtype == DAVINCI_DTYPE_BFLOAT16)
		((u16 *)p)[i] = dv_f32_to_bf16(v);
	else
		((float *)p)[i] = v;
}

static void cb_run(const struct davinci_task *t, const void *p, void *d,
		   const void *a, const void *b, void *c, uint64_t step)
{
	uint64_t units = dvc_op_units_of(t, p), u;

	if (!step)
		step = units;
	for (u = 0; u < units; u += step)
		dvc_op_run(t, p, d, a, b, c, u, u + step < units ? u + step :
			   units);
}

static void cb_case(const struct davinci_params_conv2d *p, uint8_t dtype,
		    bool bias, bool relu)
{
	static uint8_t x[CB_MAX_X * 4], w[CB_MAX_W * 4], b[130 * 4];
	static uint8_t bb[CB_MAX_Y * 4], ref[CB_MAX_Y * 4], got[CB_MAX_Y * 4];
	struct davinci_task t, ew;
	struct dv_conv g;
	uint64_t nx, nw, ny, i, es = dtype == DAVINCI_DTYPE_FLOAT32 ? 4 : 2;
	uint64_t ohw, steps[3] = { 0, 1, 3 };
	uint32_t seed = 12345u + dtype * 7u + p->k;
	size_t si;

	REQUIRE(dv_conv_geom(p, &g) == 0);
	nx = g.x;
	nw = g.w;
	ny = g.y;
	ohw = (uint64_t)g.oh * g.ow;
	REQUIRE(nx <= CB_MAX_X && nw <= CB_MAX_W && ny <= CB_MAX_Y);
	for (i = 0; i < nx; i++) {
		seed = seed * 1103515245u + 12345u;
		cb_put(dtype, x, i, (float)((int)(seed >> 16) % 33 - 16) / 8.0f);
	}
	cb_put(dtype, x, 3, __builtin_nanf(""));	/* a NaN carried */
	for (i = 0; i < nw; i++) {
		seed = seed * 1103515245u + 12345u;
		cb_put(dtype, w, i, (float)((int)(seed >> 16) % 17 - 8) / 16.0f);
	}
	for (i = 0; i < p->k; i++) {
		seed = seed * 1103515245u + 12345u;
		cb_put(dtype, b, i, (float)((int)(seed >> 16) % 41 - 20) / 4.0f);
	}
	cb_put(dtype, b, 1, -__builtin_inff());	/* a channel of -inf */

	/* the reference: CONV2D, ADD of the broadcast bias, RELU */
	t = conv_task(DAVINCI_OP_CONV2D, 1, 1, 1, 1);
	t.dtype = dtype;
	memset(ref, 0, sizeof(ref));
	cb_run(&t, p, ref, x, w, NULL, 0);
	memset(&ew, 0, sizeof(ew));
	ew.dtype = dtype;
	ew.count = ny;
	if (bias) {
		for (i = 0; i < ny; i++)
			memcpy(bb + i * es, b + (i / ohw % p->k) * es, es);
		ew.opcode = DAVINCI_OP_ADD;
		dvc_op_run(&ew, NULL, ref, ref, bb, NULL, 0, ny);
	}
	if (relu) {
		ew.opcode = DAVINCI_OP_RELU;
		dvc_op_run(&ew, NULL, ref, ref, ref, NULL, 0, ny);
	}
	t.imm = relu ? DAVINCI_CONV2D_RELU : DAVINCI_CONV2D_NONE;
	t.src2 = bias ? 1 : 0;
	for (si = 0; si < 3; si++) {
		memset(got, 0xa5, sizeof(got));
		cb_run(&t, p, got, x, w, bias ? b : NULL, steps[si]);
		if (memcmp(got, ref, ny * es)) {
			printf("  k %u groups %u dtype %u bias %d relu %d in "
			       "chunks of %llu\n", p->k, p->groups, dtype, bias,
			       relu, (unsigned long long)steps[si]);
			CHECK(!memcmp(got, ref, ny * es));
		}
		CHECK(all_set(got + ny * es, 0xa5, es));	/* not past y */
	}
}

void test_conv_bias_relu_is_conv_add_relu(void)
{
	static const uint8_t dtypes[] = { DAVINCI_DTYPE_FLOAT32,
		DAVINCI_DTYPE_FLOAT16, DAVINCI_DTYPE_BFLOAT16 };
	size_t gi, di, v;

	for (gi = 0; gi < sizeof(cb_geoms) / sizeof(cb_geoms[0]); gi++)
		for (di = 0; di < sizeof(dtypes); di++)
			for (v = 0; v < 4; v++)
				cb_case(&cb_geoms[gi], dtypes[di], v & 1, v & 2);
}

/*
 * The bias is @k elements at src2, counted in the extents and checked as
 * the other operands: only CONV2D takes it and the epilogue (the
 * gradients refuse both), an epilogue past RELU is refused, a src2 that
 * overlaps another operand too; on the device a misaligned src2 fails
 * the task MISALIGNED and one outside its allocation INVALID_ADDRESS,
 * touching nothing.
 */
void test_conv_bias_operand_checks(void)
{
	struct davinci_params_conv2d p = conv_good();
	struct dv_op_extent e;
	struct davinci_task t;
	struct fixture fx;
	struct buf x, w, y, bias, blk;
	struct stream s;
	uint64_t seq;
	size_t o;
	int v;

	t = conv_task(DAVINCI_OP_CONV2D, 0x10000, 0x20000, 0x30000, 4096);
	t.src2 = 0x40000;
	t.imm = DAVINCI_CONV2D_RELU;
	CHECK_EQ(dvc_op_validate(&t), 0);
	CHECK_EQ(dvc_op_extent(&t, &p, &e), 0);
	CHECK_EQ(e.src2, 6 * 4);
	t.dtype = DAVINCI_DTYPE_FLOAT16;
	CHECK_EQ(dvc_op_extent(&t, &p, &e), 0);
	CHECK_EQ(e.src2, 6 * 2);
	t.src2 = 0;
	CHECK_EQ(dvc_op_extent(&t, &p, &e), 0);
	CHECK_EQ(e.src2, 0);
	t.src2 = 0x10000 + 8;		/* inside y */
	CHECK_EQ(dvc_op_extent(&t, &p, &e), -EINVAL);
	t.src2 = 0x30000;		/* w's first bytes */
	CHECK_EQ(dvc_op_extent(&t, &p, &e), -EINVAL);
	t.src2 = ~0ULL - 4;		/* wraps */
	CHECK_EQ(dvc_op_extent(&t, &p, &e), -EINVAL);
	t.src2 = 0x40000;
	t.imm = DAVINCI_CONV2D_COUNT;
	CHECK_EQ(dvc_op_validate(&t), -EINVAL);
	for (o = 1; o < 3; o++) {
		t = conv_task(conv_ops[o], 0x10000, 0x20000, 0x30000, 4096);
		t.src2 = 0x40000;
		CHECK_EQ(dvc_op_validate(&t), -EINVAL);
		t.src2 = 0;
		t.imm = DAVINCI_CONV2D_RELU;
		CHECK_EQ(dvc_op_validate(&t), -EINVAL);
	}

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &x) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &w) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &y) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &bias) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &blk) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);
	memcpy(blk.p, &p, sizeof(p));
	memset(x.p, 0, 4096);
	memset(w.p, 0, 4096);
	for (v = 0; v < 6; v++)
		((float *)bias.p)[v] = (float)v - 2.5f;
	for (v = 0; v < 3; v++) {
		static const uint32_t want[] = { DAVINCI_STATUS_OK,
			DAVINCI_STATUS_MISALIGNED,
			DAVINCI_STATUS_INVALID_ADDRESS };
		static const uint64_t at[] = { 0, 2, 4096 - 8 };

		memset(y.p, 0x5a, 4096);
		t = conv_task(DAVINCI_OP_CONV2D, y.a.dev_addr, x.a.dev_addr,
			      w.a.dev_addr, blk.a.dev_addr);
		t.src2 = bias.a.dev_addr + at[v];
		t.imm = DAVINCI_CONV2D_RELU;
		CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
		CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
		CHECK_EQ(tstatus(fx.ctx, &s, seq), want[v]);
		if (v == 0) {	/* y = relu(0 + bias[k]) */
			CHECK(((float *)y.p)[0] == 0.0f);
			CHECK(((float *)y.p)[5 * 18 + 1] == 2.5f);
			CHECK(((float *)y.p)[6 * 18 + 4 * 18] == 1.5f);
		} else {
			CHECK(all_set(y.p, 0x5a, 4096));
		}
		CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	}
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &x);
	buf_free(fx.ctx, &w);
	buf_free(fx.ctx, &y);
	buf_free(fx.ctx, &bias);
	buf_free(fx.ctx, &blk);
	fixture_exit(&fx);
}
