// SPDX-License-Identifier: GPL-2.0
/*
 * test_trace.c - the device's trace ring (DAVINCI_IOCTL_TRACE_READ): a
 * record per doorbell, per take-in of tasks, per task started and
 * completed, AI-core
 * slots that never overlap, switching recording off and on, and a full ring
 * that drops its oldest records and says how many; who may switch it and
 * read it (test_trace_owners).
 */
#define _GNU_SOURCE
#include "fixtures.h"

#define NSTREAMS	3
#define NTASKS		20
#define AICORES		2

struct trace_log {
	struct davinci_trace_record *rec;
	uint64_t n, dropped, first, next;
};

/* Read every record from @since on into @log (malloc'ed). */
static int read_all(struct dv_context *ctx, uint64_t since,
		    struct trace_log *log)
{
	static struct davinci_trace_read q;
	uint64_t cap = DAVINCI_TRACE_CAPACITY;
	int ret;

	memset(log, 0, sizeof(*log));
	log->rec = calloc(cap, sizeof(*log->rec));
	if (!log->rec)
		return -ENOMEM;
	log->next = since;
	for (;;) {
		memset(&q, 0, sizeof(q));
		q.since = log->next;
		ret = dvc_ioctl(ctx, DAVINCI_IOCTL_TRACE_READ, &q);
		if (ret)
			return ret;
		if (!log->n && !log->dropped)
			log->first = q.next - q.count;
		log->dropped += q.dropped;
		if (log->n + q.count > cap)
			return -E2BIG;
		memcpy(log->rec + log->n, q.rec, q.count * sizeof(q.rec[0]));
		log->n += q.count;
		log->next = q.next;
		if (!q.count || q.next == q.written)
			return 0;
	}
}

static uint64_t written(struct dv_context *ctx)
{
	struct davinci_trace_read q = { .since = ~0ULL };

	return dvc_ioctl(ctx, DAVINCI_IOCTL_TRACE_READ, &q) ? 0 : q.written;
}

static uint32_t count(const struct trace_log *log, uint32_t type,
		      uint32_t stream)
{
	uint32_t n = 0;
	uint64_t i;

	for (i = 0; i < log->n; i++)
		n += log->rec[i].type == type && log->rec[i].id == stream;
	return n;
}

/*
 * The TASKS_QUEUED records of @stream cover sequence numbers @first to
 * @last once each, in order. Return: the number of such records, or -1.
 */
static int queued_covers(const struct trace_log *log, uint32_t stream,
			 uint64_t first, uint64_t last)
{
	uint64_t next = first, i;
	int n = 0;

	for (i = 0; i < log->n; i++) {
		const struct davinci_trace_record *r = &log->rec[i];

		if (r->type != DAVINCI_TRACE_TASKS_QUEUED || r->id != stream)
			continue;
		if (r->seq != next || !r->arg0 || r->opcode || r->arg2)
			return -1;
		next += r->arg0;
		n++;
	}
	return next == last + 1 ? n : -1;
}

/* No two tasks on one AI core at once; every core below AICORES. */
static int cores_overlap(const struct trace_log *log)
{
	uint64_t i, j;

	for (i = 0; i < log->n; i++) {
		const struct davinci_trace_record *a = &log->rec[i];

		if (a->type != DAVINCI_TRACE_TASK_COMPLETE || !a->arg0)
			continue;
		if (a->aicore >= AICORES)
			return 1;
		for (j = i + 1; j < log->n; j++) {
			const struct davinci_trace_record *b = &log->rec[j];

			if (b->type == DAVINCI_TRACE_TASK_COMPLETE && b->arg0 &&
			    b->aicore == a->aicore && b->arg0 < a->arg1 &&
			    a->arg0 < b->arg1)
				return 1;
		}
	}
	return 0;
}

