// SPDX-License-Identifier: GPL-2.0
/*
 * test_events.c - tests of events, notifications and waits (blocking,
 * interruptible).
 */
#define _GNU_SOURCE
#include "fixtures.h"

void test_events(void)
{
	struct fixture fx;
	struct stream a, b;
	struct davinci_event_create ec = { .flags = DAVINCI_EVENT_TIMING };
	struct davinci_event_query eq;
	struct davinci_event_id eid;
	struct davinci_event_wait ew;
	struct davinci_task ta[2], tb[2];
	struct davinci_task_query qa, qb;
	struct buf m;
	uint64_t la, lb;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &m) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 0, 0, &a) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 0, 0, &b) == 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), 0);
	CHECK(ec.event_id > 0);
	memset(&eq, 0, sizeof(eq));
	eq.event_id = ec.event_id;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_QUERY, &eq), 0);
	CHECK_EQ(eq.state, DAVINCI_EVENT_NOT_RECORDED);
	/* Host wait on a never recorded event returns at once. */
	ew.event_id = ec.event_id;
	ew.timeout_ms = 0;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_WAIT, &ew), 0);

	/* Cross-stream: B waits for A's record behind a 150 ms NOP. */
	ta[0] = t_nop(150000);
	ta[1] = t_event(DAVINCI_OP_EVENT_RECORD, ec.event_id);
	tb[0] = t_event(DAVINCI_OP_EVENT_WAIT, ec.event_id);
	tb[1] = t_memset(m.a.dev_addr, 7, 4096);
	CHECK_EQ(submit(fx.ctx, &a, ta, 2, &la), 0);
	CHECK_EQ(submit(fx.ctx, &b, tb, 2, &lb), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_QUERY, &eq), 0);
	CHECK_EQ(eq.state, DAVINCI_EVENT_PENDING);
	CHECK_EQ(eq.records_submitted, 1);
	usleep(30000);
	CHECK_EQ(tquery(fx.ctx, &b, 1, &qb), 0);
	CHECK(qb.state != DAVINCI_TASK_DONE);
	CHECK_EQ(m.p[0], 0);
	ew.timeout_ms = 5000;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_WAIT, &ew), 0);
	CHECK_EQ(swait(fx.ctx, &b, lb, 5000, NULL), 0);
	CHECK_EQ(tquery(fx.ctx, &a, la, &qa), 0);
	CHECK_EQ(tquery(fx.ctx, &b, lb, &qb), 0);
	CHECK_EQ(qa.status, 0);
	CHECK_EQ(qb.status, 0);
	CHECK(qb.start_ns >= qa.end_ns);
	CHECK_EQ(m.p[0], 7);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_QUERY, &eq), 0);
	CHECK_EQ(eq.state, DAVINCI_EVENT_RECORDED);
	CHECK_EQ(eq.records_completed, 1);
	CHECK(eq.timestamp_ns >= qa.start_ns && eq.timestamp_ns <= qa.end_ns);

	/* Host signal releases a stream waiting behind a long record. */
	ta[0] = t_nop(3000000);
	tb[1] = t_memset(m.a.dev_addr, 8, 4096);
	CHECK_EQ(submit(fx.ctx, &a, ta, 2, &la), 0);
	CHECK_EQ(submit(fx.ctx, &b, tb, 2, &lb), 0);
	ew.timeout_ms = 50;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_WAIT, &ew), -ETIMEDOUT);
	CHECK_EQ(m.p[0], 7);
	eid.event_id = ec.event_id;
	eid.pad = 0;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), 0);
	CHECK_EQ(swait(fx.ctx, &b, lb, 2000, NULL), 0);
	CHECK_EQ(m.p[0], 8);
	CHECK_EQ(tquery(fx.ctx, &a, la - 1, &qa), 0);
	CHECK(qa.state == DAVINCI_TASK_RUNNING);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_TASK_CANCEL, &qa), 0);
	CHECK_EQ(swait(fx.ctx, &a, la, 2000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &a, la - 1), DAVINCI_STATUS_CANCELLED);
	CHECK_EQ(tstatus(fx.ctx, &a, la), 0);

	/* A wait on a destroyed event: INVALID_EVENT. */
	ta[0] = t_nop(100000);
	CHECK_EQ(submit(fx.ctx, &a, ta, 2, &la), 0);
	CHECK_EQ(submit(fx.ctx, &b, tb, 1, &lb), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_DESTROY, &eid), 0);
	CHECK_EQ(swait(fx.ctx, &b, lb, 2000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &b, lb), DAVINCI_STATUS_INVALID_EVENT);
	CHECK_EQ(swait(fx.ctx, &a, la, 2000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &a, la), DAVINCI_STATUS_INVALID_EVENT);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_DESTROY, &eid), -ENOENT);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), -ENOENT);
	eid.pad = 1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), -EINVAL);
	ec.flags = 2;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), -EINVAL);
	stream_unmap(&a);
	stream_unmap(&b);
	dvc_munmap(m.map);
	fixture_exit(&fx);
}

