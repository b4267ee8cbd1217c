// SPDX-License-Identifier: GPL-2.0
/*
 * task.c - tasks: a task's life after the doorbell copied its descriptor
 * out of the ring: structural validation against the opcode table
 * (opcodes.c, generated from ops.toml),
 * resolving (and referencing) its operands, running it on an AI core,
 * completing it (completion entry, notifications, result history) and
 * releasing it. The doorbell is in stream.c, the choice of the next task
 * to run in sched.c.
 */
#include "dv_internal.h"

/* A field the opcode does not use is non-zero. */
static bool dv_task_unused_set(const struct davinci_task *t, u32 uses)
{
	return (!(uses & DV_U_DST) && t->dst) ||
	       (!(uses & DV_U_SRC0) && t->src0) ||
	       (!(uses & DV_U_SRC1) && t->src1) ||
	       (!(uses & DV_U_SRC2) && t->src2) ||
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
 * exactly when the opcode uses an event, count and imm within bounds, and
 * the parameter block's address, size and version set exactly when the
 * opcode takes one, its size and version the opcode's (those of struct
 * davinci_params_strided for a DAVINCI_TASK_F_STRIDED task).
 *
 * Return: 0 or -EINVAL.
 */
int dv_task_validate(const struct davinci_task *t)
{
	const struct dv_opcode_info *op;
	u64 reserved = t->pad0;
	u32 i, size, version;

	/* Word by word: every task passes here. */
	for (i = 0; i < DV_ARRAY_SIZE(t->reserved); i++)
		reserved |= t->reserved[i];
	if (reserved)
		return -EINVAL;
	if (t->opcode >= DAVINCI_OP_COUNT || t->dtype >= DAVINCI_DTYPE_COUNT ||
	    t->dst_dtype >= DAVINCI_DTYPE_COUNT)
		return -EINVAL;
	op = &dv_opcodes[t->opcode];
	if (!(op->dtypes & (1U << t->dtype)))
		return -EINVAL;
	if (t->dst_dtype && !(op->dst_dtypes & (1U << t->dst_dtype)))
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
	if (t->flags & DAVINCI_TASK_F_STRIDED) {
		/* its operands' block, in place of the op's own (it has none) */
		size = sizeof(struct davinci_params_strided);
		version = DAVINCI_PARAMS_STRIDED_VERSION;
	} else {
		size = op->params_size;
		version = op->params_version;
	}
	if (!size)
		return t->params || t->params_size || t->params_version ?
		       -EINVAL : 0;
	if (!t->params || t->params_size != size ||
	    t->params_version != version)
		return -EINVAL;
	return 0;
}

/*
 * Copy @t's parameter block out of the context's memory into @t->params,
 * once, at take-in: the op is checked against and run from this copy.
 */
static u32 dv_task_copy_params(struct dv_context *ctx, struct dv_task *t)
{
	const struct davinci_task *d = &t->desc;
	struct dv_buffer *b;

	b = dv_buffer_lookup(ctx, d->params, d->params_size);
	if (!b)
		return DAVINCI_STATUS_INVALID_ADDRESS;
	memcpy(t->params, (const u8 *)dv_buffer_kaddr(b) +
	       (d->params - dv_buffer_dev_addr(b)), d->params_size);
	return dv_op_check_params(d, t->params) ?
	       DAVINCI_STATUS_INVALID_TASK : 0;
}

/* The copy of @t's parameter block, NULL for an op without one. */
static const void *dv_task_params(const struct dv_task *t)
{
	return t->desc.params_size ? t->params : NULL;
}

/* Resolve one operand; 0 bytes need no memory. */
static int dv_task_operand(struct dv_context *ctx, struct dv_task *t, int i,
			   u64 addr, u64 len)
{
	t->len[i] = len;
	if (!len)
		return 0;
	t->buf[i] = dv_buffer_lookup(ctx, addr, len);
	return t->buf[i] ? 0 : -EFAULT;
}

/**
 * dv_task_resolve() - find and reference the buffers a task touches
 * @ctx: the submitting context (dev->lock held)
 * @t: the task, just taken in at the doorbell
 *
 * Done at the doorbell, so a buffer the host frees while the task is
 * queued stays allocated until the task is freed. A task whose operands
 * do not lie inside live allocations of @ctx, or a compute task whose
 * operands are not aligned to their element size, gets an operand_status
 * and fails when it reaches the head of its stream, touching nothing.
 */
