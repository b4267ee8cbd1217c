// SPDX-License-Identifier: GPL-2.0
/*
 * manager.c - the manager node (davinci_manager): the registry of live
 * devices, management information, per-process usage, device reset,
 * fault injection, health and the management event log.
 *
 * Locking: dv_reg_lock guards the registry and is taken before any
 * dev->lock; dv_ev_lock guards every device's event log and the event
 * hook and is a leaf, taken inside dev->lock. A manager ioctl holds
 * dv_reg_lock throughout, so the device it works on cannot be destroyed
 * under it (dv_device_destroy() unregisters first).
 */
#include "dv_internal.h"

#define DV_BOARD_NAME		"Atlas 300T-sim"
#define DV_FIRMWARE_VERSION	"7.1.0.5.220"
#define DV_BOARD_ID		0x22
/* Simulated power and temperature: idle and full-load values. */
#define DV_POWER_IDLE_MW	72500U
#define DV_POWER_MAX_MW		310000U
#define DV_TEMP_IDLE_MC		36000U
#define DV_TEMP_MAX_MC		78000U
#define DV_TEMP_THROTTLE_MC	95000U
#define DV_THROTTLE_MAX		1000U

/*
 * dv_reg_lock protects dv_reg_list (the live devices and their reg_node)
 * and keeps every registered device alive while held; taken before any
 * dev->lock. Every manager ioctl but GET_VERSION and GET_LIMITS holds it
 * throughout, so they run one at a time: a reset waiting for running
 * tasks with dev->lock dropped meets no other reset or fault injection.
 * dv_ev_lock protects every device's event log (dev->mg.ev, ev_count,
 * ev_lost_seq), dv_ev_seq and dv_ev_hook; a leaf.
 */
static struct os_mutex *dv_reg_lock;
static struct os_mutex *dv_ev_lock;
static struct dv_list dv_reg_list = { &dv_reg_list, &dv_reg_list };
static u64 dv_ev_seq;
static void (*dv_ev_hook)(const struct davinci_mgmt_event *ev);

/**
 * dv_global_mutex() - create a global mutex once
 * @slot: where it lives
 * @cls: its lock class
 *
 * Losers of a race free theirs.
 *
 * Return: the mutex, or NULL when out of memory.
 */
struct os_mutex *dv_global_mutex(struct os_mutex **slot,
				 enum os_lock_class cls)
{
	struct os_mutex *m = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	struct os_mutex *expected = NULL;

	if (m)
		return m;
	m = os_mutex_create(cls);
	if (!m)
		return NULL;
	if (!__atomic_compare_exchange_n(slot, &expected, m, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		os_mutex_destroy(m);
		m = expected;
	}
	return m;
}

/**
 * dv_global_mutex_free() - free a global mutex dv_global_mutex() created
 * @slot: where it lives; NULL afterwards, so that the next
 *	dv_global_mutex() creates it again
 */
void dv_global_mutex_free(struct os_mutex **slot)
{
	struct os_mutex *m = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL);

	if (m)
		os_mutex_destroy(m);
}

/**
 * dv_mgmt_health() - health of a device (dev->lock held)
 * @dev: the device
 *
 * Return: DAVINCI_HEALTH_CRITICAL when lost, ALARM after an ECC error or
 * a hang, WARNING while throttled, else OK.
 */
u32 dv_mgmt_health(const struct dv_device *dev)
{
	os_mutex_assert_held(dev->lock);
	if (dev->lost)
		return DAVINCI_HEALTH_CRITICAL;
	if (dev->mg.alarm)
		return DAVINCI_HEALTH_ALARM;
	if (dev->mg.throttle_pct)
		return DAVINCI_HEALTH_WARNING;
	return DAVINCI_HEALTH_OK;
}

/**
 * dv_mgmt_event() - log a management event (dev->lock held)
 * @dev: the device
 * @type: DAVINCI_MGMT_EV_*
 * @fault: DAVINCI_FAULT_* or 0
 * @status: DAVINCI_STATUS_* or 0
 * @old_health: health before the event
 * @addr: see struct davinci_mgmt_event
 * @value: see struct davinci_mgmt_event
 */
