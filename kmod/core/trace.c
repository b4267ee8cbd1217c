// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - the device's trace: a ring of struct davinci_trace_record
 * written by one-line hooks in the paths every task, allocation, event
 * and fault goes through, read with DAVINCI_IOCTL_TRACE_READ, and handed
 * to the OS layer's hook (the module's tracepoints) as it is written.
 *
 * Every hook runs with dev->lock held, and asserts it; the ring needs no
 * more: a record is a 64-byte store and at most a clock read, no
 * allocation, no lock of its own. The ring records while at least one
 * context asked for it (DAVINCI_TRACE_F_ENABLE, a count of contexts): one
 * context turning it off does not silence another's trace, and the OS
 * layer's hook (the module's tracepoints) gets every record whether the
 * ring keeps it or not; a record neither wants is not built. Each slot
 * remembers the user its record concerns: a reader sees its own user's
 * records and the device's own, all with trace_all.
 *
 * The AI core of a task is a slot in dev->trace.cores, taken when it
 * starts and given back when it completes, whether recording is on or not
 * (its completion entry names it too): at most cfg.aicores tasks run at
 * once, so slots never collide on a per-core timeline.
 */
#include "dv_internal.h"

#define DV_TRACE_MASK		(DAVINCI_TRACE_CAPACITY - 1)
/* @owner of a record no context's user owns: faults, resets, late frees */
#define DV_TRACE_PUBLIC		(1ULL << 32)

static void (*dv_trace_hook)(u32 device,
			     const struct davinci_trace_record *rec);
static bool (*dv_trace_hook_wants)(u32 type);

/**
 * dv_trace_set_hook() - mirror every record to the OS layer
 * @hook: called with the device's lock held for each record written, or
 *	NULL to remove it; it must not sleep nor call into the core
 * @wants: whether the OS layer listens for records of a type now, or
 *	NULL when @hook takes every record
 *
 * Set them before the first device is created, clear them after the last
 * is destroyed.
 */
void dv_trace_set_hook(void (*hook)(u32 device,
				    const struct davinci_trace_record *rec),
		       bool (*wants)(u32 type))
{
	dv_trace_hook = hook;
	dv_trace_hook_wants = wants;
}

/**
 * dv_trace_init() - allocate a device's ring, not recording until a
 *	context asks
 * @tr: the device's trace state
 *
 * Return: 0 or -ENOMEM.
 */
int dv_trace_init(struct dv_trace *tr)
{
	tr->ring = dv_zalloc(sizeof(*tr->ring) * DAVINCI_TRACE_CAPACITY);
	tr->owner = dv_zalloc(sizeof(*tr->owner) * DAVINCI_TRACE_CAPACITY);
	if (!tr->ring || !tr->owner) {
		dv_trace_fini(tr);
		return -ENOMEM;
	}
	return 0;
}

/**
 * dv_trace_fini() - free a device's ring
 * @tr: the device's trace state
 */
void dv_trace_fini(struct dv_trace *tr)
{
	dv_free(tr->ring);
	dv_free(tr->owner);
	tr->ring = NULL;
	tr->owner = NULL;
}

/*
 * A record of @type is wanted: by the ring, or by the OS layer (dev->lock
 * held).
 */
static bool dv_trace_wanted(const struct dv_device *dev, u32 type)
{
	os_mutex_assert_held(dev->lock);
	return dev->trace.enablers ||
	       (dv_trace_hook && (!dv_trace_hook_wants ||
				  dv_trace_hook_wants(type)));
}

/* Who may read a record of @ctx (NULL: the device's own). */
static u64 dv_trace_owner(const struct dv_context *ctx)
{
	return ctx ? ctx->uid : DV_TRACE_PUBLIC;
}

/*
 * Mirror @r and, while a context asked for it, store it in the ring of
 * @dev as @owner's (dev->lock held).
 */
static void dv_trace_put(struct dv_device *dev,
			 const struct davinci_trace_record *r, u64 owner)
{
	struct dv_trace *tr = &dev->trace;

	os_mutex_assert_held(dev->lock);
	if (tr->enablers) {
		tr->owner[tr->written & DV_TRACE_MASK] = owner;
		tr->ring[tr->written++ & DV_TRACE_MASK] = *r;
	}
	if (dv_trace_hook)
		dv_trace_hook(dev->cfg.index, r);
}

/* Start record @r: zeroed but for its type, pid and time. */
static void dv_trace_rec(struct davinci_trace_record *r, u32 type, u32 pid,
			 u64 ts)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->pid = pid;
	r->timestamp_ns = ts;
}

