// SPDX-License-Identifier: GPL-2.0
/*
 * ops.c - validation, operand extents, work units and dispatch of the
 * AI-core op kernels.
 *
 * No floating point in this file: the kernel builds it without FPU flags.
 * The float kernels live in ops_elementwise.c, ops_matmul.c, ops_reduce.c,
 * ops_cast.c, ops_relu_grad.c and ops_compare.c; only pointers are passed
 * to them.
 */
#include "dv_internal.h"
#include "ops_conv.h"
#include "ops_pool.h"
#include "aipp.h"

/* Chunk sizes (work units per os_fpu_begin()/os_fpu_end() section). */
#define DV_OP_EW_CHUNK		65536ULL	/* elements */
/*
 * ~64 MFLOP of matmul (about 1 ms), but at least 32 rows unless that is
 * more than 512 MFLOP: each chunk packs all of B once, and with fewer rows
 * a chunk spends more of its time copying B than multiplying. Always a
 * multiple of 8 rows (the largest register block) and at least 8.
 */
#define DV_OP_MM_CHUNK_FLOP	(64ULL << 20)
#define DV_OP_MM_CHUNK_MAX_FLOP	(512ULL << 20)
#define DV_OP_MM_CHUNK_MIN_ROWS	32ULL
#define DV_OP_MM_CHUNK_ROWS	8ULL
#define DV_OP_ROW_CHUNK_ELEMS	65536ULL	/* softmax / reduce elements */
#define DV_OP_POOL_CHUNK_TERMS	(1ULL << 20)	/* window taps of poolings */

/**
 * dv_dtype_size() - bytes of one element
 * @dtype: DAVINCI_DTYPE_*
 *
 * Return: its size, 0 for an unknown dtype.
 */
u64 dv_dtype_size(u8 dtype)
{
	return dtype < DAVINCI_DTYPE_COUNT ? dv_dtype_bytes[dtype] : 0;
}

/**
 * dv_op_dst_dtype() - the dtype of a compute task's dst
 * @task: the descriptor
 *
 * Return: @task->dst_dtype for CAST, for a CMP with a bool result and
 * for a MAXPOOL2D writing its indices, else @task->dtype.
 */
u8 dv_op_dst_dtype(const struct davinci_task *task)
{
	if (task->opcode < DAVINCI_OP_COUNT &&
	    dv_opcodes[task->opcode].dst_fixed)
		return dv_opcodes[task->opcode].dst_fixed - 1;
	if (task->opcode == DAVINCI_OP_CAST ||
	    ((task->opcode == DAVINCI_OP_CMP ||
	      task->opcode == DAVINCI_OP_MAXPOOL2D) && task->dst_dtype))
		return task->dst_dtype;
	return task->dtype;
}

/**
 * dv_op_src1_dtype() - the dtype of a compute task's src1
 * @task: the descriptor
 *
 * Return: an indexed op's index dtype (its imm), the dtype the op fixes
 * for src1 (SELECT's and MASK_SCALE's bool), else @task->dtype.
 */
u8 dv_op_src1_dtype(const struct davinci_task *task)
{
	const struct dv_opcode_info *op;

	if (task->opcode >= DAVINCI_OP_COUNT)
		return task->dtype;
	op = &dv_opcodes[task->opcode];
	if (op->shape == DV_SHAPE_INDEX)
		return task->imm == DAVINCI_INDEX_SELECT_INT32 ?
		       DAVINCI_DTYPE_INT32 : DAVINCI_DTYPE_INT64;
	return op->src1_fixed ? op->src1_fixed - 1 : task->dtype;
}

/**
 * dv_op_is_compute() - true for an opcode with a kernel (ADD and after)
 * @opcode: task opcode
 */
bool dv_op_is_compute(u16 opcode)
{
	return opcode >= DAVINCI_OP_ADD && opcode < DAVINCI_OP_COUNT &&
	       dv_opcodes[opcode].kernel;
}

/**
 * dv_op_validate() - structural check of a compute task
 * @task: the descriptor (already copied out of the ring)
 *
 * dv_task_validate() for a compute opcode: the dtype (and dst_dtype for
 * CAST) its entry of dv_opcodes[] allows, the flags (NOTIFY always;
 * TRANS_A/TRANS_B only for MATMUL), every field the op does not use zero,
 * pad0 and reserved[] zero. INT32 is allowed for ADD SUB MUL DIV MAX MIN
 * RELU CAST RELU_GRAD and CMP only; CMP's imm is a DAVINCI_CMP_*.
 *
 * Return: 0, or -EINVAL when malformed or not a compute task.
 */
int dv_op_validate(const struct davinci_task *task)
{
	if (!dv_op_is_compute(task->opcode))
		return -EINVAL;
	return dv_task_validate(task);
}

/* a * b into *out; false on u64 overflow. */
static bool dv_mul_u64(u64 a, u64 b, u64 *out)
{
	if (a && b > U64_MAX / a)
		return false;
	*out = a * b;
	return true;
}

/* the range wraps around the address space */
static bool dv_range_wraps(u64 addr, u64 len)
{
	return len && addr + len - 1 < addr;
}

/*
 * Elements the strided operand @o spans: its last element's offset + 1,
 * 0 when a size is 0. False when that overflows u64.
 */
static bool dv_strided_span(const struct davinci_params_strided *s, u32 o,
			    u64 *span)
{
	u64 last = 0, reach;
	u32 d;

	*span = 0;
	for (d = 0; d < s->ndim; d++)
		if (!s->sizes[d])
			return true;
	for (d = 0; d < s->ndim; d++) {
		if (!dv_mul_u64(s->sizes[d] - 1, s->strides[o][d], &reach) ||
		    last + reach < last)
			return false;
		last += reach;
	}
	if (last == U64_MAX)
		return false;
	*span = last + 1;
	return true;
}

