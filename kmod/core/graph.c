// SPDX-License-Identifier: GPL-2.0
/*
 * graph.c - task graphs: capture what a stream takes in, replay it with
 * one ioctl (see "task graphs" in the uapi header).
 */
#include "dv_internal.h"

/**
 * dv_graph_add() - record one task a capturing stream took in
 * @g: the graph being captured
 * @t: the task; only its descriptor and whether it is malformed are kept
 *
 * Past DAVINCI_GRAPH_MAX_TASKS, or out of memory, the capture is marked
 * too big and GRAPH_END refuses it.
 */
void dv_graph_add(struct dv_graph *g, const struct dv_task *t)
{
	if (g->too_big)
		return;
	if (g->ntasks == g->cap) {
		u32 cap = g->cap ? 2 * g->cap : 64;
		struct dv_graph_task *tasks;

		if (cap > DAVINCI_GRAPH_MAX_TASKS) {
			g->too_big = true;
			return;
		}
		tasks = dv_zalloc_account(sizeof(*tasks) * cap);
		if (!tasks) {
			g->too_big = true;
			return;
		}
		if (g->ntasks)
			memcpy(tasks, g->tasks, sizeof(*tasks) * g->ntasks);
		dv_free(g->tasks);
		g->tasks = tasks;
		g->cap = cap;
	}
	g->tasks[g->ntasks].desc = t->desc;
	g->tasks[g->ntasks].malformed = t->operand_status ==
					DAVINCI_STATUS_INVALID_TASK;
	g->ntasks++;
}

/**
 * dv_graph_free() - free a graph that is in no list
 * @g: the graph, or NULL
 */
void dv_graph_free(struct dv_graph *g)
{
	if (!g)
		return;
	dv_free(g->tasks);
	dv_free(g);
}

static void dv_graph_destroy_locked(struct dv_context *ctx,
				    struct dv_graph *g)
{
	os_mutex_assert_held(ctx->dev->lock);
	dv_id_remove(&ctx->graph_ids, g->id);
	dv_list_del(&g->node);
	dv_graph_free(g);
}

/**
 * dv_graphs_destroy() - destroy every graph of a context
 * @ctx: the context (dev->lock held)
 */
void dv_graphs_destroy(struct dv_context *ctx)
{
	struct dv_list *pos, *tmp;

	os_mutex_assert_held(ctx->dev->lock);
	dv_list_for_each_safe(pos, tmp, &ctx->graphs)
		dv_graph_destroy_locked(ctx, DV_CONTAINER_OF(pos,
					struct dv_graph, node));
}

/*
 * The stream a struct davinci_graph_capture names, with what its polled
 * ring holds taken in; NULL with *@ret set.
 */
static struct dv_stream *dv_capture_stream(struct dv_context *ctx,
					   struct davinci_graph_capture *c,
					   int *ret)
{
	struct dv_stream *s = dv_named(dv_stream_find(ctx, c->stream_id),
				       c->pad, ret);

	if (s)
		dv_stream_take_in_polled(s, true, DV_MAX_QUEUED);
	return s;
}

/**
 * dv_ioctl_graph_capture() - DAVINCI_IOCTL_GRAPH_CAPTURE
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_graph_capture
 *
 * What the stream's polled ring holds now is taken in first: it was
 * submitted before the capture began.
 *
 * Return: 0, -EINVAL, -ENOENT, -EBUSY or -ENOMEM.
 */
int dv_ioctl_graph_capture(struct dv_context *ctx, void *arg)
{
	int ret;
	struct dv_stream *s = dv_capture_stream(ctx, arg, &ret);

	os_mutex_assert_held(ctx->dev->lock);
	if (!s)
		return ret;
	if (s->capture || dv_stream_published(s))
		return -EBUSY;
	s->capture = dv_zalloc_account(sizeof(*s->capture));
	return s->capture ? 0 : -ENOMEM;
}

