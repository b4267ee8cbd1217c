// SPDX-License-Identifier: GPL-2.0
/*
 * test_aipp.c - DAVINCI_OP_AIPP (DOC: AIPP): its block's checks; every
 * config the op refuses failing the task with DAVINCI_STATUS_INVALID_TASK
 * before it touches dst (and the good config, the same task, computing);
 * an RGB picture's values by NUMERICS.md's formulas, in one chunk or row
 * by row; a config rewritten to a bad one between chunks making the
 * later chunks write zeros, never reading outside the picture.
 */
#define _GNU_SOURCE
#include <math.h>
#include "fixtures.h"
#include "dv_internal.h"

#define AW 6
#define AH 4

static struct davinci_params_aipp aipp_block(void)
{
	struct davinci_params_aipp p = {
		.batch = 1, .channels = 3, .height = AH, .width = AW,
		.src_size = AW * AH * 3,
	};

	return p;
}

static struct davinci_aipp_config aipp_config(void)
{
	struct davinci_aipp_config c;
	float var = 0.5f;
	int i;

	memset(&c, 0, sizeof(c));
	c.version = DAVINCI_AIPP_CONFIG_VERSION;
	c.input_format = DAVINCI_AIPP_RGB888_U8;
	c.src_w = AW;
	c.src_h = AH;
	for (i = 0; i < 4; i++) {
		c.mean[i] = 10 * i;
		memcpy(&c.var_reci[i], &var, sizeof(var));
	}
	return c;
}

static struct davinci_task aipp_task(uint64_t dst, uint64_t src0,
				     uint64_t src1, uint64_t params)
{
	struct davinci_task t;

	memset(&t, 0, sizeof(t));
	t.opcode = DAVINCI_OP_AIPP;
	t.dtype = DAVINCI_DTYPE_FLOAT32;
	t.dst = dst;
	t.src0 = src0;
	t.src1 = src1;
	t.params = params;
	t.params_size = sizeof(struct davinci_params_aipp);
	t.params_version = DAVINCI_PARAMS_AIPP_VERSION;
	return t;
}

void test_aipp_block_checks(void)
{
	struct davinci_task t = aipp_task(0, 0, 0, 4096);
	struct davinci_params_aipp p = aipp_block(), q;

	CHECK_EQ(dvc_op_validate(&t), 0);
	CHECK_EQ(dvc_op_check_params(&t, &p), 0);
	q = p;
	q.batch = 0;
	CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
	q = p;
	q.batch = 1025;
	CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
	q = p;
	q.channels = 4;
	CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
	q = p;
	q.height = 8193;
	CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
	q = p;
	q.width = 0;
	CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
	q = p;
	q.src_size = (1ULL << 28) + 1;
	CHECK_EQ(dvc_op_check_params(&t, &q), -EINVAL);
	/* an integer dtype is refused at the doorbell */
	t.dtype = DAVINCI_DTYPE_INT32;
	CHECK_EQ(dvc_op_validate(&t), -EINVAL);
}

/* config mutations the device refuses */
static void aipp_break(struct davinci_aipp_config *c, int i)
{
	float inf = INFINITY;

	switch (i) {
	case 0:
		c->version = 2;
		break;
	case 1:
		c->input_format = 4;	/* YUV400 */
		break;
	case 2:
		c->switches = 1U << 5;
		break;
	case 3:
		c->switches = DAVINCI_AIPP_AX_SWAP;	/* not XRGB */
		break;
	case 4:
		c->src_w = AW + 1;	/* more than src_size */
		break;
	case 5:
		c->switches = DAVINCI_AIPP_CROP;
		c->crop_x = 1;
		c->crop_w = AW;		/* past the picture */
		c->crop_h = AH;
		break;
	case 6:
		c->switches = DAVINCI_AIPP_CROP;
		c->crop_w = AW - 1;	/* not the block's width */
		c->crop_h = AH;
		break;
	case 7:
		c->switches = DAVINCI_AIPP_PADDING;
		c->pad_top = 1;		/* not the block's height */
		break;
	case 8:
		memcpy(&c->var_reci[1], &inf, sizeof(inf));
		break;
	case 9:
		c->matrix[4] = 40000;
		break;
	case 10:
		c->input_bias[2] = 256;
		break;
	case 11:
		c->reserved[1] = 1;
		break;
	case 12:
		c->input_format = DAVINCI_AIPP_YUV420SP_U8;
		c->src_w = 3;		/* odd */
		c->src_h = 2;
		break;
	}
}

