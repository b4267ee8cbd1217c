// SPDX-License-Identifier: GPL-2.0
/*
 * sched.c - the AI-core workers: priority run queue, in-order execution
 * per stream.
 *
 * A worker takes the highest priority ready stream (FIFO within a
 * priority), handles its first task (events and notifications here, the
 * rest through dv_task_run() in task.c, which drops dev->lock while the
 * task runs), and puts the stream back at the tail of its run queue
 * while it has work. The dispatcher (dispatch.c) runs short tasks the
 * same way. dev->running counts both, so no more tasks run at once than
 * the device has AI cores.
 */
#include "dv_internal.h"

/* The head task of a ready stream is one the dispatcher runs itself. */
static bool dv_sched_head_short(struct dv_device *dev,
				const struct dv_stream *s)
{
	return !dv_list_empty(&s->tasks) &&
	       dv_task_is_short(dev, DV_CONTAINER_OF(s->tasks.next,
						     struct dv_task, node));
}

/**
 * dv_sched_pick() - take the next ready stream off the run queues
 * @dev: the device (dev->lock held)
 * @short_only: only a stream whose first task is short (dv_task_is_short())
 *
 * Return: the first ready stream of the highest priority (FIFO within a
 * priority) that qualifies, or NULL.
 */
struct dv_stream *dv_sched_pick(struct dv_device *dev, bool short_only)
{
	struct dv_list *pos;
	u32 p;

	os_mutex_assert_held(dev->lock);
	for (p = 0; p < DV_PRIORITIES; p++) {
		for (pos = dev->runq[p].next; pos != &dev->runq[p];
		     pos = pos->next) {
			struct dv_stream *s = DV_CONTAINER_OF(pos,
					struct dv_stream, run_node);

			/* (failed contexts leave queued streams empty) */
			if (short_only && !dv_list_empty(&s->tasks) &&
			    !dv_sched_head_short(dev, s))
				continue;
			dv_list_del(&s->run_node);
			s->queued = false;
			return s;
		}
	}
	return NULL;
}

/**
 * dv_sched_workers_wanted() - workers to wake for the ready streams
 * @dev: the device (dev->lock held), called by the dispatcher
 *
 * One ready stream whose head task is short waits for the dispatcher's
 * next pass, which comes sooner than a woken worker: a worker woken for
 * it would only take turns with the dispatcher over the same stream.
 * Every other ready stream gets a worker, so short tasks of several
 * streams still run on several AI cores.
 *
 * Return: ready streams less one with a short head task, at most the AI
 * cores not running a task.
 */
u32 dv_sched_workers_wanted(struct dv_device *dev)
{
	u32 free = dev->cfg.aicores - dev->running, n = 0, p;
	bool kept = false;
	struct dv_list *pos;

	os_mutex_assert_held(dev->lock);
	for (p = 0; p < DV_PRIORITIES && n < free; p++)
		for (pos = dev->runq[p].next; pos != &dev->runq[p] &&
		     n < free; pos = pos->next) {
			if (!kept && dv_sched_head_short(dev, DV_CONTAINER_OF(
					pos, struct dv_stream, run_node)))
				kept = true;
			else
				n++;
		}
	return n;
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
		dv_task_complete(s, t, DAVINCI_STATUS_CANCELLED, t->start_ns);
		return;
	}
	if (dv_ctx_lost(ctx)) {
		dv_task_complete(s, t, DAVINCI_STATUS_DEVICE_LOST, 0);
		return;
	}
	if (s->error_status || t->seq <= s->abort_upto) {
		dv_task_complete(s, t, DAVINCI_STATUS_ABORTED, 0);
		return;
	}
	if (t->operand_status) {
		now = os_now_ns();
		dv_task_complete_at(s, t, t->operand_status, now, now);
		return;
	}
	switch (t->desc.opcode) {
	case DAVINCI_OP_EVENT_RECORD:
		ev = dv_event_find(ctx, t->desc.event_id);
		now = os_now_ns();
		if (!ev || !t->event_gen) {
			dv_task_complete_at(s, t, DAVINCI_STATUS_INVALID_EVENT,
					    now, now);
			return;
		}
		if (t->event_gen > ev->completed)
			ev->completed = t->event_gen;
		ev->timestamp_ns = now;
		dv_task_complete_at(s, t, DAVINCI_STATUS_OK, now, now);
		dv_event_completed(ctx, ev);
		return;
	case DAVINCI_OP_EVENT_WAIT:
		ev = dv_event_find(ctx, t->desc.event_id);
		if (!t->start_ns)
			t->start_ns = os_now_ns();
		if (!ev) {
			dv_task_complete(s, t, DAVINCI_STATUS_INVALID_EVENT,
					 t->start_ns);
			return;
		}
		if (ev->completed >= t->event_gen) {
			dv_task_complete(s, t, DAVINCI_STATUS_OK,
					 t->start_ns);
			return;
		}
		s->parked = true;
		return;
	case DAVINCI_OP_NOTIFY:
		now = os_now_ns();
		dv_notify(ctx, DAVINCI_NOTIFY_USER, s->id, DAVINCI_STATUS_OK,
			  t->seq, t->desc.user_data);
		dv_task_complete_at(s, t, DAVINCI_STATUS_OK, now, now);
		return;
	default:
		dv_task_run(dev, s, t);
		return;
	}
}

/**
 * dv_sched_run() - handle the first task of a stream taken off the run queue
 * @dev: the device (dev->lock held; dropped while a task runs)
 * @s: the stream dv_sched_pick() returned
 *
 * A polled stream running low takes in more from its ring first
 * (DV_TAKE_IN_DEPTH). The stream goes back on its run queue, without
 * waking a worker, while it has work: the caller picks again.
 */
void dv_sched_run(struct dv_device *dev, struct dv_stream *s)
{
	os_mutex_assert_held(dev->lock);
	s->busy = true;
	dev->running++;
	dv_sched_run_head(dev, s);
	dev->running--;
	s->busy = false;
	if (s->polled && s->nqueued < DV_TAKE_IN_DEPTH / 4)
		dv_stream_take_in_polled(s, false, DV_TAKE_IN_DEPTH);
	dv_stream_requeue(s);
	/* A destroyer, a reset or a closing context waits for !busy. */
	if (s->dead || dv_ctx_lost(s->ctx) || s->ctx->closing)
		os_waitq_wake_all(dev->wq);
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
		struct dv_stream *s = NULL;

		if (dev->running < dev->cfg.aicores)
			s = dv_sched_pick(dev, false);
		if (!s && dv_task_help(dev))
			continue;
		if (!s) {
			os_waitq_wait(dev->work_wq, dev->lock, OS_NO_DEADLINE);
			continue;
		}
		dv_sched_run(dev, s);
	}
	os_mutex_unlock(dev->lock);
	return 0;
}
