// SPDX-License-Identifier: GPL-2.0
/*
 * test_optimizer.c - ADAM: its block's checks (maximize 0 or 1, AMSGrad
 * refused), its four extents of @count elements with any overlap of two
 * refused, and one step in float32 and float16 giving the same bytes in
 * any chunking, grad untouched; SGD_MOMENTUM's block, its three extents
 * and chunks the same way (the formulas' bits are
 * tests/conformance/test_optimizer.py's).
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"

#define N 300

static struct davinci_task adam_task(uint8_t dtype, uint64_t es)
{
	struct davinci_task t;

	memset(&t, 0, sizeof(t));
	t.opcode = DAVINCI_OP_ADAM;
	t.dtype = dtype;
	t.count = N;
	t.dst = 1 << 20;
	t.src0 = t.dst + N * es;
	t.src1 = t.src0 + N * es;
	t.src2 = t.src1 + N * es;
	t.params = 4096;
	t.params_size = sizeof(struct davinci_params_adam);
	t.params_version = DAVINCI_PARAMS_ADAM_VERSION;
	return t;
}

static struct davinci_params_adam adam_block(void)
{
	struct davinci_params_adam p;

	memset(&p, 0, sizeof(p));
	p.step_size = 0x3c23d70a;		/* 0.01 */
	p.bias_correction2_sqrt = 0x3d01b8f4;	/* ~0.0316 */
	p.eps = 0x322bcc77;			/* 1e-8 */
	p.exp_avg_weight = 0x3dcccccd;		/* 0.1 */
	p.beta2 = 0x3f7fbe77;			/* 0.999 */
	p.exp_avg_sq_weight = 0x3a83126f;	/* 0.001 */
	p.weight_decay = 0x3dcccccd;		/* 0.1 */
	p.decay = 0x3f800000;			/* 1 */
	return p;
}

void test_adam_block_and_extents(void)
{
	struct davinci_params_adam p = adam_block();
	struct davinci_task t = adam_task(DAVINCI_DTYPE_FLOAT32, 4), o;
	struct dv_op_extent ext;
	__u64 *addr[4];
	int i, j;

	CHECK_EQ(dvc_op_validate(&t), 0);
	CHECK_EQ(dvc_op_check_params(&t, &p), 0);
	p.maximize = 1;
	CHECK_EQ(dvc_op_check_params(&t, &p), 0);
	p.maximize = 2;
	CHECK_EQ(dvc_op_check_params(&t, &p), -EINVAL);
	p.maximize = 0;
	p.amsgrad = 1;
	CHECK_EQ(dvc_op_check_params(&t, &p), -EINVAL);
	p.amsgrad = 0;
	CHECK_EQ(dvc_op_extent(&t, &p, &ext), 0);
	CHECK_EQ(ext.dst, N * 4);
	CHECK_EQ(ext.src0, N * 4);
	CHECK_EQ(ext.src1, N * 4);
	CHECK_EQ(ext.src2, N * 4);
	/* every pair overlapping by one element, and in place, is refused */
	for (i = 0; i < 4; i++) {
		for (j = i + 1; j < 4; j++) {
			o = t;
			addr[0] = &o.dst;
			addr[1] = &o.src0;
			addr[2] = &o.src1;
			addr[3] = &o.src2;
			*addr[j] = *addr[i] + (N - 1) * 4;
			CHECK_EQ(dvc_op_extent(&o, &p, &ext), -EINVAL);
			*addr[j] = *addr[i];
			CHECK_EQ(dvc_op_extent(&o, &p, &ext), -EINVAL);
		}
	}
	o = t;
	o.dtype = DAVINCI_DTYPE_INT32;
	CHECK_EQ(dvc_op_validate(&o), -EINVAL);
}

static void adam_state(uint8_t dtype, void *x, void *g, void *m, void *v)
{
	int i;

	for (i = 0; i < N; i++) {
		float f[4] = { (float)(i % 17) * 0.25f - 2.0f,
			       (float)(i % 13) * 0.1f - 0.6f,
			       (float)(i % 7) * 0.01f - 0.03f,
			       (float)(i % 5) * 0.002f };
		void *d[4] = { x, g, m, v };
		int k;

		for (k = 0; k < 4; k++) {
			if (dtype == DAVINCI_DTYPE_FLOAT32) {
				((float *)d[k])[i] = f[k];
			} else {	/* float16: truncated (any bits serve) */
				uint32_t b;
				uint16_t h;

				memcpy(&b, &f[k], 4);
				h = 0;
				if (f[k] != 0.0f)
					h = (uint16_t)(((b >> 16) & 0x8000) |
						       ((((b >> 23) & 0xff) -
							 112) << 10) |
						       ((b >> 13) & 0x3ff));
				((uint16_t *)d[k])[i] = h;
			}
		}
	}
}

