// SPDX-License-Identifier: GPL-2.0
/*
 * test_mgmt.c - tests of device loss and the management (manager node)
 * interface.
 */
#define _GNU_SOURCE
#include "fixtures.h"

void test_device_lost(void)
{
	struct fixture fx;
	struct stream s;
	struct davinci_task t[2] = { t_nop(5000000), t_nop(1) };
	struct davinci_task_query q;
	struct davinci_notification n;
	struct davinci_version v;
	struct davinci_device_info di;
	struct davinci_mem_alloc a = { .size = 4096 };
	struct buf m;
	double t0;

	REQUIRE(fixture_init2(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &m) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(submit(fx.ctx, &s, t, 2, NULL), 0);
	usleep(20000);
	t0 = th_now();
	dvc_device_lost(fx.dev);
	/* The running task stopped at a chunk boundary. */
	wait_tasks_gone(t0);
	CHECK_EQ(__atomic_load_n(&s.cq->tail, __ATOMIC_ACQUIRE), 2);
	CHECK_EQ(cq_slot(&s, 0)->status, DAVINCI_STATUS_DEVICE_LOST);
	CHECK_EQ(cq_slot(&s, 1)->status, DAVINCI_STATUS_DEVICE_LOST);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_GET_VERSION, &v), 0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DEVICE_INFO, &di), -ENODEV);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -ENODEV);
	CHECK_EQ(tquery(fx.ctx, &s, 1, &q), -ENODEV);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ENODEV);
	CHECK_EQ(dvc_pollable(fx.ctx), 1);
	CHECK_EQ(dvc_pollable(fx.ctx2), 1);
	CHECK(dvc_mmap(fx.ctx, m.a.mmap_offset, 4096) == NULL);
	CHECK(dvc_context_open(fx.dev, 3) == NULL);
	stream_unmap(&s);
	dvc_munmap(m.map);
	fixture_exit(&fx);
}

/* ---- management (manager node) ------------------------------------------ */

static int mgmt_info(uint32_t index, struct davinci_mgmt_info *m)
{
	memset(m, 0, sizeof(*m));
	m->index = index;
	return dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_INFO, m);
}

static int mgmt_inject(uint32_t index, uint32_t kind, uint64_t addr,
		       uint64_t size, uint32_t level, uint32_t timeout_ms)
{
	struct davinci_mgmt_fault f = {
		.index = index, .kind = kind, .addr = addr, .size = size,
		.level = level, .timeout_ms = timeout_ms,
	};

	return dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_INJECT, &f, 1);
}

static int mgmt_reset(uint32_t index, uint32_t *contexts)
{
	struct davinci_mgmt_reset r = { .index = index };
	int ret = dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_RESET, &r, 1);

	if (contexts)
		*contexts = r.contexts;
	return ret;
}

/* The events of @dev after @since into @e: 1 when it got any. */
static int mgmt_read_events(uint64_t since, uint32_t dev,
			    struct davinci_mgmt_events *e)
{
	memset(e, 0, sizeof(*e));
	e->since_seq = since;
	e->device = dev;
	return !dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_EVENTS, e) && e->count;
}

/* Latest event sequence number of all devices. */
static uint64_t mgmt_last_seq(void)
{
	struct davinci_mgmt_events e;
	uint64_t since = 0;

	while (mgmt_read_events(since, DAVINCI_MGMT_ALL_DEVICES, &e))
		since = e.next_seq;
	return since;
}

/* Does an event of @type (and @fault, if not 0) on @dev follow @since? */
static int mgmt_has_event(uint64_t since, uint32_t dev, uint32_t type,
			  uint32_t fault, struct davinci_mgmt_event *out)
{
	struct davinci_mgmt_events e;
	uint32_t i;

	while (mgmt_read_events(since, dev, &e)) {
		for (i = 0; i < e.count; i++) {
			if (e.ev[i].type == type &&
			    (!fault || e.ev[i].fault == fault)) {
				if (out)
					*out = e.ev[i];
				return 1;
			}
		}
		since = e.next_seq;
	}
	return 0;
}

