/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops.h - AI-core op kernels (DAVINCI_OP_ADD .. DAVINCI_OP_CMP).
 *
 * The scheduler validates a compute task with dv_op_validate(), resolves its
 * operands to addresses, then runs it in chunks of work units between
 * os_fpu_begin() and os_fpu_end(), checking for cancellation and the
 * watchdog between chunks. Float code lives in its own translation units
 * (ops_*.c), built with the FPU enabled in the kernel.
 */
#ifndef _DAVINCI_OPS_H
#define _DAVINCI_OPS_H

#include "os.h"

/**
 * struct dv_op_extent - bytes an op touches from each operand's address
 * @dst: bytes written at task->dst
 * @src0: bytes read at task->src0 (0 when unused)
 * @src1: bytes read at task->src1 (0 when unused)
 * @src2: bytes read or written at task->src2, as its op's kind says (0
 *	when unused)
 */
struct dv_op_extent {
	u64 dst;
	u64 src0;
	u64 src1;
	u64 src2;
};

/* True for the opcodes this file implements. */
bool dv_op_is_compute(u16 opcode);

/*
 * Structural check at the doorbell: dtype combination, flags, fields the
 * op does not use are zero. -EINVAL when malformed.
 */
int dv_op_validate(const struct davinci_task *task);

/*
 * At take-in, for an op with a parameter block or a DAVINCI_TASK_F_STRIDED
 * task: its copy @params is one the op takes (-EINVAL otherwise).
 */
int dv_op_check_params(const struct davinci_task *task, const void *params);

/* The checker of each op's own parameter block (dv_opcodes[].check_params). */
int dv_op_check_copy_view(const struct davinci_task *task, const void *params);
int dv_op_check_conv2d(const struct davinci_task *task, const void *params);
int dv_op_check_maxpool2d(const struct davinci_task *task, const void *params);
int dv_op_check_fill(const struct davinci_task *task, const void *params);
int dv_op_check_arange(const struct davinci_task *task, const void *params);
int dv_op_check_random_uniform(const struct davinci_task *task,
			       const void *params);
int dv_op_check_random_normal(const struct davinci_task *task,
			      const void *params);
int dv_op_check_jpegd_decode(const struct davinci_task *task,
			     const void *params);
int dv_op_check_vpc_crop(const struct davinci_task *task, const void *params);
int dv_op_check_jpege_encode(const struct davinci_task *task,
			     const void *params);
int dv_op_check_pngd_decode(const struct davinci_task *task,
			    const void *params);
int dv_op_check_aipp(const struct davinci_task *task, const void *params);
int dv_op_check_adam(const struct davinci_task *task, const void *params);
int dv_op_check_sgd_momentum(const struct davinci_task *task,
			     const void *params);
int dv_op_check_bn_training_reduce(const struct davinci_task *task,
				   const void *params);

/* Bytes of one element of DAVINCI_DTYPE_* @dtype, 0 for an unknown one. */
u64 dv_dtype_size(u8 dtype);

/*
 * The dtype of @task's dst: the one its op fixes (ARGMAX's int64),
 * @dst_dtype for CAST and for CMP's bool result, else @dtype.
 */
u8 dv_op_dst_dtype(const struct davinci_task *task);

/*
 * The dtype of @task's src1: an indexed op's index dtype, the one its op
 * fixes (SELECT's bool), else @dtype.
 */
u8 dv_op_src1_dtype(const struct davinci_task *task);

/*
 * Ops whose operands' contents address memory (the indexed ops) or
 * describe the work (AIPP's config) check them as the task starts, before
 * a chunk runs: dv_op_check_data() is 0, or -EINVAL (an index out of
 * range, a config the op does not take) and the task fails with
 * DAVINCI_STATUS_INVALID_TASK, touching nothing. Integer code only.
 * @params: the checked copy of the task's parameter block (NULL: none).
 */