void dv_task_resolve(struct dv_context *ctx, struct dv_task *t)
{
	const struct davinci_task *d = &t->desc;
	struct dv_op_extent ext = { 0, 0, 0, 0 };
	int i, ret = 0;

	os_mutex_assert_held(ctx->dev->lock);
	switch (dv_opcodes[d->opcode].shape) {
	case DV_SHAPE_NONE:
		return;
	case DV_SHAPE_COPY:
		ext.dst = d->count;
		ext.src0 = d->count;
		break;
	case DV_SHAPE_FILL:
		ext.dst = d->count;
		break;
	default:
		if (d->params_size) {
			t->operand_status = dv_task_copy_params(ctx, t);
			if (t->operand_status)
				return;
		}
		if (dv_op_extent(d, dv_task_params(t), &ext)) {
			t->operand_status = DAVINCI_STATUS_INVALID_TASK;
			return;
		}
		if (dv_op_misaligned(d)) {
			t->operand_status = DAVINCI_STATUS_MISALIGNED;
			return;
		}
		break;
	}
	ret |= dv_task_operand(ctx, t, 0, d->dst, ext.dst);
	ret |= dv_task_operand(ctx, t, 1, d->src0, ext.src0);
	ret |= dv_task_operand(ctx, t, 2, d->src1, ext.src1);
	ret |= dv_task_operand(ctx, t, 3, d->src2, ext.src2);
	if (ret) {
		for (i = 0; i < DV_TASK_OPERANDS; i++)
			t->buf[i] = NULL;
		t->operand_status = DAVINCI_STATUS_INVALID_ADDRESS;
		return;
	}
	for (i = 0; i < DV_TASK_OPERANDS; i++)
		if (t->buf[i])
			dv_buffer_get(t->buf[i]);
}

/**
 * dv_task_release() - drop the references dv_task_resolve() took
 * @dev: the device (dev->lock held)
 * @t: the task being freed
 */
void dv_task_release(struct dv_device *dev, struct dv_task *t)
{
	int i;

	os_mutex_assert_held(dev->lock);
	for (i = 0; i < DV_TASK_OPERANDS; i++) {
		if (t->buf[i])
			dv_buffer_put(t->buf[i]);
		t->buf[i] = NULL;
	}
}

/* Where operand @i of @t starts in memory; NULL when it touches none. */
static u8 *dv_task_ptr(struct dv_task *t, int i)
{
	const u64 addr[DV_TASK_OPERANDS] = { t->desc.dst, t->desc.src0,
					      t->desc.src1, t->desc.src2 };
	struct dv_buffer *b = t->buf[i];

	if (!b)
		return NULL;
	return (u8 *)dv_buffer_kaddr(b) + (addr[i] - dv_buffer_dev_addr(b));
}

/*
 * Between chunks: cancelled, device lost (or reset), watchdog. The flags
 * are set under dev->lock and only ever go from false to true while the
 * task runs, so a load without the lock sees them at the next chunk at
 * the latest: no chunk takes the device lock.
 */
static u32 dv_exec_check(struct dv_device *dev, struct dv_task *t)
{
	u32 ms = t->timeout_ms ? t->timeout_ms : dev->cfg.task_timeout_ms;
	u64 timeout = (u64)ms * 1000000ULL;
	u32 st = DAVINCI_STATUS_OK;

	if (__atomic_load_n(&t->cancel, __ATOMIC_RELAXED))
		st = DAVINCI_STATUS_CANCELLED;
	else if (__atomic_load_n(&t->ctx->lost, __ATOMIC_RELAXED) ||
		 __atomic_load_n(&dev->lost, __ATOMIC_RELAXED))
		st = DAVINCI_STATUS_DEVICE_LOST;
	if (st == DAVINCI_STATUS_OK && timeout &&
	    os_now_ns() - t->start_ns >= timeout)
		st = DAVINCI_STATUS_TIMEOUT;
	return st;
}

