// SPDX-License-Identifier: GPL-2.0
/*
 * test_streams.c - tests of streams: ordering, completion queues, priorities,
 * queries and cancels, sync, watchdog, error recovery, closes and
 * resets, stress.
 */
#define _GNU_SOURCE
#include "fixtures.h"

void test_stream_ordering(void)
{
	struct fixture fx;
	struct buf a, b, c;
	struct stream s;
	struct davinci_task t[200];
	uint64_t last, prev_end = 0;
	uint32_t i, n = 0;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(fx_buf(&fx, 4096, 0, &a) == 0);
	REQUIRE(fx_buf(&fx, 4096 * 100, 0, &b) == 0);
	REQUIRE(fx_buf(&fx, 4096, 0, &c) == 0);
	REQUIRE(fx_stream(&fx, 3, 256, 256, &s) == 0);
	/* a = i; b[i] = a; repeated: b records the order of execution. */
	for (i = 0; i < 100; i++) {
		t[n++] = t_memset(a.a.dev_addr, (uint8_t)i, 4096);
		t[n++] = t_memcpy(b.a.dev_addr + 4096ULL * i, a.a.dev_addr,
				  4096);
	}
	CHECK_EQ(submit(fx.ctx, &s, t, 100, &last), 0);
	CHECK_EQ(last, 100);
	CHECK_EQ(submit(fx.ctx, &s, t + 100, 100, &last), 0);
	CHECK_EQ(last, 200);
	CHECK_EQ(s.sq->head, 200);
	CHECK_EQ(swait(fx.ctx, &s, 0, 10000, NULL), 0);
	for (i = 0; i < 100; i++)
		CHECK(all_set(b.p + 4096ULL * i, (uint8_t)i, 4096));
	/* The CQ (256 entries) holds all 200, in order. */
	CHECK_EQ(s.cq->tail, 200);
	for (i = 0; i < 200; i++) {
		struct davinci_completion *e = cq_slot(&s, i);

		CHECK_EQ(e->seq, i + 1);
		CHECK(e->start_ns >= prev_end);
		prev_end = e->end_ns;
	}
	/* Empty doorbell. */
	{
		struct davinci_doorbell d = { .stream_id = s.c.stream_id,
					      .sq_tail = s.tail };

		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
		CHECK_EQ(d.first_seq, 201);
		CHECK_EQ(d.last_seq, 200);
	}
	fixture_exit(&fx);
}

