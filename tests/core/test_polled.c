// SPDX-License-Identifier: GPL-2.0
/*
 * test_polled.c - polled submission rings (DAVINCI_STREAM_F_POLLED): work
 * published in shared memory runs without a doorbell, NEED_WAKEUP, waits
 * that take work in, and faults that stay in their stream.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"	/* DV_TAKE_IN_DEPTH */

/* Watch the CQ header until task @seq completed or 10 s passed. */
static int watch_completed(struct stream *s, uint64_t seq)
{
	double t0 = th_now();

	while (__atomic_load_n(&s->cq->seq, __ATOMIC_ACQUIRE) < seq) {
		if (th_now() - t0 > 10)
			return -ETIMEDOUT;
		sched_yield();
	}
	return 0;
}

/* Wait up to 10 s for the dispatcher to ask for a doorbell on @s. */
static int wait_need_wakeup(struct stream *s)
{
	double t0 = th_now();

	while (!(__atomic_load_n(&s->sq->flags, __ATOMIC_ACQUIRE) &
		 DAVINCI_RING_F_NEED_WAKEUP))
		if (th_now() - t0 > 10)
			return -ETIMEDOUT;
		else
			usleep(100);
	return 0;
}

void test_polled_rings(void)
{
	struct davinci_task t[64];
	struct fixture fx;
	struct stream s;
	struct buf b;
	uint32_t i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 64 * 4096, 0, &b) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 256,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	/* More tasks than the ring holds: published as room comes back. */
	for (i = 0; i < 64; i++)
		t[i] = t_memset(b.a.dev_addr + i * 4096ULL, (uint8_t)(i + 1),
				4096);
	for (i = 0; i < 64; i += 8) {
		while (s.tail + 8 - __atomic_load_n(&s.sq->head,
						     __ATOMIC_ACQUIRE) > 16)
			sched_yield();
		publish(&s, t + i, 8);
	}
	CHECK_EQ(watch_completed(&s, 64), 0);
	CHECK_EQ(s.sq->seq, 64);
	CHECK_EQ(s.sq->head, 64);
	CHECK_EQ(s.cq->status, 0);
	for (i = 0; i < 64; i++)
		CHECK(all_set(b.p + i * 4096, (uint8_t)(i + 1), 4096));
	/* Completions carry the sequence numbers the host counted. */
	for (i = 0; i < 64; i++)
		CHECK_EQ(cq_slot(&s, i)->seq, i + 1);
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &b);
	fixture_exit(&fx);
}

void test_polled_need_wakeup(void)
{
	struct davinci_task nop = t_nop(0);
	struct davinci_stream_wait w;
	struct davinci_doorbell d;
	struct fixture fx;
	struct stream s;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	/* Idle past its poll time, the dispatcher asks for a doorbell. */
	CHECK_EQ(wait_need_wakeup(&s), 0);
	/* The doorbell takes in what the ring holds, whatever sq_tail says. */
	publish(&s, &nop, 1);
	memset(&d, 0, sizeof(d));
	d.stream_id = s.c.stream_id;
	d.sq_tail = 12345;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
	CHECK_EQ(d.last_seq, 1);
	CHECK_EQ(watch_completed(&s, 1), 0);
	/* A wait takes in work the host published without a doorbell. */
	publish(&s, &nop, 1);
	CHECK_EQ(swait(fx.ctx, &s, 2, 10000, &w), 0);
	CHECK_EQ(w.completed_seq, 2);
	stream_destroy(fx.ctx, &s);
	fixture_exit(&fx);
}

/*
 * A fixture whose dispatcher polls for @poll_idle_us without work before
 * it sleeps and asks for a doorbell.
 */
static int fixture_init_poll_idle(struct fixture *f, uint32_t poll_idle_us)
{
	struct dv_device_config cfg = fx_device_config(0, 0);

	cfg.poll_idle_us = poll_idle_us;
	return fixture_init_cfg(f, &cfg);
}

/*
 * Publish four NOPs as a host does (dvc_ring_publish), ring the doorbell
 * only when the ring asks for one, and watch them complete. Return: 1 when
 * a doorbell was needed, 0 when not, -1 when the tasks did not complete.
 */
static int publish_gated(struct fixture *fx, struct stream *s)
{
	struct davinci_task nop[4] = { t_nop(0), t_nop(0), t_nop(0),
				       t_nop(0) };
	struct davinci_doorbell d;
	uint32_t i, flags;
	int rang = 0;

	for (i = 0; i < 4; i++)
		*sq_slot(s, s->tail + i) = nop[i];
	s->tail += 4;
	flags = dvc_ring_publish(s->sq, s->tail);
	if (flags & DAVINCI_RING_F_NEED_WAKEUP) {
		memset(&d, 0, sizeof(d));
		d.stream_id = s->c.stream_id;
		d.sq_tail = s->tail;
		if (dvc_ioctl(fx->ctx, DAVINCI_IOCTL_DOORBELL, &d))
			return -1;
		rang = 1;
	}
	return watch_completed(s, s->tail) ? -1 : rang;
}