static u32 dv_exec_nop(struct dv_device *dev, struct dv_task *t)
{
	u64 us = t->desc.count + t->desc.count * t->throttle_pct / 100;
	u64 end = t->start_ns + us * 1000ULL;
	u32 st = DAVINCI_STATUS_OK;

	while (os_now_ns() < end) {
		u64 slice = os_now_ns() + DV_NOP_SLICE_NS;

		while (os_now_ns() < slice && os_now_ns() < end)
			os_yield();
		st = dv_exec_check(dev, t);
		if (st)
			break;
	}
	return st;
}

/*
 * An injected hang: no progress, only the checks, until the watchdog (or
 * a cancel, a reset or device loss) ends it.
 */
static u32 dv_exec_hang(struct dv_device *dev, struct dv_task *t)
{
	u32 st;

	for (;;) {
		u64 slice = os_now_ns() + DV_NOP_SLICE_NS;

		while (os_now_ns() < slice)
			os_yield();
		st = dv_exec_check(dev, t);
		if (st)
			return st;
	}
}

/* Thermal throttle: stall @pct percent of the time a chunk took. */
static void dv_exec_throttle(struct dv_task *t, u64 chunk_start)
{
	u64 now = os_now_ns();
	u64 until = now + (now - chunk_start) * t->throttle_pct / 100;

	while (os_now_ns() < until)
		os_yield();
}

/*
 * Run units [0, @units) of @t in chunks of @chunk units, checking for
 * cancellation, device loss and the watchdog between chunks.
 */
static u32 dv_exec_chunks(struct dv_device *dev, struct dv_task *t,
			  u64 units, u64 chunk,
			  void (*run)(struct dv_task *t, u64 begin, u64 end))
{
	u64 begin = 0;
	u32 st = DAVINCI_STATUS_OK;

	if (!chunk)
		chunk = units;
	while (begin < units) {
		u64 end = units - begin > chunk ? begin + chunk : units;
		u64 t0 = os_now_ns();

		run(t, begin, end);
		begin = end;
		if (t->throttle_pct)
			dv_exec_throttle(t, t0);
		os_yield();
		st = dv_exec_check(dev, t);
		if (st)
			break;
	}
	return st;
}

/* Bytes [begin, end) of a MEMCPY; from the end when dst overlaps above. */
static void dv_chunk_memcpy(struct dv_task *t, u64 begin, u64 end)
{
	u8 *dst = dv_task_ptr(t, 0);
	const u8 *src = dv_task_ptr(t, 1);
	u64 count = t->desc.count;
	u64 at = dst > src && dst < src + count ? count - end : begin;

	memmove(dst + at, src + at, end - begin);
}

static void dv_chunk_memset(struct dv_task *t, u64 begin, u64 end)
{
	memset(dv_task_ptr(t, 0) + begin, (int)t->desc.imm, end - begin);
}

static void dv_chunk_compute(struct dv_task *t, u64 begin, u64 end)
{
	os_fpu_begin();
	dv_op_run(&t->desc, dv_task_params(t), dv_task_ptr(t, 0),
		  dv_task_ptr(t, 1), dv_task_ptr(t, 2), dv_task_ptr(t, 3), begin,
		  end);
	os_fpu_end();
}

/*
 * The DVPP engine's coders (JPEG and PNG decode, JPEG encode): one piece
 * of work, no FPU section, the coder's scratch allocated and freed inside
 * (no lock is held here). A coder's error fails the task; its errno is
 * in the result record.
 */
static u32 dv_exec_coder(struct dv_device *dev, struct dv_task *t)
{
	int (*run)(const struct davinci_task *task, const void *params,
		   void *dst, const void *src, void *result);
	u32 st = dv_exec_check(dev, t);

	if (st)
		return st;
	switch (t->desc.opcode) {
	case DAVINCI_OP_PNGD_DECODE:
		run = dv_dvpp_pngd;
		break;
	case DAVINCI_OP_JPEGE_ENCODE:
		run = dv_dvpp_jpege;
		break;
	default:
		run = dv_dvpp_jpegd;
		break;
	}
	if (run(&t->desc, dv_task_params(t), dv_task_ptr(t, 0),
		dv_task_ptr(t, 1), dv_task_ptr(t, 2)))
		return DAVINCI_STATUS_INVALID_TASK;
	if (t->throttle_pct)
		dv_exec_throttle(t, t->start_ns);
	return dv_exec_check(dev, t);
}

