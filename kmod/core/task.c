// SPDX-License-Identifier: GPL-2.0
/*
 * task.c - the per-opcode table and the structural validation of task
 * descriptors at the doorbell.
 */
#include "dv_internal.h"

#define DV_DT(x)	(1U << DAVINCI_DTYPE_##x)
#define DV_DT_NONE	DV_DT(FLOAT32)		/* dtype unused: must be 0 */
#define DV_DT_FLOATS	(DV_DT(FLOAT32) | DV_DT(FLOAT16) | DV_DT(BFLOAT16))
#define DV_DT_ALL	(DV_DT_FLOATS | DV_DT(INT32))
#define DV_TF_NOTIFY	DAVINCI_TASK_F_NOTIFY

#define DV_OP(op, u, dt, fl, sh) \
	[DAVINCI_OP_##op] = { .uses = (u), .dtypes = (dt), .flags = (fl), \
			      .shape = DV_SHAPE_##sh }
#define DV_BINARY	(DV_U_DST | DV_U_SRC0 | DV_U_SRC1 | DV_U_COUNT)
#define DV_UNARY	(DV_U_DST | DV_U_SRC0 | DV_U_COUNT)

/*
 * What each opcode uses and allows: the one table behind the doorbell's
 * validation (dv_task_validate()), the operand extents (dv_op_extent(),
 * dv_task_resolve()) and the op kernels' work units (ops.c).
 */
const struct dv_opcode_info dv_opcodes[DAVINCI_OP_COUNT] = {
	[DAVINCI_OP_NOP] = { .uses = DV_U_COUNT, .dtypes = DV_DT_NONE,
			     .flags = DV_TF_NOTIFY,
			     .max_count = DV_NOP_MAX_US,
			     .shape = DV_SHAPE_NONE },
	DV_OP(MEMCPY, DV_U_DST | DV_U_SRC0 | DV_U_COUNT, DV_DT_NONE,
	      DV_TF_NOTIFY, COPY),
	[DAVINCI_OP_MEMSET] = { .uses = DV_U_DST | DV_U_COUNT | DV_U_IMM,
				.dtypes = DV_DT_NONE, .flags = DV_TF_NOTIFY,
				.max_imm = 0xff, .shape = DV_SHAPE_FILL },
	DV_OP(EVENT_RECORD, DV_U_EVENT, DV_DT_NONE, DV_TF_NOTIFY, NONE),
	DV_OP(EVENT_WAIT, DV_U_EVENT, DV_DT_NONE,
	      DV_TF_NOTIFY | DAVINCI_TASK_F_WAIT_NEXT, NONE),
	DV_OP(NOTIFY, 0, DV_DT_NONE, DV_TF_NOTIFY, NONE),
	DV_OP(ADD, DV_BINARY, DV_DT_ALL, DV_TF_NOTIFY, BINARY),
	DV_OP(SUB, DV_BINARY, DV_DT_ALL, DV_TF_NOTIFY, BINARY),
	DV_OP(MUL, DV_BINARY, DV_DT_ALL, DV_TF_NOTIFY, BINARY),
	DV_OP(DIV, DV_BINARY, DV_DT_ALL, DV_TF_NOTIFY, BINARY),
	DV_OP(MAX, DV_BINARY, DV_DT_ALL, DV_TF_NOTIFY, BINARY),
	DV_OP(MIN, DV_BINARY, DV_DT_ALL, DV_TF_NOTIFY, BINARY),
	DV_OP(RELU, DV_UNARY, DV_DT_ALL, DV_TF_NOTIFY, UNARY),
	DV_OP(EXP, DV_UNARY, DV_DT_FLOATS, DV_TF_NOTIFY, UNARY),
	DV_OP(AXPY, DV_BINARY | DV_U_IMM, DV_DT_FLOATS, DV_TF_NOTIFY, BINARY),
	DV_OP(MATMUL, DV_U_DST | DV_U_SRC0 | DV_U_SRC1 | DV_U_MN | DV_U_K,
	      DV_DT_FLOATS,
	      DV_TF_NOTIFY | DAVINCI_TASK_F_TRANS_A | DAVINCI_TASK_F_TRANS_B,
	      MATMUL),
	DV_OP(SOFTMAX, DV_U_DST | DV_U_SRC0 | DV_U_MN, DV_DT_FLOATS,
	      DV_TF_NOTIFY, ROWS),
	DV_OP(REDUCE_SUM, DV_U_DST | DV_U_SRC0 | DV_U_MN, DV_DT_FLOATS,
	      DV_TF_NOTIFY, REDUCE),
	DV_OP(CAST, DV_UNARY | DV_U_DST_DTYPE, DV_DT_ALL, DV_TF_NOTIFY, CAST),
};

/* A field the opcode does not use is non-zero. */
static bool dv_task_unused_set(const struct davinci_task *t, u32 uses)
{
	return (!(uses & DV_U_DST) && t->dst) ||
	       (!(uses & DV_U_SRC0) && t->src0) ||
	       (!(uses & DV_U_SRC1) && t->src1) ||
	       (!(uses & DV_U_COUNT) && t->count) ||
	       (!(uses & DV_U_MN) && (t->m || t->n)) ||
	       (!(uses & DV_U_K) && t->k) ||
	       (!(uses & DV_U_IMM) && t->imm);
}

/**
 * dv_task_validate() - structural check of one descriptor
 * @t: private copy of the descriptor
 *
 * Against the opcode's entry of dv_opcodes[]: reserved and padding fields
 * zero, the opcode known, the dtype (and dst_dtype, for CAST) allowed,
 * flags allowed, every field the opcode does not use zero, event_id set
 * exactly when the opcode uses an event, count and imm within bounds.
 *
 * Return: 0 or -EINVAL.
 */
int dv_task_validate(const struct davinci_task *t)
{
	const struct dv_opcode_info *op;

	if (t->pad0 || !dv_mem_is_zero(t->reserved, sizeof(t->reserved)))
		return -EINVAL;
	if (t->opcode >= DAVINCI_OP_COUNT || t->dtype >= DAVINCI_DTYPE_COUNT ||
	    t->dst_dtype >= DAVINCI_DTYPE_COUNT)
		return -EINVAL;
	op = &dv_opcodes[t->opcode];
	if (!(op->dtypes & (1U << t->dtype)))
		return -EINVAL;
	if (!(op->uses & DV_U_DST_DTYPE) && t->dst_dtype)
		return -EINVAL;
	if (t->flags & ~op->flags)
		return -EINVAL;
	if (dv_task_unused_set(t, op->uses))
		return -EINVAL;
	if (!(op->uses & DV_U_EVENT) != !t->event_id)
		return -EINVAL;
	if (op->max_count && t->count > op->max_count)
		return -EINVAL;
	if (op->max_imm && t->imm > op->max_imm)
		return -EINVAL;
	return 0;
}