void test_trace_ring(void)
{
	struct davinci_task t[NTASKS];
	struct davinci_trace_read q;
	struct stream s[NSTREAMS];
	struct trace_log log;
	struct fixture fx;
	struct buf b;
	uint64_t since, last = 0, queued_ns;
	uint32_t i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	memset(&q, 0, sizeof(q));
	q.flags = DAVINCI_TRACE_F_ENABLE;
	REQUIRE(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TRACE_READ, &q) == 0);
	CHECK_EQ(q.enabled, 1);
	REQUIRE(fx_buf(&fx, 1 * MiB, 0, &b) == 0);
	since = written(fx.ctx);
	for (i = 0; i < NSTREAMS; i++)
		REQUIRE(stream_create(fx.ctx, 0, 64, 64, &s[i]) == 0);
	for (i = 0; i < NTASKS; i++)
		t[i] = i % 2 ? t_nop(100) : t_memset(b.a.dev_addr, 1, 4096);
	for (i = 0; i < NSTREAMS; i++)
		REQUIRE(submit(fx.ctx, &s[i], t, NTASKS, &last) == 0);
	for (i = 0; i < NSTREAMS; i++)
		CHECK_EQ(swait(fx.ctx, &s[i], NTASKS, 10000, NULL), 0);
	REQUIRE(read_all(fx.ctx, since, &log) == 0);
	CHECK_EQ(log.dropped, 0);
	CHECK_EQ(log.first, since);
	for (i = 0; i < NSTREAMS; i++) {
		uint32_t id = s[i].c.stream_id;

		CHECK_EQ(count(&log, DAVINCI_TRACE_DOORBELL, id), 1);
		CHECK_EQ(queued_covers(&log, id, 1, NTASKS), 1);
		CHECK_EQ(count(&log, DAVINCI_TRACE_TASK_START, id), NTASKS);
		CHECK_EQ(count(&log, DAVINCI_TRACE_TASK_COMPLETE, id), NTASKS);
	}
	CHECK_EQ(cores_overlap(&log), 0);
	/* Each completion entry names the core its trace record names. */
	for (i = 0; i < log.n; i++) {
		const struct davinci_trace_record *r = &log.rec[i];

		if (r->type == DAVINCI_TRACE_TASK_COMPLETE &&
		    r->id == s[0].c.stream_id)
			CHECK_EQ(cq_slot(&s[0], (uint32_t)r->seq - 1)->aicore,
				 r->aicore);
	}
	free(log.rec);

	/* Off: nothing written; both flags or an unknown one: EINVAL. */
	memset(&q, 0, sizeof(q));
	q.flags = DAVINCI_TRACE_F_DISABLE;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TRACE_READ, &q), 0);
	CHECK_EQ(q.enabled, 0);
	since = written(fx.ctx);
	REQUIRE(submit(fx.ctx, &s[0], t, 4, &last) == 0);
	CHECK_EQ(swait(fx.ctx, &s[0], last, 10000, NULL), 0);
	CHECK_EQ(written(fx.ctx), since);
	q.flags = DAVINCI_TRACE_F_ENABLE | DAVINCI_TRACE_F_DISABLE;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TRACE_READ, &q), -EINVAL);
	q.flags = 1U << 2;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TRACE_READ, &q), -EINVAL);
	q.flags = DAVINCI_TRACE_F_ENABLE;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TRACE_READ, &q), 0);
	CHECK_EQ(q.enabled, 1);

	/*
	 * A task that completes as it starts (a NOP without a duration) has
	 * no TASK_START: its TASK_COMPLETE carries the start and the core.
	 * The tasks of one take-in share one TASKS_QUEUED, written before any
	 * of them started.
	 */
	since = written(fx.ctx);
	for (i = 0; i < 4; i++)
		t[i] = t_nop(0);
	REQUIRE(submit(fx.ctx, &s[2], t, 4, &last) == 0);
	CHECK_EQ(swait(fx.ctx, &s[2], last, 10000, NULL), 0);
	REQUIRE(read_all(fx.ctx, since, &log) == 0);
	CHECK_EQ(queued_covers(&log, s[2].c.stream_id, last - 3, last), 1);
	CHECK_EQ(count(&log, DAVINCI_TRACE_TASK_START, s[2].c.stream_id), 0);
	CHECK_EQ(count(&log, DAVINCI_TRACE_TASK_COMPLETE, s[2].c.stream_id),
		 4);
	queued_ns = 0;
	for (i = 0; i < log.n; i++) {
		const struct davinci_trace_record *r = &log.rec[i];

		if (r->type == DAVINCI_TRACE_TASKS_QUEUED)
			queued_ns = r->timestamp_ns;
		if (r->type != DAVINCI_TRACE_TASK_COMPLETE)
			continue;
		CHECK(queued_ns && queued_ns <= r->arg0);
		CHECK_EQ(r->arg0, r->arg1);	/* started and ended at once */
		CHECK(r->aicore < AICORES);
		CHECK_EQ(cq_slot(&s[2], (uint32_t)r->seq - 1)->end_ns, r->arg1);
	}
	free(log.rec);

	/* Full: the oldest go, and the reader is told how many. */
	since = written(fx.ctx);
	for (i = 0; i < NTASKS; i++)
		t[i] = t_nop(0);
	while (written(fx.ctx) - since <= DAVINCI_TRACE_CAPACITY + 100) {
		REQUIRE(submit(fx.ctx, &s[1], t, NTASKS, &last) == 0);
		CHECK_EQ(swait(fx.ctx, &s[1], last, 10000, NULL), 0);
	}
	REQUIRE(read_all(fx.ctx, since, &log) == 0);
	CHECK_EQ(log.n, DAVINCI_TRACE_CAPACITY);
	CHECK_EQ(log.dropped, log.next - since - DAVINCI_TRACE_CAPACITY);
	CHECK_EQ(log.first, since + log.dropped);
	CHECK(log.dropped > 100);
	free(log.rec);

	for (i = 0; i < NSTREAMS; i++)
		stream_destroy(fx.ctx, &s[i]);
	fixture_exit(&fx);
}