/*
 * The DVPP engine's VPC tasks: one piece of work, no FPU section, a
 * resize's coordinate tables allocated and freed inside (no lock is held
 * here). Their only failure is that allocation, before anything is
 * written.
 */
static u32 dv_exec_vpc(struct dv_device *dev, struct dv_task *t)
{
	u32 st = dv_exec_check(dev, t);

	if (st)
		return st;
	if (dv_vpc_run(&t->desc, dv_task_params(t), dv_task_ptr(t, 0),
		       dv_task_ptr(t, 1)))
		return DAVINCI_STATUS_INVALID_TASK;
	if (t->throttle_pct)
		dv_exec_throttle(t, t->start_ns);
	return dv_exec_check(dev, t);
}

/*
 * Claim chunks of a shared compute task and run them until none is left.
 * The owner also checks for cancellation, device loss and the watchdog,
 * and on a failure lets nobody claim more.
 */
static u32 dv_exec_claimed(struct dv_device *dev, struct dv_task *t,
			   bool owner)
{
	u32 st = DAVINCI_STATUS_OK;

	for (;;) {
		u64 begin = __atomic_fetch_add(&t->next_unit, t->chunk,
					       __ATOMIC_RELAXED);

		if (begin >= t->units)
			return st;
		dv_chunk_compute(t, begin, t->units - begin > t->chunk ?
				 begin + t->chunk : t->units);
		os_yield();
		if (!owner)
			continue;
		st = dv_exec_check(dev, t);
		if (st) {
			__atomic_store_n(&t->next_unit, t->units,
					 __ATOMIC_RELAXED);
			return st;
		}
	}
}

/*
 * A compute task of several chunks, without throttle or hang, is shared
 * out: idle AI cores run its chunks beside the owner (one large matmul
 * uses every free core). Chunks write disjoint outputs with the same
 * kernels, so the result does not depend on who ran which.
 */
static u32 dv_exec_shared(struct dv_device *dev, struct dv_task *t)
{
	u32 idle, st;

	os_mutex_assert_held(dev->lock);
	t->units = dv_op_units(&t->desc, dv_task_params(t));
	t->chunk = dv_op_chunk_units(&t->desc, dv_task_params(t));
	t->next_unit = 0;
	dv_list_add_tail(&t->help_node, &dev->helpable);
	idle = dev->cfg.aicores - dev->running;
	while (idle-- && idle < t->units / t->chunk)
		os_waitq_wake_one(dev->work_wq);
	os_mutex_unlock(dev->lock);
	st = dv_exec_claimed(dev, t, true);
	os_mutex_lock(dev->lock);
	dv_list_del(&t->help_node);
	while (t->helpers)
		os_waitq_wait(dev->wq, dev->lock, OS_NO_DEADLINE);
	os_mutex_unlock(dev->lock);
	return st;
}

/* A compute task of more than one chunk that runs at full speed. */
static bool dv_task_shareable(const struct dv_task *t)
{
	u16 op = t->desc.opcode;

	return !t->hang && !t->throttle_pct && op != DAVINCI_OP_NOP &&
	       op != DAVINCI_OP_MEMCPY && op != DAVINCI_OP_MEMSET &&
	       dv_op_units(&t->desc, dv_task_params(t)) >
	       dv_op_chunk_units(&t->desc, dv_task_params(t));
}

/**
 * dv_task_help() - run chunks of a shared compute task on an idle AI core
 * @dev: the device (dev->lock held; dropped while the chunks run)
 *
 * Return: false when no task has chunks left to take or no AI core is
 * free.
 */