void test_cq_overflow(void)
{
	struct fixture fx;
	struct stream s;
	struct davinci_task t[8];
	struct davinci_stream_wait w;
	uint64_t last;
	int i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(fx_stream(&fx, 0, 8, 4, &s) == 0);
	for (i = 0; i < 8; i++)
		t[i] = t_nop(0);
	CHECK_EQ(submit(fx.ctx, &s, t, 8, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, &w), 0);
	CHECK_EQ(w.completed_seq, 8);
	CHECK_EQ(s.cq->tail, 4);
	CHECK_EQ(s.cq->overflow, 4);
	/* Consume two; the next two fit. */
	s.cq->head = 2;
	CHECK_EQ(submit(fx.ctx, &s, t, 2, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(s.cq->tail, 6);
	CHECK_EQ(cq_slot(&s, 5)->seq, 10);
	/* A garbage head is clamped: entries dropped, nothing overwritten. */
	s.cq->head = 0x80000000u;
	CHECK_EQ(submit(fx.ctx, &s, t, 1, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(s.cq->tail, 6);
	fixture_exit(&fx);
}

void test_parallel_streams(void)
{
	struct fixture fx;
	struct stream s1, s2;
	struct davinci_task t = t_nop(300000);
	struct davinci_task_query q1, q2;
	uint64_t l1, l2;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(fx_stream(&fx, 0, 0, 0, &s1) == 0);
	REQUIRE(fx_stream(&fx, 0, 0, 0, &s2) == 0);
	CHECK_EQ(submit(fx.ctx, &s1, &t, 1, &l1), 0);
	CHECK_EQ(submit(fx.ctx, &s2, &t, 1, &l2), 0);
	CHECK_EQ(swait(fx.ctx, &s1, l1, 5000, NULL), 0);
	CHECK_EQ(swait(fx.ctx, &s2, l2, 5000, NULL), 0);
	CHECK_EQ(tquery(fx.ctx, &s1, l1, &q1), 0);
	CHECK_EQ(tquery(fx.ctx, &s2, l2, &q2), 0);
	CHECK_EQ(q1.status, 0);
	CHECK_EQ(q2.status, 0);
	CHECK(q1.end_ns - q1.start_ns >= 300000000ULL);
	/* The two NOPs overlapped in time. */
	CHECK(q1.start_ns < q2.end_ns && q2.start_ns < q1.end_ns);
	{
		struct davinci_device_info di;
		uint64_t busy = 0;

		CHECK_EQ(dvc_device_info(fx.dev, &di, &busy), 0);
		CHECK(busy >= 600000000ULL);
	}
	fixture_exit(&fx);
}

void test_priority(void)
{
	/* One AI core: a high priority stream overtakes queued low ones. */
	struct dv_device_config cfg = fx_device_config(1, 0);
	struct dv_device *dev;
	struct dv_context *ctx;
	struct stream busy, lo, hi;
	struct davinci_task t = t_nop(100000), z = t_nop(1000);
	struct davinci_task_query ql, qh;
	struct davinci_version v;
	uint64_t lb, ll, lh;

	cfg.aicores = 1;
	dev = dvc_device_create(&cfg);
	REQUIRE(dev);
	ctx = dvc_context_open(dev, 1);
	REQUIRE(ctx);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_GET_VERSION, &v), 0);
	CHECK(!strcmp(v.backend, "lib"));
	REQUIRE(stream_create(ctx, 4, 0, 0, &busy) == 0);
	REQUIRE(stream_create(ctx, 7, 0, 0, &lo) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &hi) == 0);
	CHECK_EQ(submit(ctx, &busy, &t, 1, &lb), 0);
	usleep(20000);
	CHECK_EQ(submit(ctx, &lo, &z, 1, &ll), 0);
	CHECK_EQ(submit(ctx, &hi, &z, 1, &lh), 0);
	CHECK_EQ(swait(ctx, &lo, ll, 5000, NULL), 0);
	CHECK_EQ(swait(ctx, &hi, lh, 5000, NULL), 0);
	CHECK_EQ(tquery(ctx, &lo, ll, &ql), 0);
	CHECK_EQ(tquery(ctx, &hi, lh, &qh), 0);
	CHECK(qh.end_ns <= ql.start_ns);
	stream_unmap(&busy);
	stream_unmap(&lo);
	stream_unmap(&hi);
	dvc_context_close(ctx);
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}

void test_query_cancel(void)
{
	struct fixture fx;
	struct stream s;
	struct davinci_task t[3];
	struct davinci_task_query q;
	struct davinci_stream_query sq;
	struct buf m;
	uint64_t last;

	REQUIRE(fixture_init_stream(&fx, 0, &s) == 0);
	REQUIRE(fx_buf(&fx, 4096, 0, &m) == 0);
	t[0] = t_nop(2000000);
	t[1] = t_nop(1000000);
	t[2] = t_memset(m.a.dev_addr, 3, 4096);
	CHECK_EQ(submit(fx.ctx, &s, t, 3, &last), 0);
	wait_running(fx.ctx, &s, 1);
	CHECK_EQ(tquery(fx.ctx, &s, 1, &q), 0);
	CHECK_EQ(q.state, DAVINCI_TASK_RUNNING);
	CHECK(q.start_ns != 0);
	CHECK_EQ(tquery(fx.ctx, &s, 2, &q), 0);
	CHECK_EQ(q.state, DAVINCI_TASK_QUEUED);
	CHECK_EQ(q.start_ns, 0);
	memset(&sq, 0, sizeof(sq));
	sq.stream_id = s.c.stream_id;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_QUERY, &sq), 0);
	CHECK_EQ(sq.state, DAVINCI_STREAM_BUSY);
	CHECK_EQ(sq.submitted_seq, 3);
	CHECK_EQ(sq.completed_seq, 0);
	/* Cancel the queued one, then the running one. */
	CHECK_EQ(tquery(fx.ctx, &s, 2, &q), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TASK_CANCEL, &q), 0);
	CHECK_EQ(tquery(fx.ctx, &s, 1, &q), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TASK_CANCEL, &q), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, NULL), 0);
	CHECK_EQ(tquery(fx.ctx, &s, 1, &q), 0);
	CHECK_EQ(q.state, DAVINCI_TASK_DONE);
	CHECK_EQ(q.status, DAVINCI_STATUS_CANCELLED);
	CHECK(q.end_ns - q.start_ns < 1000000000ULL);
	CHECK_EQ(tquery(fx.ctx, &s, 2, &q), 0);
	CHECK_EQ(q.status, DAVINCI_STATUS_CANCELLED);
	CHECK_EQ(q.start_ns, 0);
	CHECK_EQ(tstatus(fx.ctx, &s, 3), DAVINCI_STATUS_OK);	/* no error */
	CHECK_EQ(m.p[0], 3);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_QUERY, &sq), 0);
	CHECK_EQ(sq.state, DAVINCI_STREAM_IDLE);
	/* Cancel a completed task; unknown ones. */
	CHECK_EQ(tquery(fx.ctx, &s, 3, &q), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TASK_CANCEL, &q), -EALREADY);
	CHECK_EQ(tquery(fx.ctx, &s, 0, &q), -ENOENT);
	CHECK_EQ(tquery(fx.ctx, &s, 4, &q), -ENOENT);
	q.stream_id = 999;
	q.seq = 1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TASK_QUERY, &q), -ENOENT);
	q.stream_id = s.c.stream_id;
	q.pad = 1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TASK_QUERY, &q), -EINVAL);
	fixture_exit(&fx);
}

