// SPDX-License-Identifier: GPL-2.0
/*
 * context.c - contexts (one per open file): open, reset, close.
 */
#include "dv_internal.h"

/**
 * dv_context_open() - open a context on @dev
 * @dev: the device
 * @pid: the opener
 * @out: the new context
 *
 * Return: 0, -ENODEV when the device is lost, or -ENOMEM.
 */
int dv_context_open(struct dv_device *dev, u32 pid, struct dv_context **out)
{
	struct dv_context *ctx;

	ctx = dv_zalloc(sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->nq = dv_zalloc(sizeof(*ctx->nq) * DV_NOTIFY_CAPACITY);
	ctx->wq = os_waitq_create();
	if (!ctx->nq || !ctx->wq) {
		if (ctx->wq)
			os_waitq_destroy(ctx->wq);
		dv_free(ctx->nq);
		dv_free(ctx);
		return -ENOMEM;
	}
	ctx->dev = dev;
	ctx->pid = pid;
	dv_list_init(&ctx->buffers);
	dv_list_init(&ctx->streams);
	dv_list_init(&ctx->events);
	dv_id_init(&ctx->buf_ids, U64_MAX - 1);
	dv_id_init(&ctx->stream_ids, 0x7fffffff);
	dv_id_init(&ctx->event_ids, 0x7fffffff);

	os_mutex_lock(dev->lock);
	if (dev->lost) {
		os_mutex_unlock(dev->lock);
		os_waitq_destroy(ctx->wq);
		dv_free(ctx->nq);
		dv_free(ctx);
		return -ENODEV;
	}
	dv_list_add_tail(&ctx->node, &dev->contexts);
	dv_stat_add(DV_STAT_CONTEXTS, 1);
	os_mutex_unlock(dev->lock);
	*out = ctx;
	return 0;
}

/**
 * dv_context_reset_locked() - free everything @ctx owns (dev->lock held)
 * @ctx: the context
 *
 * Streams go first (their running tasks are cancelled and waited for),
 * then events, then buffers. Buffers still mapped or used stay alive
 * until their last reference goes.
 */
void dv_context_reset_locked(struct dv_context *ctx)
{
	struct dv_device *dev = ctx->dev;
	struct dv_list *pos, *tmp;

	for (;;) {
		struct dv_stream *victim = NULL;

		for (pos = ctx->streams.next; pos != &ctx->streams;
		     pos = pos->next) {
			struct dv_stream *s = DV_CONTAINER_OF(pos,
						struct dv_stream, node);

			if (!s->dead) {
				victim = s;
				break;
			}
		}
		if (victim) {
			dv_stream_destroy_locked(victim);
			continue;
		}
		if (dv_list_empty(&ctx->streams))
			break;
		/* Another thread is destroying one: wait for it. */
		os_waitq_wait(dev->wq, dev->lock, OS_NO_DEADLINE);
	}
	dv_list_for_each_safe(pos, tmp, &ctx->events) {
		struct dv_event *ev = DV_CONTAINER_OF(pos, struct dv_event,
						      node);

		dv_event_destroy_locked(ctx, ev);
	}
	dv_list_for_each_safe(pos, tmp, &ctx->buffers)
		dv_buffer_release(DV_CONTAINER_OF(pos, struct dv_buffer, node));
}

/**
 * dv_ioctl_ctx_reset() - DAVINCI_IOCTL_CTX_RESET
 * @ctx: the context (dev->lock held)
 * @arg: unused
 *
 * Return: 0.
 */
int dv_ioctl_ctx_reset(struct dv_context *ctx, void *arg)
{
	(void)arg;
	dv_context_reset_locked(ctx);
	return 0;
}

/**
 * dv_context_close() - close a context, freeing all it owns
 * @ctx: the context
 *
 * Works also after the device was lost. Waits for running tasks to stop
 * at their next chunk boundary.
 */
void dv_context_close(struct dv_context *ctx)
{
	struct dv_device *dev = ctx->dev;

	os_mutex_lock(dev->lock);
	ctx->closing = true;
	dv_context_reset_locked(ctx);
	dv_list_del(&ctx->node);
	dv_id_destroy(&ctx->buf_ids);
	dv_id_destroy(&ctx->stream_ids);
	dv_id_destroy(&ctx->event_ids);
	dv_stat_add(DV_STAT_CONTEXTS, -1);
	os_waitq_wake_all(dev->wq);
	os_mutex_unlock(dev->lock);
	os_waitq_destroy(ctx->wq);
	dv_free(ctx->nq);
	dv_free(ctx);
}