bool dv_op_reads_data(const struct davinci_task *task);
int dv_op_check_data(const struct davinci_task *task, const void *params,
		     const void *src1);

/* @n elements of @es bytes between two strided runs (ops_view.c). */
void dv_elem_copy(u8 *dst, u64 dst_stride, const u8 *src, u64 src_stride,
		  u64 n, u64 es);

/*
 * Before the task runs: the byte extents of its operands (overflow
 * checked; -EINVAL for shapes whose byte size overflows u64, or MATMUL,
 * SOFTMAX, REDUCE_SUM, CAST and COPY_VIEW whose dst overlaps a source).
 * @params: the checked copy of its parameter block, NULL for an op
 * without one.
 */
int dv_op_extent(const struct davinci_task *task, const void *params,
		 struct dv_op_extent *ext);

/*
 * Before the task runs: operands whose address is not a multiple of their
 * element size (0: none), which the kernels must not touch.
 */
#define DV_OP_MISALIGNED_DST	(1U << 0)
#define DV_OP_MISALIGNED_SRC0	(1U << 1)
#define DV_OP_MISALIGNED_SRC1	(1U << 2)
#define DV_OP_MISALIGNED_SRC2	(1U << 3)
u32 dv_op_misaligned(const struct davinci_task *task);

/*
 * Work units of the task (elements or rows) and a chunk size for them;
 * @params as for dv_op_extent() (a convolution without one has none).
 */
u64 dv_op_units(const struct davinci_task *task, const void *params);
u64 dv_op_chunk_units(const struct davinci_task *task, const void *params);

/*
 * Run units [@begin, @end) with the parameter block copy @params (NULL for
 * an op without one); call between os_fpu_begin()/os_fpu_end().
 */
void dv_op_run(const struct davinci_task *task, const void *params,
	       void *dst, const void *src0, const void *src1, void *src2,
	       u64 begin, u64 end);

/*
 * dv_op_run() of a DAVINCI_TASK_F_STRIDED task (ops_strided.c): units
 * [@begin, @end) of the row-major walk of the checked struct
 * davinci_params_strided @s, through the op's dense kernel.
 */
void dv_op_run_strided(const struct davinci_task *task,
		       const struct davinci_params_strided *s, void *dst,
		       const void *src0, const void *src1, u64 begin, u64 end);

/*
 * The DVPP engine's coders, JPEGD_DECODE, PNGD_DECODE and JPEGE_ENCODE
 * (dvpp.c, DOC: DVPP JPEGD, DOC: DVPP PNGD, DOC: DVPP JPEGE): their
 * extents (dv_op_extent() calls it), and the run of a resolved task,
 * without dev->lock and outside an FPU section (it allocates the coder's
 * scratch). Each run returns 0 or the coder's negative errno, which it
 * also writes into the result record (struct davinci_jpegd_result,
 * davinci_pngd_result, davinci_jpege_result) at @result.
 */
int dv_dvpp_extent(const struct davinci_task *task, const void *params,
		   struct dv_op_extent *ext);
int dv_dvpp_jpegd(const struct davinci_task *task, const void *params,
		  void *dst, const void *src, void *result);
int dv_dvpp_pngd(const struct davinci_task *task, const void *params,
		 void *dst, const void *src, void *result);
int dv_dvpp_jpege(const struct davinci_task *task, const void *params,
		  void *dst, const void *src, void *result);

/*
 * The DVPP engine's VPC tasks (vpc.c, DOC: DVPP VPC): their extents (the
 * two pictures' bytes), and the run of a resolved task, without dev->lock
 * and outside an FPU section (a resize allocates its coordinate tables):
 * 0, or -ENOMEM with nothing written.
 */
int dv_vpc_extent(const struct davinci_task *task, const void *params,
		  struct dv_op_extent *ext);
int dv_vpc_run(const struct davinci_task *task, const void *params,
	       void *dst, const void *src);

#endif /* _DAVINCI_OPS_H */
