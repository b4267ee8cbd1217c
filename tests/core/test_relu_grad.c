// SPDX-License-Identifier: GPL-2.0
/*
 * test_relu_grad.c - DAVINCI_OP_RELU_GRAD: dst = src1 <= 0 ? 0 : src0 on
 * every dtype, bit for bit (src0's NaN payloads kept, a NaN in src1 lets
 * src0 through, -0 and -inf in src1 select 0), in place on either source,
 * and the doorbell's rules (feature bit, src1 used, no other fields).
 */
#define _GNU_SOURCE
#include "fixtures.h"

/* The float32 bits of src1 and whether each selects 0. */
static const struct {
	uint32_t x;
	int zero;
} rg_f32_cases[] = {
	{ 0x3f800000, 0 },	/* 1 */
	{ 0x00000001, 0 },	/* smallest subnormal */
	{ 0x7f800000, 0 },	/* +inf */
	{ 0x7fc00001, 0 },	/* NaN: not <= 0 */
	{ 0xffc00000, 0 },	/* -NaN: not <= 0 either */
	{ 0x00000000, 1 },	/* +0 */
	{ 0x80000000, 1 },	/* -0 */
	{ 0x80000001, 1 },	/* -subnormal */
	{ 0xbf800000, 1 },	/* -1 */
	{ 0xff800000, 1 },	/* -inf */
};

#define RG_N (sizeof(rg_f32_cases) / sizeof(rg_f32_cases[0]))

static struct davinci_task rg_task(uint8_t dtype, uint64_t dst, uint64_t g,
				   uint64_t x, uint64_t n)
{
	struct davinci_task t = { .opcode = DAVINCI_OP_RELU_GRAD,
				  .dtype = dtype, .dst = dst, .src0 = g,
				  .src1 = x, .count = n };

	return t;
}

static void rg_run(struct fixture *fx, struct stream *s,
		   struct davinci_task t)
{
	uint64_t seq;

	CHECK_EQ(submit(fx->ctx, s, &t, 1, &seq), 0);
	CHECK_EQ(swait(fx->ctx, s, seq, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx->ctx, s, seq), 0);
}

void test_relu_grad(void)
{
	struct fixture fx;
	struct stream s;
	struct buf g, x, d;
	uint32_t *g32, *x32, *d32;
	uint16_t *g16, *x16, *d16;
	int32_t *gi, *xi, *di;
	uint64_t seq;
	size_t i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	CHECK(fx_has_feature(&fx, DAVINCI_FEAT_RELU_GRAD));
	REQUIRE(fx_bufs(&fx, 4096, 0, &g, &x, &d, NULL) == 0);
	REQUIRE(fx_stream(&fx, 0, 16, 16, &s) == 0);

	/* float32: gradients with a NaN payload and a -0 pass bit for bit */
	g32 = (uint32_t *)g.p;
	x32 = (uint32_t *)x.p;
	d32 = (uint32_t *)d.p;
	for (i = 0; i < RG_N; i++) {
		x32[i] = rg_f32_cases[i].x;
		g32[i] = i & 1 ? 0x7fa00123 : 0x80000000 | (uint32_t)i << 20;
	}
	memset(d.p, 0x5a, 4096);
	rg_run(&fx, &s, rg_task(DAVINCI_DTYPE_FLOAT32, d.a.dev_addr,
				g.a.dev_addr, x.a.dev_addr, RG_N));
	for (i = 0; i < RG_N; i++)
		CHECK_EQ(d32[i], rg_f32_cases[i].zero ? 0 : g32[i]);
	CHECK_EQ(d32[RG_N], 0x5a5a5a5a);	/* nothing past count */

	/* in place on src0, then on src1 */
	rg_run(&fx, &s, rg_task(DAVINCI_DTYPE_FLOAT32, g.a.dev_addr,
				g.a.dev_addr, x.a.dev_addr, RG_N));
	CHECK(!memcmp(g.p, d.p, RG_N * 4));
	rg_run(&fx, &s, rg_task(DAVINCI_DTYPE_FLOAT32, x.a.dev_addr,
				g.a.dev_addr, x.a.dev_addr, RG_N));
	CHECK(!memcmp(x.p, d.p, RG_N * 4));

	/* float16 and bfloat16: the same cases in their encodings */
	g16 = (uint16_t *)g.p;
	x16 = (uint16_t *)x.p;
	d16 = (uint16_t *)d.p;
	{
		/* +1, +sub, +inf, NaN, -NaN, +0, -0, -sub, -1, -inf */
		static const uint16_t f16[RG_N] = {
			0x3c00, 0x0001, 0x7c00, 0x7e01, 0xfe00,
			0x0000, 0x8000, 0x8001, 0xbc00, 0xfc00 };
		static const uint16_t bf16[RG_N] = {
			0x3f80, 0x0001, 0x7f80, 0x7fc1, 0xffc0,
			0x0000, 0x8000, 0x8001, 0xbf80, 0xff80 };
		uint8_t dt;

		for (dt = DAVINCI_DTYPE_FLOAT16; dt <= DAVINCI_DTYPE_BFLOAT16;
		     dt++) {
			for (i = 0; i < RG_N; i++) {
				x16[i] = dt == DAVINCI_DTYPE_FLOAT16 ? f16[i] :
					 bf16[i];
				g16[i] = (uint16_t)(0x7d00 + i);
			}
			rg_run(&fx, &s, rg_task(dt, d.a.dev_addr,
						g.a.dev_addr, x.a.dev_addr,
						RG_N));
			for (i = 0; i < RG_N; i++)
				CHECK_EQ(d16[i], rg_f32_cases[i].zero ? 0 :
					 g16[i]);
		}
	}

	/* int32 */
	gi = (int32_t *)g.p;
	xi = (int32_t *)x.p;
	di = (int32_t *)d.p;
	for (i = 0; i < 6; i++) {
		static const int32_t xs[6] = { 5, 1, 0, -1, INT32_MIN,
					       INT32_MAX };

		xi[i] = xs[i];
		gi[i] = (int32_t)(100 + i);
	}
	rg_run(&fx, &s, rg_task(DAVINCI_DTYPE_INT32, d.a.dev_addr,
				g.a.dev_addr, x.a.dev_addr, 6));
	CHECK_EQ(di[0], 100);
	CHECK_EQ(di[1], 101);
	CHECK_EQ(di[2], 0);
	CHECK_EQ(di[3], 0);
	CHECK_EQ(di[4], 0);
	CHECK_EQ(di[5], 105);

	/* fields the op does not use are refused */
	{
		struct davinci_task t = rg_task(DAVINCI_DTYPE_FLOAT32,
						d.a.dev_addr, g.a.dev_addr,
						x.a.dev_addr, 4);

		t.imm = 1;
		if (!submit(fx.ctx, &s, &t, 1, &seq)) {
			CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
			CHECK_EQ(tstatus(fx.ctx, &s, seq),
				 DAVINCI_STATUS_INVALID_TASK);
			CHECK_EQ(stream_reset(fx.ctx, &s), 0);
		}
	}
	fixture_exit(&fx);
}
