// SPDX-License-Identifier: GPL-2.0
/*
 * ops_strided.c - DAVINCI_TASK_F_STRIDED: the elementwise ops (and CAST,
 * IDENTITY) on strided tensors (DOC: strided operands).
 *
 * The units are the elements of the row-major walk of the sizes. Each run
 * along the innermost dimension goes to the op's dense kernel: directly
 * when every operand the op uses is contiguous along it, else through
 * small blocks on the stack (sources gathered, the kernel run into a
 * block, dst scattered; SELECT, which reads dst, gathers it too). The dense kernel computes each element from its
 * own operands alone, so the bytes are those of the dense op on the same
 * values, however the walk is chunked.
 *
 * Element copies only, no floating point; dv_op_run() calls it inside an
 * FPU section, like the kernels it calls.
 */
#include "dv_internal.h"

/*
 * Bytes of each of the three stack blocks (dst, src0, src1): 1152 bytes
 * in all, on a kernel stack, above the dense kernel's own blocks.
 */
#define DV_STRIDED_BLOCK	384

/* One run: the operands' first elements, inner strides and sizes. */
struct dv_strided_run {
	u8 *dst;
	const u8 *src[2];
	u64 stride[3];		/* elements: dst, src0, src1 */
	u64 es[3];		/* bytes of an element of each */
	u32 sources;		/* 1 or 2 */
};

/*
 * @n elements of run @r through @t's dense kernel. In place (a source
 * that is dst) the source is gathered before its block of dst is
 * written, or the kernel gets dst itself as that source, which the dense
 * kernels allow.
 */
static void strided_run(const struct davinci_task *t,
			const struct dv_strided_run *r, u64 n)
{
	void (*kernel)(const struct davinci_task *t, const void *params,
		       void *dst, const void *src0, const void *src1,
		       void *src2, u64 begin, u64 end) =
		dv_opcodes[t->opcode].kernel;
	u64 blk[3][DV_STRIDED_BLOCK / sizeof(u64)];
	const void *src[2];
	u64 per, i, len, es_max = r->es[0];
	bool dense = r->stride[0] == 1;
	void *dst;
	u32 o;

	for (o = 0; o < r->sources; o++) {
		dense = dense && r->stride[o + 1] == 1;
		if (r->es[o + 1] > es_max)
			es_max = r->es[o + 1];
	}
	if (dense || n == 1) {
		kernel(t, NULL, r->dst, r->src[0],
		       r->src[r->sources - 1], NULL, 0, n);
		return;
	}
	per = DV_STRIDED_BLOCK / es_max;
	for (i = 0; i < n; i += len) {
		len = n - i < per ? n - i : per;
		for (o = 0; o < r->sources; o++) {
			const u8 *at = r->src[o] +
				       i * r->stride[o + 1] * r->es[o + 1];

			src[o] = at;
			if (r->stride[o + 1] == 1)
				continue;
			dv_elem_copy((u8 *)blk[o + 1], 1, at, r->stride[o + 1],
				     len, r->es[o + 1]);
			src[o] = blk[o + 1];
		}
		dst = blk[0];
		if (r->stride[0] == 1)
			dst = r->dst + i * r->es[0];
		else if (t->opcode == DAVINCI_OP_SELECT)	/* reads dst */
			dv_elem_copy((u8 *)blk[0], 1, r->dst + i * r->stride[0] *
				     r->es[0], r->stride[0], len, r->es[0]);
		kernel(t, NULL, dst, src[0], src[r->sources - 1], NULL, 0,
		       len);
		if (r->stride[0] != 1)
			dv_elem_copy(r->dst + i * r->stride[0] * r->es[0],
				     r->stride[0], (const u8 *)blk[0], 1, len,
				     r->es[0]);
	}
}

/**
 * dv_op_run_strided() - run units [@begin, @end) of a strided task
 * @task: a DAVINCI_TASK_F_STRIDED task that passed dv_op_validate(),
 *	dv_op_check_params() and dv_op_extent()
 * @s: the checked copy of its struct davinci_params_strided
 * @dst: host address of dst
 * @src0: host address of src0
 * @src1: host address of src1 (a unary op or CAST: ignored)
 * @begin: first element of the row-major walk
 * @end: one past the last, at most @task->count
 *
 * Element u's index along each dimension is u's digits in the mixed radix
 * of the sizes; the innermost dimension is run a stretch at a time.
 */
void dv_op_run_strided(const struct davinci_task *task,
		       const struct davinci_params_strided *s, void *dst,
		       const void *src0, const void *src1, u64 begin, u64 end)
{
	u32 used = dv_opcodes[task->opcode].shape == DV_SHAPE_BINARY ? 3 : 2;
	struct dv_strided_run r = { .sources = used - 1 };
	u64 idx[DV_ARRAY_SIZE(s->sizes)], off[3] = { 0, 0, 0 };
	u64 rem = begin, u = begin, run;
	u32 last = s->ndim - 1, o;
	int d;

	r.es[0] = dv_dtype_size(dv_op_dst_dtype(task));
	r.es[1] = dv_dtype_size(task->dtype);
	r.es[2] = dv_dtype_size(dv_op_src1_dtype(task));
	for (d = (int)last; d >= 0; d--) {
		idx[d] = rem % s->sizes[d];
		rem /= s->sizes[d];
		for (o = 0; o < used; o++)
			off[o] += idx[d] * s->strides[o][d];
	}
	for (o = 0; o < used; o++)
		r.stride[o] = s->strides[o][last];
	while (u < end) {
		run = s->sizes[last] - idx[last];
		if (run > end - u)
			run = end - u;
		r.dst = (u8 *)dst + off[0] * r.es[0];
		r.src[0] = (const u8 *)src0 + off[1] * r.es[1];
		r.src[1] = used == 3 ? (const u8 *)src1 + off[2] * r.es[2] :
				       r.src[0];
		strided_run(task, &r, run);
		u += run;
		idx[last] += run;
		for (o = 0; o < used; o++)
			off[o] += run * r.stride[o];
		/* carry into the outer dimensions */
		for (d = (int)last; d > 0 && idx[d] == s->sizes[d]; d--) {
			for (o = 0; o < used; o++)
				off[o] += s->strides[o][d - 1] -
					  idx[d] * s->strides[o][d];
			idx[d] = 0;
			idx[d - 1]++;
		}
	}
}