void dv_mgmt_event(struct dv_device *dev, u32 type, u32 fault, u32 status,
		   u32 old_health, u64 addr, u64 value)
{
	struct os_mutex *lock = dv_global_mutex(&dv_ev_lock, OS_LOCK_EVENTS);
	struct davinci_mgmt_event *ev;
	struct dv_mgmt *mg = &dev->mg;

	os_mutex_assert_held(dev->lock);
	if (!lock)
		return;
	os_mutex_lock(lock);
	ev = &mg->ev[mg->ev_count % DV_EVLOG_SIZE];
	if (mg->ev_count >= DV_EVLOG_SIZE)
		mg->ev_lost_seq = ev->seq;
	memset(ev, 0, sizeof(*ev));
	ev->seq = ++dv_ev_seq;
	ev->timestamp_ns = os_now_ns();
	ev->device = dev->cfg.index;
	ev->type = type;
	ev->fault = fault;
	ev->status = status;
	ev->health = dv_mgmt_health(dev);
	ev->old_health = old_health;
	ev->addr = addr;
	ev->value = value;
	mg->ev_count++;
	dv_trace_mgmt(dev, ev);
	if (dv_ev_hook)
		dv_ev_hook(ev);
	os_mutex_unlock(lock);
}

/**
 * dv_mgmt_health_update() - log a health change, if any (dev->lock held)
 * @dev: the device
 */
void dv_mgmt_health_update(struct dv_device *dev)
{
	u32 h = dv_mgmt_health(dev);
	u32 old = dev->mg.health;

	os_mutex_assert_held(dev->lock);
	if (h == old)
		return;
	dev->mg.health = h;
	dv_mgmt_event(dev, DAVINCI_MGMT_EV_HEALTH, 0, 0, old, 0, 0);
}

/**
 * dv_mgmt_set_event_hook() - mirror management events to the OS layer
 * @hook: called for each event, see dv_core.h; NULL removes it
 */
void dv_mgmt_set_event_hook(void (*hook)(const struct davinci_mgmt_event *ev))
{
	struct os_mutex *lock = dv_global_mutex(&dv_ev_lock, OS_LOCK_EVENTS);

	if (!lock)
		return;
	os_mutex_lock(lock);
	dv_ev_hook = hook;
	os_mutex_unlock(lock);
}

/**
 * dv_mgmt_register() - add a new device to the registry
 * @dev: the device, fully set up
 *
 * Return: 0 or -ENOMEM.
 */
int dv_mgmt_register(struct dv_device *dev)
{
	struct os_mutex *lock = dv_global_mutex(&dv_reg_lock, OS_LOCK_REGISTRY);

	if (!lock || !dv_global_mutex(&dv_ev_lock, OS_LOCK_EVENTS))
		return -ENOMEM;
	dev->mg.util_t[0] = os_now_ns();
	dev->mg.util_t[1] = dev->mg.util_t[0];
	os_mutex_lock(lock);
	dv_list_add_tail(&dev->reg_node, &dv_reg_list);
	os_mutex_lock(dev->lock);
	dv_mgmt_event(dev, DAVINCI_MGMT_EV_ADD, 0, 0, DAVINCI_HEALTH_OK, 0, 0);
	os_mutex_unlock(dev->lock);
	os_mutex_unlock(lock);
	return 0;
}

/**
 * dv_mgmt_unregister() - remove a device from the registry
 * @dev: the device, about to be destroyed
 */
void dv_mgmt_unregister(struct dv_device *dev)
{
	os_mutex_lock(dv_reg_lock);
	dv_list_del(&dev->reg_node);
	os_mutex_lock(dev->lock);
	dv_mgmt_event(dev, DAVINCI_MGMT_EV_REMOVE, 0, 0, dv_mgmt_health(dev),
		      0, 0);
	os_mutex_unlock(dev->lock);
	os_mutex_unlock(dv_reg_lock);
}

/**
 * dv_core_exit() - free the core's global state
 *
 * Call after the last device is destroyed (module exit). Devices created
 * afterwards set it up again.
 */
void dv_core_exit(void)
{
	if (!dv_list_empty(&dv_reg_list))
		return;
	dv_global_mutex_free(&dv_reg_lock);
	dv_global_mutex_free(&dv_ev_lock);
	dv_owners_exit();
}

/* The live device of @index (dv_reg_lock held), or NULL. */
static struct dv_device *dv_mgmt_find(u32 index)
{
	struct dv_device *dev;