void test_mgmt_list_info(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0), *d1 = mkdev_idx(1, 0);
	struct dv_context *ctx = d0 ? dvc_context_open(d0, 4242) : NULL;
	struct davinci_mgmt_list l;
	struct davinci_mgmt_info m;
	struct davinci_mgmt_procs p;
	struct davinci_version v;
	struct buf b, h;
	struct stream s;

	REQUIRE(d0 && d1 && ctx);
	memset(&l, 0, sizeof(l));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_LIST, &l), 0);
	CHECK_EQ(l.count, 2);
	CHECK_EQ(l.index[0], 0);
	CHECK_EQ(l.index[1], 1);
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_GET_VERSION, &v), 0);
	CHECK_EQ(v.abi_major, DAVINCI_ABI_MAJOR);

	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.index, 1);
	CHECK(!strcmp(m.bus_id, "0000:81:00.0"));
	CHECK(!strcmp(m.serial, "DV5A000001"));
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK(!strcmp(m.bus_id, "0000:C1:00.0"));
	CHECK(!strcmp(m.name, "Ascend910B-sim"));
	CHECK(!strcmp(m.driver_version, DV_DRIVER_VERSION));
	CHECK(m.board_name[0] && m.firmware_version[0]);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK_EQ(m.aicores, 2);
	/* Idle: deterministic simulated values. */
	CHECK_EQ(m.aicore_util, 0);
	CHECK_EQ(m.power_mw, 72500);
	CHECK_EQ(m.temp_mc, 36000);
	CHECK_EQ(m.hbm_total, HBM_BYTES);
	CHECK_EQ(m.hbm_used, 0);
	CHECK_EQ(m.huge_total, HBM_BYTES / (2 * MiB));
	CHECK_EQ(m.huge_used, 0);
	CHECK_EQ(m.processes, 1);
	CHECK_EQ(m.fault_armed, 0);

	REQUIRE(buf_alloc(ctx, 2 * MiB, DAVINCI_MEM_HUGE_ONLY, &b) == 0);
	REQUIRE(buf_alloc(ctx, 8192, DAVINCI_MEM_HOST, &h) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.hbm_used, 2 * MiB);
	CHECK_EQ(m.huge_used, 1);
	CHECK(m.host_used >= 8192);
	memset(&p, 0, sizeof(p));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_PROCS, &p), 0);
	CHECK_EQ(p.count, 1);
	CHECK_EQ(p.total, 1);
	CHECK_EQ(p.proc[0].pid, 4242);
	CHECK_EQ(p.proc[0].streams, 1);
	CHECK_EQ(p.proc[0].hbm_bytes, 2 * MiB);
	CHECK_EQ(p.proc[0].host_bytes, 8192);
	p.index = 1;
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_PROCS, &p), 0);
	CHECK_EQ(p.count, 0);
	CHECK_EQ(mgmt_info(7, &m), -ENODEV);
	p.index = 7;
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_PROCS, &p), -ENODEV);
	/* Manager commands are not device commands, and vice versa. */
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_MGMT_LIST, &l), -ENOTTY);
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MEM_INFO, &m), -ENOTTY);
	CHECK_EQ(dvc_manager_ioctl(_IOW(DAVINCI_IOCTL_BASE, 0x80,
					struct davinci_mgmt_list), &l), -ENOTTY);

	stream_destroy(ctx, &s);
	buf_free(ctx, &b);
	buf_free(ctx, &h);
	dvc_context_close(ctx);
	dvc_device_destroy(d0);
	dvc_device_destroy(d1);
	memset(&l, 0, sizeof(l));
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_LIST, &l), 0);
	CHECK_EQ(l.count, 0);
	CHECK(stats_zero());
}

