/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops_kernels.h - entry points of the float op kernels (ops_*.c) for the
 * dispatcher in ops.c. Only pointers cross this boundary, so ops.c needs
 * no FPU. The task has passed dv_op_validate(), dv_op_extent() and
 * dv_op_misaligned() (every operand is aligned to its element size), and
 * 0 <= @begin < @end <= dv_op_units(task).
 */
#ifndef _DAVINCI_OPS_KERNELS_H
#define _DAVINCI_OPS_KERNELS_H

#include "os.h"

/*
 * Four float32 lanes, a GCC vector type; a macro because kernel style
 * adds no new typedefs.
 */
#define dv_v4sf float __attribute__((vector_size(16)))

/* ADD SUB MUL DIV MAX MIN RELU EXP AXPY SQRT; units are elements. */
void dv_opk_elementwise(const struct davinci_task *t, void *dst,
			const void *src0, const void *src1, u64 begin, u64 end);
/* MATMUL; units are rows of dst. */
void dv_opk_matmul(const struct davinci_task *t, void *dst,
		   const void *src0, const void *src1, u64 begin, u64 end);
/* SOFTMAX, LOG_SOFTMAX (by opcode) and REDUCE_SUM; units are rows. */
void dv_opk_softmax(const struct davinci_task *t, void *dst,
		    const void *src0, u64 begin, u64 end);
void dv_opk_reduce_sum(const struct davinci_task *t, void *dst,
		       const void *src0, u64 begin, u64 end);
/* RELU_GRAD; units are elements. */
void dv_opk_relu_grad(const struct davinci_task *t, void *dst,
		      const void *src0, const void *src1, u64 begin, u64 end);
/* CMP; units are elements. */
void dv_opk_compare(const struct davinci_task *t, void *dst,
		    const void *src0, const void *src1, u64 begin, u64 end);
/* CAST; units are elements. */
void dv_opk_cast(const struct davinci_task *t, void *dst, const void *src0,
		 u64 begin, u64 end);

#endif /* _DAVINCI_OPS_KERNELS_H */
