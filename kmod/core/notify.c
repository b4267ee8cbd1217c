// SPDX-License-Identifier: GPL-2.0
/*
 * notify.c - per-context notification queues (the interrupt path).
 */
#include "dv_internal.h"

/**
 * dv_notify() - queue a notification for @ctx (dev->lock held)
 * @ctx: the context
 * @type: DAVINCI_NOTIFY_*
 * @stream_id: stream of the task
 * @status: the task's status
 * @seq: the task's sequence number
 * @user_data: the task's user data
 *
 * When the queue is full the notification is dropped and counted.
 */
void dv_notify(struct dv_context *ctx, u32 type, u32 stream_id, u32 status,
	       u64 seq, u64 user_data)
{
	struct davinci_notification *n;

	os_mutex_assert_held(ctx->dev->lock);
	if (ctx->nq_count >= DV_NOTIFY_CAPACITY) {
		ctx->nq_dropped++;
		return;
	}
	n = &ctx->nq[(ctx->nq_head + ctx->nq_count) % DV_NOTIFY_CAPACITY];
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->stream_id = stream_id;
	n->status = status;
	n->seq = seq;
	n->user_data = user_data;
	n->timestamp_ns = os_now_ns();
	ctx->nq_count++;
	os_waitq_wake_all(ctx->wq);
}

/* Dequeue the oldest notification into @arg, if there is one. */
static int dv_notify_wait_done(struct dv_context *ctx, void *arg)
{
	struct davinci_notification *w = arg;
	u32 timeout_ms = w->timeout_ms;

	if (!ctx->nq_count)
		return 0;
	*w = ctx->nq[ctx->nq_head];
	w->timeout_ms = timeout_ms;
	w->dropped = ctx->nq_dropped;
	ctx->nq_dropped = 0;
	ctx->nq_head = (ctx->nq_head + 1) % DV_NOTIFY_CAPACITY;
	ctx->nq_count--;
	return 1;
}

/**
 * dv_ioctl_notify_wait() - DAVINCI_IOCTL_NOTIFY_WAIT
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_notification
 *
 * Return: 0, -ETIMEDOUT, -EINTR, -EINVAL or -ENODEV.
 */
int dv_ioctl_notify_wait(struct dv_context *ctx, void *arg)
{
	struct davinci_notification *w = arg;

	os_mutex_assert_held(ctx->dev->lock);
	if (w->pad)
		return -EINVAL;
	return dv_wait_locked(ctx, ctx->wq, w->timeout_ms,
			      dv_notify_wait_done, w);
}

/**
 * dv_context_pollable() - true when a notification is waiting
 * @ctx: the context
 *
 * Return: true when NOTIFY_WAIT would not block (also once the device is
 * lost: it then fails with -ENODEV).
 */
bool dv_context_pollable(struct dv_context *ctx)
{
	bool ret;

	os_mutex_lock(ctx->dev->lock);
	ret = ctx->nq_count > 0 || dv_ctx_lost(ctx);
	os_mutex_unlock(ctx->dev->lock);
	return ret;
}

/**
 * dv_context_waitq() - wait queue woken when a notification arrives
 * @ctx: the context
 *
 * Return: the wait queue (for poll()).
 */
struct os_waitq *dv_context_waitq(struct dv_context *ctx)
{
	return ctx->wq;
}
