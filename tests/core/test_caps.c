// SPDX-License-Identifier: GPL-2.0
/*
 * test_caps.c - the capability query (DAVINCI_IOCTL_GET_CAP): its answers
 * are the op table's, malformed queries are refused, an older caller's
 * shorter struct is served.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"	/* dv_opcodes[] */

static int get_cap(struct dv_context *ctx, uint32_t query, uint32_t index,
		   uint64_t *value)
{
	struct davinci_cap c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.query = query;
	c.index = index;
	c.value = 0xdeadbeef;
	ret = dvc_ioctl(ctx, DAVINCI_IOCTL_GET_CAP, &c);
	*value = c.value;
	return ret;
}

#define DT(x)	(1ULL << DAVINCI_DTYPE_##x)

void test_capabilities(void)
{
	struct fixture fx;
	struct davinci_version v;
	uint64_t value;
	unsigned int op;

	REQUIRE(fixture_init(&fx, 0) == 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_GET_VERSION, &v), 0);
	CHECK(v.features & DAVINCI_FEAT_CAPS);

	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OPCODES, 0, &value), 0);
	CHECK_EQ(value, DAVINCI_OP_COUNT);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_DTYPES, 0, &value), 0);
	CHECK_EQ(value, DAVINCI_DTYPE_COUNT);
	for (op = 0; op < DAVINCI_OP_COUNT; op++) {
		CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_DTYPES, op, &value), 0);
		CHECK_EQ(value, dv_opcodes[op].dtypes);
		/*
		 * every op of the table is served, in dtypes the ABI names;
		 * a number no op has (unassigned) is not, and its entry is
		 * empty
		 */
		if (!dv_opcodes[op].flags) {
			CHECK_EQ(value, 0);
			CHECK_EQ(dv_opcodes[op].uses, 0);
			continue;
		}
		CHECK(value != 0);
		CHECK_EQ(value & ~((1ULL << DAVINCI_DTYPE_COUNT) - 1), 0);
		CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_PARAMS, op, &value), 0);
		CHECK_EQ(value, dv_opcodes[op].params_version ?
			 1ULL << dv_opcodes[op].params_version : 0);
		CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_FLAGS, op, &value), 0);
		CHECK_EQ(value, dv_opcodes[op].flags);
		CHECK(value & DAVINCI_TASK_F_NOTIFY);
		CHECK_EQ(value & ~(uint64_t)DAVINCI_TASK_FLAGS_ALL, 0);
	}
	/* the flags of a few, and the strided block's versions */
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_FLAGS, DAVINCI_OP_ADD, &value),
		 0);
	CHECK_EQ(value, DAVINCI_TASK_F_NOTIFY | DAVINCI_TASK_F_STRIDED);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_FLAGS, DAVINCI_OP_CAST,
			 &value), 0);
	CHECK(value & DAVINCI_TASK_F_STRIDED);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_FLAGS, DAVINCI_OP_IDENTITY,
			 &value), 0);
	CHECK(value & DAVINCI_TASK_F_STRIDED);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_FLAGS, DAVINCI_OP_MATMUL,
			 &value), 0);
	CHECK_EQ(value, DAVINCI_TASK_F_NOTIFY | DAVINCI_TASK_F_TRANS_A |
		 DAVINCI_TASK_F_TRANS_B);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_FLAGS, DAVINCI_OP_COPY_VIEW,
			 &value), 0);
	CHECK_EQ(value, DAVINCI_TASK_F_NOTIFY);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_STRIDED, 0, &value), 0);
	CHECK_EQ(value, 1ULL << DAVINCI_PARAMS_STRIDED_VERSION);
	/* a third operand: CONV2D's bias (ABI 1.10), not its gradients' */
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_SRC2, DAVINCI_OP_CONV2D,
			 &value), 0);
	CHECK_EQ(value, 1);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_SRC2,
			 DAVINCI_OP_CONV2D_BACKWARD_INPUT, &value), 0);
	CHECK_EQ(value, 0);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_SRC2, DAVINCI_OP_ADD, &value),
		 0);
	CHECK_EQ(value, 0);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_PARAMS, DAVINCI_OP_COPY_VIEW,
			 &value), 0);
	CHECK_EQ(value, 1ULL << DAVINCI_PARAMS_COPY_VIEW_VERSION);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_PARAMS, DAVINCI_OP_ADD, &value),
		 0);
	CHECK_EQ(value, 0);
	/* what the header says of a few */
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_DTYPES, DAVINCI_OP_ADD, &value),
		 0);
	CHECK_EQ(value, DT(FLOAT32) | DT(FLOAT16) | DT(BFLOAT16) | DT(INT32) |
		 DT(INT64) | DT(INT8) | DT(UINT8));
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_DTYPES, DAVINCI_OP_CAST, &value),
		 0);
	CHECK_EQ(value, (1ULL << DAVINCI_DTYPE_COUNT) - 1);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_DTYPES, DAVINCI_OP_SQRT, &value),
		 0);
	CHECK_EQ(value, DT(FLOAT32) | DT(FLOAT16) | DT(BFLOAT16));
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_DTYPES, DAVINCI_OP_MEMCPY,
			 &value), 0);
	CHECK_EQ(value, DT(FLOAT32));	/* no dtype: it must be 0 */

	/* an opcode the driver does not know, an index a query does not take */
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_DTYPES, DAVINCI_OP_COUNT,
			 &value), -EINVAL);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_DTYPES, UINT32_MAX, &value),
		 -EINVAL);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_PARAMS, DAVINCI_OP_COUNT,
			 &value), -EINVAL);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_FLAGS, DAVINCI_OP_COUNT,
			 &value), -EINVAL);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_STRIDED, 1, &value), -EINVAL);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_SRC2, DAVINCI_OP_COUNT,
			 &value), -EINVAL);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OPCODES, 1, &value), -EINVAL);
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_DTYPES, 1, &value), -EINVAL);
	/* unknown queries; a failed one writes nothing back */
	CHECK_EQ(get_cap(fx.ctx, DAVINCI_CAP_OP_SRC2 + 1, 0, &value), -EINVAL);
	CHECK_EQ(value, 0xdeadbeef);
	CHECK_EQ(get_cap(fx.ctx, UINT32_MAX, 0, &value), -EINVAL);
	fixture_exit(&fx);
}