bool dv_task_help(struct dv_device *dev)
{
	struct dv_task *t = NULL;
	struct dv_list *pos;
	u64 start_ns, end_ns;
	u16 slot;

	os_mutex_assert_held(dev->lock);
	if (dev->running >= dev->cfg.aicores)
		return false;
	for (pos = dev->helpable.next; pos != &dev->helpable && !t;
	     pos = pos->next) {
		t = DV_CONTAINER_OF(pos, struct dv_task, help_node);
		if (__atomic_load_n(&t->next_unit, __ATOMIC_RELAXED) >=
		    t->units)
			t = NULL;	/* every chunk is taken already */
	}
	if (!t)
		return false;
	t->helpers++;
	dev->running++;
	slot = dv_trace_take_slot(dev);
	os_mutex_unlock(dev->lock);
	start_ns = os_now_ns();
	dv_exec_claimed(dev, t, false);
	end_ns = os_now_ns();
	os_mutex_lock(dev->lock);
	/* this core's share of the task counts in the device's utilization */
	dev->busy_ns += end_ns - start_ns;
	dv_trace_task_help(dev, t, slot, start_ns, end_ns);
	dev->running--;
	if (!--t->helpers)
		os_waitq_wake_all(dev->wq);	/* its owner waits */
	return true;
}

/**
 * dv_exec_alone() - run a task on this AI core alone
 * @dev: the device (dev->lock held; dropped at once, the chunks run
 *	without it, and it returns without it)
 * @t: the task dv_task_run() starts, not shared out
 *
 * Not static only so that tests/core can check that it asserts the lock.
 *
 * Return: DAVINCI_STATUS_* of running it.
 */
u32 dv_exec_alone(struct dv_device *dev, struct dv_task *t)
{
	u32 st;

	os_mutex_assert_held(dev->lock);
	os_mutex_unlock(dev->lock);
	switch (t->hang ? DAVINCI_OP_COUNT : t->desc.opcode) {
	case DAVINCI_OP_COUNT:
		st = dv_exec_hang(dev, t);
		break;
	case DAVINCI_OP_NOP:
		st = dv_exec_nop(dev, t);
		break;
	case DAVINCI_OP_MEMCPY:
		st = dv_exec_chunks(dev, t, t->desc.count, DV_COPY_CHUNK,
				    dv_chunk_memcpy);
		break;
	case DAVINCI_OP_MEMSET:
		st = dv_exec_chunks(dev, t, t->desc.count, DV_COPY_CHUNK,
				    dv_chunk_memset);
		break;
	case DAVINCI_OP_JPEGD_DECODE:
	case DAVINCI_OP_PNGD_DECODE:
	case DAVINCI_OP_JPEGE_ENCODE:
		st = dv_exec_coder(dev, t);
		break;
	case DAVINCI_OP_VPC_RESIZE:
	case DAVINCI_OP_VPC_CROP:
	case DAVINCI_OP_VPC_CONVERT_COLOR:
		st = dv_exec_vpc(dev, t);
		break;
	default:
		st = dv_exec_chunks(dev, t,
				    dv_op_units(&t->desc, dv_task_params(t)),
				    dv_op_chunk_units(&t->desc,
						      dv_task_params(t)),
				    dv_chunk_compute);
		break;
	}
	return st;
}

/*
 * The contents an indexed op addresses memory with (dv_op_check_data()),
 * checked as it starts, without dev->lock (a scan of its indices), before
 * a chunk runs or is shared out: DAVINCI_STATUS_INVALID_TASK when one is
 * out of range. dev->lock is held on entry and on return.
 */
static u32 dv_task_check_data(struct dv_device *dev, struct dv_task *t)
{
	int bad;

	os_mutex_assert_held(dev->lock);
	if (t->hang || !dv_op_reads_data(&t->desc))
		return DAVINCI_STATUS_OK;
	os_mutex_unlock(dev->lock);
	bad = dv_op_check_data(&t->desc, dv_task_params(t),
			       dv_task_ptr(t, 2));
	os_mutex_lock(dev->lock);
	return bad ? DAVINCI_STATUS_INVALID_TASK : DAVINCI_STATUS_OK;
}

/**
 * dv_task_run() - run a task that touches memory or time
 * @dev: the device (dev->lock held; released while the task runs)
 * @s: its stream, held by this worker
 * @t: the head task of @s
 *
 * Fails it at once with an injected ECC error; otherwise runs it in chunks
 * without dev->lock, then completes it. A NOP without a duration has
 * nothing to run: it completes without dropping the lock, as it starts
 * (one clock read for both). Neither has a TASK_START record: nobody
 * could see them running. A task whose operands failed to resolve never
 * gets here (dv_sched_run_head() fails it).
 */
void dv_task_run(struct dv_device *dev, struct dv_stream *s,
		 struct dv_task *t)
{
	u32 st;
	u64 start;

