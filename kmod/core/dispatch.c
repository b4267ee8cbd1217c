// SPDX-License-Identifier: GPL-2.0
/*
 * dispatch.c - taking descriptors in from submission rings, and the
 * dispatcher that polls the rings of polled streams.
 *
 * A doorbell takes in what a ring holds up to the tail it is given. A
 * polled stream (DAVINCI_STREAM_F_POLLED) needs no doorbell: as
 * io_uring's SQPOLL thread and the user-mode queues of AMD's KFD, the
 * device's dispatcher reads each polled ring's tail while it has had work
 * within its idle time, then sets DAVINCI_RING_F_NEED_WAKEUP in the rings
 * and sleeps until a doorbell. That idle time adapts as KVM's halt polling
 * adapts halt_poll_ns: a host that publishes a task every few hundred
 * microseconds would otherwise pay a doorbell and a wake-up for each.
 *
 * The dispatcher also runs short tasks (dv_task_is_short()) itself when an
 * AI core is free, as io_uring issues a request inline when it will not
 * block and hands it to a worker otherwise: waking a worker thread costs
 * more than such a task. Longer ones wake one worker per ready stream.
 */
#include "dv_internal.h"

/* Tasks the dispatcher runs in a row before it reads the tails again. */
#define DV_DISPATCH_BATCH	64
/* A sleeping dispatcher looks at the tails this often all the same. */
#define DV_POLL_BACKSTOP_NS	(20ULL * 1000 * 1000)

/*
 * Copy the descriptor at ring index @index of @s into a new task. A
 * malformed one fails with -EINVAL, or, on a polled stream, becomes a task
 * that fails with DAVINCI_STATUS_INVALID_TASK.
 */
static struct dv_task *dv_sq_fetch(struct dv_stream *s, u32 index,
				   bool polled, int *ret)
{
	const u8 *ring = (const u8 *)s->sq + DAVINCI_RING_ENTRIES_OFFSET;
	u32 slot = index & (s->sq_entries - 1);
	struct dv_task *t;

	/* The dispatcher allocates for no process: nothing to charge. */
	t = dv_task_alloc(s->ctx->dev, !polled);
	if (!t) {
		*ret = -ENOMEM;
		return NULL;
	}
	memcpy(&t->desc, ring + (size_t)slot * DV_SQ_ENTRY_SIZE,
	       sizeof(t->desc));
	*ret = dv_task_validate(&t->desc);
	if (*ret && polled) {
		t->operand_status = DAVINCI_STATUS_INVALID_TASK;
		*ret = 0;
	}
	return t;
}

/**
 * dv_task_enqueue() - queue a task taken in on its stream
 * @s: the stream (dev->lock held)
 * @t: the task, its descriptor (and operand_status, when malformed) set
 *
 * Gives @t its sequence number, event generation and operands. The caller
 * traces the take-in (dv_trace_tasks_queued()).
 */
void dv_task_enqueue(struct dv_stream *s, struct dv_task *t)
{
	struct dv_context *ctx = s->ctx;
	u16 op = t->desc.opcode;
	struct dv_event *ev = NULL;

	os_mutex_assert_held(ctx->dev->lock);
	if (!t->operand_status &&
	    (op == DAVINCI_OP_EVENT_RECORD || op == DAVINCI_OP_EVENT_WAIT))
		ev = dv_event_find(ctx, t->desc.event_id);
	if (ev && op == DAVINCI_OP_EVENT_RECORD)
		t->event_gen = ++ev->submitted;
	else if (ev && (t->desc.flags & DAVINCI_TASK_F_WAIT_NEXT))
		t->event_gen = ev->submitted + 1;
	else if (ev)
		t->event_gen = ev->submitted;
	t->seq = ++s->submitted_seq;
	if (!t->operand_status)
		dv_task_resolve(ctx, t);
	dv_list_add_tail(&t->node, &s->tasks);
	s->nqueued++;
	dv_stat_add(DV_STAT_TASKS, 1);
}

/**
 * dv_sq_publish() - publish the SQ head and the last sequence number
 * @s: the stream (dev->lock held)
 */
