/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops_kernels.h - entry points of the float op kernels (ops_*.c), named
 * in the opcode table (task.c) and called by dv_op_run() (ops.c). Only
 * pointers cross this boundary, so neither of those needs the FPU. The task has passed dv_op_validate(), dv_op_extent() and
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

/*
 * The op kernels, each named by the opcodes it runs in dv_opcodes[] and
 * called with the signature of struct dv_opcode_info's @kernel: @params is
 * the checked copy of the task's parameter block (NULL for an op without
 * one); an op with one input ignores @src1, and one whose kind has no
 * third operand @src2 (NULL).
 */
#define DV_OP_KERNEL(name)						\
	void dv_opk_##name(const struct davinci_task *t,		\
			   const void *params, void *dst,		\
			   const void *src0, const void *src1,		\
			   void *src2, u64 begin, u64 end)

/*
 * ADD SUB MUL DIV MAX MIN RELU EXP AXPY SQRT ABS LEAKY_RELU TANH SIGMOID
 * ERF LOG GELU SILU RECIPROCAL POW NEG TANH_GRAD SIGMOID_GRAD GELU_GRAD
 * SILU_GRAD
 */
DV_OP_KERNEL(elementwise);
DV_OP_KERNEL(matmul);		/* MATMUL; units are rows of dst */
DV_OP_KERNEL(softmax);		/* SOFTMAX, LOG_SOFTMAX; units are rows */
DV_OP_KERNEL(reduce_sum);	/* REDUCE_SUM; units are rows */
DV_OP_KERNEL(relu_grad);	/* RELU_GRAD */
DV_OP_KERNEL(compare);		/* CMP */
DV_OP_KERNEL(cast);		/* CAST */
DV_OP_KERNEL(copy_view);	/* COPY_VIEW; units are elements of dst */
DV_OP_KERNEL(copy);		/* IDENTITY */
DV_OP_KERNEL(conv);		/* CONV2D and its gradients; units are GEMM rows */
DV_OP_KERNEL(pool);		/* the poolings and theirs; units are planes */
DV_OP_KERNEL(index);		/* INDEX_SELECT (rows), INDEX_ADD (columns) */
DV_OP_KERNEL(select);		/* SELECT, MASK_SCALE */
DV_OP_KERNEL(argreduce);	/* ARGMAX, ARGMIN; units are rows */
DV_OP_KERNEL(cumsum);		/* CUMSUM; units are rows */
DV_OP_KERNEL(generate);	/* FILL ARANGE RANDOM_UNIFORM BERNOULLI RANDOM_NORMAL */
DV_OP_KERNEL(triangle);		/* TRIL, TRIU; units are rows */
DV_OP_KERNEL(aipp);		/* AIPP; units are rows of dst's images */
DV_OP_KERNEL(argsort);		/* ARGSORT; units are rows */
DV_OP_KERNEL(optimizer);	/* ADAM SGD_MOMENTUM; units are elements */
DV_OP_KERNEL(batch_norm);	/* the BN_TRAINING_* ops; units are channels */

#endif /* _DAVINCI_OPS_KERNELS_H */
