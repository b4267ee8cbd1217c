// SPDX-License-Identifier: GPL-2.0
/*
 * dvpp.c - the DVPP engine's tasks: DAVINCI_OP_JPEGD_DECODE (DOC: DVPP
 * JPEGD in davinci.h), the JPEG decoder of jpegd.c run on a task's
 * operands, DAVINCI_OP_JPEGE_ENCODE (DOC: DVPP JPEGE), jpege.c's encoder,
 * and DAVINCI_OP_PNGD_DECODE (DOC: DVPP PNGD), the PNG decoder of pngd.c.
 *
 * Integer code only: no FPU section. The coders' scratch memory is
 * allocated here, as the task starts, by a worker that holds no lock and
 * may sleep, and freed before the task completes.
 */
#include "dv_internal.h"
#include "jpegd.h"
#include "jpege.h"
#include "pngd.h"

/**
 * dv_op_check_jpegd_decode() - check JPEGD_DECODE's parameter block
 * @task: a JPEGD_DECODE task that passed dv_task_validate()
 * @params: the copy of its struct davinci_params_jpegd_decode
 *
 * Return: 0 for @max_dim at most DV_JPEGD_MAX_DIM and @pad zero, or
 * -EINVAL.
 */
int dv_op_check_jpegd_decode(const struct davinci_task *task,
			     const void *params)
{
	const struct davinci_params_jpegd_decode *p = params;

	(void)task;
	return p->max_dim <= DV_JPEGD_MAX_DIM && !p->pad ? 0 : -EINVAL;
}

/**
 * dv_op_check_pngd_decode() - check PNGD_DECODE's parameter block
 * @task: a PNGD_DECODE task that passed dv_task_validate()
 * @params: the copy of its struct davinci_params_pngd_decode
 *
 * Return: 0 for @max_dim at most DV_PNGD_MAX_DIM and @pad zero, or
 * -EINVAL.
 */
int dv_op_check_pngd_decode(const struct davinci_task *task,
			    const void *params)
{
	const struct davinci_params_pngd_decode *p = params;

	(void)task;
	return p->max_dim <= DV_PNGD_MAX_DIM && !p->pad ? 0 : -EINVAL;
}

/**
 * dv_dvpp_extent() - bytes a JPEGD_DECODE, PNGD_DECODE or JPEGE_ENCODE
 *	task touches
 * @task: the task, which passed dv_task_validate()
 * @params: its checked parameter block (each coder's starts with
 *	@dst_size)
 * @ext: out: dst @dst_size bytes, src0 @count, src1 the coder's result
 *	record
 *
 * Return: 0, or -EINVAL when a range wraps around the address space or
 * two of the three operands meet.
 */
int dv_dvpp_extent(const struct davinci_task *task, const void *params,
		   struct dv_op_extent *ext)
{
	const struct davinci_params_jpegd_decode *p = params;

	if (!p)
		return -EINVAL;
	ext->dst = p->dst_size;
	ext->src0 = task->count;
	switch (task->opcode) {
	case DAVINCI_OP_PNGD_DECODE:
		ext->src1 = sizeof(struct davinci_pngd_result);
		break;
	case DAVINCI_OP_JPEGE_ENCODE:
		ext->src1 = sizeof(struct davinci_jpege_result);
		break;
	default:
		ext->src1 = sizeof(struct davinci_jpegd_result);
		break;
	}
	if ((ext->dst && task->dst + ext->dst - 1 < task->dst) ||
	    (ext->src0 && task->src0 + ext->src0 - 1 < task->src0) ||
	    task->src1 + ext->src1 - 1 < task->src1)
		return -EINVAL;
	if (dv_ranges_overlap(task->dst, ext->dst, task->src0, ext->src0) ||
	    dv_ranges_overlap(task->dst, ext->dst, task->src1, ext->src1) ||
	    dv_ranges_overlap(task->src0, ext->src0, task->src1, ext->src1))
		return -EINVAL;
	return 0;
}