void test_mgmt_privilege(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0);
	struct davinci_mgmt_fault f = { .index = 0,
					.kind = DAVINCI_FAULT_THROTTLE,
					.level = 50 };
	struct davinci_mgmt_reset r = { .index = 0 };
	struct davinci_mgmt_info m;

	REQUIRE(d0);
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_INJECT, &f), -EPERM);
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_RESET, &r), -EPERM);
	CHECK_EQ(dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_RESET, &r, 0),
		 -EPERM);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.throttle_pct, 0);
	CHECK_EQ(m.resets, 0);
	/* Malformed injections. */
	CHECK_EQ(mgmt_inject(0, 0, 0, 0, 0, 0), -EINVAL);
	CHECK_EQ(mgmt_inject(0, 9, 0, 0, 0, 0), -EINVAL);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_THROTTLE, 0, 0, 1001, 0),
		 -EINVAL);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_HANG, 4096, 0, 0, 0), -EINVAL);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_ECC, ~0ULL, 2, 0, 0), -EINVAL);
	CHECK_EQ(mgmt_inject(3, DAVINCI_FAULT_HANG, 0, 0, 0, 0), -ENODEV);
	f.flags = 1;
	CHECK_EQ(dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_INJECT, &f, 1),
		 -EINVAL);
	r.flags = 1;
	CHECK_EQ(dvc_manager_ioctl_priv(DAVINCI_IOCTL_MGMT_RESET, &r, 1),
		 -EINVAL);
	CHECK_EQ(mgmt_reset(5, NULL), -ENODEV);
	dvc_device_destroy(d0);
	CHECK(stats_zero());
}

void test_mgmt_ecc_reset(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0), *d1 = mkdev_idx(1, 0);
	struct dv_context *ctx = d0 ? dvc_context_open(d0, 1) : NULL;
	struct dv_context *c1 = d1 ? dvc_context_open(d1, 2) : NULL;
	struct dv_context *ctx2;
	struct davinci_mgmt_info m;
	struct davinci_mgmt_event ev;
	struct davinci_notification n;
	struct davinci_stream_wait w;
	struct davinci_task t;
	struct stream s, s1;
	struct buf a, b, x;
	uint64_t since, seq;
	uint32_t nctx = 0;

	REQUIRE(ctx && c1);
	REQUIRE(buf_alloc(ctx, 8192, 0, &a) == 0);
	REQUIRE(buf_alloc(ctx, 8192, 0, &b) == 0);
	REQUIRE(buf_alloc(c1, 8192, 0, &x) == 0);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	REQUIRE(stream_create(c1, 0, 0, 0, &s1) == 0);
	since = mgmt_last_seq();
	/* An ECC error on the second page of b. */
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_ECC, b.a.dev_addr + 4096, 16, 0,
			     0), 0);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.fault_armed, 1U << DAVINCI_FAULT_ECC);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_FAULT_INJECTED,
			     DAVINCI_FAULT_ECC, &ev));
	CHECK_EQ(ev.addr, b.a.dev_addr + 4096);
	CHECK_EQ(ev.value, 16);
	/* Tasks outside the region are fine. */
	t = t_memset(a.a.dev_addr, 1, 8192);
	CHECK_EQ(submit(ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	t = t_memset(b.a.dev_addr, 7, 4096);
	CHECK_EQ(submit(ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	/* The one touching it fails and touches nothing. */
	t = t_memset(b.a.dev_addr, 9, 8192);
	CHECK_EQ(submit(ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_ECC_ERROR);
	CHECK_EQ(tstatus(ctx, &s, seq), DAVINCI_STATUS_ECC_ERROR);
	CHECK(all_set(b.p, 7, 4096));
	CHECK(all_set(b.p + 4096, 0, 4096));
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), 0);
	CHECK_EQ(n.type, DAVINCI_NOTIFY_FAULT);
	CHECK_EQ(n.status, DAVINCI_STATUS_ECC_ERROR);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_ALARM);
	CHECK_EQ(m.fault_armed, 0);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_ECC], 1);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_FAULT,
			     DAVINCI_FAULT_ECC, &ev));
	CHECK_EQ(ev.status, DAVINCI_STATUS_ECC_ERROR);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_HEALTH, 0, &ev));
	CHECK_EQ(ev.health, DAVINCI_HEALTH_ALARM);
	CHECK_EQ(ev.old_health, DAVINCI_HEALTH_OK);
	/* The other device is untouched. */
	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK(!mgmt_has_event(since, 1, DAVINCI_MGMT_EV_HEALTH, 0, NULL));
	t = t_memset(x.a.dev_addr, 3, 8192);
	CHECK_EQ(submit(c1, &s1, &t, 1, NULL), 0);
	CHECK_EQ(swait(c1, &s1, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);

	/* Reset: the context is failed, the device healthy again. */
	CHECK_EQ(mgmt_reset(0, &nctx), 0);
	CHECK_EQ(nctx, 1);
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_DEVICE_INFO, &m), -ENODEV);
	CHECK_EQ(submit(ctx, &s, &t, 1, NULL), -ENODEV);
	CHECK_EQ(dvc_pollable(ctx), 1);
	CHECK(dvc_mmap(ctx, a.a.mmap_offset, 4096) == NULL);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK_EQ(m.resets, 1);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_ECC], 1);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_RESET, 0, &ev));
	CHECK_EQ(ev.value, 1);
	ctx2 = dvc_context_open(d0, 3);
	REQUIRE(ctx2);
	{
		struct stream s2;
		struct buf c;

		REQUIRE(buf_alloc(ctx2, 8192, 0, &c) == 0);
		REQUIRE(stream_create(ctx2, 0, 0, 0, &s2) == 0);
		t = t_memset(c.a.dev_addr, 5, 8192);
		CHECK_EQ(submit(ctx2, &s2, &t, 1, NULL), 0);
		CHECK_EQ(swait(ctx2, &s2, 0, 5000, &w), 0);
		CHECK_EQ(w.status, 0);
		CHECK(all_set(c.p, 5, 8192));
		stream_destroy(ctx2, &s2);
		buf_free(ctx2, &c);
	}
	/* Reset again: only the live context counts. */
	CHECK_EQ(mgmt_reset(0, &nctx), 0);
	CHECK_EQ(nctx, 1);
	stream_unmap(&s);
	stream_destroy(c1, &s1);
	dvc_munmap(a.map);
	dvc_munmap(b.map);
	buf_free(c1, &x);
	dvc_context_close(ctx);
	dvc_context_close(ctx2);
	dvc_context_close(c1);
	dvc_device_destroy(d0);
	dvc_device_destroy(d1);
	CHECK(stats_zero());
}

