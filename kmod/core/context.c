// SPDX-License-Identifier: GPL-2.0
/*
 * context.c - contexts (one per open file): open, reset, close.
 */
#include "dv_internal.h"

/*
 * Limits on open contexts (dv_core_set_limits()), and every open context
 * of every device on one list to count them against: a context reserves
 * about 50 KiB (its notification queue) before it allocates anything,
 * and each can hold streams, queued tasks and buffers. dv_owners_lock
 * protects dv_owners and every context's owner_node; it is taken with no
 * other lock held and takes none. The limits are atomics, read unlocked.
 */
static u32 dv_lim_ctx_process = DV_CTX_PER_PROCESS_DEFAULT;
static u32 dv_lim_ctx_user = DV_CTX_PER_USER_DEFAULT;
static struct os_mutex *dv_owners_lock;
static struct dv_list dv_owners = { &dv_owners, &dv_owners };

/**
 * dv_core_set_limits() - set the limits on open contexts
 * @ctx_per_process: contexts one process may hold over all devices, 0 for
 *	no limit
 * @ctx_per_user: contexts one user may hold over all devices, 0 for no
 *	limit
 *
 * Opens from then on are checked against them; contexts already open stay
 * open even when they are over a lowered limit.
 */
void dv_core_set_limits(u32 ctx_per_process, u32 ctx_per_user)
{
	__atomic_store_n(&dv_lim_ctx_process, ctx_per_process,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&dv_lim_ctx_user, ctx_per_user, __ATOMIC_RELAXED);
}

/**
 * dv_limits_fill() - the limits, as DAVINCI_IOCTL_GET_LIMITS reports them
 * @l: filled in; reserved fields zero
 */
void dv_limits_fill(struct davinci_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->contexts_per_process = __atomic_load_n(&dv_lim_ctx_process,
						  __ATOMIC_RELAXED);
	l->contexts_per_user = __atomic_load_n(&dv_lim_ctx_user,
					       __ATOMIC_RELAXED);
	l->streams_per_context = DV_MAX_STREAMS;
	l->events_per_context = DV_MAX_EVENTS;
	l->tasks_per_stream = DV_MAX_QUEUED;
	l->notifications_per_context = DV_NOTIFY_CAPACITY;
}

/**
 * dv_ioctl_get_limits() - DAVINCI_IOCTL_GET_LIMITS on a device node
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_limits
 *
 * Return: 0.
 */
int dv_ioctl_get_limits(struct dv_context *ctx, void *arg)
{
	os_mutex_assert_held(ctx->dev->lock);
	dv_limits_fill(arg);
	return 0;
}

/*
 * Count @ctx against the limits and put it on the owners list: -EMFILE
 * when its process, -EUSERS when its user holds the most contexts allowed.
 */
static int dv_owner_charge(struct dv_context *ctx)
{
	struct os_mutex *lock = dv_global_mutex(&dv_owners_lock,
						OS_LOCK_OWNERS);
	u32 lim_p = __atomic_load_n(&dv_lim_ctx_process, __ATOMIC_RELAXED);
	u32 lim_u = __atomic_load_n(&dv_lim_ctx_user, __ATOMIC_RELAXED);
	u32 np = 0, nu = 0;
	struct dv_list *pos;
	int ret = 0;

	if (!lock)
		return -ENOMEM;
	os_mutex_lock(lock);
	for (pos = dv_owners.next; pos != &dv_owners; pos = pos->next) {
		const struct dv_context *c = DV_CONTAINER_OF(pos,
						struct dv_context, owner_node);

		if (ctx->pid && c->pid == ctx->pid)
			np++;
		if (ctx->uid != DV_UID_NONE && c->uid == ctx->uid)
			nu++;
	}
	if (lim_p && ctx->pid && np >= lim_p)
		ret = -EMFILE;
	else if (lim_u && ctx->uid != DV_UID_NONE && nu >= lim_u)
		ret = -EUSERS;
	else
		dv_list_add_tail(&ctx->owner_node, &dv_owners);
	os_mutex_unlock(lock);
	return ret;
}

static void dv_owner_uncharge(struct dv_context *ctx)
{
	os_mutex_lock(dv_owners_lock);
	dv_list_del(&ctx->owner_node);
	os_mutex_unlock(dv_owners_lock);
}

/**
 * dv_owners_exit() - free the owners lock (dv_core_exit(), no contexts)
 */
void dv_owners_exit(void)
{
	if (!dv_list_empty(&dv_owners))
		return;
	dv_global_mutex_free(&dv_owners_lock);
}