	os_mutex_assert_held(dev->lock);
	t->start_ns = start = os_now_ns();
	t->ctx = s->ctx;
	t->stream_id = s->id;
	/* the DVPP engine's tasks run on no AI core */
	if (!dv_shape_is_dvpp(dv_opcodes[t->desc.opcode].shape))
		dv_trace_take_core(dev, t);
	st = dv_mgmt_task_start(dev, t);
	if (st || (!t->hang && t->desc.opcode == DAVINCI_OP_NOP &&
		   !t->desc.count)) {
		dv_task_complete_at(s, t, st, start, start);
		return;
	}
	dv_trace_task_start(s, t);
	t->running = true;
	st = dv_task_check_data(dev, t);
	if (st)
		os_mutex_unlock(dev->lock);
	else if (dv_task_shareable(t))
		st = dv_exec_shared(dev, t);
	else
		st = dv_exec_alone(dev, t);
	os_mutex_lock(dev->lock);
	t->running = false;
	if (t->hang)
		dv_mgmt_task_failed(dev, t, st);
	dev->busy_ns += dv_task_complete(s, t, st, start) - start;
}

/* Write the completion entry of @t, or count an overflow (dev->lock held). */
static void dv_stream_write_cq(struct dv_stream *s, struct dv_task *t,
			       u32 status, u64 start_ns, u64 end_ns)
{
	struct davinci_completion c;
	u32 head, used;
	u8 *slot;

	os_mutex_assert_held(s->ctx->dev->lock);
	if (t->quiet && (status == DAVINCI_STATUS_OK ||
			 status == DAVINCI_STATUS_CANCELLED ||
			 status == DAVINCI_STATUS_ABORTED))
		return;
	head = __atomic_load_n(&s->cq->head, __ATOMIC_ACQUIRE);
	used = s->cq_tail - head;
	if (used >= s->cq_entries) {
		s->cq->overflow++;
		return;
	}
	memset(&c, 0, sizeof(c));
	c.seq = t->seq;
	c.user_data = t->desc.user_data;
	c.start_ns = start_ns;
	c.end_ns = end_ns;
	c.status = status;
	c.opcode = t->desc.opcode;
	c.aicore = dv_trace_aicore(t);
	slot = (u8 *)s->cq + DAVINCI_RING_ENTRIES_OFFSET +
	       (size_t)(s->cq_tail & (s->cq_entries - 1)) * DV_CQ_ENTRY_SIZE;
	memcpy(slot, &c, sizeof(c));
	s->cq_tail++;
	__atomic_store_n(&s->cq->tail, s->cq_tail, __ATOMIC_RELEASE);
}

/**
 * dv_task_free() - unlink a task from its stream and free it
 * @s: the stream (dev->lock held)
 * @t: the task
 */
void dv_task_free(struct dv_stream *s, struct dv_task *t)
{
	os_mutex_assert_held(s->ctx->dev->lock);
	dv_task_release(s->ctx->dev, t);
	dv_list_del(&t->node);
	s->nqueued--;
	dv_stat_add(DV_STAT_TASKS, -1);
	dv_cache_free(s->ctx->dev->task_cache, t);
}

/**
 * dv_task_complete_at() - complete the head task of a stream
 * @s: the stream (dev->lock held)
 * @t: its first task
 * @status: DAVINCI_STATUS_*
 * @start_ns: when it started, 0 when it never ran
 * @end_ns: when it completed: @start_ns for a task that completes as it
 *	starts, which needs no second clock read
 *
 * Records the result, writes the completion entry, raises notifications,
 * updates the error state, frees @t and wakes waiters.
 */