/* NV12 -> NV21: swap each interleaved chroma pair of the @bytes at @uv. */
static void dv_dvpp_swap_uv(u8 *uv, u64 bytes)
{
	u64 i;
	u8 u;

	for (i = 0; i + 1 < bytes; i += 2) {
		u = uv[i];
		uv[i] = uv[i + 1];
		uv[i + 1] = u;
	}
}

/**
 * dv_dvpp_jpegd() - run a JPEGD_DECODE task
 * @task: the task, resolved (dv_dvpp_extent() passed)
 * @params: its checked struct davinci_params_jpegd_decode
 * @dst: host address of its output, @dst_size bytes
 * @src: host address of the JPEG, @count bytes
 * @result: host address of its struct davinci_jpegd_result (any
 *	alignment), written whatever the outcome
 *
 * Parses the header, refuses a picture whose output is larger than
 * @dst_size before writing dst (-ENOSPC), allocates the scratch the
 * header asks for (no lock held: it may sleep), decodes, and swaps the
 * chroma pairs for NV21. Call without dev->lock and outside an FPU
 * section.
 *
 * Return: 0, or the decoder's negative errno (-ENOMEM when the scratch
 * cannot be allocated).
 */
int dv_dvpp_jpegd(const struct davinci_task *task, const void *params,
		  void *dst, const void *src, void *result)
{
	const struct davinci_params_jpegd_decode *p = params;
	struct davinci_jpegd_result r;
	struct dv_jpegd_info info;
	void *scratch;
	int err;

	memset(&r, 0, sizeof(r));
	err = dv_jpegd_parse(src, task->count, p->max_dim, &info);
	if (!err) {
		r.width = info.width;
		r.height = info.height;
		r.components = info.components;
		r.subsampling = info.subsampling;
		r.width_stride = info.width_stride;
		r.height_stride = info.height_stride;
		r.progressive = info.progressive;
		r.out_size = info.out_size;
		if (info.out_size > p->dst_size)
			err = -ENOSPC;
	}
	if (!err) {
		scratch = dv_zalloc(info.scratch_size);
		if (!scratch)
			err = -ENOMEM;
		else
			err = dv_jpegd_decode(src, task->count, p->max_dim, dst,
					      p->dst_size, scratch,
					      info.scratch_size, NULL);
		dv_free(scratch);
	}
	if (!err && task->imm == DAVINCI_JPEGD_DECODE_NV21)
		dv_dvpp_swap_uv((u8 *)dst + (u64)info.width_stride *
				info.height_stride, info.out_size -
				(u64)info.width_stride * info.height_stride);
	r.error = err;
	memcpy(result, &r, sizeof(r));
	return err;
}

/**
 * dv_op_check_jpege_encode() - check JPEGE_ENCODE's parameter block
 * @task: a JPEGE_ENCODE task that passed dv_task_validate()
 * @params: the copy of its struct davinci_params_jpege_encode
 *
 * Return: 0 for sizes of 1 .. DV_JPEGE_MAX_DIM, strides at DVPP JPEGE's
 * alignment (width a multiple of 16, height of 2) that hold them, a
 * quality of 1 .. 100, @pad zero and a @count that holds the picture;
 * else -EINVAL.
 */
int dv_op_check_jpege_encode(const struct davinci_task *task,
			     const void *params)
{
	const struct davinci_params_jpege_encode *p = params;

	if (!p->width || !p->height || p->width > DV_JPEGE_MAX_DIM ||
	    p->height > DV_JPEGE_MAX_DIM || p->pad)
		return -EINVAL;
	if (p->width_stride % DV_JPEGE_WIDTH_ALIGN ||
	    p->height_stride % DV_JPEGE_HEIGHT_ALIGN ||
	    p->width_stride < p->width || p->height_stride < p->height ||
	    p->width_stride > DV_JPEGE_MAX_DIM + DV_JPEGE_WIDTH_ALIGN ||
	    p->height_stride > DV_JPEGE_MAX_DIM + DV_JPEGE_HEIGHT_ALIGN)
		return -EINVAL;
	if (p->quality < 1 || p->quality > 100)
		return -EINVAL;
	if (task->count < (u64)p->width_stride * p->height_stride * 3 / 2)
		return -EINVAL;
	return 0;
}