void test_mgmt_hang(void)
{
	struct fixture fx;
	struct davinci_mgmt_info m;
	struct davinci_mgmt_event ev;
	struct davinci_stream_wait w;
	struct davinci_task t[2] = { t_nop(1), t_nop(1) };
	struct stream s;
	uint64_t since;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 0, 0, &s) == 0);
	since = mgmt_last_seq();
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_HANG, 0, 0, 0, 100), 0);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.fault_armed, 1U << DAVINCI_FAULT_HANG);
	CHECK_EQ(submit(fx.ctx, &s, t, 1, NULL), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, DAVINCI_STATUS_TIMEOUT);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_ALARM);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_HANG], 1);
	CHECK_EQ(m.fault_armed, 0);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_FAULT,
			     DAVINCI_FAULT_HANG, &ev));
	CHECK_EQ(ev.status, DAVINCI_STATUS_TIMEOUT);
	/* Only one task hangs. */
	CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	CHECK_EQ(submit(fx.ctx, &s, t + 1, 1, NULL), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	/* A hang without a watchdog ends with a reset. */
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_HANG, 0, 0, 0, 0), 0);
	CHECK_EQ(submit(fx.ctx, &s, t, 1, NULL), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 50, &w), -ETIMEDOUT);
	CHECK_EQ(mgmt_reset(0, NULL), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, &w), -ENODEV);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK_EQ(__atomic_load_n(&s.cq->tail, __ATOMIC_ACQUIRE), 3);
	CHECK_EQ(cq_slot(&s, 2)->status, DAVINCI_STATUS_DEVICE_LOST);
	stream_unmap(&s);
	fixture_exit(&fx);
}