	os_mutex_assert_held(dv_reg_lock);
	dv_list_for_each_entry(dev, &dv_reg_list, reg_node)
		if (dev->cfg.index == index)
			return dev;
	return NULL;
}

/**
 * dv_mgmt_task_start() - injected faults, as a task starts on an AI core
 * @dev: the device (dev->lock held)
 * @t: the task, operands resolved
 *
 * An armed ECC fault whose region the task touches fires: the task fails.
 * An armed hang makes the task hang. The throttle is sampled.
 *
 * Return: DAVINCI_STATUS_ECC_ERROR to fail the task at once, else 0.
 */
u32 dv_mgmt_task_start(struct dv_device *dev, struct dv_task *t)
{
	const u64 addr[DV_TASK_OPERANDS] = { t->desc.dst, t->desc.src0,
					      t->desc.src1, t->desc.src2 };
	struct dv_mgmt *mg = &dev->mg;
	int i;

	os_mutex_assert_held(dev->lock);
	if (mg->ecc_armed) {
		for (i = 0; i < DV_TASK_OPERANDS; i++) {
			struct dv_buffer *b = t->buf[i];
			bool hit;

			if (!b || !t->len[i])
				continue;
			if (mg->ecc_size)
				hit = dv_ranges_overlap(addr[i], t->len[i],
							mg->ecc_addr,
							mg->ecc_size);
			else
				hit = b->pool->index == DV_ARENA_HBM;
			if (!hit)
				continue;
			mg->ecc_armed = false;
			mg->fired[DAVINCI_FAULT_ECC]++;
			mg->alarm = true;
			dv_mgmt_event(dev, DAVINCI_MGMT_EV_FAULT,
				      DAVINCI_FAULT_ECC,
				      DAVINCI_STATUS_ECC_ERROR, mg->health,
				      addr[i], t->len[i]);
			dv_mgmt_health_update(dev);
			return DAVINCI_STATUS_ECC_ERROR;
		}
	}
	if (mg->hang_armed) {
		mg->hang_armed = false;
		t->hang = true;
		t->timeout_ms = mg->hang_timeout_ms;
	}
	t->throttle_pct = mg->throttle_pct;
	if (t->throttle_pct)
		mg->fired[DAVINCI_FAULT_THROTTLE]++;
	return 0;
}

/**
 * dv_mgmt_task_failed() - a hung task ended (dev->lock held)
 * @dev: the device
 * @t: the task, with t->hang
 * @st: its status: DAVINCI_STATUS_TIMEOUT when the watchdog fired
 */
void dv_mgmt_task_failed(struct dv_device *dev, struct dv_task *t, u32 st)
{
	struct dv_mgmt *mg = &dev->mg;

	os_mutex_assert_held(dev->lock);
	mg->fired[DAVINCI_FAULT_HANG]++;
	if (st == DAVINCI_STATUS_TIMEOUT)
		mg->alarm = true;
	dv_mgmt_event(dev, DAVINCI_MGMT_EV_FAULT, DAVINCI_FAULT_HANG, st,
		      mg->health, t->desc.dst, os_now_ns() - t->start_ns);
	dv_mgmt_health_update(dev);
}

/* Busy AI-core time so far, running tasks included (dev->lock held). */
static u64 dv_mgmt_busy_now(struct dv_device *dev, u64 now)
{
	u64 busy = dev->busy_ns;
	struct dv_context *ctx;
	struct dv_stream *s;
	struct dv_task *t;

	os_mutex_assert_held(dev->lock);
	dv_list_for_each_entry(ctx, &dev->contexts, node)
		dv_list_for_each_entry(s, &ctx->streams, node) {
			if (!s->busy || dv_list_empty(&s->tasks))
				continue;
			t = dv_list_entry(s->tasks.next, t, node);
			if (t->running && now > t->start_ns)
				busy += now - t->start_ns;
		}
	return busy;
}

/*
 * AI-core utilization in percent over the current window: from the start
 * of the previous window (at least DV_UTIL_WINDOW_NS back once the device
 * has lived that long) to now. An idle device reads 0.
 */