void test_sync(void)
{
	struct fixture fx;
	struct stream s1, s2;
	struct davinci_task t = t_nop(150000);
	struct davinci_sync y = { 0 };
	struct davinci_stream_query q;

	REQUIRE(fixture_init(&fx, 0) == 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_SYNC, &y), 0);
	REQUIRE(stream_create(fx.ctx, 0, 0, 0, &s1) == 0);
	REQUIRE(stream_create(fx.ctx, 1, 0, 0, &s2) == 0);
	CHECK_EQ(submit(fx.ctx, &s1, &t, 1, NULL), 0);
	CHECK_EQ(submit(fx.ctx, &s2, &t, 1, NULL), 0);
	CHECK_EQ(submit(fx.ctx, &s2, &t, 1, NULL), 0);
	y.timeout_ms = 0;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_SYNC, &y), -ETIMEDOUT);
	y.timeout_ms = 20;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_SYNC, &y), -ETIMEDOUT);
	y.timeout_ms = 5000;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_SYNC, &y), 0);
	CHECK_EQ(y.status, 0);
	memset(&q, 0, sizeof(q));
	q.stream_id = s2.c.stream_id;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_QUERY, &q), 0);
	CHECK_EQ(q.completed_seq, 2);
	CHECK_EQ(q.priority, 1);
	/* A stream wait for a sequence never submitted. */
	CHECK_EQ(swait(fx.ctx, &s1, 5, 0, NULL), -EINVAL);
	stream_unmap(&s1);
	stream_unmap(&s2);
	fixture_exit(&fx);
}

