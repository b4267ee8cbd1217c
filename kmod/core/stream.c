// SPDX-License-Identifier: GPL-2.0
/*
 * stream.c - streams: rings, doorbell, sequence numbers, completions,
 * waits, queries, cancellation and reset.
 */
#include "dv_internal.h"

/**
 * dv_stream_find() - a live stream of @ctx by id (dev->lock held)
 * @ctx: the context
 * @id: stream id
 *
 * Return: the stream, or NULL when there is none or it is being destroyed.
 */
struct dv_stream *dv_stream_find(struct dv_context *ctx, u32 id)
{
	struct dv_stream *s = dv_id_find(&ctx->stream_ids, id);

	os_mutex_assert_held(ctx->dev->lock);
	return (s && !s->dead) ? s : NULL;
}

/**
 * dv_stream_requeue() - put a stream with work on the run queue
 * @s: the stream (dev->lock held)
 *
 * Wakes nobody: for callers that pick the next stream themselves.
 *
 * Return: true when it was queued now.
 */
bool dv_stream_requeue(struct dv_stream *s)
{
	struct dv_device *dev = s->ctx->dev;

	os_mutex_assert_held(dev->lock);
	if (s->queued || s->busy || s->parked || s->dead ||
	    dv_list_empty(&s->tasks))
		return false;
	dv_list_add_tail(&s->run_node, &dev->runq[s->priority]);
	s->queued = true;
	return true;
}

/**
 * dv_stream_make_ready() - put a stream with work on the run queue and
 * wake one idle worker for it
 * @s: the stream (dev->lock held)
 */
void dv_stream_make_ready(struct dv_stream *s)
{
	os_mutex_assert_held(s->ctx->dev->lock);
	if (dv_stream_requeue(s))
		os_waitq_wake_one(s->ctx->dev->work_wq);
}

/**
 * dv_stream_fault() - put a stream in its error state
 * @s: the stream (dev->lock held)
 * @status: DAVINCI_STATUS_* of the fault
 *
 * For faults of the stream itself, not of one task (a task's failure
 * goes through dv_task_complete()).
 */
void dv_stream_fault(struct dv_stream *s, u32 status)
{
	os_mutex_assert_held(s->ctx->dev->lock);
	if (!s->error_status)
		s->error_status = status;
	__atomic_store_n(&s->cq->status, s->error_status, __ATOMIC_RELEASE);
	dv_notify(s->ctx, DAVINCI_NOTIFY_FAULT, s->id, status,
		  s->submitted_seq, 0);
	os_waitq_wake_all(s->wq);
	os_waitq_wake_all(s->ctx->dev->wq);
}

/**
 * dv_stream_destroy_locked() - destroy a stream (dev->lock held)
 * @s: the stream
 *
 * Queued tasks are dropped; a running task is cancelled and waited for.
 * dev->lock is released while waiting.
 */
void dv_stream_destroy_locked(struct dv_stream *s)
{
	struct dv_context *ctx = s->ctx;
	struct dv_device *dev = ctx->dev;
	struct dv_list *pos, *tmp;

	os_mutex_assert_held(dev->lock);
	s->dead = true;
	if (s->polled)
		dv_list_del(&s->poll_node);
	dv_list_for_each_safe(pos, tmp, &s->tasks) {
		struct dv_task *t = DV_CONTAINER_OF(pos, struct dv_task, node);

		__atomic_store_n(&t->cancel, true, __ATOMIC_RELAXED);
	}
	os_waitq_wake_all(s->wq);
	while (s->busy || s->waiters)
		os_waitq_wait(dev->wq, dev->lock, OS_NO_DEADLINE);
	if (s->queued) {
		dv_list_del(&s->run_node);
		s->queued = false;
	}
	dv_list_for_each_safe(pos, tmp, &s->tasks)
		dv_task_free(s, DV_CONTAINER_OF(pos, struct dv_task, node));
	dv_id_remove(&ctx->stream_ids, s->id);
	dv_list_del(&s->node);
	dv_buffer_release(s->sq_buf);
	dv_buffer_release(s->cq_buf);
	os_waitq_destroy(s->wq);
	dv_graph_free(s->capture);
	dv_free(s->hist);
	dv_free(s);
	dv_stat_add(DV_STAT_STREAMS, -1);
	os_waitq_wake_all(dev->wq);
}

static int dv_ring_entries(u32 *entries)
{
	if (!*entries)
		*entries = 256;
	if (*entries > DAVINCI_RING_MAX_ENTRIES ||
	    (*entries & (*entries - 1)))
		return -EINVAL;
	return 0;
}

/**
 * dv_ring_create() - the buffer of a submission or completion ring
 * @ctx: the context (dev->lock held)
 * @entries: ring entries, checked by dv_ring_entries()
 * @entry_size: bytes an entry takes
 * @out: the ring's buffer
 *
 * Return: 0 or a negative errno of dv_buffer_create().
 */