static u32 dv_mgmt_util(struct dv_device *dev, u64 *busy_out)
{
	struct dv_mgmt *mg = &dev->mg;
	u64 now = os_now_ns();
	u64 busy = dv_mgmt_busy_now(dev, now);
	u64 span, delta, util;

	os_mutex_assert_held(dev->lock);
	if (now - mg->util_t[1] >= DV_UTIL_WINDOW_NS) {
		mg->util_t[0] = mg->util_t[1];
		mg->util_b[0] = mg->util_b[1];
		mg->util_t[1] = now;
		mg->util_b[1] = busy;
	}
	*busy_out = busy;
	span = (now - mg->util_t[0]) * dev->cfg.aicores;
	delta = busy > mg->util_b[0] ? busy - mg->util_b[0] : 0;
	if (!span || !delta)
		return 0;
	util = delta * 100 / span;
	return util > 100 ? 100 : (u32)util;
}

static void dv_fmt_bus_id(char *dst, u32 index)
{
	static const u8 bus[8] = { 0xC1, 0x81, 0x41, 0x01,
				   0xC2, 0x82, 0x42, 0x02 };
	char hex[9];
	u32 b = index < 8 ? bus[index] : (0x10 + index) & 0xff;

	dv_fmt_hex32(hex, b);
	dv_strscpy(dst, "0000:", DAVINCI_NAME_LEN);
	dst[5] = hex[6];
	dst[6] = hex[7];
	dv_strscpy(dst + 7, ":00.0", DAVINCI_NAME_LEN - 7);
}

/* 2 MiB pages held by 2 MiB aligned HBM allocations (dev->lock held). */
static u32 dv_mgmt_huge_used(struct dv_device *dev)
{
	struct dv_context *ctx;
	struct dv_buffer *b;
	u64 pages = 0;

	os_mutex_assert_held(dev->lock);
	dv_list_for_each_entry(ctx, &dev->contexts, node)
		dv_list_for_each_entry(b, &ctx->buffers, node)
			if (b->pool->index == DV_ARENA_HBM &&
			    !(b->off % DV_HUGE_SIZE) &&
			    !(b->alloc_size % DV_HUGE_SIZE))
				pages += b->alloc_size / DV_HUGE_SIZE;
	return (u32)pages;
}

static void dv_mgmt_fill_info(struct dv_device *dev,
			      struct davinci_mgmt_info *m)
{
	struct dv_mgmt *mg = &dev->mg;
	struct davinci_device_info d;
	struct dv_context *ctx;
	u32 i, util;
	u64 busy;

	os_mutex_assert_held(dev->lock);
	dv_device_query_locked(dev, &d);
	util = dv_mgmt_util(dev, &busy);
	memset(m, 0, sizeof(*m));
	m->index = d.index;
	m->health = dv_mgmt_health(dev);
	m->aicores = d.aicores;
	m->aicore_util = util;
	m->power_mw = DV_POWER_IDLE_MW +
		      (DV_POWER_MAX_MW - DV_POWER_IDLE_MW) / 100 * util;
	m->temp_mc = DV_TEMP_IDLE_MC +
		     (DV_TEMP_MAX_MC - DV_TEMP_IDLE_MC) / 100 * util;
	if (mg->throttle_pct) {
		m->power_mw = (u32)((u64)m->power_mw * 100 /
				    (100 + mg->throttle_pct));
		m->temp_mc += DV_TEMP_THROTTLE_MC - DV_TEMP_IDLE_MC;
	}
	m->hbm_total = d.hbm_total;
	m->hbm_used = d.hbm_total - d.hbm_free;
	m->host_total = d.host_total;
	m->host_used = d.host_total - d.host_free;
	m->huge_total = (u32)(d.hbm_total / DV_HUGE_SIZE);
	m->huge_used = dv_mgmt_huge_used(dev);
	dv_list_for_each_entry(ctx, &dev->contexts, node)
		m->processes++;
	m->task_timeout_ms = d.task_timeout_ms;
	m->throttle_pct = mg->throttle_pct;
	m->board_id = DV_BOARD_ID;
	if (mg->ecc_armed)
		m->fault_armed |= 1U << DAVINCI_FAULT_ECC;
	if (mg->hang_armed)
		m->fault_armed |= 1U << DAVINCI_FAULT_HANG;
	if (dev->lost)
		m->fault_armed |= 1U << DAVINCI_FAULT_LOST;
	if (mg->throttle_pct)
		m->fault_armed |= 1U << DAVINCI_FAULT_THROTTLE;
	m->resets = mg->resets;
	for (i = 0; i < DAVINCI_FAULT_KINDS; i++)
		m->faults_fired[i] = mg->fired[i];
	m->tasks_completed = mg->tasks_completed;
	m->busy_ns = busy;
	memcpy(m->name, d.name, sizeof(m->name));
	memcpy(m->serial, d.serial, sizeof(m->serial));
	dv_strscpy(m->board_name, DV_BOARD_NAME, sizeof(m->board_name));
	dv_strscpy(m->firmware_version, DV_FIRMWARE_VERSION,
		   sizeof(m->firmware_version));
	dv_strscpy(m->driver_version, DV_DRIVER_VERSION,
		   sizeof(m->driver_version));
	dv_fmt_bus_id(m->bus_id, d.index);
	m->dispatch_sleeps = dev->dispatch.sleeps;
	m->dispatch_cpu_wanted = dev->dispatch.cpu_wanted;
	m->dispatch_kicks = dev->dispatch.kicks;
	m->dispatch_grows = dev->dispatch.grows;
	m->dispatch_shrinks = dev->dispatch.shrinks;
	m->dispatch_idle_ns = dev->dispatch.idle_ns;
}