void test_adam_runs_and_chunks(void)
{
	static const uint8_t dtypes[] = { DAVINCI_DTYPE_FLOAT32,
					  DAVINCI_DTYPE_FLOAT16 };
	static float a[4][N], b[4][N];
	struct davinci_params_adam p = adam_block();
	size_t d, es;
	uint64_t i;

	for (d = 0; d < sizeof(dtypes); d++) {
		struct davinci_task t;

		es = dtypes[d] == DAVINCI_DTYPE_FLOAT32 ? 4 : 2;
		t = adam_task(dtypes[d], es);
		adam_state(dtypes[d], a[0], a[1], a[2], a[3]);
		memcpy(b, a, sizeof(a));
		dvc_op_run(&t, &p, a[0], a[1], a[2], a[3], 0, N);
		for (i = 0; i < N; i += 7)
			dvc_op_run(&t, &p, b[0], b[1], b[2], b[3], i,
				   i + 7 < N ? i + 7 : N);
		CHECK_EQ(memcmp(a, b, sizeof(a)), 0);
		adam_state(dtypes[d], b[0], b[1], b[2], b[3]);
		CHECK_EQ(memcmp(a[1], b[1], N * es), 0);	/* grad read */
		CHECK_EQ(memcmp(a[0], b[0], N * es) != 0, 1);
		CHECK_EQ(memcmp(a[2], b[2], N * es) != 0, 1);
		CHECK_EQ(memcmp(a[3], b[3], N * es) != 0, 1);
	}
}

void test_sgd_momentum_block_extents_and_chunks(void)
{
	static float a[3][N], b[3][N];
	struct davinci_params_sgd_momentum p;
	struct davinci_task t, o;
	struct dv_op_extent ext;
	uint64_t i;

	memset(&t, 0, sizeof(t));
	t.opcode = DAVINCI_OP_SGD_MOMENTUM;
	t.dtype = DAVINCI_DTYPE_FLOAT32;
	t.count = N;
	t.dst = 1 << 20;
	t.src0 = t.dst + N * 4;
	t.src1 = t.src0 + N * 4;
	t.params = 4096;
	t.params_size = sizeof(p);
	t.params_version = DAVINCI_PARAMS_SGD_MOMENTUM_VERSION;
	memset(&p, 0, sizeof(p));
	p.lr = 0x3dcccccd;		/* 0.1 */
	p.momentum = 0x3f666666;	/* 0.9 */
	p.dampening_weight = 0x3f800000;
	p.weight_decay = 0x3c23d70a;	/* 0.01 */
	p.nesterov = 1;
	CHECK_EQ(dvc_op_validate(&t), 0);
	CHECK_EQ(dvc_op_check_params(&t, &p), 0);
	p.pad = 1;
	CHECK_EQ(dvc_op_check_params(&t, &p), -EINVAL);
	p.pad = 0;
	p.first_step = 2;
	CHECK_EQ(dvc_op_check_params(&t, &p), -EINVAL);
	p.first_step = 0;
	CHECK_EQ(dvc_op_extent(&t, &p, &ext), 0);
	CHECK_EQ(ext.dst + ext.src0 + ext.src1, 3 * N * 4);
	CHECK_EQ(ext.src2, 0);
	o = t;
	o.src1 = o.dst;
	CHECK_EQ(dvc_op_extent(&o, &p, &ext), -EINVAL);
	o = t;
	o.src1 = o.src0 + 4;
	CHECK_EQ(dvc_op_extent(&o, &p, &ext), -EINVAL);
	o = t;
	o.src2 = o.src1 + N * 4;	/* a third source it does not use */
	CHECK_EQ(dvc_op_validate(&o), -EINVAL);
	adam_state(DAVINCI_DTYPE_FLOAT32, a[0], a[1], a[2], b[0]);
	memcpy(b, a, sizeof(a));
	dvc_op_run(&t, &p, a[0], a[1], a[2], NULL, 0, N);
	for (i = 0; i < N; i += 5)
		dvc_op_run(&t, &p, b[0], b[1], b[2], NULL, i,
			   i + 5 < N ? i + 5 : N);
	CHECK_EQ(memcmp(a, b, sizeof(a)), 0);
}