void dv_sq_publish(struct dv_stream *s)
{
	os_mutex_assert_held(s->ctx->dev->lock);
	__atomic_store_n(&s->sq->seq, s->submitted_seq, __ATOMIC_RELEASE);
	__atomic_store_n(&s->sq->head, s->sq_head, __ATOMIC_RELEASE);
}

/* Queue @t, or record it in the graph @s is capturing. */
static void dv_stream_accept(struct dv_stream *s, struct dv_task *t)
{
	if (!s->capture) {
		dv_task_enqueue(s, t);
		return;
	}
	dv_graph_add(s->capture, t);
	dv_cache_free(s->ctx->dev->task_cache, t);
}

/**
 * dv_stream_take_in() - take in the descriptors a doorbell names
 * @s: the stream (dev->lock held), not polled
 * @tail: the new SQ tail the doorbell passed
 *
 * Copies the descriptors [head, @tail) out of the shared ring, validates
 * all of them, then takes them all in, or none.
 *
 * Return: 0, -EINVAL (tail out of range, a malformed descriptor), -EBUSY
 * or -ENOMEM.
 */
int dv_stream_take_in(struct dv_stream *s, u32 tail)
{
	struct dv_list batch, *pos, *tmp;
	u32 n = tail - s->sq_head, i;
	u64 first_seq = s->submitted_seq + 1;
	int ret = 0;

	os_mutex_assert_held(s->ctx->dev->lock);
	if (n > s->sq_entries)
		return -EINVAL;
	if (!n)
		return 0;
	if (s->nqueued + n > DV_MAX_QUEUED)
		return -EBUSY;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	dv_list_init(&batch);
	for (i = 0; i < n && !ret; i++) {
		struct dv_task *t = dv_sq_fetch(s, s->sq_head + i, false, &ret);

		if (t)
			dv_list_add_tail(&t->node, &batch);
	}
	dv_list_for_each_safe(pos, tmp, &batch) {
		struct dv_task *t = DV_CONTAINER_OF(pos, struct dv_task, node);

		dv_list_del(pos);
		if (!ret)
			dv_stream_accept(s, t);
		else
			dv_cache_free(s->ctx->dev->task_cache, t);
	}
	if (ret)
		return ret;
	dv_trace_tasks_queued(s, first_seq);
	s->sq_head = tail;
	dv_sq_publish(s);
	dv_stream_make_ready(s);
	return 0;
}

/**
 * dv_stream_take_in_polled() - take in what a polled ring holds
 * @s: the stream (dev->lock held)
 * @wake: wake a worker when the stream becomes ready (else the caller
 *	dispatches)
 * @depth: take in until the stream has this many tasks queued: the
 *	dispatcher's and the AI cores' DV_TAKE_IN_DEPTH, or DV_MAX_QUEUED for
 *	a doorbell and the ioctls after which what the host published counts
 *	as submitted
 *
 * Reads the ring's tail once. A tail out of range puts the stream in the
 * error state with DAVINCI_STATUS_QUEUE_FAULT and stops taking in from it;
 * out of memory or @depth leaves the rest in the ring for later.
 *
 * Return: tasks taken in.
 */
u32 dv_stream_take_in_polled(struct dv_stream *s, bool wake, u32 depth)
{
	u64 first_seq = s->submitted_seq + 1;
	u32 tail, n, i;
	int ret = 0;

	os_mutex_assert_held(s->ctx->dev->lock);
	if (!s->polled || s->sq_fault || s->dead || s->nqueued >= depth)
		return 0;
	tail = __atomic_load_n(&s->sq->tail, __ATOMIC_ACQUIRE);
	n = tail - s->sq_head;
	if (!n)
		return 0;
	if (n > s->sq_entries) {
		s->sq_fault = true;
		dv_stream_fault(s, DAVINCI_STATUS_QUEUE_FAULT);
		return 0;
	}
	if (n > depth - s->nqueued)
		n = depth - s->nqueued;
	for (i = 0; i < n; i++) {
		struct dv_task *t = dv_sq_fetch(s, s->sq_head, true, &ret);

		if (!t)
			break;
		dv_stream_accept(s, t);
		s->sq_head++;
	}
	if (!i)
		return 0;
	dv_trace_tasks_queued(s, first_seq);
	dv_sq_publish(s);
	if (wake)
		dv_stream_make_ready(s);
	else
		dv_stream_requeue(s);
	return i;
}