void test_polled_doorbell_clears_need_wakeup(void)
{
	struct davinci_task nop = t_nop(0);
	struct davinci_doorbell d;
	struct stream s, other;
	struct fixture fx;
	int round, cleared = 0;

	/*
	 * A doorbell has told the dispatcher, so no ring of the device asks
	 * for another one until the dispatcher has polled for 20 ms and
	 * slept again. Before the fix the flag stayed set until the
	 * dispatcher ran, which a load right after the ioctl sees in about
	 * half the rounds.
	 */
	REQUIRE(fixture_init_poll_idle(&fx, 20 * 1000) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_POLLED, &other) == 0);
	for (round = 0; round < 8; round++) {
		REQUIRE(wait_need_wakeup(&s) == 0);
		REQUIRE(wait_need_wakeup(&other) == 0);
		publish(&s, &nop, 1);
		memset(&d, 0, sizeof(d));
		d.stream_id = s.c.stream_id;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
		cleared += !(__atomic_load_n(&other.sq->flags,
					     __ATOMIC_ACQUIRE) &
			     DAVINCI_RING_F_NEED_WAKEUP);
		CHECK_EQ(watch_completed(&s, s.tail), 0);
	}
	CHECK_EQ(cleared, 8);
	stream_destroy(fx.ctx, &other);
	stream_destroy(fx.ctx, &s);
	fixture_exit(&fx);
}

/*
 * A doorbell on a polled stream wakes the dispatcher and nothing else: it
 * runs a short task itself and wakes a worker only for a long one (which
 * then completes all the same). Before, the doorbell also woke a worker,
 * which raced the dispatcher for the short task.
 */
void test_polled_doorbell_wakes_one(void)
{
	struct davinci_task nop = t_nop(0), slow = t_nop(2000);
	struct dv_dispatch_stats st0, st1;
	struct davinci_doorbell d;
	unsigned long woken;
	struct fixture fx;
	struct stream s;
	int round;

	REQUIRE(fixture_init_poll_idle(&fx, 1000) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	for (round = 0; round < 8; round++) {
		struct davinci_task *t = round & 1 ? &slow : &nop;

		REQUIRE(wait_need_wakeup(&s) == 0);
		dv_device_dispatch_stats(fx.dev, &st0);
		woken = __atomic_load_n(&os_posix_wake_one_calls,
					__ATOMIC_RELAXED);
		publish(&s, t, 1);
		memset(&d, 0, sizeof(d));
		d.stream_id = s.c.stream_id;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
		CHECK_EQ(watch_completed(&s, s.tail), 0);
		dv_device_dispatch_stats(fx.dev, &st1);
		CHECK_EQ(st1.kicks - st0.kicks, 1);
		/* (the long task's worker is woken by the dispatcher) */
		if (t == &nop)
			CHECK_EQ(__atomic_load_n(&os_posix_wake_one_calls,
						 __ATOMIC_RELAXED) - woken, 1);
	}
	CHECK_EQ(s.cq->status, 0);
	dv_device_dispatch_stats(fx.dev, &st1);
	CHECK(st1.sleeps >= 8);
	stream_destroy(fx.ctx, &s);
	fixture_exit(&fx);
}

/*
 * The idle time's rule (dv_poll_adapt(), KVM's halt-poll rule): a doorbell
 * within the longest idle time doubles it, up to that; a sleep no doorbell
 * ended, or a late doorbell, halves it, down to the configured one.
 */
void test_polled_idle_time_rule(void)
{
	struct dv_device_config cfg = fx_device_config(0, 0);
	struct fixture fx;
	struct dv_device *dev;
	static const struct {
		uint64_t idle_us;
		bool kicked;
		uint64_t after_us;
	} steps[] = {
		{ 300, true, 200 }, { 300, true, 400 }, { 1000, true, 800 },
		{ 1600, true, 1600 }, { 900, true, 1600 },
		{ 1601, true, 800 }, { 900, false, 400 }, { 20000, false, 200 },
		{ 20000, false, 100 }, { 20000, false, 100 }, { 150, true, 200 },
	};
	unsigned int i;

	cfg.poll_idle_us = 100;
	REQUIRE(fixture_init_cfg(&fx, &cfg) == 0);
	dev = fx.dev;
	/* No polled stream: the dispatcher sleeps until one comes. */
	os_mutex_lock(dev->lock);
	CHECK_EQ(dev->dispatch.idle_ns, 100000);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		dv_poll_adapt(dev, steps[i].idle_us * 1000, steps[i].kicked);
		CHECK_EQ(dev->dispatch.idle_ns, steps[i].after_us * 1000);
	}
	CHECK_EQ(dev->dispatch.grows, 5);
	CHECK_EQ(dev->dispatch.shrinks, 4);
	os_mutex_unlock(dev->lock);
	fixture_exit(&fx);

	/* A longest idle time below the first one: it never grows. */
	cfg.poll_idle_max_us = 50;
	REQUIRE(fixture_init_cfg(&fx, &cfg) == 0);
	os_mutex_lock(fx.dev->lock);
	dv_poll_adapt(fx.dev, 101000, true);
	CHECK_EQ(fx.dev->dispatch.idle_ns, 100000);
	CHECK_EQ(fx.dev->dispatch.grows, 0);
	os_mutex_unlock(fx.dev->lock);
	fixture_exit(&fx);
}