int dv_mgmt_list(void *arg)
{
	struct davinci_mgmt_list *l = arg;
	struct dv_device *dev;
	u32 n = 0, i, j;

	os_mutex_assert_held(dv_reg_lock);
	memset(l, 0, sizeof(*l));
	dv_list_for_each_entry(dev, &dv_reg_list, reg_node) {
		if (n < DAVINCI_MGMT_MAX_DEVICES)
			l->index[n] = dev->cfg.index;
		n++;
	}
	l->count = n;
	if (n > DAVINCI_MGMT_MAX_DEVICES)
		n = DAVINCI_MGMT_MAX_DEVICES;
	/* Insertion sort: few devices. */
	for (i = 1; i < n; i++) {
		u32 v = l->index[i];

		for (j = i; j > 0 && l->index[j - 1] > v; j--)
			l->index[j] = l->index[j - 1];
		l->index[j] = v;
	}
	return 0;
}

int dv_mgmt_info(void *arg)
{
	struct davinci_mgmt_info *m = arg;
	struct dv_device *dev = dv_mgmt_find(m->index);

	os_mutex_assert_held(dv_reg_lock);
	if (!dev)
		return -ENODEV;
	os_mutex_lock(dev->lock);
	dv_mgmt_fill_info(dev, m);
	os_mutex_unlock(dev->lock);
	return 0;
}

int dv_mgmt_procs(void *arg)
{
	struct davinci_mgmt_procs *p = arg;
	struct dv_device *dev = dv_mgmt_find(p->index);
	u32 index = p->index;
	struct dv_context *ctx;

	os_mutex_assert_held(dv_reg_lock);
	if (!dev)
		return -ENODEV;
	memset(p, 0, sizeof(*p));
	p->index = index;
	os_mutex_lock(dev->lock);
	dv_list_for_each_entry(ctx, &dev->contexts, node) {
		struct davinci_mgmt_proc *e;

		p->total++;
		if (p->count >= DAVINCI_MGMT_MAX_PROCS)
			continue;
		e = &p->proc[p->count++];
		e->pid = ctx->pid;
		e->streams = ctx->stream_ids.n;
		e->hbm_bytes = ctx->used[DV_ARENA_HBM];
		e->host_bytes = ctx->used[DV_ARENA_HOST];
	}
	os_mutex_unlock(dev->lock);
	return 0;
}

/*
 * The device of @index with its lock taken and its health in *@old, for
 * a reset or fault that logs the change (dv_reg_lock held), or NULL:
 * none, removed by the OS, or lost unless @lost_ok (a reset brings a lost
 * device back, but not a removed one).
 */
static struct dv_device *dv_mgmt_lock_dev(u32 index, bool lost_ok, u32 *old)
{
	struct dv_device *dev = dv_mgmt_find(index);

	os_mutex_assert_held(dv_reg_lock);
	if (!dev)
		return NULL;
	os_mutex_lock(dev->lock);
	if (lost_ok ? dev->removed : dev->lost) {
		os_mutex_unlock(dev->lock);
		return NULL;
	}
	*old = dv_mgmt_health(dev);
	return dev;
}