static int dv_ring_create(struct dv_context *ctx, u32 entries,
			  size_t entry_size, struct dv_buffer **out)
{
	os_mutex_assert_held(ctx->dev->lock);
	return dv_buffer_create(ctx, DAVINCI_RING_ENTRIES_OFFSET +
				(u64)entries * entry_size,
				DAVINCI_MEM_HOST | DAVINCI_MEM_NORMAL_ONLY,
				true, out);
}

/**
 * dv_ioctl_stream_create() - DAVINCI_IOCTL_STREAM_CREATE
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_stream_create
 *
 * Return: 0 or a negative errno (nothing created then).
 */
int dv_ioctl_stream_create(struct dv_context *ctx, void *arg)
{
	struct davinci_stream_create *c = arg;
	u32 sqe = c->sq_entries, cqe = c->cq_entries;
	struct dv_stream *s;
	int ret;

	os_mutex_assert_held(ctx->dev->lock);
	if ((c->flags & ~DAVINCI_STREAM_FLAGS_ALL) || c->pad ||
	    c->priority >= DV_PRIORITIES)
		return -EINVAL;
	if (dv_ring_entries(&sqe) || dv_ring_entries(&cqe))
		return -EINVAL;
	if (ctx->stream_ids.n >= DV_MAX_STREAMS)
		return -ENOSPC;
	s = dv_zalloc_account(sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->hist = dv_zalloc_account(sizeof(*s->hist) * DV_TASK_HISTORY);
	s->wq = os_waitq_create();
	if (!s->hist || !s->wq) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = dv_ring_create(ctx, sqe, DV_SQ_ENTRY_SIZE, &s->sq_buf);
	if (ret)
		goto fail;
	ret = dv_ring_create(ctx, cqe, DV_CQ_ENTRY_SIZE, &s->cq_buf);
	if (ret)
		goto fail;
	ret = dv_id_reserve(&ctx->stream_ids);
	if (ret)
		goto fail;

	s->ctx = ctx;
	s->priority = c->priority;
	s->sq_entries = sqe;
	s->cq_entries = cqe;
	s->sq = dv_buffer_kaddr(s->sq_buf);
	s->cq = dv_buffer_kaddr(s->cq_buf);
	s->sq->entries = sqe;
	s->cq->entries = cqe;
	dv_list_init(&s->tasks);
	dv_list_init(&s->run_node);
	s->id = (u32)dv_id_alloc(&ctx->stream_ids, s);
	dv_list_add_tail(&s->node, &ctx->streams);
	if (c->flags & DAVINCI_STREAM_F_POLLED) {
		s->polled = true;
		dv_list_add_tail(&s->poll_node, &ctx->dev->polled);
		dv_dispatcher_kick(ctx->dev);
	}
	s->cont = !!(c->flags & DAVINCI_STREAM_F_CONTINUE);
	dv_stat_add(DV_STAT_STREAMS, 1);

	c->stream_id = s->id;
	c->sq_mmap_offset = dv_buffer_mmap_offset(s->sq_buf);
	c->cq_mmap_offset = dv_buffer_mmap_offset(s->cq_buf);
	c->sq_size = s->sq_buf->alloc_size;
	c->cq_size = s->cq_buf->alloc_size;
	c->sq_entries = sqe;
	c->cq_entries = cqe;
	return 0;
fail:
	dv_buffer_release(s->cq_buf);
	dv_buffer_release(s->sq_buf);
	if (s->wq)
		os_waitq_destroy(s->wq);
	dv_free(s->hist);
	dv_free(s);
	return ret;
}

/* The stream a struct davinci_stream_id names; NULL with *@ret set. */
static struct dv_stream *dv_stream_arg(struct dv_context *ctx, void *arg,
				       int *ret)
{
	struct davinci_stream_id *a = arg;

	return dv_named(dv_stream_find(ctx, a->stream_id), a->pad, ret);
}

/**
 * dv_ioctl_stream_destroy() - DAVINCI_IOCTL_STREAM_DESTROY
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_stream_id
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int dv_ioctl_stream_destroy(struct dv_context *ctx, void *arg)
{
	int ret;
	struct dv_stream *s = dv_stream_arg(ctx, arg, &ret);

	os_mutex_assert_held(ctx->dev->lock);
	if (s)
		dv_stream_destroy_locked(s);
	return ret;
}

/**
 * dv_ioctl_doorbell() - DAVINCI_IOCTL_DOORBELL
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_doorbell
 *
 * Takes in the descriptors up to sq_tail (dispatch.c), or on a polled
 * stream what its ring holds and wakes the dispatcher alone: it runs
 * short tasks itself and wakes a worker for the rest, so one doorbell
 * wakes one thread.
 *
 * Return: 0 or a negative errno.
 */
int dv_ioctl_doorbell(struct dv_context *ctx, void *arg)
{
	struct davinci_doorbell *d = arg;
	struct dv_stream *s = dv_stream_find(ctx, d->stream_id);
	int ret = 0;

	os_mutex_assert_held(ctx->dev->lock);
	dv_trace_doorbell(ctx, d);
	if (!s)
		return -ENOENT;
	d->first_seq = s->submitted_seq + 1;
	if (s->polled) {
		dv_stream_take_in_polled(s, false, DV_MAX_QUEUED);
		dv_dispatcher_kick(ctx->dev);
	} else {
		ret = dv_stream_take_in(s, d->sq_tail);
	}
	d->last_seq = s->submitted_seq;
	return ret;
}

struct dv_stream_wait_arg {
	struct davinci_stream_wait *w;
	u64 seq;
};

static int dv_stream_wait_done(struct dv_context *ctx, void *arg)
{
	struct dv_stream_wait_arg *a = arg;
	struct dv_stream *s = dv_stream_find(ctx, a->w->stream_id);

	if (!s)
		return -ENOENT;
	/* completions made room */
	dv_stream_take_in_polled(s, true, DV_MAX_QUEUED);
	a->w->status = s->error_status;
	a->w->completed_seq = s->completed_seq;
	return s->completed_seq >= a->seq;
}

/**
 * dv_ioctl_stream_wait() - DAVINCI_IOCTL_STREAM_WAIT
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_stream_wait
 *
 * Return: 0, -ETIMEDOUT, -EINTR, -EINVAL, -ENOENT or -ENODEV.
 */
int dv_ioctl_stream_wait(struct dv_context *ctx, void *arg)
{
	struct davinci_stream_wait *w = arg;
	struct dv_stream_wait_arg a = { .w = w };
	struct dv_stream *s;
	u64 last;
	int ret;

	os_mutex_assert_held(ctx->dev->lock);
	if (w->pad)
		return -EINVAL;
	s = dv_stream_find(ctx, w->stream_id);
	if (!s)
		return -ENOENT;
	dv_stream_take_in_polled(s, true, DV_MAX_QUEUED);
	last = s->submitted_seq + dv_stream_published(s);
	a.seq = w->seq ? w->seq : last;
	if (a.seq > last)
		return -EINVAL;
	s->waiters++;
	ret = dv_wait_locked(ctx, s->wq, w->timeout_ms, dv_stream_wait_done,
			     &a);
	if (!--s->waiters && s->dead)
		os_waitq_wake_all(ctx->dev->wq);
	return ret;
}

/**
 * dv_ioctl_stream_reset() - DAVINCI_IOCTL_STREAM_RESET
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_stream_id
 *
 * Leaves the error state; tasks already queued complete as aborted.
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int dv_ioctl_stream_reset(struct dv_context *ctx, void *arg)
{
	int ret;
	struct dv_stream *s = dv_stream_arg(ctx, arg, &ret);

	os_mutex_assert_held(ctx->dev->lock);
	if (!s)
		return ret;
	if (s->sq_fault) {
		/* Discard what the corrupted ring holds. */
		s->sq_head = __atomic_load_n(&s->sq->tail, __ATOMIC_ACQUIRE);
		__atomic_store_n(&s->sq->head, s->sq_head, __ATOMIC_RELEASE);
		s->sq_fault = false;
	}
	if (s->error_status) {
		s->abort_upto = s->submitted_seq;
		s->error_status = 0;
		__atomic_store_n(&s->cq->status, 0, __ATOMIC_RELEASE);
	}
	return 0;
}