/**
 * dv_stream_published() - tasks a polled ring holds beyond the head
 * @s: the stream (dev->lock held)
 *
 * Published by the host but not taken in yet (the stream has as many
 * queued as it may): they count as submitted for a wait.
 *
 * Return: their number, 0 when not polled or the tail is out of range.
 */
u32 dv_stream_published(struct dv_stream *s)
{
	u32 n;

	os_mutex_assert_held(s->ctx->dev->lock);
	if (!s->polled || s->sq_fault)
		return 0;
	n = __atomic_load_n(&s->sq->tail, __ATOMIC_ACQUIRE) - s->sq_head;
	return n <= s->sq_entries ? n : 0;
}

/**
 * dv_ctx_take_in_polled() - take in what every polled ring of @ctx holds
 * @ctx: the context (dev->lock held)
 *
 * Before an ioctl whose effect depends on which tasks were submitted
 * (a wait for all of them, freeing memory they may use): what the host
 * published before it counts as submitted, as if it had rung the doorbell.
 */
void dv_ctx_take_in_polled(struct dv_context *ctx)
{
	struct dv_list *pos;

	os_mutex_assert_held(ctx->dev->lock);
	for (pos = ctx->streams.next; pos != &ctx->streams; pos = pos->next)
		dv_stream_take_in_polled(DV_CONTAINER_OF(pos, struct dv_stream,
							 node), true, DV_MAX_QUEUED);
}

/* Set or clear NEED_WAKEUP in every polled ring (dev->lock held). */
static void dv_poll_need_wakeup(struct dv_device *dev, bool set)
{
	struct dv_list *pos;

	os_mutex_assert_held(dev->lock);
	for (pos = dev->polled.next; pos != &dev->polled; pos = pos->next) {
		struct dv_stream *s = DV_CONTAINER_OF(pos, struct dv_stream,
						      poll_node);

		if (set)
			__atomic_fetch_or(&s->sq->flags,
					  DAVINCI_RING_F_NEED_WAKEUP,
					  __ATOMIC_SEQ_CST);
		else
			__atomic_fetch_and(&s->sq->flags,
					   ~DAVINCI_RING_F_NEED_WAKEUP,
					   __ATOMIC_SEQ_CST);
	}
}

/**
 * dv_dispatcher_kick() - wake the dispatcher for new work
 * @dev: the device (dev->lock held)
 *
 * Clears NEED_WAKEUP at once rather than when the dispatcher runs again:
 * it has been told, so a tail published before it wakes needs no second
 * doorbell, and a host that sees the flag set knows the dispatcher slept
 * after this kick.
 */
void dv_dispatcher_kick(struct dv_device *dev)
{
	os_mutex_assert_held(dev->lock);
	dv_poll_need_wakeup(dev, false);
	dev->dispatch.kicks++;
	os_waitq_wake_one(dev->poll_wq);
}

/**
 * dv_device_dispatch_stats() - how the dispatcher of @dev went to sleep
 * @dev: the device
 * @out: filled in
 */
void dv_device_dispatch_stats(struct dv_device *dev,
			      struct dv_dispatch_stats *out)
{
	os_mutex_lock(dev->lock);
	*out = dev->dispatch;
	os_mutex_unlock(dev->lock);
}

/*
 * Run ready short tasks here while an AI core is free; wake a worker for
 * each ready stream left. Return: tasks run.
 */
static u32 dv_dispatch_short(struct dv_device *dev)
{
	u32 ran = 0, left;

	os_mutex_assert_held(dev->lock);
	while (ran < DV_DISPATCH_BATCH && dev->running < dev->cfg.aicores) {
		struct dv_stream *s = dv_sched_pick(dev, true);

		if (!s)
			break;
		dv_sched_run(dev, s);
		ran++;
	}
	left = dv_sched_workers_wanted(dev);
	while (left--)
		os_waitq_wake_one(dev->work_wq);
	return ran;
}