#define AIPP_BAD 13

void test_aipp_bad_config_touches_nothing(void)
{
	struct davinci_params_aipp p = aipp_block();
	struct davinci_aipp_config c;
	struct fixture fx;
	struct buf dst, pic, cfg, blk;
	struct stream s;
	struct davinci_task t;
	uint64_t seq;
	int i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &dst) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &pic) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &cfg) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &blk) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);
	memcpy(blk.p, &p, sizeof(p));
	memset(pic.p, 0x33, 4096);
	t = aipp_task(dst.a.dev_addr, pic.a.dev_addr, cfg.a.dev_addr,
		      blk.a.dev_addr);
	for (i = 0; i < AIPP_BAD; i++) {
		c = aipp_config();
		aipp_break(&c, i);
		memcpy(cfg.p, &c, sizeof(c));
		memset(dst.p, 0x5a, 4096);
		CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
		CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
		if (tstatus(fx.ctx, &s, seq) != DAVINCI_STATUS_INVALID_TASK)
			printf("  bad config %d\n", i);
		CHECK_EQ(tstatus(fx.ctx, &s, seq), DAVINCI_STATUS_INVALID_TASK);
		CHECK(all_set(dst.p, 0x5a, 4096));
		CHECK_EQ(stream_reset(fx.ctx, &s), 0);
		/* the good config, the same task, runs */
		c = aipp_config();
		memcpy(cfg.p, &c, sizeof(c));
		CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
		CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
		CHECK_EQ(tstatus(fx.ctx, &s, seq), 0);
		CHECK(!all_set(dst.p, 0x5a, 3 * AH * AW * 4));
	}
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &dst);
	buf_free(fx.ctx, &pic);
	buf_free(fx.ctx, &cfg);
	buf_free(fx.ctx, &blk);
	fixture_exit(&fx);
}

/*
 * The RGB picture through mean (0, 10, 20) and var_reci 0.5: out[c][y][x]
 * = (pic[y][x][c] - 10 c) * 0.5, exact in float32; the kernel run in one
 * chunk and row by row gives those bytes; a config broken after the
 * first row makes the later rows zeros.
 */
void test_aipp_runs_and_chunks(void)
{
	struct davinci_params_aipp p = aipp_block();
	struct davinci_aipp_config c = aipp_config(), bad;
	struct davinci_task t = aipp_task(0, 0, 0, 4096);
	static uint8_t pic[AH * AW * 3];
	static float want[3 * AH * AW], a[3 * AH * AW], b[3 * AH * AW];
	uint64_t r, units = dvc_op_units_of(&t, &p);
	int x, y, ch;

	for (x = 0; x < AH * AW * 3; x++)
		pic[x] = (uint8_t)(x * 37 + 11);
	for (ch = 0; ch < 3; ch++)
		for (y = 0; y < AH; y++)
			for (x = 0; x < AW; x++)
				want[(ch * AH + y) * AW + x] =
					(float)(pic[(y * AW + x) * 3 + ch] -
						10 * ch) * 0.5f;
	CHECK_EQ(units, AH);
	dvc_op_run(&t, &p, a, pic, &c, NULL, 0, units);
	CHECK(memcmp(a, want, sizeof(want)) == 0);
	for (r = 0; r < units; r++)
		dvc_op_run(&t, &p, b, pic, &c, NULL, r, r + 1);
	CHECK(memcmp(b, want, sizeof(want)) == 0);
	bad = c;
	aipp_break(&bad, 5);
	memset(b, 0x5a, sizeof(b));
	dvc_op_run(&t, &p, b, pic, &c, NULL, 0, 1);
	dvc_op_run(&t, &p, b, pic, &bad, NULL, 1, units);
	for (ch = 0; ch < 3; ch++) {
		CHECK(memcmp(&b[ch * AH * AW], &want[ch * AH * AW],
			     AW * sizeof(float)) == 0);
		CHECK(all_set((const uint8_t *)&b[ch * AH * AW + AW], 0,
			      (AH - 1) * AW * sizeof(float)));
	}
}