/*
 * No two elements of dst at one address, by a sufficient test: the
 * dimensions of size > 1 in order of their stride, each stride larger
 * than the last offset the dimensions inside it reach (so a stride of 0
 * is refused). Call after dv_strided_span() passed for dst.
 */
static bool dv_strided_dst_distinct(const struct davinci_params_strided *s)
{
	u32 order[DV_ARRAY_SIZE(s->sizes)];
	u64 reach = 0;
	u32 n = 0, d, i;

	for (d = 0; d < s->ndim; d++) {
		if (s->sizes[d] < 2)
			continue;
		/* insertion sort by dst stride */
		for (i = n; i > 0 && s->strides[0][order[i - 1]] >
				     s->strides[0][d]; i--)
			order[i] = order[i - 1];
		order[i] = d;
		n++;
	}
	for (i = 0; i < n; i++) {
		u64 stride = s->strides[0][order[i]];

		if (stride <= reach)
			return false;
		reach += (s->sizes[order[i]] - 1) * stride;
	}
	return true;
}

/* Operands of a strided task: dst and src0, and src1 for a binary op. */
static u32 dv_strided_operands(const struct davinci_task *task)
{
	return dv_opcodes[task->opcode].shape == DV_SHAPE_BINARY ? 3 : 2;
}

/*
 * A DAVINCI_TASK_F_STRIDED task's struct davinci_params_strided (DOC:
 * strided operands): @ndim 1..8, @pad zero, sizes and strides past @ndim
 * and the strides of an operand the op does not use zero, @count the
 * product of the sizes, every used operand's span within u64, and dst
 * distinct elements.
 */
static int dv_op_check_strided(const struct davinci_task *task,
			       const struct davinci_params_strided *s)
{
	u32 used = dv_strided_operands(task);
	u64 elems = 1, span;
	u32 o, d;

	if (s->ndim < 1 || s->ndim > DV_ARRAY_SIZE(s->sizes) || s->pad)
		return -EINVAL;
	for (d = 0; d < DV_ARRAY_SIZE(s->sizes); d++) {
		bool live = d < s->ndim;

		if (!live && s->sizes[d])
			return -EINVAL;
		for (o = 0; o < DV_ARRAY_SIZE(s->strides); o++)
			if ((!live || o >= used) && s->strides[o][d])
				return -EINVAL;
		if (live && !dv_mul_u64(elems, s->sizes[d], &elems))
			return -EINVAL;
	}
	if (elems != task->count)
		return -EINVAL;
	for (o = 0; o < used; o++)
		if (!dv_strided_span(s, o, &span))
			return -EINVAL;
	return !elems || dv_strided_dst_distinct(s) ? 0 : -EINVAL;
}

/**
 * dv_op_check_params() - check a task's parameter block
 * @task: a task that passed dv_op_validate()
 * @params: the copy of its parameter block (its params_size bytes)
 *
 * A DAVINCI_TASK_F_STRIDED task's block is a struct
 * davinci_params_strided (dv_op_check_strided()); any other block is the
 * op's own, checked by its entry of dv_opcodes[] (check_params).
 *
 * Return: 0, or -EINVAL.
 */
int dv_op_check_params(const struct davinci_task *task, const void *params)
{
	const struct dv_opcode_info *op;

	if (task->opcode >= DAVINCI_OP_COUNT)
		return -EINVAL;
	if (task->flags & DAVINCI_TASK_F_STRIDED)
		return dv_op_check_strided(task, params);
	op = &dv_opcodes[task->opcode];
	return op->check_params ? op->check_params(task, params) : -EINVAL;
}

/**
 * dv_op_check_copy_view() - check COPY_VIEW's parameter block
 * @task: a COPY_VIEW task that passed dv_op_validate()
 * @params: the copy of its struct davinci_params_copy_view
 *
 * 1 to 8 dimensions, the sizes' product @task->count (no overflow), every
 * size and stride past @ndim and @pad zero, and a view whose last
 * element's offset fits u64.
 *
 * Return: 0, or -EINVAL.
 */
int dv_op_check_copy_view(const struct davinci_task *task, const void *params)
{
	const struct davinci_params_copy_view *v = params;
	u64 elems = 1, last = 0, reach;
	u32 i;

	if (v->ndim < 1 || v->ndim > DV_ARRAY_SIZE(v->sizes) || v->pad)
		return -EINVAL;
	for (i = 0; i < DV_ARRAY_SIZE(v->sizes); i++) {
		if (i >= v->ndim) {
			if (v->sizes[i] || v->strides[i])
				return -EINVAL;
			continue;
		}
		if (!dv_mul_u64(elems, v->sizes[i], &elems))
			return -EINVAL;
		if (v->sizes[i] &&
		    (!dv_mul_u64(v->sizes[i] - 1, v->strides[i], &reach) ||
		     last + reach < last))
			return -EINVAL;
		if (v->sizes[i])
			last += reach;
	}
	return elems == task->count ? 0 : -EINVAL;
}

/**
 * dv_op_check_conv2d() - check a convolution's parameter block
 * @task: a CONV2D, CONV2D_BACKWARD_INPUT or CONV2D_BACKWARD_WEIGHT task
 * @params: the copy of its struct davinci_params_conv2d
 *
 * Return: 0 for a geometry dv_conv_geom() takes, or -EINVAL.
 */
int dv_op_check_conv2d(const struct davinci_task *task, const void *params)
{
	struct dv_conv conv;

	(void)task;	/* the block alone sets every extent */
	return dv_conv_geom(params, &conv);
}

/**
 * dv_op_check_maxpool2d() - check a pooling's parameter block
 * @task: a MAXPOOL2D, AVGPOOL2D or gradient task
 * @params: the copy of its struct davinci_params_maxpool2d
 *
 * Return: 0 for a geometry dv_pooling_geom() takes for the op, or -EINVAL.
 */
int dv_op_check_maxpool2d(const struct davinci_task *task, const void *params)
{
	struct dv_pooling pool;

	return dv_pooling_geom(task->opcode, params, &pool);
}