/* One pass over the polled rings. Return: tasks taken in or run. */
static u32 dv_poll_pass(struct dv_device *dev)
{
	struct dv_list *pos;
	u32 work = 0;

	os_mutex_assert_held(dev->lock);
	for (pos = dev->polled.next; pos != &dev->polled; pos = pos->next)
		work += dv_stream_take_in_polled(DV_CONTAINER_OF(pos,
					struct dv_stream, poll_node), false,
					DV_TAKE_IN_DEPTH);
	return work + dv_dispatch_short(dev);
}

/**
 * dv_poll_adapt() - the dispatcher's idle time after a sleep
 * @dev: the device (dev->lock held)
 * @idle_ns: how long it had gone without work when it woke: its idle
 *	time, then the sleep
 * @kicked: a doorbell (or a new polled stream) woke it
 *
 * A doorbell within poll_idle_max_ns of the last work would have found
 * the dispatcher polling, had it polled longer: the idle time doubles, up
 * to poll_idle_max_ns. A sleep that no doorbell ended (the backstop), or
 * that a doorbell ended later than that, halves it, down to poll_idle_ns.
 */
void dv_poll_adapt(struct dv_device *dev, u64 idle_ns, bool kicked)
{
	u64 *cur = &dev->dispatch.idle_ns;

	os_mutex_assert_held(dev->lock);
	if (kicked && idle_ns <= dev->poll_idle_max_ns) {
		if (*cur >= dev->poll_idle_max_ns)
			return;
		*cur = *cur * 2 < dev->poll_idle_max_ns ? *cur * 2 :
			dev->poll_idle_max_ns;
		dev->dispatch.grows++;
	} else {
		if (*cur <= dev->poll_idle_ns)
			return;
		*cur = *cur / 2 > dev->poll_idle_ns ? *cur / 2 :
			dev->poll_idle_ns;
		dev->dispatch.shrinks++;
	}
}

/**
 * dv_dispatcher_main() - body of a device's dispatcher thread
 * @arg: the device
 *
 * Polls while it found work within its idle time (dev->dispatch.idle_ns),
 * yielding between passes, unless another thread wants its CPU
 * (os_cpu_wanted()): that may be the host that is to publish the next
 * tail, and a poller that kept the CPU would delay it by the rest of its
 * idle time. Then it announces NEED_WAKEUP, looks once more (the host may
 * have published a tail before it could see the flag) and sleeps until a
 * doorbell, a new polled stream or DV_POLL_BACKSTOP_NS. How soon a
 * doorbell came sets the next idle time (dv_poll_adapt()), unless the
 * sleep began because its CPU was wanted: polling longer would not have
 * helped then.
 *
 * Return: 0 when the device stops.
 */
int dv_dispatcher_main(void *arg)
{
	struct dv_device *dev = arg;
	u64 idle_since = os_now_ns(), kicks;
	bool wanted;

	os_mutex_lock(dev->lock);
	while (!dev->stop) {
		if (dv_poll_pass(dev)) {
			idle_since = os_now_ns();
			continue;
		}
		wanted = os_cpu_wanted();
		if (!wanted &&
		    os_now_ns() - idle_since < dev->dispatch.idle_ns) {
			os_mutex_unlock(dev->lock);
			os_yield();
			os_mutex_lock(dev->lock);
			continue;
		}
		dv_poll_need_wakeup(dev, true);
		if (!dv_poll_pass(dev) && !dev->stop) {
			dev->dispatch.sleeps++;
			dev->dispatch.cpu_wanted += wanted;
			kicks = dev->dispatch.kicks;
			os_waitq_wait(dev->poll_wq, dev->lock,
				      dv_list_empty(&dev->polled) ?
				      OS_NO_DEADLINE :
				      os_now_ns() + DV_POLL_BACKSTOP_NS);
			if (!wanted)
				dv_poll_adapt(dev, os_now_ns() - idle_since,
					      dev->dispatch.kicks != kicks);
		}
		dv_poll_need_wakeup(dev, false);
		idle_since = os_now_ns();
	}
	os_mutex_unlock(dev->lock);
	return 0;
}