void test_capabilities_struct_rules(void)
{
	struct fixture fx;
	struct davinci_cap c;
	struct {
		uint32_t query;
		uint32_t index;
		uint64_t value;
		uint64_t after;
	} older;
	unsigned int i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	for (i = 0; i < DV_ARRAY_SIZE(c.reserved); i++) {
		memset(&c, 0, sizeof(c));
		c.query = DAVINCI_CAP_OPCODES;
		c.reserved[i] = 1;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_GET_CAP, &c), -EINVAL);
		CHECK_EQ(c.value, 0);
	}
	/* an older caller without @reserved: zero-extended, served, and
	 * nothing past its struct is written
	 */
	memset(&older, 0, sizeof(older));
	older.query = DAVINCI_CAP_OP_DTYPES;
	older.index = DAVINCI_OP_EXP;
	older.after = 0x77;
	CHECK_EQ(dvc_ioctl(fx.ctx, _IOC(_IOC_READ | _IOC_WRITE,
					 DAVINCI_IOCTL_BASE,
					 _IOC_NR(DAVINCI_IOCTL_GET_CAP),
					 offsetof(struct davinci_cap, reserved)),
			   &older), 0);
	CHECK_EQ(older.value, dv_opcodes[DAVINCI_OP_EXP].dtypes);
	CHECK_EQ(older.after, 0x77);
	/* a device-node query: the manager node has no such ioctl */
	memset(&c, 0, sizeof(c));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_GET_CAP, &c), -ENOTTY);
	fixture_exit(&fx);
}
