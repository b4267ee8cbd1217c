// SPDX-License-Identifier: GPL-2.0
/*
 * sched.c - the AI-core workers: priority run queue, in-order execution
 * per stream, chunked execution with cancellation and watchdog checks.
 *
 * A worker takes the highest priority ready stream (FIFO within a
 * priority), runs its first task, completes it and puts the stream back
 * at the tail of its run queue while it has work. dev->lock is dropped
 * while a chunk runs; the task's buffers are referenced meanwhile.
 */
#include "dv_internal.h"

/* What a running task touches, resolved under dev->lock. */
struct dv_exec {
	struct dv_buffer *buf[3];
	u8 *ptr[3];		/* dst, src0, src1 */
	u64 len[3];
};

static struct dv_stream *dv_sched_pick(struct dv_device *dev)
{
	u32 p;

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
static int dv_exec_operand(struct dv_context *ctx, struct dv_exec *x, int i,
			   u64 addr, u64 len)
{
	struct dv_buffer *b;

	x->len[i] = len;
	if (!len)
		return 0;
	b = dv_buffer_lookup(ctx, addr, len);
	if (!b)
		return -EFAULT;
	x->buf[i] = b;
	x->ptr[i] = (u8 *)dv_buffer_kaddr(b) + (addr - dv_buffer_dev_addr(b));
	return 0;
}

/* Returns a DAVINCI_STATUS_*; on OK the operands are referenced. */
static u32 dv_exec_prepare(struct dv_context *ctx, const struct davinci_task *d,
			   struct dv_exec *x)
{
	struct dv_op_extent ext = { 0, 0, 0 };
	int i, ret = 0;

	memset(x, 0, sizeof(*x));
	switch (d->opcode) {
	case DAVINCI_OP_NOP:
		break;
	case DAVINCI_OP_MEMCPY:
		ext.dst = d->count;
		ext.src0 = d->count;
		break;
	case DAVINCI_OP_MEMSET:
		ext.dst = d->count;
		break;
	default:
		if (dv_op_extent(d, &ext))
			return DAVINCI_STATUS_INVALID_TASK;
		break;
	}
	ret |= dv_exec_operand(ctx, x, 0, d->dst, ext.dst);
	ret |= dv_exec_operand(ctx, x, 1, d->src0, ext.src0);
	ret |= dv_exec_operand(ctx, x, 2, d->src1, ext.src1);
	if (ret)
		return DAVINCI_STATUS_INVALID_ADDRESS;
	for (i = 0; i < 3; i++)
		if (x->buf[i])
			dv_buffer_get(x->buf[i]);
	return DAVINCI_STATUS_OK;
}

/* Between chunks: cancelled, device lost, watchdog. */
static u32 dv_exec_check(struct dv_device *dev, struct dv_task *t)
{
	u64 timeout = (u64)dev->cfg.task_timeout_ms * 1000000ULL;
	u32 st = DAVINCI_STATUS_OK;

	os_mutex_lock(dev->lock);
	if (t->cancel)
		st = DAVINCI_STATUS_CANCELLED;
	else if (dev->lost)
		st = DAVINCI_STATUS_DEVICE_LOST;
	os_mutex_unlock(dev->lock);
	if (st == DAVINCI_STATUS_OK && timeout &&
	    os_now_ns() - t->start_ns >= timeout)
		st = DAVINCI_STATUS_TIMEOUT;
	return st;
}

static u32 dv_exec_nop(struct dv_device *dev, struct dv_task *t)
{
	u64 end = t->start_ns + t->desc.count * 1000ULL;
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

static u32 dv_exec_memcpy(struct dv_device *dev, struct dv_task *t,
			  struct dv_exec *x)
{
	u8 *dst = x->ptr[0];
	const u8 *src = x->ptr[1];
	u64 count = t->desc.count, done = 0;
	bool backward = dst > src && dst < src + count;
	u32 st = DAVINCI_STATUS_OK;

	while (done < count) {
		u64 n = count - done;
		u64 at;

		if (n > DV_COPY_CHUNK)
			n = DV_COPY_CHUNK;
		at = backward ? count - done - n : done;
		memmove(dst + at, src + at, n);
		done += n;
		os_yield();
		st = dv_exec_check(dev, t);
		if (st)
			break;
	}
	return st;
}

static u32 dv_exec_memset(struct dv_device *dev, struct dv_task *t,
			  struct dv_exec *x)
{
	u64 count = t->desc.count, done = 0;
	u32 st = DAVINCI_STATUS_OK;

	while (done < count) {
		u64 n = count - done;

		if (n > DV_COPY_CHUNK)
			n = DV_COPY_CHUNK;
		memset(x->ptr[0] + done, (int)t->desc.imm, n);
		done += n;
		os_yield();
		st = dv_exec_check(dev, t);
		if (st)
			break;
	}
	return st;
}

static u32 dv_exec_compute(struct dv_device *dev, struct dv_task *t,
			   struct dv_exec *x)
{
	u64 units = dv_op_units(&t->desc);
	u64 chunk = dv_op_chunk_units(&t->desc);
	u64 begin = 0;
	u32 st = DAVINCI_STATUS_OK;

	if (!chunk)
		chunk = units;
	while (begin < units) {
		u64 end = units - begin > chunk ? begin + chunk : units;

		os_fpu_begin();
		dv_op_run(&t->desc, x->ptr[0], x->ptr[1], x->ptr[2], begin,
			  end);
		os_fpu_end();
		begin = end;
		os_yield();
		st = dv_exec_check(dev, t);
		if (st)
			break;
	}
	return st;
}

/* Run a task that touches memory or time, with dev->lock held on entry. */
static void dv_exec_task(struct dv_device *dev, struct dv_stream *s,
			 struct dv_task *t)
{
	struct dv_exec x;
	u32 st;
	int i;

	t->start_ns = os_now_ns();
	st = dv_exec_prepare(s->ctx, &t->desc, &x);
	if (st) {
		dv_stream_complete(s, t, st, t->start_ns);
		return;
	}
	t->running = true;
	os_mutex_unlock(dev->lock);
	switch (t->desc.opcode) {
	case DAVINCI_OP_NOP:
		st = dv_exec_nop(dev, t);
		break;
	case DAVINCI_OP_MEMCPY:
		st = dv_exec_memcpy(dev, t, &x);
		break;
	case DAVINCI_OP_MEMSET:
		st = dv_exec_memset(dev, t, &x);
		break;
	default:
		st = dv_exec_compute(dev, t, &x);
		break;
	}
	os_mutex_lock(dev->lock);
	t->running = false;
	dev->busy_ns += os_now_ns() - t->start_ns;
	for (i = 0; i < 3; i++)
		if (x.buf[i])
			dv_buffer_put(x.buf[i]);
	dv_stream_complete(s, t, st, t->start_ns);
}

/* Handle the first task of @s (dev->lock held). */
static void dv_sched_run_head(struct dv_device *dev, struct dv_stream *s)
{
	struct dv_context *ctx = s->ctx;
	struct dv_event *ev;
	struct dv_task *t;
	u64 now;

	if (dv_list_empty(&s->tasks))
		return;
	t = DV_CONTAINER_OF(s->tasks.next, struct dv_task, node);
	if (t->cancel) {
		dv_stream_complete(s, t, DAVINCI_STATUS_CANCELLED, t->start_ns);
		return;
	}
	if (dev->lost) {
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