void test_watchdog(void)
{
	struct fixture fx;
	struct stream s;
	struct davinci_task t[2] = { t_nop(2000000), t_nop(10) };
	struct davinci_stream_wait w;
	struct davinci_notification n;
	struct davinci_task_query q;

	REQUIRE(fixture_init_stream(&fx, 100, &s) == 0);
	CHECK_EQ(submit(fx.ctx, &s, t, 2, NULL), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_TIMEOUT);
	CHECK_EQ(tquery(fx.ctx, &s, 1, &q), 0);
	CHECK_EQ(q.status, DAVINCI_STATUS_TIMEOUT);
	CHECK(q.end_ns - q.start_ns >= 100000000ULL);
	CHECK_EQ(tstatus(fx.ctx, &s, 2), DAVINCI_STATUS_ABORTED);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.type, DAVINCI_NOTIFY_FAULT);
	CHECK_EQ(n.status, DAVINCI_STATUS_TIMEOUT);
	CHECK_EQ(n.seq, 1);
	CHECK_EQ(n.stream_id, s.c.stream_id);
	/* A short NOP under the limit is fine after a reset. */
	CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	t[0] = t_nop(20000);
	CHECK_EQ(submit(fx.ctx, &s, t, 1, NULL), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(tstatus(fx.ctx, &s, 3), DAVINCI_STATUS_OK);
	fixture_exit(&fx);
}

void test_error_recovery(void)
{
	struct fixture fx;
	struct stream s;
	struct buf m;
	struct davinci_task t[4];
	struct davinci_stream_wait w;
	struct davinci_stream_query q;
	uint64_t last;

	REQUIRE(fixture_init_stream(&fx, 0, &s) == 0);
	REQUIRE(fx_buf(&fx, 4096, 0, &m) == 0);
	t[0] = t_memset(m.a.dev_addr, 1, 4096);
	t[1] = t_memset(m.a.dev_addr, 2, 8192);		/* fails */
	t[2] = t_memset(m.a.dev_addr, 3, 4096);		/* aborted */
	t[3] = t_nop(0);				/* aborted */
	CHECK_EQ(submit(fx.ctx, &s, t, 4, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(tstatus(fx.ctx, &s, 1), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, 2), DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(tstatus(fx.ctx, &s, 3), DAVINCI_STATUS_ABORTED);
	CHECK_EQ(tstatus(fx.ctx, &s, 4), DAVINCI_STATUS_ABORTED);
	CHECK_EQ(cq_slot(&s, 2)->status, DAVINCI_STATUS_ABORTED);
	CHECK(all_set(m.p, 1, 4096));
	memset(&q, 0, sizeof(q));
	q.stream_id = s.c.stream_id;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_QUERY, &q), 0);
	CHECK_EQ(q.state, DAVINCI_STREAM_ERROR);
	CHECK_EQ(q.error_status, DAVINCI_STATUS_INVALID_ADDRESS);
	/* Still in error: new tasks abort. */
	CHECK_EQ(submit(fx.ctx, &s, &t[2], 1, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, last), DAVINCI_STATUS_ABORTED);
	CHECK(all_set(m.p, 1, 4096));
	/* Tasks queued before the reset stay aborted. */
	t[0] = t_nop(100000);
	CHECK_EQ(submit(fx.ctx, &s, t, 1, NULL), 0);
	CHECK_EQ(submit(fx.ctx, &s, &t[2], 1, &last), 0);
	CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, &w), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, last), DAVINCI_STATUS_ABORTED);
	/* Recovered. */
	CHECK_EQ(submit(fx.ctx, &s, &t[2], 1, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(tstatus(fx.ctx, &s, last), DAVINCI_STATUS_OK);
	CHECK(all_set(m.p, 3, 4096));
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_QUERY, &q), 0);
	CHECK_EQ(q.state, DAVINCI_STREAM_IDLE);
	fixture_exit(&fx);
}