/**
 * dv_op_check_fill() - check FILL's parameter block
 * @task: a FILL task that passed dv_op_validate()
 * @params: the copy of its struct davinci_params_fill
 *
 * The value's bytes above the dtype's size are zero, and a bool is 0 or 1.
 *
 * Return: 0, or -EINVAL.
 */
int dv_op_check_fill(const struct davinci_task *task, const void *params)
{
	const struct davinci_params_fill *p = params;
	u64 es = dv_dtype_size(task->dtype);

	if (task->dtype == DAVINCI_DTYPE_BOOL)
		return p->value <= 1 ? 0 : -EINVAL;
	return es >= 8 || !(p->value >> (8 * es)) ? 0 : -EINVAL;
}

/**
 * dv_op_check_bn_training_reduce() - check BN_TRAINING_REDUCE's block
 * @task: a BN_TRAINING_REDUCE task that passed dv_op_validate()
 * @params: the copy of its struct davinci_params_bn_training_reduce
 *
 * Integer code on the floats' bits: eps is finite and not negative (-0
 * allowed), momentum finite.
 *
 * Return: 0, or -EINVAL.
 */
int dv_op_check_bn_training_reduce(const struct davinci_task *task,
				   const void *params)
{
	const struct davinci_params_bn_training_reduce *p = params;

	(void)task;
	if ((p->eps & 0x7f800000u) == 0x7f800000u ||
	    (p->momentum & 0x7f800000u) == 0x7f800000u)
		return -EINVAL;
	return (p->eps >> 31) && (p->eps & 0x7fffffffu) ? -EINVAL : 0;
}

/**
 * dv_op_check_arange() - check ARANGE's parameter block
 * @task: an ARANGE task that passed dv_op_validate()
 * @params: the copy of its struct davinci_params_arange
 *
 * Return: 0: every start and step is one (an int64 or a float64's bits).
 */
int dv_op_check_arange(const struct davinci_task *task, const void *params)
{
	(void)task;
	(void)params;
	return 0;
}

/**
 * dv_op_check_random_uniform() - check the Philox block of RANDOM_UNIFORM
 *	and BERNOULLI
 * @task: the task, which passed dv_op_validate()
 * @params: the copy of its struct davinci_params_random_uniform
 *
 * Return: 0: every seed and offset is one (the counter wraps in u64).
 */
int dv_op_check_random_uniform(const struct davinci_task *task,
			       const void *params)
{
	(void)task;
	(void)params;
	return 0;
}

/* @bits of a float64 is neither an infinity nor a NaN */
static bool dv_f64_bits_finite(u64 bits)
{
	return ((bits >> 52) & 0x7ff) != 0x7ff;
}

/**
 * dv_op_check_random_normal() - check RANDOM_NORMAL's parameter block
 * @task: the task, which passed dv_op_validate()
 * @params: the copy of its struct davinci_params_random_normal
 *
 * Return: 0, or -EINVAL for a mean that is not finite or a std that is
 * not finite or has its sign bit set (CPU torch refuses std < 0 too).
 */
int dv_op_check_random_normal(const struct davinci_task *task,
			      const void *params)
{
	const struct davinci_params_random_normal *p = params;

	(void)task;
	if (!dv_f64_bits_finite(p->mean) || !dv_f64_bits_finite(p->std) ||
	    (p->std >> 63))
		return -EINVAL;
	return 0;
}

/**
 * dv_op_check_adam() - check ADAM's parameter block
 * @task: an ADAM task that passed dv_op_validate()
 * @params: the copy of its struct davinci_params_adam
 *
 * Any float32 bits are a hyperparameter (CPU torch takes them too).
 *
 * Return: 0, or -EINVAL for a @maximize other than 0 or 1, or @amsgrad
 * set: its max_exp_avg_sq would be a fifth operand.
 */
int dv_op_check_adam(const struct davinci_task *task, const void *params)
{
	const struct davinci_params_adam *p = params;

	(void)task;
	return p->maximize <= 1 && !p->amsgrad ? 0 : -EINVAL;
}

/**
 * dv_op_check_sgd_momentum() - check SGD_MOMENTUM's parameter block
 * @task: an SGD_MOMENTUM task that passed dv_op_validate()
 * @params: the copy of its struct davinci_params_sgd_momentum
 *
 * Return: 0, or -EINVAL for a @nesterov, @maximize or @first_step other
 * than 0 or 1, or a @pad that is not zero.
 */
int dv_op_check_sgd_momentum(const struct davinci_task *task,
			     const void *params)
{
	const struct davinci_params_sgd_momentum *p = params;

	(void)task;
	return p->nesterov <= 1 && p->maximize <= 1 && p->first_step <= 1 &&
	       !p->pad ? 0 : -EINVAL;
}

/* Elements of src0 a checked view spans: its last element's offset + 1. */
static u64 dv_view_span(const struct davinci_params_copy_view *v)
{
	u64 last = 0;
	u32 i;

	for (i = 0; i < v->ndim; i++) {
		if (!v->sizes[i])
			return 0;
		last += (v->sizes[i] - 1) * v->strides[i];
	}
	return last + 1;
}

/*
 * Source @o of a strided task is dst itself, which runs in place: the
 * same address, element size and strides (those of size-1 dimensions
 * aside, which never move).
 */
static bool dv_strided_in_place(const struct davinci_task *task,
				const struct davinci_params_strided *s, u32 o)
{
	u64 addr = o == 1 ? task->src0 : task->src1;
	u32 d;

	if (dv_opcodes[task->opcode].shape == DV_SHAPE_CAST ||
	    addr != task->dst)
		return false;
	for (d = 0; d < s->ndim; d++)
		if (s->sizes[d] > 1 && s->strides[o][d] != s->strides[0][d])
			return false;
	return true;
}

/*
 * dv_op_extent() of a DAVINCI_TASK_F_STRIDED task: each operand's span
 * in elements of its dtype. A source whose bytes meet dst's must be dst
 * itself (dv_strided_in_place()); a test of the spans, so two tensors
 * that interleave without sharing an element are refused too.
 */