/**
 * dv_ioctl_stream_query() - DAVINCI_IOCTL_STREAM_QUERY
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_stream_query
 *
 * Return: 0 or -ENOENT.
 */
int dv_ioctl_stream_query(struct dv_context *ctx, void *arg)
{
	struct davinci_stream_query *q = arg;
	struct dv_stream *s = dv_stream_find(ctx, q->stream_id);

	os_mutex_assert_held(ctx->dev->lock);
	if (!s)
		return -ENOENT;
	if (s->error_status)
		q->state = DAVINCI_STREAM_ERROR;
	else if (s->nqueued)
		q->state = DAVINCI_STREAM_BUSY;
	else
		q->state = DAVINCI_STREAM_IDLE;
	q->submitted_seq = s->submitted_seq;
	q->completed_seq = s->completed_seq;
	q->error_status = s->error_status;
	q->priority = s->priority;
	return 0;
}

/**
 * dv_ioctl_stream_set_flags() - DAVINCI_IOCTL_STREAM_SET_FLAGS
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_stream_flags
 *
 * Switches between stopping and going on after a failed task, for the
 * tasks that complete from now on; the error state, if any, stays.
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int dv_ioctl_stream_set_flags(struct dv_context *ctx, void *arg)
{
	struct davinci_stream_flags *f = arg;
	struct dv_stream *s;

	os_mutex_assert_held(ctx->dev->lock);
	if (f->flags & ~DAVINCI_STREAM_FLAGS_MUTABLE)
		return -EINVAL;
	s = dv_stream_find(ctx, f->stream_id);
	if (!s)
		return -ENOENT;
	s->cont = !!(f->flags & DAVINCI_STREAM_F_CONTINUE);
	return 0;
}

/* Fill @q for its task; *tp is the live task, NULL once completed. */
static int dv_task_lookup(struct dv_context *ctx, struct davinci_task_query *q,
			  struct dv_stream **sp, struct dv_task **tp)
{
	struct dv_stream *s;
	struct dv_list *pos;