/* DAVINCI_IOCTL_STREAM_SET_FLAGS on @s. */
static int set_flags(struct dv_context *ctx, uint32_t id, uint32_t flags)
{
	struct davinci_stream_flags f = { .stream_id = id, .flags = flags };

	return dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_SET_FLAGS, &f);
}

/* A failed task on a CONTINUE stream is its own: the next ones run. */
void test_stream_continue(void)
{
	struct fixture fx;
	struct stream s, p;
	struct buf m;
	struct davinci_task t[4];
	struct davinci_stream_wait w;
	struct davinci_stream_query q;
	struct davinci_notification n;
	struct davinci_graph_capture c;
	struct davinci_graph_launch l;
	uint64_t last;
	int i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	CHECK(fx_has_feature(&fx, DAVINCI_FEAT_STREAM_CONTINUE));
	REQUIRE(fx_buf(&fx, 4096, 0, &m) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_CONTINUE, &s) == 0);
	t[0] = t_memset(m.a.dev_addr, 1, 4096);
	t[1] = t_memset(m.a.dev_addr, 2, 8192);		/* fails */
	t[2] = t_memset(m.a.dev_addr, 3, 4096);		/* runs */
	t[3] = t_nop(0);				/* runs */
	CHECK_EQ(submit(fx.ctx, &s, t, 4, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(w.completed_seq, 4);
	CHECK_EQ(tstatus(fx.ctx, &s, 1), DAVINCI_STATUS_OK);
	CHECK_EQ(tstatus(fx.ctx, &s, 2), DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(tstatus(fx.ctx, &s, 3), DAVINCI_STATUS_OK);
	CHECK_EQ(tstatus(fx.ctx, &s, 4), DAVINCI_STATUS_OK);
	CHECK(all_set(m.p, 3, 4096));
	/* the failure is reported by its task: entry and notification */
	CHECK_EQ(s.cq->tail, 4);
	CHECK_EQ(cq_slot(&s, 1)->status, DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(cq_slot(&s, 2)->status, DAVINCI_STATUS_OK);
	CHECK_EQ(s.cq->status, 0);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.type, DAVINCI_NOTIFY_FAULT);
	CHECK_EQ(n.status, DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(n.seq, 2);
	memset(&q, 0, sizeof(q));
	q.stream_id = s.c.stream_id;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_QUERY, &q), 0);
	CHECK_EQ(q.state, DAVINCI_STREAM_IDLE);
	CHECK_EQ(q.error_status, 0);

	/* Switched to stop on failure: the next failure stops it. */
	CHECK_EQ(set_flags(fx.ctx, s.c.stream_id, DAVINCI_STREAM_F_POLLED),
		 -EINVAL);
	CHECK_EQ(set_flags(fx.ctx, s.c.stream_id, 1U << 31), -EINVAL);
	CHECK_EQ(set_flags(fx.ctx, 9999, 0), -ENOENT);
	CHECK_EQ(set_flags(fx.ctx, s.c.stream_id, 0), 0);
	CHECK_EQ(submit(fx.ctx, &s, t + 1, 2, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(tstatus(fx.ctx, &s, last), DAVINCI_STATUS_ABORTED);
	/* Back to CONTINUE: the error state stays until the reset. */
	CHECK_EQ(set_flags(fx.ctx, s.c.stream_id, DAVINCI_STREAM_F_CONTINUE),
		 0);
	CHECK_EQ(submit(fx.ctx, &s, t + 3, 1, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, &w), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, last), DAVINCI_STATUS_ABORTED);
	CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	CHECK_EQ(submit(fx.ctx, &s, t + 1, 3, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(tstatus(fx.ctx, &s, last - 2),
		 DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(tstatus(fx.ctx, &s, last - 1), DAVINCI_STATUS_OK);
	CHECK_EQ(tstatus(fx.ctx, &s, last), DAVINCI_STATUS_OK);

	/* A graph on it: the failed task's entry, the rest run. */
	memset(m.p, 0, 4096);
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_CAPTURE, &s, &c), 0);
	CHECK_EQ(submit(fx.ctx, &s, t, 4, NULL), 0);
	CHECK_EQ(graph_ioctl(fx.ctx, DAVINCI_IOCTL_GRAPH_END, &s, &c), 0);
	CHECK_EQ(c.tasks, 4);
	s.cq->head = s.cq->tail;
	CHECK_EQ(graph_launch(fx.ctx, c.graph_id, &s, &l), 0);
	CHECK_EQ(swait(fx.ctx, &s, l.last_seq, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK(all_set(m.p, 3, 4096));
	CHECK_EQ(s.cq->tail - s.cq->head, 2);
	CHECK_EQ(cq_slot(&s, s.cq->head)->seq, l.first_seq + 1);
	CHECK_EQ(cq_slot(&s, s.cq->head)->status,
		 DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK_EQ(cq_slot(&s, s.cq->head + 1)->seq, l.last_seq);
	CHECK_EQ(cq_slot(&s, s.cq->head + 1)->status, DAVINCI_STATUS_OK);
	CHECK_EQ(tstatus(fx.ctx, &s, l.first_seq + 2), DAVINCI_STATUS_OK);

	/* A polled CONTINUE stream goes on likewise. */
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_POLLED |
				    DAVINCI_STREAM_F_CONTINUE, &p) == 0);
	memset(m.p, 0, 4096);
	publish(&p, t, 4);
	CHECK_EQ(swait(fx.ctx, &p, 4, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(tstatus(fx.ctx, &p, 2), DAVINCI_STATUS_INVALID_ADDRESS);
	for (i = 3; i <= 4; i++)
		CHECK_EQ(tstatus(fx.ctx, &p, i), DAVINCI_STATUS_OK);
	CHECK(all_set(m.p, 3, 4096));
	stream_destroy(fx.ctx, &p);
	stream_destroy(fx.ctx, &s);
	fixture_exit(&fx);
}

void test_close_in_flight(void)
{
	struct fixture fx;
	struct stream s[3];
	struct buf m, big;
	struct dv_stats st;
	struct davinci_event_create ec = { 0 };
	struct davinci_task t[4];
	struct davinci_mem_info mi;
	int i;

	REQUIRE(fixture_init2(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &m) == 0);
	REQUIRE(buf_alloc(fx.ctx, 48 * MiB, 0, &big) == 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), 0);
	for (i = 0; i < 3; i++)
		REQUIRE(stream_create(fx.ctx, (uint32_t)i, 0, 0, &s[i]) == 0);
	t[0] = t_nop(10000000);
	t[1] = t_memset(m.a.dev_addr, 1, 4096);
	t[2] = t_event(DAVINCI_OP_EVENT_RECORD, ec.event_id);
	t[3] = t_memset(big.a.dev_addr, 5, 48 * MiB);
	CHECK_EQ(submit(fx.ctx, &s[0], t, 3, NULL), 0);
	t[0] = t_event(DAVINCI_OP_EVENT_WAIT, ec.event_id);
	CHECK_EQ(submit(fx.ctx, &s[1], t, 2, NULL), 0);	/* parked */
	t[0] = t_nop(10000000);
	CHECK_EQ(submit(fx.ctx, &s[2], t, 4, NULL), 0);
	usleep(30000);
	dvc_stats(&st);
	CHECK(st.tasks >= 7);
	/* Keep one mapping of a buffer past the close. */
	for (i = 0; i < 3; i++)
		stream_unmap(&s[i]);
	dvc_munmap(big.map);
	dvc_context_close(fx.ctx);
	fx.ctx = NULL;
	dvc_stats(&st);
	CHECK_EQ(st.tasks, 0);
	CHECK_EQ(st.streams, 0);
	CHECK_EQ(st.contexts, 1);
	CHECK_EQ(st.mappings, 1);
	CHECK_EQ(st.hbm_used, 4096);
	m.p[0] = 42;	/* still mapped */
	CHECK_EQ(mem_info(fx.ctx2, 0, &mi), 0);
	CHECK_EQ(mi.free, HBM_BYTES - 4096);
	dvc_munmap(m.map);
	CHECK_HBM_WHOLE(fx.ctx2);
	fixture_exit(&fx);
}

void test_ctx_reset(void)
{
	struct fixture fx;
	struct stream s;
	struct buf m;
	struct davinci_task t = t_nop(5000000);
	struct davinci_stream_id id;
	struct davinci_mem_info mi;
	struct dv_stats st;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, DAVINCI_MEM_HOST, &m) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, NULL), 0);
	stream_unmap(&s);
	dvc_munmap(m.map);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_CTX_RESET, NULL), 0);
	dvc_stats(&st);
	CHECK_EQ(st.streams, 0);
	CHECK_EQ(st.buffers, 0);
	CHECK_EQ(st.tasks, 0);
	CHECK_EQ(mem_info(fx.ctx, DAVINCI_MEM_HOST, &mi), 0);
	CHECK_EQ(mi.free, HOST_BYTES);
	id.stream_id = s.c.stream_id;
	id.pad = 0;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_DESTROY, &id), -ENOENT);
	/* Usable afterwards. */
	REQUIRE(stream_create(fx.ctx, 0, 0, 0, &s) == 0);
	CHECK(s.c.stream_id != id.stream_id);
	stream_unmap(&s);
	fixture_exit(&fx);
}