static int dv_op_extent_strided(const struct davinci_task *task,
				const struct davinci_params_strided *s,
				struct dv_op_extent *ext)
{
	u64 addr[3] = { task->dst, task->src0, task->src1 };
	u64 *bytes[3] = { &ext->dst, &ext->src0, &ext->src1 };
	u64 es[3] = { dv_dtype_size(dv_op_dst_dtype(task)),
		      dv_dtype_size(task->dtype),
		      dv_dtype_size(dv_op_src1_dtype(task)) };
	u32 used, o;
	u64 span;

	if (!s || !es[0] || !es[1] || !es[2])
		return -EINVAL;
	used = dv_strided_operands(task);
	for (o = 0; o < used; o++)
		if (!dv_strided_span(s, o, &span) ||
		    !dv_mul_u64(span, es[o], bytes[o]) ||
		    dv_range_wraps(addr[o], *bytes[o]))
			return -EINVAL;
	for (o = 1; o < used; o++)
		if (dv_ranges_overlap(task->dst, ext->dst, addr[o], *bytes[o]) &&
		    !(es[o] == es[0] && dv_strided_in_place(task, s, o)))
			return -EINVAL;
	return 0;
}

/*
 * Elements of dst, src0 and src1 of a checked convolution op: CONV2D
 * writes y from x and w, CONV2D_BACKWARD_INPUT x from y and w,
 * CONV2D_BACKWARD_WEIGHT w from x and y.
 */
static void dv_conv_elems(u16 opcode, const struct dv_conv *g, u64 *e)
{
	e[0] = g->y;
	e[1] = g->x;
	e[2] = g->w;
	if (opcode == DAVINCI_OP_CONV2D_BACKWARD_INPUT) {
		e[0] = g->x;
		e[1] = g->y;
	} else if (opcode == DAVINCI_OP_CONV2D_BACKWARD_WEIGHT) {
		e[0] = g->w;
		e[2] = g->y;
	}
}

/*
 * Extents of an indexed op (DOC: indexed ops): @m batches, each of
 * @count indices (src1) into a table of @n rows of @k elements.
 * INDEX_SELECT writes dst[m][count][k] from the table src0[m][n][k];
 * INDEX_ADD adds src0[m][count][k] into the table dst[m][n][k].
 */
static int dv_op_extent_index(const struct davinci_task *task, u64 es,
			      struct dv_op_extent *ext)
{
	u64 picked, table, idx;

	if (!dv_mul_u64((u64)task->m * task->k, task->count, &picked) ||
	    !dv_mul_u64(picked, es, &picked) ||
	    !dv_mul_u64((u64)task->m * task->n, task->k, &table) ||
	    !dv_mul_u64(table, es, &table) ||
	    !dv_mul_u64(task->m, task->count, &idx) ||
	    !dv_mul_u64(idx, dv_dtype_size(dv_op_src1_dtype(task)), &idx))
		return -EINVAL;
	ext->src1 = idx;
	ext->dst = task->opcode == DAVINCI_OP_INDEX_ADD ? table : picked;
	ext->src0 = task->opcode == DAVINCI_OP_INDEX_ADD ? picked : table;
	return 0;
}

/*
 * Batch norm's extents (DV_SHAPE_CHANNELS): x [m, n, k] of the dtype at
 * src0 (and src1 for the gradients), float32 rows of n channels: dst
 * [6, n] (BN_TRAINING_REDUCE, its weight and bias at src1 and src2 [n]
 * each, or none at address 0), src1 [2, n] (BN_TRAINING_UPDATE: dst is
 * shaped as x and may be it, no src2), src2 [2, n]
 * (BN_TRAINING_UPDATE_GRAD: dst [4, n]), src2 [5, n] and dst as x
 * (BN_TRAINING_REDUCE_GRAD). Every dimension is at least 1.
 */
static int dv_op_extent_channels(const struct davinci_task *task, u64 es,
				 struct dv_op_extent *ext, bool *in_place)
{
	u64 rows = (u64)task->n * sizeof(float), x;