/* The dispatcher's idle time now. */
static uint64_t idle_time_ns(struct fixture *fx)
{
	struct dv_dispatch_stats st;

	dv_device_dispatch_stats(fx->dev, &st);
	return st.idle_ns;
}

/*
 * A host that publishes a batch every 3 ms, three times the dispatcher's
 * first idle time, rings the doorbell a few times until that idle time
 * has grown past its pace, then no more; once the host stops, sleeps that
 * no doorbell ends bring the idle time back down.
 */
void test_polled_idle_time_follows_the_host(void)
{
	struct dv_device_config cfg = fx_device_config(0, 0);
	struct fixture fx;
	struct stream s;
	int i, rang, asked = 0, failed = 0;
	double t0;

	cfg.poll_idle_us = 1000;
	REQUIRE(fixture_init_cfg(&fx, &cfg) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 256,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	REQUIRE(wait_need_wakeup(&s) == 0);
	for (i = 0; i < 40; i++) {
		usleep(3000);
		rang = publish_gated(&fx, &s);
		failed += rang < 0;
		asked += rang > 0;
	}
	CHECK_EQ(failed, 0);
	/* Without growth, every one of the 40 asks. */
	CHECK(asked <= 10);
	CHECK(idle_time_ns(&fx) >= 4000000);
	stream_destroy(fx.ctx, &s);

	/* No stream, no kicks: backstop wakes halve it down to 1 ms. */
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	t0 = th_now();
	while (idle_time_ns(&fx) > 1000000 && th_now() - t0 < 10)
		usleep(1000);
	CHECK_EQ(idle_time_ns(&fx), 1000000);
	stream_destroy(fx.ctx, &s);
	fixture_exit(&fx);
}

void test_polled_doorbell_only_when_asleep(void)
{
	struct fixture fx;
	struct stream s;
	int i, rang, asked = 0, failed = 0;

	/* A dispatcher that polls for 30 s never asks during 50 batches. */
	REQUIRE(fixture_init_poll_idle(&fx, 30 * 1000 * 1000) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 256,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	for (i = 0; i < 50; i++) {
		rang = publish_gated(&fx, &s);
		failed += rang < 0;
		asked += rang > 0;
	}
	CHECK_EQ(failed, 0);
	CHECK_EQ(asked, 0);
	CHECK(!(s.sq->flags & DAVINCI_RING_F_NEED_WAKEUP));
	stream_destroy(fx.ctx, &s);
	fixture_exit(&fx);

	/* One that sleeps after 1 us asks before every batch it slept for. */
	REQUIRE(fixture_init_poll_idle(&fx, 1) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 256,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	asked = 0;
	for (i = 0; i < 10; i++) {
		REQUIRE(wait_need_wakeup(&s) == 0);
		rang = publish_gated(&fx, &s);
		failed += rang < 0;
		asked += rang > 0;
	}
	CHECK_EQ(failed, 0);
	CHECK_EQ(asked, 10);
	stream_destroy(fx.ctx, &s);
	fixture_exit(&fx);
}

void test_polled_faults(void)
{
	struct davinci_task t[3] = { t_nop(0), t_nop(0), t_nop(0) };
	struct davinci_stream_wait w;
	struct stream s, other;
	struct fixture fx;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 16, 16,
				    DAVINCI_STREAM_F_POLLED, &other) == 0);
	/* A malformed descriptor is taken in, fails, aborts what follows. */
	t[1].reserved[3] = 1;
	publish(&s, t, 3);
	CHECK_EQ(swait(fx.ctx, &s, 3, 10000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_INVALID_TASK);
	CHECK_EQ(tstatus(fx.ctx, &s, 1), DAVINCI_STATUS_OK);
	CHECK_EQ(tstatus(fx.ctx, &s, 2), DAVINCI_STATUS_INVALID_TASK);
	CHECK_EQ(tstatus(fx.ctx, &s, 3), DAVINCI_STATUS_ABORTED);
	CHECK_EQ(s.cq->status, DAVINCI_STATUS_INVALID_TASK);
	CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	CHECK_EQ(s.cq->status, 0);

	/* A tail beyond the ring is a fault of that stream alone. */
	s.tail += 17;
	__atomic_store_n(&s.sq->tail, s.tail, __ATOMIC_RELEASE);
	CHECK_EQ(swait(fx.ctx, &s, 0, 10000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_QUEUE_FAULT);
	CHECK_EQ(w.completed_seq, 3);
	t[1].reserved[3] = 0;
	publish(&other, t, 3);
	CHECK_EQ(swait(fx.ctx, &other, 3, 10000, &w), 0);
	CHECK_EQ(w.status, 0);
	/* Nothing more is taken in from it until a reset discards the ring. */
	publish(&s, t, 1);
	CHECK_EQ(swait(fx.ctx, &s, 0, 10000, &w), 0);
	CHECK_EQ(w.completed_seq, 3);
	CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	CHECK_EQ(s.sq->head, s.tail);
	publish(&s, t, 2);
	CHECK_EQ(swait(fx.ctx, &s, 5, 10000, &w), 0);
	CHECK_EQ(w.status, 0);
	stream_destroy(fx.ctx, &other);
	stream_destroy(fx.ctx, &s);
	fixture_exit(&fx);
}

/*
 * Short tasks of two polled streams run on both AI cores: the dispatcher
 * runs one stream's itself and wakes a worker for the other. Each round
 * publishes 256 short memsets on each stream; one task completing on
 * AI core 1 shows that two ran at once. A core that kept every short task
 * to the dispatcher never gets there once the workers it started with
 * went to sleep: the first rounds do not count.
 */
void test_polled_short_tasks_spread(void)
{
	struct davinci_task t[256];
	struct stream s[2];
	struct fixture fx;
	struct buf b;
	bool both = false;
	uint32_t i, k, round;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 2 * 32768, 0, &b) == 0);
	for (k = 0; k < 2; k++)
		REQUIRE(stream_create_flags(fx.ctx, 0, 256, 256,
					    DAVINCI_STREAM_F_POLLED,
					    &s[k]) == 0);
	for (round = 0; round < 50 && !both; round++) {
		for (k = 0; k < 2; k++) {
			for (i = 0; i < 256; i++)
				t[i] = t_memset(b.a.dev_addr + k * 32768ULL,
						(uint8_t)i, 32768);
			publish(&s[k], t, 256);
		}
		for (k = 0; k < 2; k++) {
			CHECK_EQ(watch_completed(&s[k], s[k].tail), 0);
			for (i = 0; i < 256 && round >= 2; i++)
				both |= cq_slot(&s[k], s[k].tail - 256 + i)
						->aicore == 1;
			__atomic_store_n(&s[k].cq->head, s[k].tail,
					 __ATOMIC_RELEASE);
		}
	}
	CHECK(both);
	for (k = 0; k < 2; k++)
		stream_destroy(fx.ctx, &s[k]);
	buf_free(fx.ctx, &b);
	fixture_exit(&fx);
}

/*
 * The device takes in from a polled ring only DV_TAKE_IN_DEPTH tasks
 * ahead of what completed, however much the host published: the rest
 * waits in the ring (backpressure for the host), and the AI cores running
 * the stream take in more as they go, so all of it completes.
 */
void test_polled_take_in_depth(void)
{
	static struct davinci_task t[1024];
	struct davinci_stream_wait w;
	uint32_t i, deepest = 0;
	struct fixture fx;
	struct stream s;
	double t0;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(stream_create_flags(fx.ctx, 0, 1024, 1024,
				    DAVINCI_STREAM_F_POLLED, &s) == 0);
	for (i = 0; i < 1024; i++)
		t[i] = t_nop(i % 2 ? 20 : 0);	/* workers' and dispatcher's */
	publish(&s, t, 1024);
	t0 = th_now();
	while (__atomic_load_n(&s.cq->seq, __ATOMIC_ACQUIRE) < 1024 &&
	       th_now() - t0 < 10) {
		/* head first: a later completion count only lowers it */
		uint32_t head = __atomic_load_n(&s.sq->head, __ATOMIC_ACQUIRE);
		uint64_t done = __atomic_load_n(&s.cq->seq, __ATOMIC_ACQUIRE);

		if (head > done && head - done > deepest)
			deepest = (uint32_t)(head - done);
		sched_yield();
	}
	CHECK(deepest > 0);
	CHECK(deepest <= DV_TAKE_IN_DEPTH);
	CHECK_EQ(swait(fx.ctx, &s, 1024, 10000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(s.sq->head, 1024);
	stream_destroy(fx.ctx, &s);
	fixture_exit(&fx);
}