/* True while a stream of a context failed by a reset is still running. */
static bool dv_mgmt_reset_busy(struct dv_device *dev)
{
	struct dv_context *ctx;
	struct dv_stream *s;

	dv_list_for_each_entry(ctx, &dev->contexts, node)
		dv_list_for_each_entry(s, &ctx->streams, node)
			if (s->busy)
				return true;
	return false;
}

int dv_mgmt_reset(void *arg)
{
	struct davinci_mgmt_reset *r = arg;
	struct dv_device *dev;
	struct dv_mgmt *mg;
	struct dv_context *ctx;
	u64 deadline = dv_deadline(10000);
	u32 old, n = 0;

	os_mutex_assert_held(dv_reg_lock);
	if (r->flags || r->pad)
		return -EINVAL;
	dev = dv_mgmt_lock_dev(r->index, true, &old);
	if (!dev)
		return -ENODEV;
	mg = &dev->mg;
	dv_list_for_each_entry(ctx, &dev->contexts, node) {
		if (ctx->lost || ctx->closing)
			continue;
		__atomic_store_n(&ctx->lost, true, __ATOMIC_RELAXED);
		n++;
		if (!dev->lost)
			dv_context_fail_locked(ctx);
	}
	os_waitq_wake_all(dev->wq);
	os_waitq_wake_all(dev->work_wq);
	/* Running tasks stop at their next chunk boundary. */
	while (dv_mgmt_reset_busy(dev))
		if (os_waitq_wait(dev->wq, dev->lock, deadline) == -ETIMEDOUT)
			break;
	mg->ecc_armed = false;
	mg->hang_armed = false;
	mg->throttle_pct = 0;
	mg->alarm = false;
	__atomic_store_n(&dev->lost, false, __ATOMIC_RELAXED);
	mg->resets++;
	r->contexts = n;
	dv_mgmt_event(dev, DAVINCI_MGMT_EV_RESET, 0, 0, old, 0, n);
	dv_mgmt_health_update(dev);
	os_mutex_unlock(dev->lock);
	return 0;
}

int dv_mgmt_inject(void *arg)
{
	struct davinci_mgmt_fault *f = arg;
	struct dv_device *dev;
	struct dv_mgmt *mg;
	u64 value = 0;
	u32 old;

	os_mutex_assert_held(dv_reg_lock);
	if (f->flags || f->pad)
		return -EINVAL;
	switch (f->kind) {
	case DAVINCI_FAULT_ECC:
		if (f->level || f->timeout_ms ||
		    f->addr > U64_MAX - f->size)
			return -EINVAL;
		value = f->size;
		break;
	case DAVINCI_FAULT_HANG:
		if (f->addr || f->size || f->level)
			return -EINVAL;
		value = f->timeout_ms;
		break;
	case DAVINCI_FAULT_LOST:
		if (f->addr || f->size || f->level || f->timeout_ms)
			return -EINVAL;
		break;
	case DAVINCI_FAULT_THROTTLE:
		if (f->addr || f->size || f->timeout_ms ||
		    f->level > DV_THROTTLE_MAX)
			return -EINVAL;
		value = f->level;
		break;
	default:
		return -EINVAL;
	}
	dev = dv_mgmt_lock_dev(f->index, false, &old);
	if (!dev)
		return -ENODEV;
	mg = &dev->mg;
	switch (f->kind) {
	case DAVINCI_FAULT_ECC:
		mg->ecc_armed = true;
		mg->ecc_addr = f->addr;
		mg->ecc_size = f->size;
		break;
	case DAVINCI_FAULT_HANG:
		mg->hang_armed = true;
		mg->hang_timeout_ms = f->timeout_ms;
		break;
	case DAVINCI_FAULT_THROTTLE:
		mg->throttle_pct = f->level;
		break;
	}
	dv_mgmt_event(dev, DAVINCI_MGMT_EV_FAULT_INJECTED, f->kind, 0, old,
		      f->addr, value);
	if (f->kind == DAVINCI_FAULT_LOST) {
		mg->fired[DAVINCI_FAULT_LOST]++;
		dv_device_lost_locked(dev);
	}
	dv_mgmt_health_update(dev);
	os_mutex_unlock(dev->lock);
	return 0;
}

