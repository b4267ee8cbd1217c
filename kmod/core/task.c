// SPDX-License-Identifier: GPL-2.0
/*
 * task.c - structural validation of task descriptors at the doorbell.
 */
#include "dv_internal.h"

/* Fields of a descriptor an opcode may use. */
#define DV_F_DST	(1U << 0)
#define DV_F_SRC0	(1U << 1)
#define DV_F_COUNT	(1U << 2)
#define DV_F_IMM	(1U << 3)
#define DV_F_EVENT	(1U << 4)
#define DV_F_WAIT_NEXT	(1U << 5)

static int dv_task_check_fields(const struct davinci_task *t, u32 used)
{
	u32 flags = DAVINCI_TASK_F_NOTIFY;

	if (used & DV_F_WAIT_NEXT)
		flags |= DAVINCI_TASK_F_WAIT_NEXT;
	if (t->dtype || t->dst_dtype || t->src1 || t->m || t->n || t->k)
		return -EINVAL;
	if (t->flags & ~flags)
		return -EINVAL;
	if (!(used & DV_F_DST) && t->dst)
		return -EINVAL;
	if (!(used & DV_F_SRC0) && t->src0)
		return -EINVAL;
	if (!(used & DV_F_COUNT) && t->count)
		return -EINVAL;
	if (!(used & DV_F_IMM) && t->imm)
		return -EINVAL;
	if (used & DV_F_EVENT) {
		if (!t->event_id)
			return -EINVAL;
	} else if (t->event_id) {
		return -EINVAL;
	}
	return 0;
}

/**
 * dv_task_validate() - structural check of one descriptor
 * @t: private copy of the descriptor
 *
 * Reserved and padding fields must be zero, flags, opcode and dtypes
 * known, and fields the opcode does not use zero.
 *
 * Return: 0 or -EINVAL.
 */
int dv_task_validate(const struct davinci_task *t)
{
	if (t->pad0 || !dv_mem_is_zero(t->reserved, sizeof(t->reserved)))
		return -EINVAL;
	if (t->flags & ~DAVINCI_TASK_FLAGS_ALL)
		return -EINVAL;
	if (t->opcode >= DAVINCI_OP_COUNT || t->dtype >= DAVINCI_DTYPE_COUNT ||
	    t->dst_dtype >= DAVINCI_DTYPE_COUNT)
		return -EINVAL;
	switch (t->opcode) {
	case DAVINCI_OP_NOP:
		if (t->count > DV_NOP_MAX_US)
			return -EINVAL;
		return dv_task_check_fields(t, DV_F_COUNT);
	case DAVINCI_OP_MEMCPY:
		return dv_task_check_fields(t, DV_F_DST | DV_F_SRC0 |
					    DV_F_COUNT);
	case DAVINCI_OP_MEMSET:
		if (t->imm > 0xff)
			return -EINVAL;
		return dv_task_check_fields(t, DV_F_DST | DV_F_COUNT |
					    DV_F_IMM);
	case DAVINCI_OP_EVENT_RECORD:
		return dv_task_check_fields(t, DV_F_EVENT);
	case DAVINCI_OP_EVENT_WAIT:
		return dv_task_check_fields(t, DV_F_EVENT | DV_F_WAIT_NEXT);
	case DAVINCI_OP_NOTIFY:
		return dv_task_check_fields(t, 0);
	default:
		if (!dv_op_is_compute(t->opcode))
			return -EINVAL;
		if (t->event_id)
			return -EINVAL;
		return dv_op_validate(t);
	}
}
