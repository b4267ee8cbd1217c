// SPDX-License-Identifier: GPL-2.0
/*
 * ops_view.c - COPY_VIEW: a strided view of src0 (sizes and strides in
 * elements, from the task's parameter block) copied into a dense dst;
 * IDENTITY: a dense copy (strided tensors through ops_strided.c).
 *
 * Element copies only, no floating point; it lives beside the other op
 * kernels, which dv_op_run() calls inside an FPU section.
 */
#include "dv_internal.h"
#include "ops_kernels.h"
#include "ops.h"

/**
 * dv_elem_copy() - copy elements between two strided runs
 * @dst: the first element written
 * @dst_stride: elements between two written ones
 * @src: the first element read
 * @src_stride: elements between two read ones (0: one element repeated)
 * @n: elements
 * @es: bytes of an element
 *
 * The one strided element copy of the op kernels: COPY_VIEW's runs and
 * the strided walk's gathers and scatters (ops_strided.c). Whole typed
 * elements, so every build moves the same bytes.
 */
void dv_elem_copy(u8 *dst, u64 dst_stride, const u8 *src, u64 src_stride,
		  u64 n, u64 es)
{
	u64 i;

	if (dst_stride == 1 && src_stride == 1) {
		memcpy(dst, src, n * es);
		return;
	}
	switch (es) {
	case 8:
		for (i = 0; i < n; i++)
			((u64 *)dst)[i * dst_stride] =
				((const u64 *)src)[i * src_stride];
		break;
	case 4:
		for (i = 0; i < n; i++)
			((u32 *)dst)[i * dst_stride] =
				((const u32 *)src)[i * src_stride];
		break;
	case 2:
		for (i = 0; i < n; i++)
			((u16 *)dst)[i * dst_stride] =
				((const u16 *)src)[i * src_stride];
		break;
	default:
		for (i = 0; i < n; i++)
			memcpy(dst + i * dst_stride * es,
			       src + i * src_stride * es, es);
	}
}

/*
 * Units are elements of dst in row-major order of the view: element u's
 * index along each dimension is u's digits in the mixed radix of @sizes.
 * The innermost dimension is copied a run at a time.
 */
DV_OP_KERNEL(copy_view)
{
	const struct davinci_params_copy_view *v = params;
	u64 es = dv_dtype_size(t->dtype);
	u32 last = v->ndim - 1;
	u64 idx[8], off = 0, rem = begin, u = begin;
	int d;

	(void)src2;
	(void)src1;
	for (d = (int)last; d >= 0; d--) {
		idx[d] = rem % v->sizes[d];
		rem /= v->sizes[d];
		off += idx[d] * v->strides[d];
	}
	while (u < end) {
		u64 run = v->sizes[last] - idx[last];

		if (run > end - u)
			run = end - u;
		dv_elem_copy((u8 *)dst + u * es, 1,
			     (const u8 *)src0 + off * es, v->strides[last], run,
			     es);
		u += run;
		off += run * v->strides[last];
		idx[last] += run;
		/* carry into the outer dimensions */
		for (d = (int)last; d > 0 && idx[d] == v->sizes[d]; d--) {
			off -= idx[d] * v->strides[d];
			idx[d] = 0;
			idx[d - 1]++;
			off += v->strides[d - 1];
		}
	}
}

/* Units are elements; in place (dst == src0) copies nothing. */
DV_OP_KERNEL(copy)
{
	u64 es = dv_dtype_size(t->dtype);

	(void)src2;
	(void)params;
	(void)src1;
	if (dst != src0)
		memmove((u8 *)dst + begin * es, (const u8 *)src0 + begin * es,
			(end - begin) * es);
}