/* A record of a task of @s at @ts: stream, seq, opcode, user_data. */
static void dv_trace_task_fill(struct davinci_trace_record *r, u32 type,
			       const struct dv_stream *s,
			       const struct dv_task *t, u64 ts)
{
	dv_trace_rec(r, type, s->ctx->pid, ts);
	r->id = s->id;
	r->seq = t->seq;
	r->opcode = t->desc.opcode;
	r->arg2 = t->desc.user_data;
}

/**
 * dv_trace_doorbell() - a doorbell was rung (dev->lock held)
 * @ctx: the caller's context
 * @d: its struct davinci_doorbell, as passed in
 */
void dv_trace_doorbell(struct dv_context *ctx, const struct davinci_doorbell *d)
{
	struct davinci_trace_record r;

	os_mutex_assert_held(ctx->dev->lock);
	if (!dv_trace_wanted(ctx->dev, DAVINCI_TRACE_DOORBELL))
		return;
	dv_trace_rec(&r, DAVINCI_TRACE_DOORBELL, ctx->pid, os_now_ns());
	r.id = d->stream_id;
	r.arg0 = d->sq_tail;
	dv_trace_put(ctx->dev, &r, dv_trace_owner(ctx));
}

/**
 * dv_trace_tasks_queued() - a take-in queued tasks on a stream
 * @s: the stream (dev->lock held)
 * @first_seq: the sequence number the first of them got
 *
 * One record serves the tasks of one take-in (a doorbell, a pass over a
 * polled ring, a graph launch), @first_seq up to the stream's last: they
 * are queued within one hold of the lock, so none started before it is
 * written. A take-in that queued nothing (a capture) writes none.
 */
void dv_trace_tasks_queued(struct dv_stream *s, u64 first_seq)
{
	struct dv_device *dev = s->ctx->dev;
	struct davinci_trace_record r;

	os_mutex_assert_held(dev->lock);
	if (s->submitted_seq < first_seq ||
	    !dv_trace_wanted(dev, DAVINCI_TRACE_TASKS_QUEUED))
		return;
	dv_trace_rec(&r, DAVINCI_TRACE_TASKS_QUEUED, s->ctx->pid, os_now_ns());
	r.id = s->id;
	r.seq = first_seq;
	r.arg0 = s->submitted_seq - first_seq + 1;
	dv_trace_put(dev, &r, dv_trace_owner(s->ctx));
}

/**
 * dv_trace_aicore() - the AI core @t runs or ran on
 * @t: a task
 *
 * Return: 0..aicores-1, or DAVINCI_TRACE_NO_CORE when no core ran it.
 */
u16 dv_trace_aicore(const struct dv_task *t)
{
	return t->aicore ? t->aicore - 1 : DAVINCI_TRACE_NO_CORE;
}

/**
 * dv_trace_take_slot() - take the lowest free AI-core slot: a task's
 *	about to start, or an idle core's about to run chunks of a shared task
 * @dev: the device (dev->lock held)
 *
 * Return: the slot + 1, which dv_trace_task_help() or
 * dv_trace_task_complete() gives back; 0 when no slot is free.
 */
u16 dv_trace_take_slot(struct dv_device *dev)
{
	u64 free = ~dev->trace.cores;
	u32 core;

	os_mutex_assert_held(dev->lock);
	if (!free)
		return 0;
	core = __builtin_ctzll(free);
	if (core >= dev->cfg.aicores)
		return 0;
	dev->trace.cores |= 1ULL << core;
	return core + 1;
}

/**
 * dv_trace_take_core() - give @t the lowest free AI-core slot
 * @dev: the device (dev->lock held)
 * @t: a task about to start
 *
 * Its completion entry and records name the slot; dv_trace_task_complete()
 * gives it back.
 */
void dv_trace_take_core(struct dv_device *dev, struct dv_task *t)
{
	os_mutex_assert_held(dev->lock);
	if (!t->aicore)
		t->aicore = dv_trace_take_slot(dev);
}

/**
 * dv_trace_task_help() - an idle AI core ran chunks of @t (dev->lock held)
 * @dev: the device
 * @t: the shared task, still running on its own core
 * @slot: dv_trace_take_slot()'s answer, given back here
 * @start_ns: when the core began on @t's chunks
 * @end_ns: when it left them
 */
