// SPDX-License-Identifier: GPL-2.0
/*
 * caps.c - DAVINCI_IOCTL_GET_CAP: which ops, dtypes, task flags and
 * parameter-block versions the driver serves, answered from the op table (opcodes.c,
 * generated from ops.toml), so that an op the schema gains is announced
 * without code here.
 */
#include "dv_internal.h"

/*
 * The answer to @c: 0, or -EINVAL for a non-zero reserved field, an
 * unknown query, an opcode the driver does not know or an index a query
 * does not take. An opcode no entry of the table fills (none yet) has no
 * dtype: not served.
 */
static int dv_cap_answer(struct davinci_cap *c)
{
	unsigned int i;

	for (i = 0; i < DV_ARRAY_SIZE(c->reserved); i++)
		if (c->reserved[i])
			return -EINVAL;
	switch (c->query) {
	case DAVINCI_CAP_OPCODES:
		if (c->index)
			return -EINVAL;
		c->value = DAVINCI_OP_COUNT;
		return 0;
	case DAVINCI_CAP_DTYPES:
		if (c->index)
			return -EINVAL;
		c->value = DAVINCI_DTYPE_COUNT;
		return 0;
	case DAVINCI_CAP_OP_DTYPES:
		if (c->index >= DAVINCI_OP_COUNT)
			return -EINVAL;
		c->value = dv_opcodes[c->index].dtypes;
		return 0;
	case DAVINCI_CAP_OP_PARAMS:
		if (c->index >= DAVINCI_OP_COUNT)
			return -EINVAL;
		c->value = dv_opcodes[c->index].params_version ?
			   1ULL << dv_opcodes[c->index].params_version : 0;
		return 0;
	case DAVINCI_CAP_OP_FLAGS:
		if (c->index >= DAVINCI_OP_COUNT)
			return -EINVAL;
		c->value = dv_opcodes[c->index].flags;
		return 0;
	case DAVINCI_CAP_OP_SRC2:
		if (c->index >= DAVINCI_OP_COUNT)
			return -EINVAL;
		c->value = !!(dv_opcodes[c->index].uses & DV_U_SRC2);
		return 0;
	case DAVINCI_CAP_STRIDED:
		if (c->index)
			return -EINVAL;
		c->value = 1ULL << DAVINCI_PARAMS_STRIDED_VERSION;
		return 0;
	default:
		return -EINVAL;
	}
}

/**
 * dv_ioctl_get_cap() - DAVINCI_IOCTL_GET_CAP
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_cap
 *
 * Return: 0 or -EINVAL (see dv_cap_answer()).
 */
int dv_ioctl_get_cap(struct dv_context *ctx, void *arg)
{
	os_mutex_assert_held(ctx->dev->lock);
	return dv_cap_answer(arg);
}