/*
 * EVENT_WAIT with DAVINCI_TASK_F_WAIT_NEXT waits for a record made after
 * it, even when every earlier record has completed: the host releases the
 * stream with a signal (a blocking callback's shape).
 */
void test_event_wait_next(void)
{
	struct fixture fx;
	struct davinci_event_create ec = { .flags = 0 };
	struct davinci_event_id eid = { 0, 0 };
	struct davinci_task t[3];
	struct stream s;
	struct buf m;
	uint64_t last;

	REQUIRE(fixture_init(&fx, 0) == 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), 0);
	eid.event_id = ec.event_id;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), 0);
	REQUIRE(fx_stream(&fx, 0, 8, 8, &s) == 0);
	REQUIRE(fx_buf(&fx, 4096, 0, &m) == 0);
	/* Without the flag the completed signal releases the wait at once. */
	t[0] = t_event(DAVINCI_OP_EVENT_WAIT, ec.event_id);
	t[1] = t_memset(m.a.dev_addr, 1, 64);
	CHECK_EQ(submit(fx.ctx, &s, t, 2, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 2000, NULL), 0);
	CHECK_EQ(m.p[0], 1);
	/* With it the stream parks until the next signal. */
	t[0].flags = DAVINCI_TASK_F_WAIT_NEXT;
	t[1] = t_memset(m.a.dev_addr, 2, 64);
	CHECK_EQ(submit(fx.ctx, &s, t, 2, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 50, NULL), -ETIMEDOUT);
	CHECK_EQ(m.p[0], 1);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 2000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, last - 1), 0);
	CHECK_EQ(m.p[0], 2);
	/* The flag belongs to EVENT_WAIT only. */
	t[0] = t_event(DAVINCI_OP_EVENT_RECORD, ec.event_id);
	t[0].flags = DAVINCI_TASK_F_WAIT_NEXT;
	CHECK_EQ(submit(fx.ctx, &s, t, 1, &last), -EINVAL);
	fixture_exit(&fx);
}

void test_notifications(void)
{
	struct fixture fx;
	struct stream s;
	struct davinci_task t[3];
	struct davinci_notification n;
	uint64_t last;
	int i;

	REQUIRE(fixture_init_stream(&fx, 0, &s) == 0);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ETIMEDOUT);
	n.timeout_ms = 20;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ETIMEDOUT);
	CHECK_EQ(dvc_pollable(fx.ctx), 0);
	t[0] = t_nop(1000);
	t[0].flags = DAVINCI_TASK_F_NOTIFY;
	t[0].user_data = 0x1111;
	memset(&t[1], 0, sizeof(t[1]));
	t[1].opcode = DAVINCI_OP_NOTIFY;
	t[1].user_data = 0x2222;
	t[2] = t_nop(1);
	CHECK_EQ(submit(fx.ctx, &s, t, 3, &last), 0);
	memset(&n, 0, sizeof(n));
	n.timeout_ms = 5000;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.type, DAVINCI_NOTIFY_COMPLETION);
	CHECK_EQ(n.user_data, 0x1111);
	CHECK_EQ(n.seq, 1);
	CHECK_EQ(n.stream_id, s.c.stream_id);
	CHECK_EQ(n.status, 0);
	CHECK(n.timestamp_ns != 0);
	CHECK_EQ(n.timeout_ms, 5000);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.type, DAVINCI_NOTIFY_USER);
	CHECK_EQ(n.user_data, 0x2222);
	CHECK_EQ(n.seq, 2);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, NULL), 0);
	n.timeout_ms = 0;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ETIMEDOUT);
	n.pad = 1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -EINVAL);
	/* Overflow: 1100 notifications, 1024 kept, 76 dropped. */
	memset(t, 0, sizeof(t));
	t[0].opcode = DAVINCI_OP_NOTIFY;
	for (i = 0; i < 11; i++) {
		int j;

		for (j = 0; j < 100; j++) {
			t[0].user_data = (uint64_t)(i * 100 + j);
			*sq_slot(&s, s.tail + (uint32_t)j) = t[0];
		}
		struct davinci_doorbell d = { .stream_id = s.c.stream_id,
					      .sq_tail = s.tail + 100 };
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
		s.tail += 100;
		CHECK_EQ(swait(fx.ctx, &s, 0, 5000, NULL), 0);
	}
	CHECK_EQ(dvc_pollable(fx.ctx), 1);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.user_data, 0);
	CHECK_EQ(n.dropped, 76);
	for (i = 1; i < 1024; i++) {
		if (dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n) ||
		    n.user_data != (uint64_t)i || n.dropped) {
			CHECK(0 && "notification order");
			break;
		}
	}
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ETIMEDOUT);
	fixture_exit(&fx);
}