	if (q->pad)
		return -EINVAL;
	s = dv_stream_find(ctx, q->stream_id);
	if (!s)
		return -ENOENT;
	/* the host counts them */
	dv_stream_take_in_polled(s, true, DV_MAX_QUEUED);
	if (!q->seq || q->seq > s->submitted_seq)
		return -ENOENT;
	*sp = s;
	*tp = NULL;
	if (q->seq <= s->completed_seq) {
		const struct dv_task_result *h =
			&s->hist[q->seq % DV_TASK_HISTORY];

		q->state = DAVINCI_TASK_DONE;
		if (h->seq == q->seq) {
			q->status = h->status;
			q->start_ns = h->start_ns;
			q->end_ns = h->end_ns;
		} else {
			q->status = DAVINCI_STATUS_OK;
			q->start_ns = 0;
			q->end_ns = 0;
		}
		return 0;
	}
	for (pos = s->tasks.next; pos != &s->tasks; pos = pos->next) {
		struct dv_task *t = DV_CONTAINER_OF(pos, struct dv_task, node);

		if (t->seq != q->seq)
			continue;
		q->state = t->start_ns ? DAVINCI_TASK_RUNNING :
			   DAVINCI_TASK_QUEUED;
		q->status = DAVINCI_STATUS_OK;
		q->start_ns = t->start_ns;
		q->end_ns = 0;
		*tp = t;
		return 0;
	}
	return -ENOENT;
}

/**
 * dv_ioctl_task_query() - DAVINCI_IOCTL_TASK_QUERY
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_task_query
 *
 * Results of the last DV_TASK_HISTORY tasks of a stream are kept; an older
 * completed task reports DONE with status OK and no timestamps.
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int dv_ioctl_task_query(struct dv_context *ctx, void *arg)
{
	struct dv_stream *s;
	struct dv_task *t;

	os_mutex_assert_held(ctx->dev->lock);
	return dv_task_lookup(ctx, arg, &s, &t);
}

/**
 * dv_ioctl_task_cancel() - DAVINCI_IOCTL_TASK_CANCEL
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_task_query
 *
 * Return: 0, -EALREADY when it completed, -EINVAL or -ENOENT.
 */
int dv_ioctl_task_cancel(struct dv_context *ctx, void *arg)
{
	struct dv_stream *s;
	struct dv_task *t;
	int ret = dv_task_lookup(ctx, arg, &s, &t);

	os_mutex_assert_held(ctx->dev->lock);
	if (ret)
		return ret;
	if (!t)
		return -EALREADY;
	__atomic_store_n(&t->cancel, true, __ATOMIC_RELAXED);
	if (s->parked && s->tasks.next == &t->node) {
		s->parked = false;
		dv_stream_make_ready(s);
	}
	return 0;
}

static int dv_sync_done(struct dv_context *ctx, void *arg)
{
	struct davinci_sync *y = arg;
	struct dv_list *pos;
	bool idle = true;

	y->status = 0;
	for (pos = ctx->streams.next; pos != &ctx->streams; pos = pos->next) {
		struct dv_stream *s = DV_CONTAINER_OF(pos, struct dv_stream,
						      node);

		if (s->dead)
			continue;
		if (s->completed_seq < s->submitted_seq)
			idle = false;
		if (s->error_status && !y->status)
			y->status = s->error_status;
	}
	return idle;
}

/**
 * dv_ioctl_sync() - DAVINCI_IOCTL_SYNC: wait for every stream of @ctx
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_sync
 *
 * Return: 0, -ETIMEDOUT, -EINTR or -ENODEV.
 */
int dv_ioctl_sync(struct dv_context *ctx, void *arg)
{
	struct davinci_sync *y = arg;

	os_mutex_assert_held(ctx->dev->lock);
	dv_ctx_take_in_polled(ctx);
	return dv_wait_locked(ctx, ctx->dev->wq, y->timeout_ms, dv_sync_done,
			      y);
}