void test_mgmt_lost_throttle(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0), *d1 = mkdev_idx(1, 0);
	struct dv_context *ctx = d0 ? dvc_context_open(d0, 1) : NULL;
	struct dv_context *c1 = d1 ? dvc_context_open(d1, 2) : NULL;
	struct davinci_mgmt_info m;
	struct davinci_notification n;
	struct davinci_stream_wait w;
	struct davinci_task t = t_nop(2000);
	struct stream s, s1;
	uint64_t since;

	REQUIRE(ctx && c1);
	REQUIRE(stream_create(ctx, 0, 0, 0, &s) == 0);
	REQUIRE(stream_create(c1, 0, 0, 0, &s1) == 0);
	since = mgmt_last_seq();
	/* Throttle: slower, warm, WARNING; results unchanged. */
	CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 100, 0), 0);
	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_WARNING);
	CHECK_EQ(m.throttle_pct, 100);
	CHECK(m.temp_mc >= 95000);
	CHECK_EQ(submit(c1, &s1, &t, 1, NULL), 0);
	CHECK_EQ(swait(c1, &s1, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_THROTTLE], 1);
	CHECK(mgmt_has_event(since, 1, DAVINCI_MGMT_EV_HEALTH, 0, NULL));
	CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 0, 0), 0);
	CHECK_EQ(mgmt_info(1, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK(m.temp_mc < 95000);

	/* Lost: every context of device 0 sees it; device 1 works on. */
	t = t_nop(5000000);
	CHECK_EQ(submit(ctx, &s, &t, 1, NULL), 0);
	usleep(10000);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_LOST, 0, 0, 0, 0), 0);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), -ENODEV);
	memset(&n, 0, sizeof(n));
	CHECK_EQ(dvc_ioctl(ctx, DAVINCI_IOCTL_NOTIFY_WAIT, &n), -ENODEV);
	CHECK_EQ(dvc_pollable(ctx), 1);
	CHECK(dvc_context_open(d0, 5) == NULL);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_CRITICAL);
	CHECK_EQ(m.faults_fired[DAVINCI_FAULT_LOST], 1);
	CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_HANG, 0, 0, 0, 0), -ENODEV);
	CHECK(mgmt_has_event(since, 0, DAVINCI_MGMT_EV_LOST, 0, NULL));
	t = t_nop(10);
	CHECK_EQ(submit(c1, &s1, &t, 1, NULL), 0);
	CHECK_EQ(swait(c1, &s1, 0, 5000, &w), 0);
	CHECK_EQ(w.status, 0);
	/* Reset brings it back; the old context stays lost. */
	CHECK_EQ(mgmt_reset(0, NULL), 0);
	CHECK_EQ(mgmt_info(0, &m), 0);
	CHECK_EQ(m.health, DAVINCI_HEALTH_OK);
	CHECK_EQ(swait(ctx, &s, 0, 5000, &w), -ENODEV);
	{
		struct dv_context *c2 = dvc_context_open(d0, 6);

		CHECK(c2 != NULL);
		if (c2)
			dvc_context_close(c2);
	}
	/* A device the OS removed cannot be reset. */
	dvc_device_lost(d1);
	CHECK_EQ(mgmt_reset(1, NULL), -ENODEV);
	stream_unmap(&s);
	stream_unmap(&s1);
	dvc_context_close(ctx);
	dvc_context_close(c1);
	dvc_device_destroy(d0);
	dvc_device_destroy(d1);
	CHECK(stats_zero());
}

static int hook_calls;
static uint32_t hook_last_type;

static void count_hook(const struct davinci_mgmt_event *ev)
{
	hook_calls++;
	hook_last_type = ev->type;
}

