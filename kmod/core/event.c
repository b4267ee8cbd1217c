// SPDX-License-Identifier: GPL-2.0
/*
 * event.c - events: records from streams, host signals, waits.
 */
#include "dv_internal.h"

/**
 * dv_event_find() - an event of @ctx by id (dev->lock held)
 * @ctx: the context
 * @id: event id
 *
 * Return: the event or NULL.
 */
struct dv_event *dv_event_find(struct dv_context *ctx, u32 id)
{
	os_mutex_assert_held(ctx->dev->lock);
	return dv_id_find(&ctx->event_ids, id);
}

/*
 * Streams parked on an EVENT_WAIT for @id get back on the run queue
 * (dev->lock held).
 */
static void dv_event_unpark(struct dv_context *ctx, u32 id)
{
	struct dv_list *pos;

	os_mutex_assert_held(ctx->dev->lock);
	for (pos = ctx->streams.next; pos != &ctx->streams; pos = pos->next) {
		struct dv_stream *s = DV_CONTAINER_OF(pos, struct dv_stream,
						      node);
		struct dv_task *t;

		if (!s->parked || dv_list_empty(&s->tasks))
			continue;
		t = DV_CONTAINER_OF(s->tasks.next, struct dv_task, node);
		if (t->desc.event_id != id)
			continue;
		s->parked = false;
		dv_stream_make_ready(s);
	}
}

/**
 * dv_event_completed() - a record of @ev completed (dev->lock held)
 * @ctx: its context
 * @ev: the event
 */
void dv_event_completed(struct dv_context *ctx, struct dv_event *ev)
{
	os_mutex_assert_held(ctx->dev->lock);
	dv_trace_event(ctx, DAVINCI_TRACE_EVENT_RECORD, ev->id, ev->completed);
	dv_event_unpark(ctx, ev->id);
	os_waitq_wake_all(ctx->dev->wq);
}

/**
 * dv_event_destroy_locked() - destroy an event (dev->lock held)
 * @ctx: its context
 * @ev: the event
 *
 * Tasks that still refer to it complete as DAVINCI_STATUS_INVALID_EVENT.
 */
void dv_event_destroy_locked(struct dv_context *ctx, struct dv_event *ev)
{
	u32 id = ev->id;

	os_mutex_assert_held(ctx->dev->lock);
	dv_id_remove(&ctx->event_ids, id);
	dv_list_del(&ev->node);
	dv_free(ev);
	dv_stat_add(DV_STAT_EVENTS, -1);
	dv_event_unpark(ctx, id);
	os_waitq_wake_all(ctx->dev->wq);
}

/**
 * dv_ioctl_event_create() - DAVINCI_IOCTL_EVENT_CREATE
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_event_create
 *
 * Return: 0, -EINVAL, -ENOSPC or -ENOMEM.
 */
int dv_ioctl_event_create(struct dv_context *ctx, void *arg)
{
	struct davinci_event_create *c = arg;
	struct dv_event *ev;
	int ret;

	os_mutex_assert_held(ctx->dev->lock);
	if (c->flags & ~DAVINCI_EVENT_FLAGS_ALL)
		return -EINVAL;
	if (ctx->event_ids.n >= DV_MAX_EVENTS)
		return -ENOSPC;
	ev = dv_zalloc_account(sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ret = dv_id_reserve(&ctx->event_ids);
	if (ret) {
		dv_free(ev);
		return ret;
	}
	ev->id = (u32)dv_id_alloc(&ctx->event_ids, ev);
	ev->flags = c->flags;
	dv_list_add_tail(&ev->node, &ctx->events);
	dv_stat_add(DV_STAT_EVENTS, 1);
	c->event_id = ev->id;
	return 0;
}

static struct dv_event *dv_event_arg(struct dv_context *ctx, void *arg,
				     int *ret)
{
	struct davinci_event_id *a = arg;

	return dv_named(dv_event_find(ctx, a->event_id), a->pad, ret);
}

/**
 * dv_ioctl_event_destroy() - DAVINCI_IOCTL_EVENT_DESTROY
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_event_id
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int dv_ioctl_event_destroy(struct dv_context *ctx, void *arg)
{
	int ret;
	struct dv_event *ev = dv_event_arg(ctx, arg, &ret);

	os_mutex_assert_held(ctx->dev->lock);
	if (ev)
		dv_event_destroy_locked(ctx, ev);
	return ret;
}

/**
 * dv_ioctl_event_signal() - DAVINCI_IOCTL_EVENT_SIGNAL
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_event_id
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int dv_ioctl_event_signal(struct dv_context *ctx, void *arg)
{
	int ret;
	struct dv_event *ev = dv_event_arg(ctx, arg, &ret);

	os_mutex_assert_held(ctx->dev->lock);
	if (!ev)
		return ret;
	ev->submitted++;
	ev->completed = ev->submitted;
	ev->timestamp_ns = os_now_ns();
	dv_event_completed(ctx, ev);
	return 0;
}

/**
 * dv_ioctl_event_query() - DAVINCI_IOCTL_EVENT_QUERY
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_event_query
 *
 * Return: 0 or -ENOENT.
 */
int dv_ioctl_event_query(struct dv_context *ctx, void *arg)
{
	struct davinci_event_query *q = arg;
	struct dv_event *ev = dv_event_find(ctx, q->event_id);

	os_mutex_assert_held(ctx->dev->lock);
	if (!ev)
		return -ENOENT;
	if (!ev->submitted)
		q->state = DAVINCI_EVENT_NOT_RECORDED;
	else if (ev->completed < ev->submitted)
		q->state = DAVINCI_EVENT_PENDING;
	else
		q->state = DAVINCI_EVENT_RECORDED;
	q->timestamp_ns = ev->timestamp_ns;
	q->records_submitted = ev->submitted;
	q->records_completed = ev->completed;
	return 0;
}

struct dv_event_wait_arg {
	u32 id;
	u64 target;
};

static int dv_event_wait_done(struct dv_context *ctx, void *arg)
{
	struct dv_event_wait_arg *a = arg;
	struct dv_event *ev = dv_event_find(ctx, a->id);

	if (!ev)
		return -ENOENT;
	return ev->completed >= a->target;
}

/**
 * dv_ioctl_event_wait() - DAVINCI_IOCTL_EVENT_WAIT
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_event_wait
 *
 * Return: 0, -ETIMEDOUT, -EINTR, -ENOENT or -ENODEV.
 */
int dv_ioctl_event_wait(struct dv_context *ctx, void *arg)
{
	struct davinci_event_wait *w = arg;
	struct dv_event *ev = dv_event_find(ctx, w->event_id);
	struct dv_event_wait_arg a = { .id = w->event_id };

	os_mutex_assert_held(ctx->dev->lock);
	if (!ev)
		return -ENOENT;
	a.target = ev->submitted;
	dv_trace_event(ctx, DAVINCI_TRACE_EVENT_WAIT, ev->id, a.target);
	return dv_wait_locked(ctx, ctx->dev->wq, w->timeout_ms,
			      dv_event_wait_done, &a);
}