void dv_trace_task_help(struct dv_device *dev, const struct dv_task *t,
			u16 slot, u64 start_ns, u64 end_ns)
{
	struct davinci_trace_record r;

	os_mutex_assert_held(dev->lock);
	if (!slot)
		return;
	dev->trace.cores &= ~(1ULL << (slot - 1));
	if (!dv_trace_wanted(dev, DAVINCI_TRACE_TASK_HELP))
		return;
	dv_trace_rec(&r, DAVINCI_TRACE_TASK_HELP, t->ctx->pid, end_ns);
	r.id = t->stream_id;
	r.seq = t->seq;
	r.opcode = t->desc.opcode;
	r.arg0 = start_ns;
	r.arg1 = end_ns;
	r.arg2 = t->desc.user_data;
	r.aicore = slot - 1;
	dv_trace_put(dev, &r, dv_trace_owner(t->ctx));
}

/**
 * dv_trace_task_start() - a task starts to run on its AI core, the lock
 *	about to be dropped (dev->lock held)
 * @s: its stream
 * @t: the task, with its start_ns and AI-core slot set
 *
 * A task that completes as it starts has no such record: nobody could
 * have seen it running, and its TASK_COMPLETE carries the start.
 */
void dv_trace_task_start(struct dv_stream *s, const struct dv_task *t)
{
	struct dv_device *dev = s->ctx->dev;
	struct davinci_trace_record r;

	os_mutex_assert_held(dev->lock);
	if (!dv_trace_wanted(dev, DAVINCI_TRACE_TASK_START))
		return;
	dv_trace_task_fill(&r, DAVINCI_TRACE_TASK_START, s, t, t->start_ns);
	r.aicore = dv_trace_aicore(t);
	dv_trace_put(dev, &r, dv_trace_owner(s->ctx));
}

/**
 * dv_trace_task_complete() - a task completed (dev->lock held)
 * @s: its stream
 * @t: the task
 * @status: DAVINCI_STATUS_*
 * @start_ns: when it started, 0 when it never ran
 * @end_ns: when it completed
 *
 * Gives back its AI-core slot. A task no AI core ran (events,
 * notifications, failures the scheduler completes itself) has none.
 */
void dv_trace_task_complete(struct dv_stream *s, struct dv_task *t,
			    u32 status, u64 start_ns, u64 end_ns)
{
	struct dv_device *dev = s->ctx->dev;
	struct davinci_trace_record r;

	os_mutex_assert_held(dev->lock);
	if (t->aicore)
		dev->trace.cores &= ~(1ULL << (t->aicore - 1));
	if (!dv_trace_wanted(dev, DAVINCI_TRACE_TASK_COMPLETE))
		return;
	dv_trace_task_fill(&r, DAVINCI_TRACE_TASK_COMPLETE, s, t, end_ns);
	r.status = status;
	r.arg0 = start_ns;
	r.arg1 = end_ns;
	r.aicore = dv_trace_aicore(t);
	dv_trace_put(dev, &r, dv_trace_owner(s->ctx));
}

/**
 * dv_trace_mem() - memory was allocated or returned (dev->lock held)
 * @buf: the buffer
 * @type: DAVINCI_TRACE_MEM_ALLOC or DAVINCI_TRACE_MEM_FREE
 *
 * A free is logged when the memory goes back to its pool: after the last
 * task or mapping holding it let go.
 */
void dv_trace_mem(struct dv_buffer *buf, u32 type)
{
	struct dv_device *dev = buf->dev;
	struct davinci_trace_record r;

	os_mutex_assert_held(dev->lock);
	if (!dv_trace_wanted(dev, type))
		return;
	dv_trace_rec(&r, type, buf->ctx ? buf->ctx->pid : 0, os_now_ns());
	r.id = buf->pool->index;
	r.arg0 = dv_buffer_dev_addr(buf);
	r.arg1 = buf->alloc_size;
	r.arg2 = buf->pool->total - buf->pool->free;
	dv_trace_put(dev, &r, dv_trace_owner(buf->ctx));
}

/**
 * dv_trace_event() - an event record completed, or a host wait began
 * @ctx: the event's context (dev->lock held)
 * @type: DAVINCI_TRACE_EVENT_RECORD or DAVINCI_TRACE_EVENT_WAIT
 * @event_id: the event
 * @gen: the generation completed, or waited for
 */
void dv_trace_event(struct dv_context *ctx, u32 type, u32 event_id, u64 gen)
{
	struct davinci_trace_record r;

	os_mutex_assert_held(ctx->dev->lock);
	if (!dv_trace_wanted(ctx->dev, type))
		return;
	dv_trace_rec(&r, type, ctx->pid, os_now_ns());
	r.id = event_id;
	r.seq = gen;
	dv_trace_put(ctx->dev, &r, dv_trace_owner(ctx));
}

/**
 * dv_trace_ctx() - a context was reset, or failed (dev->lock held)
 * @ctx: the context
 * @type: DAVINCI_TRACE_CTX_RESET or DAVINCI_TRACE_CTX_FAIL
 */