/**
 * dv_ioctl_graph_end() - DAVINCI_IOCTL_GRAPH_END
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_graph_capture
 *
 * Return: 0, -EINVAL, -ENOENT, -E2BIG, -ENOSPC or -ENOMEM.
 */
int dv_ioctl_graph_end(struct dv_context *ctx, void *arg)
{
	struct davinci_graph_capture *c = arg;
	struct dv_graph *g;
	int ret;
	/* taking in records the capture's last tasks */
	struct dv_stream *s = dv_capture_stream(ctx, c, &ret);

	os_mutex_assert_held(ctx->dev->lock);
	if (!s)
		return ret;
	if (!s->capture)
		return -EINVAL;
	g = s->capture;
	s->capture = NULL;
	if (g->too_big)
		ret = -E2BIG;
	else if (ctx->graph_ids.n >= DAVINCI_GRAPH_MAX)
		ret = -ENOSPC;
	else
		ret = dv_id_reserve(&ctx->graph_ids);
	if (ret) {
		dv_graph_free(g);
		return ret;
	}
	g->id = (u32)dv_id_alloc(&ctx->graph_ids, g);
	dv_list_add_tail(&g->node, &ctx->graphs);
	c->graph_id = g->id;
	c->tasks = g->ntasks;
	return 0;
}

/**
 * dv_ioctl_graph_launch() - DAVINCI_IOCTL_GRAPH_LAUNCH
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_graph_launch
 *
 * Queues all of the graph's tasks, or none.
 *
 * Return: 0, -ENOENT, -EBUSY or -ENOMEM.
 */
int dv_ioctl_graph_launch(struct dv_context *ctx, void *arg)
{
	struct davinci_graph_launch *l = arg;
	struct dv_graph *g = dv_id_find(&ctx->graph_ids, l->graph_id);
	struct dv_stream *s = dv_stream_find(ctx, l->stream_id);
	struct dv_list batch, *pos, *tmp;
	u32 i;

	os_mutex_assert_held(ctx->dev->lock);
	if (!g || !s)
		return -ENOENT;
	/* the ring's tasks go first */
	dv_stream_take_in_polled(s, true, DV_MAX_QUEUED);
	if (s->capture || dv_stream_published(s) ||
	    s->nqueued + g->ntasks > DV_MAX_QUEUED)
		return -EBUSY;
	dv_list_init(&batch);
	for (i = 0; i < g->ntasks; i++) {
		struct dv_task *t = dv_task_alloc(ctx->dev, true);

		if (!t) {
			dv_list_for_each_safe(pos, tmp, &batch) {
				dv_list_del(pos);
				dv_cache_free(ctx->dev->task_cache,
					      DV_CONTAINER_OF(pos,
						struct dv_task, node));
			}
			return -ENOMEM;
		}
		t->desc = g->tasks[i].desc;
		if (g->tasks[i].malformed)
			t->operand_status = DAVINCI_STATUS_INVALID_TASK;
		t->quiet = i + 1 < g->ntasks;
		dv_list_add_tail(&t->node, &batch);
	}
	l->first_seq = s->submitted_seq + 1;
	dv_list_for_each_safe(pos, tmp, &batch) {
		dv_list_del(pos);
		dv_task_enqueue(s, DV_CONTAINER_OF(pos, struct dv_task, node));
	}
	l->last_seq = s->submitted_seq;
	dv_trace_tasks_queued(s, l->first_seq);
	dv_sq_publish(s);
	dv_stream_make_ready(s);
	return 0;
}

/**
 * dv_ioctl_graph_destroy() - DAVINCI_IOCTL_GRAPH_DESTROY
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_graph_id
 *
 * Launches already queued are not affected: they hold copies.
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int dv_ioctl_graph_destroy(struct dv_context *ctx, void *arg)
{
	struct davinci_graph_id *a = arg;
	int ret;
	struct dv_graph *g = dv_named(dv_id_find(&ctx->graph_ids, a->graph_id),
				      a->pad, &ret);

	os_mutex_assert_held(ctx->dev->lock);
	if (g)
		dv_graph_destroy_locked(ctx, g);
	return ret;
}
