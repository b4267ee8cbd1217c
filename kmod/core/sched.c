// SPDX-License-Identifier: GPL-2.0
/*
 * sched.c - the AI-core workers: priority run queue, in-order execution
 * per stream, chunked execution with cancellation and watchdog checks.
 *
 * A worker takes the highest priority ready stream (FIFO within a
 * priority), runs its first task, completes it and puts the stream back
 * at the tail of its run queue while it has work. dev->lock is dropped
 * while a chunk runs; the task's buffers are referenced from the doorbell
 * until the task is freed.
 */
#include "dv_internal.h"

/* Take the first ready stream of the highest priority (dev->lock held). */
static struct dv_stream *dv_sched_pick(struct dv_device *dev)
{
	u32 p;

	os_mutex_assert_held(dev->lock);
	for (p = 0; p < DV_PRIORITIES; p++) {
		struct dv_stream *s;

		if (dv_list_empty(&dev->runq[p]))
			continue;
		s = DV_CONTAINER_OF(dev->runq[p].next, struct dv_stream,
				    run_node);
		dv_list_del(&s->run_node);
		s->queued = false;
		return s;
	}
	return NULL;
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
	struct dv_op_extent ext = { 0, 0, 0 };
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
		if (dv_op_extent(d, &ext)) {
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
	if (ret) {
		for (i = 0; i < 3; i++)
			t->buf[i] = NULL;
		t->operand_status = DAVINCI_STATUS_INVALID_ADDRESS;
		return;
	}
	for (i = 0; i < 3; i++)
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
	for (i = 0; i < 3; i++) {
		if (t->buf[i])
			dv_buffer_put(t->buf[i]);
		t->buf[i] = NULL;
	}
}

/* Where operand @i of @t starts in memory; NULL when it touches none. */
static u8 *dv_task_ptr(struct dv_task *t, int i)
{
	const u64 addr[3] = { t->desc.dst, t->desc.src0, t->desc.src1 };
	struct dv_buffer *b = t->buf[i];

	if (!b)
		return NULL;
	return (u8 *)dv_buffer_kaddr(b) + (addr[i] - dv_buffer_dev_addr(b));
}

/* Between chunks: cancelled, device lost (or reset), watchdog. */
static u32 dv_exec_check(struct dv_device *dev, struct dv_task *t)
{
	u32 ms = t->timeout_ms ? t->timeout_ms : dev->cfg.task_timeout_ms;
	u64 timeout = (u64)ms * 1000000ULL;
	u32 st = DAVINCI_STATUS_OK;

	os_mutex_lock(dev->lock);
	if (t->cancel)
		st = DAVINCI_STATUS_CANCELLED;
	else if (dv_ctx_lost(t->ctx))
		st = DAVINCI_STATUS_DEVICE_LOST;
	os_mutex_unlock(dev->lock);
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
	dv_op_run(&t->desc, dv_task_ptr(t, 0), dv_task_ptr(t, 1),
		  dv_task_ptr(t, 2), begin, end);
	os_fpu_end();
}

/* Run a task that touches memory or time, with dev->lock held on entry. */
static void dv_exec_task(struct dv_device *dev, struct dv_stream *s,
			 struct dv_task *t)
{
	u32 st;

	os_mutex_assert_held(dev->lock);
	t->start_ns = os_now_ns();
	t->ctx = s->ctx;
	if (t->operand_status) {
		dv_stream_complete(s, t, t->operand_status, t->start_ns);
		return;
	}
	st = dv_mgmt_task_start(dev, t);
	if (st) {
		dv_stream_complete(s, t, st, t->start_ns);
		return;
	}
	t->running = true;
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
	default:
		st = dv_exec_chunks(dev, t, dv_op_units(&t->desc),
				    dv_op_chunk_units(&t->desc),
				    dv_chunk_compute);
		break;
	}
	os_mutex_lock(dev->lock);
	t->running = false;
	dev->busy_ns += os_now_ns() - t->start_ns;
	if (t->hang)
		dv_mgmt_task_failed(dev, t, st);
	dv_stream_complete(s, t, st, t->start_ns);
}

/* Handle the first task of @s (dev->lock held). */
static void dv_sched_run_head(struct dv_device *dev, struct dv_stream *s)
{
	struct dv_context *ctx = s->ctx;
	struct dv_event *ev;
	struct dv_task *t;
	u64 now;

	os_mutex_assert_held(dev->lock);
	if (dv_list_empty(&s->tasks))
		return;
	t = DV_CONTAINER_OF(s->tasks.next, struct dv_task, node);
	if (t->cancel) {
		dv_stream_complete(s, t, DAVINCI_STATUS_CANCELLED, t->start_ns);
		return;
	}
	if (dv_ctx_lost(ctx)) {
		dv_stream_complete(s, t, DAVINCI_STATUS_DEVICE_LOST, 0);
		return;
	}
	if (s->error_status || t->seq <= s->abort_upto) {
		dv_stream_complete(s, t, DAVINCI_STATUS_ABORTED, 0);
		return;
	}
	switch (t->desc.opcode) {
	case DAVINCI_OP_EVENT_RECORD:
		ev = dv_event_find(ctx, t->desc.event_id);
		now = os_now_ns();
		if (!ev || !t->event_gen) {
			dv_stream_complete(s, t, DAVINCI_STATUS_INVALID_EVENT,
					   now);
			return;
		}
		if (t->event_gen > ev->completed)
			ev->completed = t->event_gen;
		ev->timestamp_ns = now;
		dv_stream_complete(s, t, DAVINCI_STATUS_OK, now);
		dv_event_completed(ctx, ev);
		return;
	case DAVINCI_OP_EVENT_WAIT:
		ev = dv_event_find(ctx, t->desc.event_id);
		if (!t->start_ns)
			t->start_ns = os_now_ns();
		if (!ev) {
			dv_stream_complete(s, t, DAVINCI_STATUS_INVALID_EVENT,
					   t->start_ns);
			return;
		}
		if (ev->completed >= t->event_gen) {
			dv_stream_complete(s, t, DAVINCI_STATUS_OK,
					   t->start_ns);
			return;
		}
		s->parked = true;
		return;
	case DAVINCI_OP_NOTIFY:
		now = os_now_ns();
		dv_notify(ctx, DAVINCI_NOTIFY_USER, s->id, DAVINCI_STATUS_OK,
			  t->seq, t->desc.user_data);
		dv_stream_complete(s, t, DAVINCI_STATUS_OK, now);
		return;
	default:
		dv_exec_task(dev, s, t);
		return;
	}
}

/**
 * dv_worker_main() - body of one AI-core worker thread
 * @arg: the device
 *
 * Return: 0 when the device stops.
 */
int dv_worker_main(void *arg)
{
	struct dv_device *dev = arg;

	os_mutex_lock(dev->lock);
	while (!dev->stop) {
		struct dv_stream *s = dv_sched_pick(dev);

		if (!s) {
			os_waitq_wait(dev->work_wq, dev->lock, OS_NO_DEADLINE);
			continue;
		}
		s->busy = true;
		dv_sched_run_head(dev, s);
		s->busy = false;
		dv_stream_make_ready(s);
		os_waitq_wake_all(dev->wq);
	}
	os_mutex_unlock(dev->lock);
	return 0;
}
