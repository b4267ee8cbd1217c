// SPDX-License-Identifier: GPL-2.0
/*
 * sched.c - the AI-core workers: priority run queue, in-order execution
 * per stream.
 *
 * A worker takes the highest priority ready stream (FIFO within a
 * priority), handles its first task (events and notifications here, the
 * rest through dv_task_run() in task.c, which drops dev->lock while a
 * chunk runs), and puts the stream back at the tail of its run queue
 * while it has work.
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
	switch (t->desc.opcode) {
	case DAVINCI_OP_EVENT_RECORD:
		ev = dv_event_find(ctx, t->desc.event_id);
		now = os_now_ns();
		if (!ev || !t->event_gen) {
			dv_task_complete(s, t, DAVINCI_STATUS_INVALID_EVENT,
					 now);
			return;
		}
		if (t->event_gen > ev->completed)
			ev->completed = t->event_gen;
		ev->timestamp_ns = now;
		dv_task_complete(s, t, DAVINCI_STATUS_OK, now);
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
		dv_task_complete(s, t, DAVINCI_STATUS_OK, now);
		return;
	default:
		dv_task_run(dev, s, t);
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