void test_mgmt_events(void)
{
	struct dv_device *d0 = mkdev_idx(0, 0), *d1 = mkdev_idx(1, 0);
	struct davinci_mgmt_events e;
	uint64_t since, seq, prev;
	uint32_t i, got = 0;

	REQUIRE(d0 && d1);
	since = mgmt_last_seq();
	/* 20 events on device 1, 100 on device 0: device 0 overflows. */
	for (i = 0; i < 10; i++) {
		CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 10, 0),
			 0);
		CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 0, 0), 0);
	}
	for (i = 0; i < 100; i++)
		CHECK_EQ(mgmt_inject(0, DAVINCI_FAULT_THROTTLE, 0, 0, 5 + i,
				     0), 0);
	memset(&e, 0, sizeof(e));
	e.since_seq = since;
	e.device = 1;
	seq = since;
	prev = since;
	for (;;) {
		CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_EVENTS, &e), 0);
		CHECK_EQ(e.overflow, 0);
		if (!e.count)
			break;
		for (i = 0; i < e.count; i++) {
			CHECK(e.ev[i].seq > prev);
			CHECK_EQ(e.ev[i].device, 1);
			prev = e.ev[i].seq;
			got++;
		}
		seq = e.next_seq;
		memset(&e, 0, sizeof(e));
		e.since_seq = seq;
		e.device = 1;
	}
	/* 20 injections, 20 health changes. */
	CHECK_EQ(got, 40);
	CHECK_EQ(e.next_seq, seq);
	memset(&e, 0, sizeof(e));
	e.since_seq = since;
	e.device = DAVINCI_MGMT_ALL_DEVICES;
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_EVENTS, &e), 0);
	CHECK_EQ(e.overflow, 1);
	CHECK_EQ(e.count, DAVINCI_MGMT_MAX_EVENTS);
	CHECK_EQ(e.ev[0].device, 1);
	e.device = 9;
	CHECK_EQ(dvc_manager_ioctl(DAVINCI_IOCTL_MGMT_EVENTS, &e), -ENODEV);
	/* The OS layer's hook sees every event, in order. */
	hook_calls = 0;
	dv_mgmt_set_event_hook(count_hook);
	CHECK_EQ(mgmt_inject(1, DAVINCI_FAULT_THROTTLE, 0, 0, 10, 0), 0);
	CHECK_EQ(hook_calls, 2);
	CHECK_EQ(hook_last_type, DAVINCI_MGMT_EV_HEALTH);
	dvc_device_destroy(d0);
	CHECK_EQ(hook_calls, 3);
	CHECK_EQ(hook_last_type, DAVINCI_MGMT_EV_REMOVE);
	dv_mgmt_set_event_hook(NULL);
	dvc_device_destroy(d1);
	CHECK_EQ(hook_calls, 3);
	/* Global state goes with the last device and comes back. */
	dv_core_exit();
	d0 = mkdev_idx(0, 0);
	CHECK(d0 != NULL);
	if (d0) {
		struct davinci_mgmt_info m;

		CHECK_EQ(mgmt_info(0, &m), 0);
		dvc_device_destroy(d0);
	}
	CHECK(stats_zero());
}

void test_mgmt_reset_in_flight(void)
{
	struct fixture fx;
	struct davinci_task t[3] = { t_nop(5000000), t_nop(1), t_nop(1) };
	struct davinci_stream_wait w;
	struct stream s, s2;
	double t0;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 0, 0, &s) == 0);
	REQUIRE(stream_create(fx.ctx, 1, 0, 0, &s2) == 0);
	CHECK_EQ(submit(fx.ctx, &s, t, 3, NULL), 0);
	CHECK_EQ(submit(fx.ctx, &s2, t, 2, NULL), 0);
	usleep(20000);
	t0 = th_now();
	CHECK_EQ(mgmt_reset(0, NULL), 0);
	CHECK_EQ(swait(fx.ctx, &s, 0, 5000, &w), -ENODEV);
	wait_tasks_gone(t0);
	CHECK_EQ(__atomic_load_n(&s.cq->tail, __ATOMIC_ACQUIRE), 3);
	CHECK_EQ(cq_slot(&s, 0)->status, DAVINCI_STATUS_DEVICE_LOST);
	CHECK_EQ(cq_slot(&s, 2)->status, DAVINCI_STATUS_DEVICE_LOST);
	CHECK_EQ(__atomic_load_n(&s2.cq->tail, __ATOMIC_ACQUIRE), 2);
	stream_unmap(&s);
	stream_unmap(&s2);
	fixture_exit(&fx);
}