/*
 * Every kind of take-in writes one TASKS_QUEUED for what it queued: a
 * pass over a polled ring, a graph launch; a capture queues nothing.
 */
void test_trace_take_ins(void)
{
	struct davinci_task t[5];
	struct davinci_graph_capture c;
	struct davinci_graph_launch l;
	struct davinci_doorbell d;
	struct davinci_trace_read q;
	struct stream polled, rung;
	struct trace_log log;
	struct fixture fx;
	uint64_t since, last;
	uint32_t i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	memset(&q, 0, sizeof(q));
	q.flags = DAVINCI_TRACE_F_ENABLE;
	REQUIRE(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TRACE_READ, &q) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16, DAVINCI_STREAM_F_POLLED,
				    &polled) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &rung) == 0);
	for (i = 0; i < 5; i++)
		t[i] = t_nop(0);
	since = written(fx.ctx);

	/* Five published at once on a polled ring: one record for five. */
	publish(&polled, t, 5);
	memset(&d, 0, sizeof(d));
	d.stream_id = polled.c.stream_id;
	d.sq_tail = 5;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
	CHECK_EQ(swait(fx.ctx, &polled, 5, 10000, NULL), 0);

	/* Captured: nothing queued. Each launch of the graph: one record. */
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_CAPTURE, &rung, &c),
		 0);
	CHECK_EQ(submit(fx.ctx, &rung, t, 3, &last), 0);
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_END, &rung, &c), 0);
	REQUIRE(read_all(fx.ctx, since, &log) == 0);
	CHECK_EQ(queued_covers(&log, polled.c.stream_id, 1, 5), 1);
	CHECK_EQ(count(&log, DAVINCI_TRACE_TASKS_QUEUED, rung.c.stream_id), 0);
	free(log.rec);
	for (i = 0; i < 2; i++)
		CHECK_EQ(graph_launch(fx.ctx, c.graph_id, &rung, &l), 0);
	CHECK_EQ(l.last_seq, 6);
	CHECK_EQ(swait(fx.ctx, &rung, 6, 10000, NULL), 0);
	REQUIRE(read_all(fx.ctx, since, &log) == 0);
	CHECK_EQ(queued_covers(&log, rung.c.stream_id, 1, 6), 2);
	CHECK_EQ(count(&log, DAVINCI_TRACE_TASK_COMPLETE, rung.c.stream_id),
		 6);
	free(log.rec);

	stream_destroy(fx.ctx, &polled);
	stream_destroy(fx.ctx, &rung);
	fixture_exit(&fx);
}

static uint64_t hooked, hooked_of[DAVINCI_TRACE_TASKS_QUEUED + 1];

static void count_hook(uint32_t device, const struct davinci_trace_record *r)
{
	(void)device;
	__atomic_add_fetch(&hooked, 1, __ATOMIC_RELAXED);
	if (r->type < sizeof(hooked_of) / sizeof(hooked_of[0]))
		__atomic_add_fetch(&hooked_of[r->type], 1, __ATOMIC_RELAXED);
}

/* An OS layer listening for completions only. */
static bool wants_completions(uint32_t type)
{
	return type == DAVINCI_TRACE_TASK_COMPLETE;
}

/* TRACE_READ on @ctx with @flags; the answer's enabled, or -errno. */
static int trace_flags(struct dv_context *ctx, uint32_t flags)
{
	struct davinci_trace_read q = { .since = ~0ULL, .flags = flags };
	int ret = dvc_ioctl(ctx, DAVINCI_IOCTL_TRACE_READ, &q);

	return ret ? ret : (int)q.enabled;
}

/* TASK_COMPLETE records of @pid among those @ctx reads from @since on. */
static uint64_t seen_of(struct dv_context *ctx, uint64_t since, uint32_t pid)
{
	struct trace_log log;
	uint64_t i, n = 0;

	if (read_all(ctx, since, &log)) {
		free(log.rec);
		return ~0ULL;
	}
	for (i = 0; i < log.n; i++)
		n += log.rec[i].pid == pid &&
		     log.rec[i].type == DAVINCI_TRACE_TASK_COMPLETE;
	free(log.rec);
	return n;
}