/* Insert @ev into @out (sorted by seq, at most @max) unless it is later. */
static void dv_mgmt_ev_insert(struct davinci_mgmt_events *out, u32 max,
			      const struct davinci_mgmt_event *ev)
{
	u32 j;

	if (out->count == max) {
		if (ev->seq > out->ev[max - 1].seq)
			return;
		out->count--;
	}
	for (j = out->count; j > 0 && out->ev[j - 1].seq > ev->seq; j--)
		out->ev[j] = out->ev[j - 1];
	out->ev[j] = *ev;
	out->count++;
}

int dv_mgmt_events(void *arg)
{
	struct davinci_mgmt_events *e = arg;
	u64 since = e->since_seq;
	u32 device = e->device;
	struct dv_device *dev;
	bool found = device == DAVINCI_MGMT_ALL_DEVICES;

	os_mutex_assert_held(dv_reg_lock);
	memset(e, 0, sizeof(*e));
	e->since_seq = since;
	e->device = device;
	os_mutex_lock(dv_ev_lock);
	dv_list_for_each_entry(dev, &dv_reg_list, reg_node) {
		struct dv_mgmt *mg = &dev->mg;
		u64 first, k;

		if (device != DAVINCI_MGMT_ALL_DEVICES &&
		    dev->cfg.index != device)
			continue;
		found = true;
		if (mg->ev_lost_seq > since)
			e->overflow = 1;
		first = mg->ev_count > DV_EVLOG_SIZE ?
			mg->ev_count - DV_EVLOG_SIZE : 0;
		for (k = first; k < mg->ev_count; k++) {
			const struct davinci_mgmt_event *ev =
				&mg->ev[k % DV_EVLOG_SIZE];

			if (ev->seq > since)
				dv_mgmt_ev_insert(e, DAVINCI_MGMT_MAX_EVENTS,
						  ev);
		}
	}
	os_mutex_unlock(dv_ev_lock);
	if (!found)
		return -ENODEV;
	e->next_seq = e->count ? e->ev[e->count - 1].seq : since;
	return 0;
}

/* DAVINCI_IOCTL_GET_VERSION on the manager node (no lock). */
int dv_mgmt_get_version(void *arg)
{
	dv_version_fill(arg, dv_manager_backend());
	return 0;
}

/* DAVINCI_IOCTL_GET_LIMITS on the manager node (no lock). */
int dv_mgmt_get_limits(void *arg)
{
	dv_limits_fill(arg);
	return 0;
}

/**
 * dv_manager_ioctl_priv() - dispatch one ioctl of the manager node
 * @cmd: DAVINCI_IOCTL_GET_VERSION, DAVINCI_IOCTL_GET_LIMITS or a
 *	DAVINCI_IOCTL_MGMT_* command; its direction must match the ABI's
 * @arg: dv_ioctl_size(@cmd) bytes, copied in and out by the OS layer
 * @privileged: the caller may reset devices and inject faults
 *
 * The manager node has no context. The backend GET_VERSION reports is
 * that of the first device created ("lib" before any).
 *
 * Return: 0, -ENOTTY, -EPERM, -ENODEV, -EINVAL or -ENOMEM.
 */
int dv_manager_ioctl_priv(unsigned int cmd, void *arg, bool privileged)
{
	const struct dv_ioctl_desc *d = dv_ioctl_lookup(cmd);
	struct os_mutex *lock;
	int ret;

	if (!d || !d->mgmt_fn || _IOC_DIR(cmd) != _IOC_DIR(d->cmd))
		return -ENOTTY;
	if (d->flags & DV_IOCTL_UNLOCKED)
		return d->mgmt_fn(arg);
	if ((d->flags & DV_IOCTL_PRIVILEGED) && !privileged)
		return -EPERM;
	lock = dv_global_mutex(&dv_reg_lock, OS_LOCK_REGISTRY);
	if (!lock || !dv_global_mutex(&dv_ev_lock, OS_LOCK_EVENTS))
		return -ENOMEM;
	os_mutex_lock(lock);
	ret = d->mgmt_fn(arg);
	os_mutex_unlock(lock);
	return ret;
}

/**
 * dv_manager_ioctl() - dispatch one ioctl of the manager node, unprivileged
 * @cmd: as dv_manager_ioctl_priv()
 * @arg: as dv_manager_ioctl_priv()
 *
 * Return: as dv_manager_ioctl_priv(); reset and fault injection -EPERM.
 */
int dv_manager_ioctl(unsigned int cmd, void *arg)
{
	return dv_manager_ioctl_priv(cmd, arg, false);
}