/**
 * dv_context_open() - open a context on @dev
 * @dev: the device
 * @pid: the opener's process (tgid), 0 when unknown: not counted per
 *	process
 * @uid: the opener's user, DV_UID_NONE: not counted per user
 * @out: the new context
 *
 * Its memory is charged to the caller's memory cgroup.
 *
 * Return: 0, -EMFILE when process @pid holds the most contexts allowed
 * (ctx_per_process), -EUSERS when user @uid does (ctx_per_user), -ENODEV
 * when the device is lost, or -ENOMEM.
 */
int dv_context_open(struct dv_device *dev, u32 pid, u32 uid,
		    struct dv_context **out)
{
	struct dv_context *ctx;
	int ret;

	ctx = dv_zalloc_account(sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->pid = pid;
	ctx->uid = uid;
	ret = dv_owner_charge(ctx);
	if (ret) {
		dv_free(ctx);
		return ret;
	}
	ctx->nq = dv_zalloc_account(sizeof(*ctx->nq) * DV_NOTIFY_CAPACITY);
	ctx->wq = os_waitq_create();
	if (!ctx->nq || !ctx->wq) {
		if (ctx->wq)
			os_waitq_destroy(ctx->wq);
		dv_owner_uncharge(ctx);
		dv_free(ctx->nq);
		dv_free(ctx);
		return -ENOMEM;
	}
	ctx->dev = dev;
	dv_list_init(&ctx->buffers);
	dv_list_init(&ctx->streams);
	dv_list_init(&ctx->events);
	dv_list_init(&ctx->graphs);
	dv_id_init(&ctx->buf_ids, U64_MAX - 1);
	dv_id_init(&ctx->stream_ids, 0x7fffffff);
	dv_id_init(&ctx->event_ids, 0x7fffffff);
	dv_id_init(&ctx->graph_ids, 0x7fffffff);
	dv_id_init(&ctx->map_ids, U64_MAX - 1);

	os_mutex_lock(dev->lock);
	if (dev->lost) {
		os_mutex_unlock(dev->lock);
		os_waitq_destroy(ctx->wq);
		dv_owner_uncharge(ctx);
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

	os_mutex_assert_held(dev->lock);
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
	dv_graphs_destroy(ctx);
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
	os_mutex_assert_held(ctx->dev->lock);
	(void)arg;
	dv_trace_ctx(ctx, DAVINCI_TRACE_CTX_RESET);
	dv_context_reset_locked(ctx);
	return 0;
}

/**
 * dv_deadline() - absolute deadline @timeout_ms from now
 * @timeout_ms: milliseconds
 *
 * Return: os_now_ns() based deadline.
 */
u64 dv_deadline(u32 timeout_ms)
{
	return os_now_ns() + (u64)timeout_ms * 1000000ULL;
}

/**
 * dv_wait_locked() - the one wait loop of the context ioctls
 * @ctx: the waiting context (dev->lock held; released while asleep)
 * @wq: the wait queue its wakers wake
 * @timeout_ms: how long to wait; 0 checks once and does not sleep
 * @done: checks the condition with dev->lock held: > 0 done, 0 not yet,
 *	< 0 an errno to return (the object waited on is gone)
 * @arg: for @done
 *
 * Checks @done first, so a wait already satisfied succeeds even on a lost
 * device or with a zero timeout; then -ENODEV once the context is lost,
 * -ETIMEDOUT once the deadline passed (@done is checked once more after
 * the last sleep), -EINTR when the sleep was interrupted.
 *
 * Return: 0, a negative errno of @done, -ENODEV, -ETIMEDOUT or -EINTR.
 */
int dv_wait_locked(struct dv_context *ctx, struct os_waitq *wq,
		   u32 timeout_ms, int (*done)(struct dv_context *ctx, void *arg),
		   void *arg)
{
	struct dv_device *dev = ctx->dev;
	u64 deadline = dv_deadline(timeout_ms);
	int ret = 0, st;

	os_mutex_assert_held(dev->lock);
	for (;;) {
		st = done(ctx, arg);
		if (st)
			return st < 0 ? st : 0;
		if (dv_ctx_lost(ctx))
			return -ENODEV;
		if (ret == -ETIMEDOUT || !timeout_ms)
			return -ETIMEDOUT;
		ret = os_waitq_wait(wq, dev->lock, deadline);
		if (ret == -EINTR)
			return ret;
	}
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
	dv_context_release_holds(ctx);
	dv_trace_ctx_close(ctx);
	dv_list_del(&ctx->node);
	dv_id_destroy(&ctx->buf_ids);
	dv_id_destroy(&ctx->stream_ids);
	dv_id_destroy(&ctx->event_ids);
	dv_id_destroy(&ctx->graph_ids);
	dv_stat_add(DV_STAT_CONTEXTS, -1);
	os_waitq_wake_all(dev->wq);
	os_mutex_unlock(dev->lock);
	dv_owner_uncharge(ctx);
	os_waitq_destroy(ctx->wq);
	dv_free(ctx->nq);
	dv_free(ctx);
}