struct waiter {
	struct dv_context *ctx;
	unsigned long cmd;
	union {
		struct davinci_notification n;
		struct davinci_stream_wait w;
		struct davinci_event_wait e;
	} u;
	int ret;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;

	w->ret = dvc_ioctl(w->ctx, w->cmd, &w->u);
	return NULL;
}

/* Host threads blocked in waits are woken by other threads. */
void test_blocking_waits(void)
{
	struct fixture fx;
	struct stream s;
	struct davinci_task t;
	struct davinci_event_create ec = { 0 };
	struct davinci_event_id eid = { 0 };
	struct waiter w1, w2, w3;
	pthread_t th1, th2, th3;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_CREATE, &ec), 0);
	/* Event recorded behind a long NOP; a host thread waits for it. */
	t = t_nop(5000000);
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, NULL), 0);
	t = t_event(DAVINCI_OP_EVENT_RECORD, ec.event_id);
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, NULL), 0);
	memset(&w1, 0, sizeof(w1));
	w1.ctx = fx.ctx;
	w1.cmd = DAVINCI_IOCTL_NOTIFY_WAIT;
	w1.u.n.timeout_ms = 5000;
	memset(&w2, 0, sizeof(w2));
	w2.ctx = fx.ctx;
	w2.cmd = DAVINCI_IOCTL_STREAM_WAIT;
	w2.u.w.stream_id = s.c.stream_id;
	w2.u.w.timeout_ms = 5000;
	memset(&w3, 0, sizeof(w3));
	w3.ctx = fx.ctx;
	w3.cmd = DAVINCI_IOCTL_EVENT_WAIT;
	w3.u.e.event_id = ec.event_id;
	w3.u.e.timeout_ms = 5000;
	pthread_create(&th1, NULL, waiter_main, &w1);
	pthread_create(&th2, NULL, waiter_main, &w2);
	pthread_create(&th3, NULL, waiter_main, &w3);
	usleep(50000);
	/* The host signal releases the event waiter. */
	eid.event_id = ec.event_id;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_EVENT_SIGNAL, &eid), 0);
	pthread_join(th3, NULL);
	CHECK_EQ(w3.ret, 0);
	/* Destroying the stream fails the stream waiter with -ENOENT. */
	stream_destroy(fx.ctx, &s);
	pthread_join(th2, NULL);
	CHECK_EQ(w2.ret, -ENOENT);
	/* Device loss wakes the notification waiter. */
	dvc_device_lost(fx.dev);
	pthread_join(th1, NULL);
	CHECK_EQ(w1.ret, 0);
	CHECK_EQ(w1.u.n.type, DAVINCI_NOTIFY_DEVICE_LOST);
	CHECK_EQ(dvc_pollable(fx.ctx), 1);
	fixture_exit(&fx);
}

static volatile int interrupt_flag;

static int interrupted(void)
{
	return interrupt_flag;
}

static void *interrupt_later(void *arg)
{
	(void)arg;
	usleep(50000);
	interrupt_flag = 1;
	return NULL;
}

/*
 * A wait made through dvc_ioctl_interruptible() ends with -EINTR once its
 * caller is interrupted (the FUSE daemon passes fuse_interrupted()), long
 * before its timeout; without an interrupt it times out as before.
 */
void test_interruptible_waits(void)
{
	struct fixture fx;
	struct davinci_notification n = { .timeout_ms = 30000 };
	pthread_t th;

	REQUIRE(fixture_init(&fx, 0) == 0);
	interrupt_flag = 0;
	pthread_create(&th, NULL, interrupt_later, NULL);
	CHECK_EQ(dvc_ioctl_interruptible(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n,
					 interrupted), -EINTR);
	pthread_join(th, NULL);
	/* Already interrupted: still -EINTR, at once. */
	CHECK_EQ(dvc_ioctl_interruptible(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n,
					 interrupted), -EINTR);
	interrupt_flag = 0;
	n.timeout_ms = 20;
	CHECK_EQ(dvc_ioctl_interruptible(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n,
					 interrupted), -ETIMEDOUT);
	fixture_exit(&fx);
}