/* Submit @n NOPs on a new stream of @ctx and wait for them. */
static int run_nops(struct dv_context *ctx, uint32_t n)
{
	struct davinci_task t[8];
	struct stream s;
	uint64_t last = 0;
	uint32_t i;
	int ret;

	for (i = 0; i < n && i < 8; i++)
		t[i] = t_nop(0);
	ret = stream_create(ctx, 0, 64, 64, &s);
	if (ret)
		return ret;
	ret = submit(ctx, &s, t, i, &last);
	if (!ret)
		ret = swait(ctx, &s, last, 10000, NULL);
	stream_destroy(ctx, &s);
	return ret;
}

/*
 * The ring records while some context asked for it: another user turning
 * it off or closing does not stop it. A reader sees its own user's
 * records, a trace_all one everybody's. The OS layer's hook (the module's
 * tracepoints) gets every record, ring on or off.
 */
void test_trace_owners(void)
{
	struct dv_context *alice, *alice2, *bob, *root;
	struct dv_device *dev;
	uint64_t since, w;

	hooked = 0;
	dv_trace_set_hook(count_hook, NULL);
	dev = mkdev(0);
	REQUIRE(dev != NULL);
	alice = dvc_context_open_as(dev, 101, 1000);
	alice2 = dvc_context_open_as(dev, 102, 1000);
	bob = dvc_context_open_as(dev, 201, 2000);
	root = dvc_context_open_as(dev, 301, 0);
	REQUIRE(alice && alice2 && bob && root);
	CHECK_EQ(dvc_context_trace_all(root, 1), 0);
	CHECK_EQ(dvc_context_trace_all(NULL, 1), -EINVAL);

	/* Nobody asked: nothing kept, but the hook sees the tasks. */
	CHECK_EQ(trace_flags(alice, 0), 0);
	w = written(alice);
	CHECK_EQ(run_nops(alice, 4), 0);
	CHECK_EQ(written(alice), w);
	CHECK(hooked >= 5);		/* one take-in, four completions */

	/* Alice asks; Bob's "off" is his own, and takes nothing of hers. */
	CHECK_EQ(trace_flags(alice, DAVINCI_TRACE_F_ENABLE), 1);
	CHECK_EQ(trace_flags(alice, DAVINCI_TRACE_F_ENABLE), 1);
	CHECK_EQ(trace_flags(bob, DAVINCI_TRACE_F_DISABLE), 1);
	CHECK_EQ(trace_flags(bob, DAVINCI_TRACE_F_ENABLE), 1);
	CHECK_EQ(trace_flags(bob, DAVINCI_TRACE_F_DISABLE), 1);
	CHECK_EQ(trace_flags(bob, DAVINCI_TRACE_F_DISABLE), 1);
	CHECK_EQ(trace_flags(bob, 1U << 5), -EINVAL);
	since = written(alice);
	CHECK_EQ(run_nops(alice2, 4), 0);
	CHECK_EQ(run_nops(bob, 4), 0);
	CHECK(written(alice) >= since + 2 * 6);

	/* Alice reads her user's processes, Bob his, root everybody's. */
	CHECK_EQ(seen_of(alice, since, 102), 4);
	CHECK_EQ(seen_of(alice, since, 201), 0);
	CHECK_EQ(seen_of(bob, since, 102), 0);
	CHECK_EQ(seen_of(bob, since, 201), 4);
	CHECK_EQ(seen_of(root, since, 102), 4);
	CHECK_EQ(seen_of(root, since, 201), 4);

	/* Bob closing changes nothing; Alice closing ends her request. */
	dvc_context_close(bob);
	CHECK_EQ(trace_flags(alice2, 0), 1);
	dvc_context_close(alice);
	CHECK_EQ(trace_flags(alice2, 0), 0);
	w = written(alice2);
	hooked = 0;
	CHECK_EQ(run_nops(alice2, 2), 0);
	CHECK_EQ(written(alice2), w);
	CHECK(hooked >= 4);

	/* The hook gets only the records its OS layer listens for. */
	dv_trace_set_hook(count_hook, wants_completions);
	memset(hooked_of, 0, sizeof(hooked_of));
	hooked = 0;
	CHECK_EQ(run_nops(alice2, 3), 0);
	CHECK_EQ(hooked_of[DAVINCI_TRACE_TASK_COMPLETE], 3);
	CHECK_EQ(hooked, 3);
	/* ... and every record while a ring records. */
	CHECK_EQ(trace_flags(alice2, DAVINCI_TRACE_F_ENABLE), 1);
	memset(hooked_of, 0, sizeof(hooked_of));
	CHECK_EQ(run_nops(alice2, 3), 0);
	CHECK_EQ(hooked_of[DAVINCI_TRACE_TASKS_QUEUED], 1);
	CHECK_EQ(hooked_of[DAVINCI_TRACE_TASK_COMPLETE], 3);

	dvc_context_close(alice2);
	dvc_context_close(root);
	dvc_device_destroy(dev);
	dv_trace_set_hook(NULL, NULL);
	CHECK(stats_zero());
}