void dv_task_complete_at(struct dv_stream *s, struct dv_task *t, u32 status,
			 u64 start_ns, u64 end_ns)
{
	struct dv_context *ctx = s->ctx;
	struct dv_task_result *h = &s->hist[t->seq % DV_TASK_HISTORY];
	bool failed;

	os_mutex_assert_held(s->ctx->dev->lock);
	dv_trace_task_complete(s, t, status, start_ns, end_ns);
	h->seq = t->seq;
	h->start_ns = start_ns;
	h->end_ns = end_ns;
	h->status = status;
	dv_stream_write_cq(s, t, status, start_ns, end_ns);
	s->completed_seq = t->seq;
	ctx->dev->mg.tasks_completed++;
	failed = status != DAVINCI_STATUS_OK &&
		 status != DAVINCI_STATUS_CANCELLED &&
		 status != DAVINCI_STATUS_ABORTED;
	/* a CONTINUE stream goes on: its failure is the task's alone */
	if (failed && !s->error_status &&
	    (!s->cont || status == DAVINCI_STATUS_DEVICE_LOST))
		s->error_status = status;
	if (failed && status != DAVINCI_STATUS_DEVICE_LOST)
		dv_notify(ctx, DAVINCI_NOTIFY_FAULT, s->id, status, t->seq,
			  t->desc.user_data);
	if (t->desc.flags & DAVINCI_TASK_F_NOTIFY)
		dv_notify(ctx, DAVINCI_NOTIFY_COMPLETION, s->id, status, t->seq,
			  t->desc.user_data);
	__atomic_store_n(&s->cq->status, s->error_status, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cq->seq, s->completed_seq, __ATOMIC_RELEASE);
	dv_task_free(s, t);
	os_waitq_wake_all(s->wq);
	/* DAVINCI_IOCTL_SYNC waits there for streams to go idle, no sooner */
	if (s->completed_seq >= s->submitted_seq)
		os_waitq_wake_all(ctx->dev->wq);
}

/**
 * dv_task_complete() - complete the head task of a stream now
 * @s: the stream (dev->lock held)
 * @t: its first task
 * @status: DAVINCI_STATUS_*
 * @start_ns: when it started, 0 when it never ran
 *
 * Return: the time it completed.
 */
u64 dv_task_complete(struct dv_stream *s, struct dv_task *t, u32 status,
		     u64 start_ns)
{
	u64 end_ns = os_now_ns();

	dv_task_complete_at(s, t, status, start_ns, end_ns);
	return end_ns;
}

/*
 * Short enough for the dispatcher to run itself: cheaper than waking a
 * worker, and never long enough to hold up its polling.
 */
#define DV_SHORT_BYTES		(64U << 10)
#define DV_SHORT_MACS		32768ULL

/**
 * dv_task_is_short() - may the dispatcher run @t itself?
 * @dev: the device (dev->lock held)
 * @t: the head task of a ready stream
 *
 * Events, notifications, failed resolutions, NOPs without a duration,
 * and copies and op kernels of at most DV_SHORT_BYTES of operands (a
 * matmul also at most DV_SHORT_MACS multiply-adds). Never while a fault
 * or a throttle is armed: those may stretch a task.
 *
 * Return: true when it is short.
 */
bool dv_task_is_short(struct dv_device *dev, const struct dv_task *t)
{
	const struct davinci_task *d = &t->desc;
	struct dv_op_extent ext;

	os_mutex_assert_held(dev->lock);
	if (t->operand_status)
		return true;
	if (dev->mg.hang_armed || dev->mg.ecc_armed || dev->mg.throttle_pct)
		return false;
	if (d->opcode == DAVINCI_OP_MATMUL &&
	    (u64)d->m * d->n * d->k > DV_SHORT_MACS)
		return false;
	/* a convolution's few bytes may still be many multiply-adds */
	if (dv_opcodes[d->opcode].shape == DV_SHAPE_CONV)
		return false;
	/* so may a pooling's, with a large window */
	if (dv_opcodes[d->opcode].shape == DV_SHAPE_POOL ||
	    dv_opcodes[d->opcode].shape == DV_SHAPE_POOL_INDEX)
		return false;
	/* the DVPP's tasks allocate, and their few bytes are much work */
	if (dv_shape_is_dvpp(dv_opcodes[d->opcode].shape))
		return false;
	switch (dv_opcodes[d->opcode].shape) {
	case DV_SHAPE_NONE:
		return d->opcode != DAVINCI_OP_NOP || !d->count;
	case DV_SHAPE_COPY:
	case DV_SHAPE_FILL:
		return d->count <= DV_SHORT_BYTES;
	default:
		return !dv_op_extent(d, dv_task_params(t), &ext) &&
		       ext.dst + ext.src0 + ext.src1 + ext.src2 <=
		       DV_SHORT_BYTES;
	}
}