/* Many streams and contexts at once, closed with work in flight. */
void test_stress(void)
{
	struct dv_device_config cfg = fx_device_config(2, 0);
	struct dv_device *dev;
	struct dv_context *ctx[4];
	struct stream s[4][4];
	struct buf m[4];
	int c, i, k;

	cfg.aicores = 4;
	dev = dvc_device_create(&cfg);
	REQUIRE(dev);
	for (c = 0; c < 4; c++) {
		ctx[c] = dvc_context_open(dev, (uint32_t)c);
		REQUIRE(ctx[c]);
		REQUIRE(buf_alloc(ctx[c], 64 * 1024, DAVINCI_MEM_HOST,
				  &m[c]) == 0);
		for (i = 0; i < 4; i++)
			REQUIRE(stream_create(ctx[c], (uint32_t)i, 64, 64,
					      &s[c][i]) == 0);
	}
	for (k = 0; k < 20; k++)
		for (c = 0; c < 4; c++)
			for (i = 0; i < 4; i++) {
				struct davinci_task t[3] = {
					t_memset(m[c].a.dev_addr +
						 (uint64_t)i * 4096,
						 (uint8_t)k, 4096),
					t_nop(100),
					t_memcpy(m[c].a.dev_addr + 32768 +
						 (uint64_t)i * 4096,
						 m[c].a.dev_addr +
						 (uint64_t)i * 4096, 4096),
				};

				CHECK_EQ(submit(ctx[c], &s[c][i], t, 3, NULL),
					 0);
			}
	for (c = 0; c < 2; c++) {
		struct davinci_sync y = { .timeout_ms = 10000 };

		CHECK_EQ(dvc_ioctl(ctx[c], DAVINCI_IOCTL_SYNC, &y), 0);
		CHECK_EQ(y.status, 0);
		for (i = 0; i < 4; i++)
			CHECK(all_set(m[c].p + 32768 + i * 4096, 19, 4096));
	}
	for (c = 0; c < 4; c++) {
		for (i = 0; i < 4; i++)
			stream_unmap(&s[c][i]);
		dvc_munmap(m[c].map);
		dvc_context_close(ctx[c]);
	}
	dvc_device_destroy(dev);
	CHECK(stats_zero());
}