/**
 * dv_dvpp_jpege() - run a JPEGE_ENCODE task
 * @task: the task, resolved (dv_dvpp_extent() passed)
 * @params: its checked struct davinci_params_jpege_encode
 * @dst: host address of the file's buffer, @dst_size bytes
 * @src: host address of the picture, @count bytes
 * @result: host address of its struct davinci_jpege_result (any
 *	alignment), written whatever the outcome
 *
 * Allocates the encoder's scratch (its tables and block: no lock held,
 * it may sleep) and encodes. Call without dev->lock and outside an FPU
 * section.
 *
 * Return: 0, or the encoder's negative errno: -ENOSPC for a file larger
 * than @dst_size (nothing written past it), -ENOMEM when the scratch
 * cannot be allocated.
 */
int dv_dvpp_jpege(const struct davinci_task *task, const void *params,
		  void *dst, const void *src, void *result)
{
	const struct davinci_params_jpege_encode *p = params;
	struct dv_jpege_params jp = {
		.width = p->width, .height = p->height,
		.width_stride = p->width_stride,
		.height_stride = p->height_stride,
		.nv21 = task->imm == DAVINCI_JPEGE_ENCODE_NV21,
		.quality = p->quality,
	};
	struct davinci_jpege_result r;
	size_t size = dv_jpege_scratch_size();
	void *scratch = dv_zalloc(size);
	u64 written = 0;
	int err;

	memset(&r, 0, sizeof(r));
	if (!scratch)
		err = -ENOMEM;
	else
		err = dv_jpege_encode(&jp, src, task->count, dst, p->dst_size,
				      scratch, size, &written);
	dv_free(scratch);
	r.error = err;
	r.size = err ? 0 : written;
	memcpy(result, &r, sizeof(r));
	return err;
}

/**
 * dv_dvpp_pngd() - run a PNGD_DECODE task
 * @task: the task, resolved (dv_dvpp_extent() passed)
 * @params: its checked struct davinci_params_pngd_decode
 * @dst: host address of its output, @dst_size bytes
 * @src: host address of the PNG, @count bytes
 * @result: host address of its struct davinci_pngd_result (any
 *	alignment), written whatever the outcome
 *
 * Walks the chunks, refuses a picture whose output is larger than
 * @dst_size before writing dst (-ENOSPC), allocates the scratch the
 * header asks for (no lock held: it may sleep) and decodes. Call without
 * dev->lock and outside an FPU section.
 *
 * Return: 0, or the decoder's negative errno (-ENOMEM when the scratch
 * cannot be allocated).
 */
int dv_dvpp_pngd(const struct davinci_task *task, const void *params,
		 void *dst, const void *src, void *result)
{
	const struct davinci_params_pngd_decode *p = params;
	struct davinci_pngd_result r;
	struct dv_pngd_info info;
	void *scratch;
	int err;

	memset(&r, 0, sizeof(r));
	err = dv_pngd_parse(src, task->count, p->max_dim, task->imm, &info);
	if (!err) {
		r.width = info.width;
		r.height = info.height;
		r.bit_depth = info.bit_depth;
		r.colour_type = info.colour_type;
		r.interlace = info.interlace;
		r.components = info.components;
		r.channels = info.channels;
		r.width_stride = info.width_stride;
		r.height_stride = info.height_stride;
		r.out_size = info.out_size;
		if (info.out_size > p->dst_size)
			err = -ENOSPC;
	}
	if (!err) {
		scratch = dv_zalloc(info.scratch_size);
		if (!scratch)
			err = -ENOMEM;
		else
			err = dv_pngd_decode(src, task->count, p->max_dim,
					     task->imm, dst, p->dst_size,
					     scratch, info.scratch_size, NULL);
		dv_free(scratch);
	}
	r.error = err;
	memcpy(result, &r, sizeof(r));
	return err;
}