void dv_trace_ctx(struct dv_context *ctx, u32 type)
{
	struct davinci_trace_record r;

	os_mutex_assert_held(ctx->dev->lock);
	if (!dv_trace_wanted(ctx->dev, type))
		return;
	dv_trace_rec(&r, type, ctx->pid, os_now_ns());
	dv_trace_put(ctx->dev, &r, dv_trace_owner(ctx));
}

/**
 * dv_trace_mgmt() - a management event: fault, reset, health change
 * @dev: the device (dev->lock held)
 * @ev: the event as logged
 */
void dv_trace_mgmt(struct dv_device *dev, const struct davinci_mgmt_event *ev)
{
	struct davinci_trace_record r;

	os_mutex_assert_held(dev->lock);
	if (!dv_trace_wanted(dev, DAVINCI_TRACE_MGMT))
		return;
	dv_trace_rec(&r, DAVINCI_TRACE_MGMT, 0, ev->timestamp_ns);
	r.id = ev->health;
	r.status = ev->type;
	r.seq = ev->seq;
	r.arg0 = ev->fault;
	r.arg1 = ev->addr;
	r.arg2 = ev->value;
	dv_trace_put(dev, &r, DV_TRACE_PUBLIC);
}

/* @ctx asks for recording, or takes its request back (dev->lock held). */
static void dv_trace_request(struct dv_context *ctx, bool on)
{
	os_mutex_assert_held(ctx->dev->lock);
	if (ctx->trace_on == on)
		return;
	ctx->trace_on = on;
	if (on)
		ctx->dev->trace.enablers++;
	else
		ctx->dev->trace.enablers--;
}

/**
 * dv_trace_ctx_close() - a context closes: its request to record goes
 * @ctx: the context (dev->lock held)
 */
void dv_trace_ctx_close(struct dv_context *ctx)
{
	os_mutex_assert_held(ctx->dev->lock);
	dv_trace_request(ctx, false);
}

/**
 * dv_context_set_trace_all() - let a context read every user's records
 * @ctx: the context, just opened
 * @all: true for a privileged opener
 */
void dv_context_set_trace_all(struct dv_context *ctx, bool all)
{
	os_mutex_lock(ctx->dev->lock);
	ctx->trace_all = all;
	os_mutex_unlock(ctx->dev->lock);
}

/* @ctx may read the record in slot @slot (dev->lock held). */
static bool dv_trace_visible(const struct dv_context *ctx, u64 slot)
{
	u64 owner = ctx->dev->trace.owner[slot];

	os_mutex_assert_held(ctx->dev->lock);
	return ctx->trace_all || owner == DV_TRACE_PUBLIC || owner == ctx->uid;
}

/**
 * dv_ioctl_trace_read() - DAVINCI_IOCTL_TRACE_READ
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_trace_read
 *
 * F_ENABLE and F_DISABLE are this context's request. Records it may not
 * read are skipped before the first one returned, and end the read after
 * it, so that @rec stays records @next - @count .. @next - 1.
 *
 * Return: 0, or -EINVAL for unknown flags or both.
 */
int dv_ioctl_trace_read(struct dv_context *ctx, void *arg)
{
	const u32 both = DAVINCI_TRACE_F_ENABLE | DAVINCI_TRACE_F_DISABLE;
	struct davinci_trace_read *q = arg;
	struct dv_trace *tr = &ctx->dev->trace;
	u64 oldest, at;
	u32 n = 0;

	os_mutex_assert_held(ctx->dev->lock);
	if ((q->flags & ~both) || (q->flags & both) == both)
		return -EINVAL;
	if (q->flags & DAVINCI_TRACE_F_ENABLE)
		dv_trace_request(ctx, true);
	if (q->flags & DAVINCI_TRACE_F_DISABLE)
		dv_trace_request(ctx, false);
	oldest = tr->written > DAVINCI_TRACE_CAPACITY ?
		 tr->written - DAVINCI_TRACE_CAPACITY : 0;
	at = q->since;
	if (at > tr->written)
		at = tr->written;
	q->dropped = at < oldest ? oldest - at : 0;
	for (at += q->dropped; at < tr->written && n < DAVINCI_TRACE_READ_MAX;
	     at++) {
		if (dv_trace_visible(ctx, at & DV_TRACE_MASK))
			q->rec[n++] = tr->ring[at & DV_TRACE_MASK];
		else if (n)
			break;
	}
	q->count = n;
	q->next = at;
	q->written = tr->written;
	q->enabled = tr->enablers > 0;
	q->capacity = DAVINCI_TRACE_CAPACITY;
	return 0;
}