	if (!task->m || !task->n || !task->k ||
	    !dv_mul_u64((u64)task->m * task->n, task->k, &x) ||
	    !dv_mul_u64(x, es, &x))
		return -EINVAL;
	ext->src0 = x;
	switch (task->opcode) {
	case DAVINCI_OP_BN_TRAINING_REDUCE:
		ext->dst = 6 * rows;
		ext->src1 = task->src1 ? rows : 0;
		ext->src2 = task->src2 ? rows : 0;
		break;
	case DAVINCI_OP_BN_TRAINING_UPDATE:
		if (task->src2)
			return -EINVAL;
		ext->dst = x;
		ext->src1 = 2 * rows;
		*in_place = true;
		break;
	case DAVINCI_OP_BN_TRAINING_UPDATE_GRAD:
		ext->dst = 4 * rows;
		ext->src1 = x;
		ext->src2 = 2 * rows;
		break;
	case DAVINCI_OP_BN_TRAINING_REDUCE_GRAD:
		ext->dst = x;
		ext->src1 = x;
		ext->src2 = 5 * rows;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/**
 * dv_op_extent() - bytes a compute task touches at each operand
 * @task: a task that passed dv_op_validate()
 * @params: the copy of its parameter block that passed
 *	dv_op_check_params(), NULL for an op without one
 * @ext: out: bytes at dst, src0, src1 and src2 (0 for an unused operand)
 *
 * Elementwise ops may run in place (dst equal to a source) but a partial
 * overlap of dst with a source is refused; MATMUL, SOFTMAX, LOG_SOFTMAX,
 * REDUCE_SUM, CAST, COPY_VIEW, the convolutions and the poolings refuse
 * any overlap of dst with a source; an optimizer (ADAM, SGD_MOMENTUM) any
 * overlap of two of its operands. A DAVINCI_TASK_F_STRIDED task's extents are its
 * operands' spans (dv_op_extent_strided()).
 *
 * Return: 0, or -EINVAL when a size overflows u64, a range wraps around
 * the address space, or operands overlap as above.
 */
int dv_op_extent(const struct davinci_task *task, const void *params,
		 struct dv_op_extent *ext)
{
	u64 es = dv_dtype_size(task->dtype), dst_es, src1_es;
	u64 mn, mk, kn, e[3];
	struct dv_conv conv;
	struct dv_pooling pool;
	bool exact_ok = false, exact1_ok = false;

	memset(ext, 0, sizeof(*ext));
	if (!es || task->opcode >= DAVINCI_OP_COUNT)
		return -EINVAL;
	if (task->flags & DAVINCI_TASK_F_STRIDED)
		return dv_op_extent_strided(task, params, ext);
	if (dv_opcodes[task->opcode].shape == DV_SHAPE_JPEGD ||
	    dv_opcodes[task->opcode].shape == DV_SHAPE_PNGD ||
	    dv_opcodes[task->opcode].shape == DV_SHAPE_JPEGE)
		return dv_dvpp_extent(task, params, ext);
	if (dv_opcodes[task->opcode].shape == DV_SHAPE_VPC)
		return dv_vpc_extent(task, params, ext);
	if (dv_opcodes[task->opcode].shape == DV_SHAPE_AIPP) {
		/* it only reads src0 and src1: they may overlap */
		if (dv_aipp_extent(task, params, &ext->dst, &ext->src0,
				   &ext->src1))
			return -EINVAL;
		goto check;
	}
	switch (dv_opcodes[task->opcode].shape) {
	case DV_SHAPE_BINARY:
		/*
		 * CMP's bool result, SELECT's bool src1: in place only with
		 * one element size
		 */
		dst_es = dv_dtype_size(dv_op_dst_dtype(task));
		src1_es = dv_dtype_size(dv_op_src1_dtype(task));
		if (!dv_mul_u64(task->count, es, &ext->src0) ||
		    !dv_mul_u64(task->count, dst_es, &ext->dst) ||
		    !dv_mul_u64(task->count, src1_es, &ext->src1))
			return -EINVAL;
		exact_ok = dst_es == es;
		exact1_ok = dst_es == src1_es;
		break;
	case DV_SHAPE_UNARY:
		if (!dv_mul_u64(task->count, es, &ext->dst))
			return -EINVAL;
		ext->src0 = ext->dst;
		exact_ok = true;
		break;
	case DV_SHAPE_MATMUL:
		mn = (u64)task->m * task->n;
		mk = (u64)task->m * task->k;
		kn = (u64)task->k * task->n;
		if (!dv_mul_u64(mn, es, &ext->dst) ||
		    !dv_mul_u64(mk, es, &ext->src0) ||
		    !dv_mul_u64(kn, es, &ext->src1))
			return -EINVAL;
		break;
	case DV_SHAPE_ROWS:
		mn = (u64)task->m * task->n;
		if (!dv_mul_u64(mn, es, &ext->dst))
			return -EINVAL;
		ext->src0 = ext->dst;
		break;
	case DV_SHAPE_REDUCE:
		mn = (u64)task->m * task->n;
		if (!dv_mul_u64(mn, es, &ext->src0))
			return -EINVAL;
		/* no columns: each row sums to 0, but has no arg max */
		if (dv_opcodes[task->opcode].dst_fixed && task->m && !task->n)
			return -EINVAL;
		ext->dst = (u64)task->m *
			   dv_dtype_size(dv_op_dst_dtype(task));
		break;
	case DV_SHAPE_INDEX:
		if (dv_op_extent_index(task, es, ext))
			return -EINVAL;
		break;
	case DV_SHAPE_GENERATE:
		if (!dv_mul_u64(task->count, es, &ext->dst))
			return -EINVAL;
		break;
	case DV_SHAPE_TRIANGLE:
		/* matrices of k >= 1 rows each */
		mn = (u64)task->m * task->n;
		if (!task->k || task->m % task->k ||
		    !dv_mul_u64(mn, es, &ext->dst))
			return -EINVAL;
		ext->src0 = ext->dst;
		exact_ok = true;
		break;
	case DV_SHAPE_SORT:
		/* k of each row's n, 1 <= k <= n */
		mn = (u64)task->m * task->n;
		if (!task->k || task->k > task->n ||
		    !dv_mul_u64(mn, es, &ext->src0) ||
		    !dv_mul_u64((u64)task->m * task->k,
				dv_dtype_size(dv_op_dst_dtype(task)), &ext->dst))
			return -EINVAL;
		break;
	case DV_SHAPE_VIEW:
		if (!params || !dv_mul_u64(task->count, es, &ext->dst) ||
		    !dv_mul_u64(dv_view_span(params), es, &ext->src0))
			return -EINVAL;
		break;
	case DV_SHAPE_CONV:
		if (!params || dv_conv_geom(params, &conv))
			return -EINVAL;
		dv_conv_elems(task->opcode, &conv, e);
		if (!dv_mul_u64(e[0], es, &ext->dst) ||
		    !dv_mul_u64(e[1], es, &ext->src0) ||
		    !dv_mul_u64(e[2], es, &ext->src1))
			return -EINVAL;
		/* CONV2D's bias: k elements (a zero src2: none) */
		if (task->src2 && (dv_opcodes[task->opcode].uses & DV_U_SRC2))
			ext->src2 = (u64)conv.p->k * es;
		break;
	case DV_SHAPE_POOL:
	case DV_SHAPE_POOL_INDEX:
		/* the forward ops write y from x, the gradients dx from dy */
		if (!params || dv_pooling_geom(task->opcode, params, &pool))
			return -EINVAL;
		dst_es = dv_dtype_size(dv_op_dst_dtype(task));
		if (task->opcode == DAVINCI_OP_MAXPOOL2D ||
		    task->opcode == DAVINCI_OP_AVGPOOL2D) {
			ext->dst = pool.y * dst_es;
			ext->src0 = pool.x * es;
		} else {
			ext->dst = pool.x * es;
			ext->src0 = pool.y * es;
		}
		if (task->opcode == DAVINCI_OP_MAXPOOL2D_BACKWARD)
			ext->src1 = pool.y * sizeof(s64);
		break;
	case DV_SHAPE_OPTIMIZER:
	case DV_SHAPE_MOMENTUM:
		/* all are read and all but src0 written: no two may overlap */
		if (!dv_mul_u64(task->count, es, &ext->dst))
			return -EINVAL;
		ext->src0 = ext->dst;
		ext->src1 = ext->dst;
		if (dv_opcodes[task->opcode].shape == DV_SHAPE_OPTIMIZER)
			ext->src2 = ext->dst;
		if (dv_ranges_overlap(task->src0, ext->src0, task->src1,
				      ext->src1))
			return -EINVAL;
		break;
	case DV_SHAPE_CHANNELS:
		if (dv_op_extent_channels(task, es, ext, &exact_ok))
			return -EINVAL;
		break;
	case DV_SHAPE_CAST:
		if (!dv_mul_u64(task->count, es, &ext->src0))
			return -EINVAL;
		if (!dv_dtype_size(task->dst_dtype) ||
		    !dv_mul_u64(task->count, dv_dtype_size(task->dst_dtype),
				&ext->dst))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
check:
	if (dv_range_wraps(task->dst, ext->dst) ||
	    dv_range_wraps(task->src0, ext->src0) ||
	    dv_range_wraps(task->src1, ext->src1) ||
	    dv_range_wraps(task->src2, ext->src2))
		return -EINVAL;
	if (dv_ranges_overlap(task->dst, ext->dst, task->src0, ext->src0) &&
	    !(exact_ok && task->dst == task->src0))
		return -EINVAL;
	if (dv_ranges_overlap(task->dst, ext->dst, task->src1, ext->src1) &&
	    !(exact1_ok && task->dst == task->src1))
		return -EINVAL;
	/* a third operand (an input, or a second output) shares no bytes */
	if (dv_ranges_overlap(task->dst, ext->dst, task->src2, ext->src2) ||
	    dv_ranges_overlap(task->src0, ext->src0, task->src2, ext->src2) ||
	    dv_ranges_overlap(task->src1, ext->src1, task->src2, ext->src2))
		return -EINVAL;
	return 0;
}

/**
 * dv_op_misaligned() - operands not aligned to their element size
 * @task: a task that passed dv_op_validate()
 *
 * The op kernels load and store whole elements through typed pointers, so
 * every operand the op uses must be aligned to its element size: dst to
 * that of @task->dst_dtype for CAST and of @task->dtype otherwise, src0
 * and src1 to that of @task->dtype. Memory is allocated page aligned, so
 * an aligned device address is an aligned host address too. An operand
 * the op does not use is zero (dv_op_validate()), hence aligned.
 *
 * Return: 0 when all are aligned, else a mask of DV_OP_MISALIGNED_DST,
 * DV_OP_MISALIGNED_SRC0, DV_OP_MISALIGNED_SRC1 and DV_OP_MISALIGNED_SRC2
 * (src2, of an op that has one, aligned to that of @task->dtype).
 */
u32 dv_op_misaligned(const struct davinci_task *task)
{
	u64 es = dv_dtype_size(task->dtype);
	u64 dst_es = dv_dtype_size(dv_op_dst_dtype(task));
	u64 src1_es = dv_dtype_size(dv_op_src1_dtype(task));
	u32 bad = 0;

	if (!es || !dst_es || !src1_es)
		return 0;	/* dv_op_extent() refuses the dtype */
	/* the DVPP's operands are bytes (the result records too) */
	if (task->opcode < DAVINCI_OP_COUNT &&
	    dv_shape_is_dvpp(dv_opcodes[task->opcode].shape))
		return 0;
	if (task->dst & (dst_es - 1))
		bad |= DV_OP_MISALIGNED_DST;
	if (task->src0 & (es - 1))
		bad |= DV_OP_MISALIGNED_SRC0;
	if (task->src1 & (src1_es - 1))
		bad |= DV_OP_MISALIGNED_SRC1;
	if (task->src2 & (es - 1))
		bad |= DV_OP_MISALIGNED_SRC2;
	/* AIPP reads a picture's bytes and a config of u32 fields */
	if (task->opcode < DAVINCI_OP_COUNT &&
	    dv_opcodes[task->opcode].shape == DV_SHAPE_AIPP) {
		bad &= ~(DV_OP_MISALIGNED_SRC0 | DV_OP_MISALIGNED_SRC1);
		if (task->src1 & (sizeof(u32) - 1))
			bad |= DV_OP_MISALIGNED_SRC1;
	}
	/* batch norm's per-channel rows at src2 are float32 */
	if (task->opcode < DAVINCI_OP_COUNT &&
	    dv_opcodes[task->opcode].shape == DV_SHAPE_CHANNELS &&
	    (task->src2 & (sizeof(float) - 1)))
		bad |= DV_OP_MISALIGNED_SRC2;
	/* MAXPOOL2D_BACKWARD's src1 holds int64 indices */
	if (task->opcode == DAVINCI_OP_MAXPOOL2D_BACKWARD &&
	    (task->src1 & (sizeof(s64) - 1)))
		bad |= DV_OP_MISALIGNED_SRC1;
	return bad;
}

/*
 * A convolution's units, units per GEMM (*@seg) and flops per unit
 * (*@flop, saturating): CONV2D's are tiles of its GEMMs (ops_conv.h),
 * the gradients' their GEMM rows, x[n][c] for CONV2D_BACKWARD_INPUT and
 * w[k] for _WEIGHT.
 */
static u64 dv_conv_rows(u16 opcode, const void *params, u64 *seg, u64 *flop)
{
	const struct davinci_params_conv2d *p = params;
	struct dv_conv g;
	u64 rows, inner, cols, rs;

	if (!params || dv_conv_geom(params, &g))
		return 0;
	rs = (u64)p->r * p->s;
	inner = g.cg * rs;
	if (opcode == DAVINCI_OP_CONV2D) {
		u64 blocks, tiles = dv_conv_fwd_tiles(&g, &blocks);

		*seg = tiles * blocks;
		rows = g.kg < DV_CONV_TILE_ROWS ? g.kg : DV_CONV_TILE_ROWS;
		cols = (u64)g.oh * g.ow;
		if (cols > DV_CONV_TILE_COLS)
			cols = DV_CONV_TILE_COLS;
		if (!dv_mul_u64(2 * inner * rows, cols, flop))
			*flop = U64_MAX;
		return (u64)p->n * p->groups * *seg;
	}
	rows = (u64)p->n * p->k;
	*seg = g.kg;
	cols = (u64)g.oh * g.ow;
	if (opcode == DAVINCI_OP_CONV2D_BACKWARD_INPUT) {
		rows = (u64)p->n * p->c;
		*seg = g.cg;
		inner = g.kg * rs;
		cols = (u64)p->h * p->w;
	} else if (opcode == DAVINCI_OP_CONV2D_BACKWARD_WEIGHT) {
		rows = p->k;
		inner = (u64)p->n * g.oh * g.ow;
		cols = g.cg * rs;
	}
	if (!dv_mul_u64(2 * inner, cols, flop))
		*flop = U64_MAX;
	return rows;
}

/*
 * A pooling's planes (its units) and terms per plane (*@terms, >= 1,
 * saturating): outputs times window taps for the forward ops, inputs
 * times the windows that can hold one for the gradients.
 */
static u64 dv_pooling_planes(u16 opcode, const void *params, u64 *terms)
{
	const struct davinci_params_maxpool2d *p = params;
	struct dv_pooling g;
	u64 outs, taps;

	if (!params || dv_pooling_geom(opcode, params, &g))
		return 0;
	outs = (u64)g.oh * g.ow;
	taps = (u64)p->r * p->s;
	if (opcode != DAVINCI_OP_MAXPOOL2D && opcode != DAVINCI_OP_AVGPOOL2D) {
		outs = (u64)p->h * p->w;
		taps = ((u64)p->dilation_h * (p->r - 1) / p->stride_h + 1) *
		       ((u64)p->dilation_w * (p->s - 1) / p->stride_w + 1);
	}
	if (!dv_mul_u64(outs, taps, terms))
		*terms = U64_MAX;
	return g.planes;
}

/* AIPP's units: the rows of its images (0 without a block). */
static u64 dv_aipp_rows(const void *params)
{
	const struct davinci_params_aipp *p = params;

	return p ? (u64)p->batch * p->height : 0;
}

/**
 * dv_op_units() - work units of a compute task
 * @task: a validated task
 * @params: its checked parameter block copy, NULL for none
 *
 * Return: elements for elementwise ops and CAST, rows of dst for the
 * MATMUL, ROWS and REDUCE shapes (MATMUL, SOFTMAX, LOG_SOFTMAX,
 * REDUCE_SUM), a convolution's GEMM rows (dv_conv_rows()), a pooling's
 * planes (dv_pooling_planes()).
 */
u64 dv_op_units(const struct davinci_task *task, const void *params)
{
	u64 seg, flop;

	if (!dv_op_is_compute(task->opcode))
		return 0;
	switch (dv_opcodes[task->opcode].shape) {
	case DV_SHAPE_MATMUL:
	case DV_SHAPE_ROWS:
	case DV_SHAPE_REDUCE:
	case DV_SHAPE_TRIANGLE:
	case DV_SHAPE_SORT:
		return task->m;
	case DV_SHAPE_AIPP:
		return dv_aipp_rows(params);
	case DV_SHAPE_CHANNELS:
		return task->n;
	case DV_SHAPE_CONV:
		return dv_conv_rows(task->opcode, params, &seg, &flop);
	case DV_SHAPE_POOL:
	case DV_SHAPE_POOL_INDEX:
		return dv_pooling_planes(task->opcode, params, &flop);
	case DV_SHAPE_INDEX:
		/* INDEX_ADD: columns of the table, each its batch's indices */
		if (task->opcode == DAVINCI_OP_INDEX_ADD)
			return (u64)task->m * task->k;
		return (u64)task->m * task->count;	/* rows of dst */
	default:
		return task->count;
	}
}

/**
 * dv_op_chunk_units() - units to run between two scheduling points
 * @task: a validated task
 *
 * Return: 64K elements for elementwise ops and CAST; rows worth ~64 MFLOP
 * for the MATMUL shape, at least 32 rows when they are worth <= 512
 * MFLOP, a multiple of 8 rows and at least 8; rows worth ~64K elements
 * for the ROWS and REDUCE shapes; a convolution's units worth ~64 MFLOP,
 * but a GEMM's (each chunk gathers its image once) when those are worth
 * at most 512 MFLOP, unless CONV2D has fewer than DV_CONV_SHARED_GEMMS
 * GEMMs (images times groups) to share out; a pooling's planes worth ~1M window taps.
 * Always >= 1.
 */
u64 dv_op_chunk_units(const struct davinci_task *task, const void *params)
{
	u64 per_row, rows, seg, big;

	switch (dv_op_is_compute(task->opcode) ?
		dv_opcodes[task->opcode].shape : DV_SHAPE_NONE) {
	case DV_SHAPE_MATMUL:
		per_row = 2ULL * (task->n ? task->n : 1) *
			  (task->k ? task->k : 1);
		rows = DV_OP_MM_CHUNK_FLOP / per_row;
		if (rows < DV_OP_MM_CHUNK_MIN_ROWS)
			rows = DV_OP_MM_CHUNK_MAX_FLOP / per_row <
			       DV_OP_MM_CHUNK_MIN_ROWS ?
			       DV_OP_MM_CHUNK_MAX_FLOP / per_row :
			       DV_OP_MM_CHUNK_MIN_ROWS;
		rows -= rows % DV_OP_MM_CHUNK_ROWS;
		return rows ? rows : DV_OP_MM_CHUNK_ROWS;
	case DV_SHAPE_CONV:
		if (!dv_conv_rows(task->opcode, params, &seg, &per_row))
			return 1;
		rows = DV_OP_MM_CHUNK_FLOP / per_row;
		big = DV_OP_MM_CHUNK_MAX_FLOP / per_row;
		if (rows < seg && (task->opcode != DAVINCI_OP_CONV2D ||
				   dv_conv_gemms(params) >= DV_CONV_SHARED_GEMMS))
			rows = big < seg ? big : seg;
		return rows ? rows : 1;
	case DV_SHAPE_POOL:
	case DV_SHAPE_POOL_INDEX:
		if (!dv_pooling_planes(task->opcode, params, &per_row))
			return 1;
		rows = DV_OP_POOL_CHUNK_TERMS / per_row;
		return rows ? rows : 1;
	case DV_SHAPE_ROWS:
	case DV_SHAPE_REDUCE:
	case DV_SHAPE_TRIANGLE:
	case DV_SHAPE_SORT:
		per_row = task->n ? task->n : 1;
		rows = DV_OP_ROW_CHUNK_ELEMS / per_row;
		return rows ? rows : 1;
	case DV_SHAPE_CHANNELS:
		/* a unit is a channel: N runs of HW elements */
		per_row = (u64)task->m * task->k;
		rows = DV_OP_ROW_CHUNK_ELEMS / (per_row ? per_row : 1);
		return rows ? rows : 1;
	case DV_SHAPE_AIPP:
		/* a unit is a row of each of an image's three channels */
		per_row = params ? 3ULL *
			  ((const struct davinci_params_aipp *)params)->width : 1;
		rows = DV_OP_ROW_CHUNK_ELEMS / per_row;
		return rows ? rows : 1;
	case DV_SHAPE_INDEX:
		/* a unit moves k elements (a row), or count (a column) */
		per_row = task->opcode == DAVINCI_OP_INDEX_ADD ? task->count :
			  task->k;
		rows = DV_OP_ROW_CHUNK_ELEMS / (per_row ? per_row : 1);
		return rows ? rows : 1;
	default:
		return DV_OP_EW_CHUNK;
	}
}

/**
 * dv_op_reads_data() - the task's operands' contents must pass
 *	dv_op_check_data() before it runs
 * @task: a validated task
 *
 * Return: true for the indexed ops (DOC: indexed ops).
 */
bool dv_op_reads_data(const struct davinci_task *task)
{
	return dv_op_is_compute(task->opcode) &&
	       (dv_opcodes[task->opcode].shape == DV_SHAPE_INDEX ||
		dv_opcodes[task->opcode].shape == DV_SHAPE_AIPP);
}

/**
 * dv_op_check_data() - check the data an op addresses memory with
 * @task: a task that passed dv_op_extent(), for which dv_op_reads_data()
 * @params: the checked copy of its parameter block (NULL: none)
 * @src1: host address of its src1 (the indices, AIPP's config)
 *
 * Integer code, no FPU. Every one of the @m x @count indices lies in
 * [0, @n): the rows of the table each batch indexes; AIPP's config is one
 * dv_aipp_check_config() takes.
 *
 * Return: 0, or -EINVAL for an index out of range or a bad config.
 */
int dv_op_check_data(const struct davinci_task *task, const void *params,
		     const void *src1)
{
	u64 i, total = (u64)task->m * task->count;
	u64 n = task->n;

	if (!dv_op_reads_data(task))
		return 0;
	if (dv_opcodes[task->opcode].shape == DV_SHAPE_AIPP) {
		struct davinci_aipp_config cfg;
		struct dv_aipp_geom g;

		if (!params)
			return -EINVAL;
		memcpy(&cfg, src1, sizeof(cfg));
		return dv_aipp_check_config(params, &cfg, &g);
	}
	if (dv_op_src1_dtype(task) == DAVINCI_DTYPE_INT32) {
		const s32 *idx = src1;

		for (i = 0; i < total; i++)
			if (idx[i] < 0 || (u64)idx[i] >= n)
				return -EINVAL;
		return 0;
	}
	for (i = 0; i < total; i++) {
		const s64 *idx = src1;

		if (idx[i] < 0 || (u64)idx[i] >= n)
			return -EINVAL;
	}
	return 0;
}

/**
 * dv_op_run() - run units [@begin, @end) of a compute task
 * @task: a task that passed dv_op_validate() and dv_op_extent()
 * @params: the checked copy of its parameter block (NULL: none)
 * @dst: host address of the output operand
 * @src0: host address of the first input
 * @src1: host address of the second input (unused ops: ignored)
 * @src2: host address of the third operand (NULL for an op without one)
 * @begin: first unit
 * @end: one past the last unit; clamped to dv_op_units()
 *
 * Call between os_fpu_begin() and os_fpu_end(). Running [0, units) in
 * any sequence of chunks gives the same bytes as one call.
 */
void dv_op_run(const struct davinci_task *task, const void *params,
	       void *dst, const void *src0, const void *src1, void *src2,
	       u64 begin, u64 end)
{
	u64 units = dv_op_units(task, params);

	if (end > units)
		end = units;
	if (begin >= end)	/* also every opcode that is not a compute op */
		return;
	if (task->flags & DAVINCI_TASK_F_STRIDED) {
		dv_op_run_strided(task, params, dst, src0, src1, begin, end);
		return;
	}
	/* a unary op's kernel reads src0 twice, never a stray src1 */
	if (dv_opcodes[task->opcode].shape == DV_SHAPE_UNARY)
		src1 = src0;
	dv_opcodes[task->opcode].kernel(task, params, dst, src0, src1, src2,
					begin, end);
}
